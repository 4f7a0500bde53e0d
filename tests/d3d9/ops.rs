//! Every ps_2_0/2_x/3_0 arithmetic instruction, modifier and register kind
//! compiled to the DPP, with hand-computed results, run on both engines
//! (bit-identical between them, `common::both`).

use crate::common;

use common::shader::{bind, kernel, output, run, with_output};
use ctm::d3d9;
use ctm::kernel::{HostSurface, Job, Kernel, Resource};
use ctm::mc::Format;

/// Compiles `src` and runs it over one row, v0 (or t0) of pixel k being
/// `v0[k]`; returns oC0 per pixel.
fn shade(src: &str, v0: &[[f32; 4]], job: impl Fn(Job) -> Job) -> Vec<[f32; 4]> {
    let k = kernel(src);
    let mut j = Job::new(v0.len() as u32, 1);
    for reg in ["v0", "t0"] {
        if k.resource(reg).is_some() {
            j = bind(&k, j, reg, &[v0.to_vec()]);
        }
    }
    let j = job(with_output(&k, j, "oC0"));
    output(&k, &run(&k, &j), "oC0")
}

/// `shade` with the body between a ps_3_0 header declaring v0 and
/// `mov oC0, r0`, checked against `want` bit for bit.
fn check(body: &str, v0: &[[f32; 4]], want: &[[f32; 4]]) {
    let src = format!("ps_3_0\ndcl_texcoord0 v0\n{body}\nmov oC0, r0\n");
    let got = shade(&src, v0, |j| j);
    let bits =
        |v: &[[f32; 4]]| -> Vec<[u32; 4]> { v.iter().map(|p| p.map(f32::to_bits)).collect() };
    assert_eq!(bits(&got), bits(want), "{body}\ngot {got:?}\nwant {want:?}");
}

const C: &str = "def c0, 1, 2, 3, 4\ndef c1, 5, 6, 7, 8\ndef c2, 1, 0, 1, 0\ndef c3, 0, 0, 0, 0\n";

#[test]
fn arithmetic() {
    let v = [[1.0, -2.0, 0.5, 0.0]];
    check(&format!("{C}add r0, v0, c0"), &v, &[[2.0, 0.0, 3.5, 4.0]]);
    check(
        &format!("{C}sub r0, v0, c0"),
        &v,
        &[[0.0, -4.0, -2.5, -4.0]],
    );
    check(&format!("{C}mul r0, v0, c0"), &v, &[[1.0, -4.0, 1.5, 0.0]]);
    check(
        &format!("{C}mad r0, v0, c0, c1"),
        &v,
        &[[6.0, 2.0, 8.5, 8.0]],
    );
    // -1 · 0 = -0 (a multiply by -0 added, not +0).
    check(&format!("{C}mul r0, -v0.x, c3"), &v, &[[-0.0; 4]]);
    check(
        &format!("{C}frc r0, v0"),
        &[[1.25, -0.25, 3.5, 0.0]],
        &[[0.25, 0.75, 0.5, 0.0]],
    );
    check(
        &format!("{C}lrp r0, v0.z, c0, c1"),
        &v,
        &[[3.0, 4.0, 5.0, 6.0]],
    );
}

#[test]
fn moves_swizzles_and_source_modifiers() {
    let v = [[1.0, -2.0, 0.5, 0.0]];
    check("mov r0, -v0.wzyx", &v, &[[-0.0, -0.5, 2.0, -1.0]]);
    check("abs r0, v0", &v, &[[1.0, 2.0, 0.5, 0.0]]);
    check(
        &format!("{C}add r0, v0_abs, -c0_abs"),
        &v,
        &[[0.0, 0.0, -2.5, -4.0]],
    );
    check("mov r0, -v0_abs.y", &v, &[[-2.0; 4]]);
    check("mov r0, v0.xy", &v, &[[1.0, -2.0, -2.0, -2.0]]);
    // Write masks and _sat.
    check(
        &format!("{C}mov r0, c0\nmov r0.yw, v0"),
        &v,
        &[[1.0, -2.0, 3.0, 0.0]],
    );
    check(
        &format!("{C}mul_sat r0, v0, c0.y"),
        &v,
        &[[1.0, 0.0, 1.0, 0.0]],
    );
    check(
        &format!("{C}add_sat r0, v0, c0"),
        &v,
        &[[1.0, 0.0, 1.0, 1.0]],
    );
}

#[test]
fn selections_and_comparisons() {
    let v = [[1.0, -2.0, 0.5, 0.0]];
    check(&format!("{C}min r0, v0, c3"), &v, &[[0.0, -2.0, 0.0, 0.0]]);
    check(&format!("{C}max r0, v0, c3"), &v, &[[1.0, 0.0, 0.5, 0.0]]);
    // max(a, b) = a ≥ b ? a : b: max(-0, +0) is -0, min(-0, +0) is +0.
    check(&format!("{C}max r0, -c3, c3"), &v, &[[-0.0; 4]]);
    check(&format!("{C}min r0, -c3, c3"), &v, &[[0.0; 4]]);
    check(&format!("{C}slt r0, v0, c2"), &v, &[[0.0, 1.0, 1.0, 0.0]]);
    check(&format!("{C}sge r0, v0, c2"), &v, &[[1.0, 0.0, 0.0, 1.0]]);
    check(
        &format!("{C}cmp r0, v0, c0, -c0"),
        &v,
        &[[1.0, -2.0, 3.0, 4.0]],
    );
    check(
        &format!("{C}cnd r0, v0, c0, -c0"),
        &v,
        &[[1.0, -2.0, -3.0, -4.0]],
    );
}

#[test]
fn dot_products_and_matrices() {
    let v = [[1.0, -2.0, 0.5, 1.0]];
    check(&format!("{C}dp3 r0, v0, c0"), &v, &[[-1.5; 4]]);
    check(&format!("{C}dp4 r0, v0, c0"), &v, &[[2.5; 4]]);
    check(&format!("{C}dp2add r0, v0, c0, c1.z"), &v, &[[4.0; 4]]);
    check(
        &format!("{C}mov r0, c3\ndp3 r0.y, v0, c0"),
        &v,
        &[[0.0, -1.5, 0.0, 0.0]],
    );
    // Rows c0, c1, c2, c3.
    check(&format!("{C}m4x4 r0, v0, c0"), &v, &[[2.5, 4.5, 1.5, 0.0]]);
    check(
        &format!("{C}mov r0, c1\nm4x3 r0, v0, c0"),
        &v,
        &[[2.5, 4.5, 1.5, 8.0]],
    );
    check(
        &format!("{C}mov r0, c1\nm3x4 r0, v0, c0"),
        &v,
        &[[-1.5, -3.5, 1.5, 0.0]],
    );
    check(
        &format!("{C}mov r0, c1\nm3x3 r0, v0, c0"),
        &v,
        &[[-1.5, -3.5, 1.5, 8.0]],
    );
    check(
        &format!("{C}mov r0, c1\nm3x2 r0, v0, c0"),
        &v,
        &[[-1.5, -3.5, 7.0, 8.0]],
    );
    // The destination may be the vector itself.
    check(
        &format!("{C}mov r0, v0\nm4x4 r0, r0, c0"),
        &v,
        &[[2.5, 4.5, 1.5, 0.0]],
    );
    // Cross product of x and y is z.
    check(
        "def c4, 1, 0, 0, 0\ndef c5, 0, 1, 0, 0\nmov r0, c5.w\ncrs r0.xyz, c4, c5",
        &v,
        &[[0.0, 0.0, 1.0, 0.0]],
    );
}

/// `check` within a relative 2^-20 (the DPP's EX2 and LN2 are within a
/// few units in the last place).
fn close(body: &str, v0: &[[f32; 4]], want: [f32; 4]) {
    let src = format!("ps_3_0\ndcl_texcoord0 v0\n{body}\nmov oC0, r0\n");
    let got = shade(&src, v0, |j| j)[0];
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= w.abs() * 1e-6,
            "{body}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn scalar_functions() {
    let v = [[4.0, -0.5, 3.0, -8.0]];
    check("rcp r0, v0.y", &v, &[[-2.0; 4]]);
    check("rsq r0, v0.x", &v, &[[0.5; 4]]);
    // rsq and log take the absolute value.
    check("rsq r0, -v0.x", &v, &[[0.5; 4]]);
    close("exp r0, v0.z", &v, [8.0; 4]);
    close("log r0, v0.w", &v, [3.0; 4]);
    close("pow r0, v0.w, v0.y", &v, [0.353_553_38; 4]);
    close("pow r0, v0.x, v0.z", &v, [64.0; 4]);
    // nrm: xyz / |xyz|, w scaled alike.
    close("nrm r0, v0", &[[3.0, 0.0, 4.0, 10.0]], [0.6, 0.0, 0.8, 2.0]);
    close(
        "nrm r0, v0.zwxy",
        &[[0.0, 10.0, 3.0, 4.0]],
        [0.6, 0.8, 0.0, 2.0],
    );
    // One channel written, the others kept.
    check("mov r0, v0\nrcp r0.z, v0.x", &v, &[[4.0, -0.5, 0.25, -8.0]]);
}

#[test]
fn sincos_takes_radians() {
    let got = shade(
        "ps_3_0\ndcl_texcoord0 v0\ndef c0, 0, 0, 0, 0\nmov r0, c0\nsincos r0.xy, v0.x\nmov oC0, r0\n",
        &[
            [0.0; 4],
            [std::f32::consts::FRAC_PI_2, 0.0, 0.0, 0.0],
            [std::f32::consts::PI, 0.0, 0.0, 0.0],
        ],
        |j| j,
    );
    let want = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]];
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g[0] - w[0]).abs() < 1e-5 && (g[1] - w[1]).abs() < 1e-5,
            "{got:?}"
        );
        assert_eq!((g[2], g[3]), (0.0, 0.0));
    }
    // ps_2_0's form with its two constant registers.
    let got = shade(
        "ps_2_0\ndcl t0\ndef c0, 0, 0, 0, 0\nmov r0, c0\nsincos r0.y, t0.x, c1, c2\nmov oC0, r0\n",
        &[[std::f32::consts::FRAC_PI_2, 0.0, 0.0, 0.0]],
        |j| j,
    );
    assert!(
        (got[0][1] - 1.0).abs() < 1e-6 && got[0][0] == 0.0,
        "{got:?}"
    );
}

#[test]
fn registers_of_every_kind() {
    // vPos is the pixel's (i, j); c# from the host; t# in ps_2_0.
    let got = shade(
        "ps_3_0\ndcl vPos.xy\nmov r0, c7\nmov r0.xy, vPos\nmov oC0, r0\n",
        &[[0.0; 4]; 3],
        |j| j.constant(7, [9.0, 9.0, 5.0, 6.0]),
    );
    assert_eq!(
        got,
        vec![
            [0.0, 0.0, 5.0, 6.0],
            [1.0, 0.0, 5.0, 6.0],
            [2.0, 0.0, 5.0, 6.0]
        ]
    );
    // vFace is +1 unless the host sets it.
    let src = "ps_3_0\ndcl vFace\ndef c0, 1, 2, 3, 4\ncmp r0, vFace, c0, -c0\nmov oC0, r0\n";
    assert_eq!(shade(src, &[[0.0; 4]], |j| j), vec![[1.0, 2.0, 3.0, 4.0]]);
    let k = Kernel::from_d3d9(&d3d9::assemble(src).unwrap()).unwrap();
    let Some(Resource::Float(face)) = k.resource("vFace") else {
        panic!()
    };
    assert_eq!(
        shade(src, &[[0.0; 4]], |j| j.constant(face, [-1.0; 4])),
        vec![[-1.0, -2.0, -3.0, -4.0]]
    );
    // ps_2_0 texture coordinates and two inputs.
    let src = "ps_2_0\ndcl t0\ndcl t1\nadd r0, t0, t1\nmov oC0, r0\n";
    let shader = d3d9::assemble(src).unwrap();
    let k = Kernel::from_d3d9(&shader).unwrap();
    let (Some(Resource::Input(a)), Some(Resource::Input(b))) = (k.resource("t0"), k.resource("t1"))
    else {
        panic!()
    };
    let job = Job::new(1, 1)
        .input(
            a,
            HostSurface::from_f32(Format::Float32_4, 1, 1, &[1.0, 2.0, 3.0, 4.0]).unwrap(),
        )
        .input(
            b,
            HostSurface::from_f32(Format::Float32_4, 1, 1, &[10.0, 20.0, 30.0, 40.0]).unwrap(),
        )
        .output(0, Format::Float32_4);
    assert_eq!(
        run(&k, &job).output(0).unwrap().to_f32(),
        vec![11.0, 22.0, 33.0, 44.0]
    );
    // A def overrides the host's value (as in Direct3D 9).
    assert_eq!(
        shade(&format!("ps_3_0\n{C}mov oC0, c0\n"), &[[0.0; 4]], |j| j
            .constant(0, [7.0; 4])),
        vec![[1.0, 2.0, 3.0, 4.0]]
    );
}

#[test]
fn outputs_depth_and_render_targets() {
    let src = "ps_3_0\ndcl_texcoord0 v0\ndef c0, 1, 2, 3, 4\nmov oC0, v0\nmov oC1, c0\nadd oC3.xy, v0, c0\nmov oDepth, v0.z\n";
    let k = Kernel::from_d3d9(&d3d9::assemble(src).unwrap()).unwrap();
    assert_eq!(k.resource("oC1"), Some(Resource::Output(1)));
    assert_eq!(k.resource("oC3"), Some(Resource::Output(3)));
    assert_eq!(k.resource("oDepth"), Some(Resource::Cond));
    assert!(k.exe.info.cond_out);
    let Some(Resource::Input(n)) = k.resource("v0") else {
        panic!()
    };
    let job = Job::new(1, 1)
        .input(
            n,
            HostSurface::from_f32(Format::Float32_4, 1, 1, &[0.5, 0.25, 0.125, 2.0]).unwrap(),
        )
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
        .output(3, Format::Float32_4)
        .cond(ctm::kernel::CondSetup {
            test: ctm::co::CondTest::Always,
            loc: ctm::co::CondLoc::Dpp,
            write: true,
            buffer: HostSurface::filled(Format::Float32_1, 1, 1, 0.0),
        });
    let out = run(&k, &job);
    assert_eq!(out.output(0).unwrap().to_f32(), vec![0.5, 0.25, 0.125, 2.0]);
    assert_eq!(out.output(1).unwrap().to_f32(), vec![1.0, 2.0, 3.0, 4.0]);
    // oC3.zw were never written: memory keeps its zeros.
    assert_eq!(out.output(3).unwrap().to_f32(), vec![1.5, 2.25, 0.0, 0.0]);
    assert_eq!(out.cond.unwrap().to_f32(), vec![0.125]);
}
