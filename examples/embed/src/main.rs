//! Embedding ctm as the README shows, with `ctm` as the only dependency:
//! a kernel, a job with inputs and constants, the result; the same job on
//! the interpreter gives the same bits. Run it with
//! `cargo run -p ctm-embed-example`.

use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, Kernel, KernelError};
use ctm::mc::Format;
use ctm::{JitOptions, OptLevel, Tier};

/// out = a·x + y (a = c0.r) over a `w × h` domain.
fn saxpy(w: u32, h: u32, engine: EngineKind) -> Result<Vec<f32>, KernelError> {
    let kernel = Kernel::assemble(
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
         tex ld r2.rgba, in1.rgba, r0.rgba unscaled acquire wait
         alu r3.rgb = mad(s0.rrr, s1, s2) | r3.a = mad(s0.r, s1, s2) src0=c0 src1=r1 src2=r2 wait
         out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last",
    )
    .map_err(|e| KernelError::Job(e.to_string()))?;
    let n = (w * h) as usize;
    let x: Vec<f32> = (0..n).map(|k| k as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|k| 100.0 - k as f32).collect();
    let job = Job::new(w, h)
        .input(0, HostSurface::from_f32(Format::Float32_1, w, h, &x)?)
        .input(1, HostSurface::from_f32(Format::Float32_1, w, h, &y)?)
        .constant(0, [3.0; 4])
        .output(0, Format::Float32_1)
        .engine(engine)
        .jit(JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 0,
            tier: Tier::Optimised,
        });
    Ok(kernel
        .run(&job)?
        .output(0)
        .map(HostSurface::to_f32)
        .unwrap_or_default())
}

/// The same as a Direct3D 9 pixel shader from text, bound by register
/// name: no machine numbers anywhere.
fn saxpy_shader(w: u32, h: u32) -> Result<Vec<f32>, KernelError> {
    let kernel = Kernel::from_bytes(
        b"ps_3_0
          dcl_texcoord0 v0
          dcl_texcoord1 v1
          mad oC0, c0.x, v0, v1",
    )?;
    let n = (w * h) as usize;
    let x: Vec<f32> = (0..n).map(|k| k as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|k| 100.0 - k as f32).collect();
    let job = Job::new(w, h);
    let job = kernel.bind(
        job,
        "v0",
        HostSurface::from_f32(Format::Float32_1, w, h, &x)?,
    )?;
    let job = kernel.bind(
        job,
        "v1",
        HostSurface::from_f32(Format::Float32_1, w, h, &y)?,
    )?;
    let job = kernel.bind(job, "c0", [3.0; 4])?;
    let job = kernel.bind(job, "oC0", Format::Float32_1)?;
    let out = kernel.run(&job)?;
    Ok(kernel
        .output("oC0")
        .and_then(|n| out.output(n))
        .map(HostSurface::to_f32)
        .unwrap_or_default())
}

fn main() -> Result<(), KernelError> {
    let out = saxpy(8, 4, EngineKind::best())?;
    println!("3·x + y over 8×4: {:?}", &out[..8]);
    let shader = saxpy_shader(8, 4)?;
    println!("the same from a shader, bound by name: {:?}", &shader[..8]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_engines_agree_with_plain_rust() {
        let want: Vec<f32> = (0..32)
            .map(|k| 3.0 * (k as f32 * 0.5) + (100.0 - k as f32))
            .collect();
        assert_eq!(saxpy(8, 4, EngineKind::Interp).unwrap(), want);
        assert_eq!(saxpy(8, 4, EngineKind::best()).unwrap(), want);
        assert_eq!(saxpy_shader(8, 4).unwrap(), want);
    }
}
