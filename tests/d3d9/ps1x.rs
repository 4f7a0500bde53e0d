//! ps_1_1–ps_1_4 shaders (`docs/d3d9.md` §6): random shaders of every
//! version agree, bit for bit, with the reference evaluator on both
//! engines; the behaviours Wine's Direct3D 9 tests check (constant
//! clamping, `cnd`, `texkill`, colour clamping, co-issue) hold.

use crate::common;

mod random;

use common::d3d9_ref::{Pixel, eval};
use common::shader::{kernel, output, run, with_output};
use ctm::co::{CondLoc, CondTest};
use ctm::d3d9;
use ctm::kernel::{CondSetup, HostSurface, Job, Kernel, Resource};
use ctm::mc::Format;
use ctm_tools::diff::Rng;
use proptest::prelude::*;
use random::{Gen, Shader1x};

const W: u32 = 8;
const TEX: u32 = 4;

/// Binds every surface the kernel's map names: t# and v# rows, s#
/// textures; returns the job and the reference's pixel template.
fn bind_all(k: &Kernel, g: &mut Gen) -> (Job, Vec<Pixel>) {
    let mut job = Job::new(W, 1);
    let mut host = [[0u32; 4]; 8];
    for (c, v) in host.iter_mut().enumerate().skip(4) {
        *v = [0; 4].map(|_: u32| g.value());
        job = job.constant(c as u8, v.map(f32::from_bits));
    }
    let mut pixels: Vec<Pixel> = (0..W)
        .map(|i| Pixel {
            pos: (i, 0),
            consts: (0..256)
                .map(|n| if n < 8 { host[n] } else { [0; 4] })
                .collect(),
            textures: vec![(0, 0, Vec::new()); 16],
            ..Pixel::default()
        })
        .collect();
    for (reg, to) in k.exe.info.bindings.clone() {
        // Bump-environment values: constants the compiler chose.
        if let Some(rest) = reg.strip_prefix("bumpenv") {
            let c: u8 = to[1..].parse().unwrap();
            let v = [0; 4].map(|_: u32| g.value());
            job = job.constant(c, v.map(f32::from_bits));
            for p in &mut pixels {
                match rest.strip_prefix('l') {
                    Some(n) => p.bumpenvl[n.parse::<usize>().unwrap()] = [v[0], v[1]],
                    None => p.bumpenv[rest.parse::<usize>().unwrap()] = v,
                }
            }
            continue;
        }
        if reg == "oDepth" {
            job = job.cond(CondSetup {
                test: CondTest::Always,
                loc: CondLoc::Dpp,
                write: true,
                buffer: HostSurface::filled(Format::Float32_1, W, 1, 0.0),
            });
            continue;
        }
        let Some(Resource::Input(n)) = k.resource(&reg) else {
            continue;
        };
        let num: usize = reg[1..].parse().unwrap_or(0);
        match reg.chars().next() {
            Some(c @ ('v' | 't')) => {
                let rows: Vec<[u32; 4]> = (0..W).map(|_| [0; 4].map(|_: u32| g.value())).collect();
                for (p, v) in pixels.iter_mut().zip(&rows) {
                    if c == 'v' {
                        p.inputs[num] = *v;
                    } else {
                        p.texcoords[num] = *v;
                    }
                }
                let flat: Vec<f32> = rows.iter().flatten().map(|&b| f32::from_bits(b)).collect();
                job = job.input(
                    n,
                    HostSurface::from_f32(Format::Float32_4, W, 1, &flat).unwrap(),
                );
            }
            Some('s') if !reg.contains('.') => {
                let texels: Vec<[u32; 4]> = (0..TEX * TEX)
                    .map(|_| [0; 4].map(|_: u32| g.value()))
                    .collect();
                let flat: Vec<f32> = texels
                    .iter()
                    .flatten()
                    .map(|&b| f32::from_bits(b))
                    .collect();
                job = job.input(
                    n,
                    HostSurface::from_f32(Format::Float32_4, TEX, TEX, &flat).unwrap(),
                );
                for p in &mut pixels {
                    p.textures[num] = (TEX, TEX, texels.clone());
                }
            }
            _ => {}
        }
    }
    (with_output(k, job, "oC0"), pixels)
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Gen(Rng::new(seed));
    let version = 1 + g.below(4) as u8;
    let src = Shader1x {
        version,
        textures: if version == 4 { 6 } else { 4 },
        temps: if version == 4 { 6 } else { 2 },
        phase2: false,
        g: &mut g,
    }
    .text();
    let shader = d3d9::assemble(&src).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
    let back = d3d9::read(&d3d9::write(&shader));
    prop_assert_eq!(back.as_ref(), Ok(&shader));
    let k = kernel(&src);
    let (job, pixels) = bind_all(&k, &mut g);
    let out = run(&k, &job);
    let got = output(&k, &out, "oC0");
    let depth = out.cond.as_ref().map(|c| c.to_f32());
    for (x, mut px) in pixels.into_iter().enumerate() {
        eval(&shader, &mut px).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        if let Some(d) = &depth {
            prop_assert_eq!(
                d[x].to_bits(),
                px.depth.unwrap_or(0),
                "depth at {}\n{}",
                x,
                src
            );
        }
        prop_assert_eq!(
            got[x].map(f32::to_bits),
            px.out[0],
            "pixel {}\n{}\nDPP:\n{}",
            x,
            src,
            d3d9::compile(&shader).unwrap().listing
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::d3d9_cases()))]

    #[test]
    fn random_ps_1_x_shaders_agree_with_the_reference(seed in any::<u64>()) {
        check(seed)?;
    }
}

/// Runs `src` over one row of pixels, `inputs` bound by register name and
/// `consts` set by the host; oC0 of each pixel.
fn one_row(
    src: &str,
    inputs: &[(&str, Vec<[f32; 4]>)],
    consts: &[(u8, [f32; 4])],
) -> Vec<[f32; 4]> {
    let k = kernel(src);
    let w = inputs.first().map_or(1, |(_, r)| r.len()) as u32;
    let mut job = Job::new(w, 1);
    for (reg, row) in inputs {
        job = common::shader::bind(&k, job, reg, std::slice::from_ref(row));
    }
    for &(c, v) in consts {
        job = job.constant(c, v);
    }
    let job = with_output(&k, job, "oC0");
    let out = run(&k, &job);
    output(&k, &out, "oC0")
}

#[test]
fn constants_clamp_to_plus_minus_one_in_every_ps_1_x_version_and_not_in_2_0() {
    let (a, b) = ([-1.25, 0.5, 1.25, 3.0], [1.5, -0.75, -0.5, 0.25]);
    for v in ["ps_1_1", "ps_1_2", "ps_1_3", "ps_1_4"] {
        // Bound by the host.
        let got = one_row(&format!("{v}\nadd r0, c0, c1\n"), &[], &[(0, a), (1, b)]);
        assert_eq!(got, [[0.0, -0.25, 0.5, 1.25]], "{v}");
        // Defined in the shader.
        let got = one_row(
            &format!(
                "{v}\ndef c0, -1.25, 0.5, 1.25, 3\ndef c1, 1.5, -0.75, -0.5, 0.25\nadd r0, c0, c1\n"
            ),
            &[],
            &[],
        );
        assert_eq!(got, [[0.0, -0.25, 0.5, 1.25]], "{v}");
        // A NaN constant reads as −1 (docs/d3d9.md §6.2).
        let got = one_row(
            &format!("{v}\nmov r0, c2\n"),
            &[],
            &[(2, [f32::NAN, -0.0, 7.0, -7.0])],
        );
        assert_eq!(
            got[0].map(f32::to_bits),
            [-1.0f32, -0.0, 1.0, -1.0].map(f32::to_bits),
            "{v}"
        );
    }
    let got = one_row(
        "ps_2_0\nadd r0, c0, c1\nmov oC0, r0\n",
        &[],
        &[(0, a), (1, b)],
    );
    assert_eq!(got, [[0.25, -0.25, 0.75, 3.25]]);
}

#[test]
fn cnd_reads_r0_alpha_before_1_4_and_each_channel_in_1_4() {
    let v0 = vec![[0.2, 0.6, 0.5, 0.7], [0.9, 0.9, 0.9, 0.5]];
    let consts = [(1u8, [1.0, 1.0, 1.0, 1.0]), (2, [-1.0, -1.0, -1.0, -1.0])];
    for v in ["ps_1_1", "ps_1_2", "ps_1_3"] {
        let got = one_row(
            &format!("{v}\nmov r0, v0\ncnd r0, r0.a, c1, c2\n"),
            &[("v0", v0.clone())],
            &consts,
        );
        assert_eq!(got, [[1.0; 4], [-1.0; 4]], "{v}");
    }
    let got = one_row(
        "ps_1_4\nphase\nmov r0, v0\ncnd r0, r0, c1, c2\n",
        &[("v0", v0)],
        &consts,
    );
    // 0.5 is not above 0.5.
    assert_eq!(got, [[-1.0, 1.0, -1.0, 1.0], [1.0, 1.0, 1.0, -1.0]]);
}

#[test]
fn colour_inputs_and_texcoord_clamp_to_zero_one_and_texcrd_does_not() {
    let row = vec![[1.5, -0.5, 0.25, 2.0], [f32::NAN, -0.0, 1.0, 0.5]];
    let got = one_row("ps_1_1\nmov r0, v0\n", &[("v0", row.clone())], &[]);
    assert_eq!(got[0], [1.0, 0.0, 0.25, 1.0]);
    assert_eq!(
        got[1].map(f32::to_bits),
        [0.0f32, 0.0, 1.0, 0.5].map(f32::to_bits)
    );
    // texcoord: x, y, z clamped, w = 1.
    let got = one_row(
        "ps_1_1\ntexcoord t0\nmov r0, t0\n",
        &[("t0", row.clone())],
        &[],
    );
    assert_eq!(got[0], [1.0, 0.0, 0.25, 1.0]);
    // texcrd copies; the alpha of r0 is never written (0).
    let got = one_row("ps_1_4\ntexcrd r0.rgb, t0\n", &[("t0", row)], &[]);
    assert_eq!(got[0], [1.5, -0.5, 0.25, 0.0]);
}

#[test]
fn texkill_kills_where_x_y_or_z_is_negative() {
    let coords = vec![
        [0.5, 0.5, 0.5, -1.0],
        [-0.25, 0.5, 0.5, 1.0],
        [0.5, 0.5, -0.0, 1.0],
        [0.5, 0.5, -2.0, 1.0],
    ];
    for (v, kill) in [
        ("ps_1_1", "texkill t0\nmov r0, c0\n"),
        ("ps_1_4", "texkill t0\nmov r0, c0\n"),
        (
            "ps_1_4",
            "texcrd r1.rgb, t0\nphase\ntexkill r1\nmov r0, c0\n",
        ),
    ] {
        let got = one_row(
            &format!("{v}\n{kill}"),
            &[("t0", coords.clone())],
            &[(0, [0.25, 0.5, 0.75, 1.0])],
        );
        // Killed pixels leave the output as it was (zeros): w does not
        // count and −0 is not negative.
        let lit = [0.25, 0.5, 0.75, 1.0];
        assert_eq!(got, [lit, [0.0; 4], lit, [0.0; 4]], "{v}: {kill}");
    }
}

#[test]
fn a_co_issued_pair_reads_its_sources_before_either_writes() {
    let got = one_row(
        "ps_1_1\ndef c0, 0.5, 0.25, 0.125, 1\nmov r0, c0\nmov r0.rgb, c0.a\n+add r0.a, r0.b, r0.b\n",
        &[],
        &[],
    );
    // The alpha instruction read r0.b = 0.125, not the 1 the other wrote.
    assert_eq!(got, [[1.0, 1.0, 1.0, 0.25]]);
}

#[test]
fn source_modifiers_and_shifts_compute_as_documented() {
    let got = one_row(
        "ps_1_4\ndef c0, 0.75, 0.25, 1, 0\nphase\nadd r0, c0_bias, c0_bx2\nmul_x4 r1, c0_x2, 1-c0\nmov_d2 r0.a, r1.r\n",
        &[],
        &[],
    );
    // bias + bx2 = (0.25 + 0.5, −0.25 − 0.5, 0.5 + 1, −0.5 − 1); x2 · (1 − x)
    // · 4 = (1.5, 1.5, 0, 0) → r0.a = 1.5 / 2.
    assert_eq!(got, [[0.75, -0.75, 1.5, 0.75]]);
}

#[test]
fn in_the_ctm_dialect_colours_and_coordinates_are_interpolants() {
    // With no parameters given, every interpolant is the pixel's centre
    // (i + ½, j + ½, 0, 1); v0, v1 are slots 1, 2 and t0–t4 slots 3–7.
    let k = common::shader::kernel_in(
        "ps_1_4\ntexcrd r0.rgb, t4\nphase\nmov r0.a, v1.r\n",
        d3d9::Dialect::Ctm,
    );
    assert!(
        k.exe.info.bindings.iter().any(|(r, _)| r == "t4.plane"),
        "{:?}",
        k.exe.info.bindings
    );
    let out = run(&k, &with_output(&k, Job::new(2, 1), "oC0"));
    // v1 is clamped to [0, 1].
    assert_eq!(
        output(&k, &out, "oC0"),
        [[0.5, 0.5, 0.0, 0.5], [1.5, 0.5, 0.0, 1.0]]
    );
    // Lookups take texel coordinates: stage 0 at t0 = (i + ½, j + ½) is
    // texel (i, j).
    let k = common::shader::kernel_in("ps_1_1\ntex t0\nmov r0, t0\n", d3d9::Dialect::Ctm);
    let Some(Resource::Input(n)) = k.resource("s0") else {
        panic!("{:?}", k.exe.info.bindings)
    };
    let texels = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let job = Job::new(2, 1).input(
        n,
        HostSurface::from_f32(Format::Float32_4, 2, 1, &texels).unwrap(),
    );
    let out = run(&k, &with_output(&k, job, "oC0"));
    assert_eq!(
        output(&k, &out, "oC0"),
        [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    );
    // What does not fit in the seven slots is an error naming it.
    let s = d3d9::assemble("ps_1_4\ntexld r0, t5\n").unwrap();
    let e = d3d9::compile_dialect(&s, d3d9::Dialect::Ctm).unwrap_err();
    assert!(e.message.contains("t0–t4"), "{e}");
}
