//! Interpreter throughput: pixel-instructions per second on an ALU-bound MAD
//! chain, a divergent loop and a texture-bound kernel (a table on stdout).
//! The JIT will join this table; ratios are taken within one run.

use ctm::frontend;
use ctm::interp::Interpreter;
use ctm::isa::{asm::assemble, decode_program};
use ctm::runtime::texture::{Image, Images};
use ctm::runtime::{Domain, PixelOut, RunOptions, Runner};
use ctm_jit::state::Uniforms;
use std::time::Instant;

fn kernel(name: &str, asm: &str, size: u32, tex: &Images, uniforms: &Uniforms) {
    let words = assemble(asm).expect("bench kernels assemble");
    let program = frontend::build(&decode_program(&words), frontend::Options::default());
    let mut runner = Runner::new(
        &program,
        Interpreter::new(),
        uniforms,
        RunOptions::default(),
    );
    let mut best = f64::MAX;
    let mut pixinst = 0;
    for _ in 0..3 {
        let mut t = tex.clone();
        let mut sink = |_: u32, _: u32, _: &PixelOut| {};
        let start = Instant::now();
        let stats = runner
            .run(Domain::new(size, size), 0, &mut t, &mut sink)
            .expect("bench kernels run");
        best = best.min(start.elapsed().as_secs_f64());
        pixinst = stats.pixel_instructions;
    }
    println!(
        "{name:<22} {:>10.1} M pixel-inst/s  ({pixinst} pixel-inst in {:.1} ms)",
        pixinst as f64 / best / 1e6,
        best * 1e3
    );
}

fn main() {
    let mad = "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1\n"
        .repeat(64)
        + "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let mut u = Uniforms::default();
    u.consts[0] = [0.5f32.to_bits(); 4];
    u.consts[1] = [0.25f32.to_bits(); 4];
    u.ints[0] = ctm_jit::state::IntConst {
        count: 200,
        init: 0,
        step: 0,
    };
    let lp = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r1 srcp=sub res=r>=0
    IF alu_result == 0 -> cont
    BREAKLOOP -> done pop=1
    ENDIF
cont:
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let tex = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait\n".repeat(8)
        + "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let images = Images::default().with_input(
        0,
        Image::from_fn(256, 256, |x, y| [x as f32, y as f32, 0.0, 1.0]),
    );
    println!(
        "interpreter, {} quads per group",
        ctm_jit::state::GROUP_QUADS
    );
    kernel("mad chain (64 inst)", &mad, 256, &Images::default(), &u);
    kernel("divergent loop+break", lp, 128, &Images::default(), &u);
    kernel("texture-bound (8 ld)", &tex, 256, &images, &u);
}
