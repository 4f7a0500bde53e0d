//! Compiled Direct3D 9 flow control, predication, derivatives, texture
//! reads and kills on both engines, with hand-computed results; the ctm
//! dialect's texel coordinates and interpolants.

use crate::common;

use common::shader::{bind, kernel, kernel_in, output, run, with_output};
use ctm::kernel::{HostSurface, Job, Resource};
use ctm::mc::Format;

/// Runs `src` over one row with v0 = `v0`; returns oC0.
fn shade(src: &str, v0: &[[f32; 4]], job: impl Fn(Job) -> Job) -> Vec<[f32; 4]> {
    let k = kernel(src);
    let mut j = Job::new(v0.len() as u32, 1);
    if k.resource("v0").is_some() {
        j = bind(&k, j, "v0", &[v0.to_vec()]);
    }
    let j = job(with_output(&k, j, "oC0"));
    output(&k, &run(&k, &j), "oC0")
}

fn xs(v: &[f32]) -> Vec<[f32; 4]> {
    v.iter().map(|&x| [x, 0.0, 0.0, 0.0]).collect()
}

fn firsts(v: &[[f32; 4]]) -> Vec<f32> {
    v.iter().map(|p| p[0]).collect()
}

#[test]
fn if_on_bools_and_comparisons() {
    let src = "ps_3_0
dcl_texcoord0 v0
def c0, 1, 2, 3, 4
def c1, 0.5, 0, 0, 0
if b3
  mov r0, c0
else
  mov r0, -c0
endif
if_gt v0.x, c1.x
  add r0, r0, c0
endif
mov oC0, r0";
    let v = xs(&[0.0, 1.0, 0.5, 2.0]);
    let on = shade(src, &v, |j| j.boolean(3, true));
    assert_eq!(firsts(&on), [1.0, 2.0, 1.0, 2.0]);
    let off = shade(src, &v, |j| j.boolean(3, false));
    assert_eq!(firsts(&off), [-1.0, 0.0, -1.0, 0.0]);
    // Nested ifs with else on per-pixel comparisons.
    let src = "ps_3_0
dcl_texcoord0 v0
def c0, 0, 1, 2, 3
if_lt v0.x, c0.y
  if_eq v0.x, c0.x
    mov r0, c0.x
  else
    mov r0, c0.y
  endif
else
  if_ne v0.x, c0.z
    mov r0, c0.z
  else
    mov r0, c0.w
  endif
endif
mov oC0, r0";
    let got = shade(src, &xs(&[0.0, 0.5, 2.0, 5.0]), |j| j);
    assert_eq!(firsts(&got), [0.0, 1.0, 3.0, 2.0]);
}

#[test]
fn rep_and_loop_with_breaks() {
    // Sum 1 + 2 + … until the sum exceeds v0.x (at most i0.x times).
    let src = "ps_3_0
dcl_texcoord0 v0
defi i0, 10, 0, 0, 0
def c0, 0, 1, 0, 0
mov r0, c0.x
mov r1, c0.x
rep i0
  add r1, r1, c0.y
  add r0, r0, r1
  break_gt r0.x, v0.x
endrep
mov oC0, r0";
    let got = shade(src, &xs(&[0.0, 3.0, 7.0, 100.0]), |j| j);
    assert_eq!(firsts(&got), [1.0, 6.0, 10.0, 55.0]);
    // loop aL with c[aL+n], nested, and the host's integer constant.
    let src = "ps_3_0
def c0, 0, 0, 0, 0
def c10, 1, 0, 0, 0
def c11, 10, 0, 0, 0
def c12, 100, 0, 0, 0
def c13, 1000, 0, 0, 0
mov r0, c0
loop aL, i0
  add r0, r0, c[aL+10]
  loop aL, i1
    add r0.y, r0.y, c[aL+10].x
  endloop
endloop
mov oC0, r0";
    let got = shade(src, &xs(&[0.0]), |j| j.int(0, 3, 0, 1).int(1, 2, 2, 1));
    // Outer aL = 0, 1, 2: x = 1 + 10 + 100; inner aL = 2, 3 three times.
    assert_eq!(got[0][..2], [111.0, 3.0 * 1100.0]);
    // A loop of count 0 runs nothing; breakp and predicated writes.
    let src = "ps_3_0
dcl_texcoord0 v0
def c0, 0, 1, 0, 0
defi i2, 0, 0, 0, 0
defi i3, 8, 0, 0, 0
mov r0, c0.x
rep i2
  add r0, r0, c0.y
endrep
rep i3
  setp_ge p0.x, r0.x, v0.x
  breakp p0.x
  (!p0.x) add r0.x, r0.x, c0.y
endrep
mov oC0, r0";
    let got = shade(src, &xs(&[0.0, 2.0, 5.0, 20.0]), |j| j);
    assert_eq!(firsts(&got), [0.0, 2.0, 5.0, 8.0]);
}

#[test]
fn subroutines_and_conditional_calls() {
    let src = "ps_3_0
dcl_texcoord0 v0
def c0, 0, 1, 10, 100
mov r0, c0.x
call l0
callnz l1, b0
setp_gt p0, v0, c0.y
callnz l2, p0.x
callnz l2, !p0.x
mov oC0, r0
ret
label l0
add r0.x, r0.x, c0.y
ret
label l1
add r0.x, r0.x, c0.z
call l0
ret
label l2
add r0.x, r0.x, c0.w
ret";
    // Every pixel gets one of the two predicated calls of l2.
    let got = shade(src, &xs(&[0.0, 5.0]), |j| j.boolean(0, true));
    assert_eq!(firsts(&got), [112.0, 112.0]);
    let got = shade(src, &xs(&[0.0, 5.0]), |j| j.boolean(0, false));
    assert_eq!(firsts(&got), [101.0, 101.0]);
}

#[test]
fn predicated_writes_use_the_predicate_swizzle() {
    let src = "ps_3_0
dcl_texcoord0 v0
def c0, 0, 0, 0, 0
def c1, 1, 2, 3, 4
mov r0, c0
setp_lt p0, v0, c0
(p0) mov r0, c1
(!p0.wzyx) add r0, r0, c1
mov oC0, r0";
    let got = shade(src, &[[-1.0, 1.0, -1.0, 1.0]], |j| j);
    // p0 = (1, 0, 1, 0); !p0.wzyx = (1, 0, 1, 0) per channel.
    assert_eq!(got, vec![[2.0, 0.0, 6.0, 0.0]]);
}

#[test]
fn derivatives_across_quads() {
    // r0 = (i², j², 0, 0): dsx = right − left within the quad.
    let src = "ps_3_0
dcl vPos.xy
def c0, 0, 0, 0, 0
mov r0, c0
mul r0.xy, vPos, vPos
dsx r1, r0
dsy r2, r0
add r3, r1, r2
mov oC0, r3";
    let k = kernel(src);
    let job = with_output(&k, Job::new(4, 4), "oC0");
    let got = output(&k, &run(&k, &job), "oC0");
    for j in 0..4usize {
        for i in 0..4usize {
            let (x, y) = ((i / 2 * 2) as f32, (j / 2 * 2) as f32);
            let dx = (x + 1.0) * (x + 1.0) - x * x;
            let dy = (y + 1.0) * (y + 1.0) - y * y;
            assert_eq!(got[j * 4 + i][..2], [dx, dy], "({i}, {j})");
        }
    }
}

#[test]
fn texkill_and_sampled_textures() {
    // A 4×2 texture sampled at (u, v) with wrapping; pixels with a negative
    // v0.x are killed (their output keeps the init value).
    let src = "ps_3_0
dcl_texcoord0 v0
dcl_2d s0
texkill v0
texld r0, v0, s0
mov oC0, r0";
    let k = kernel(src);
    let tex: Vec<[f32; 4]> = (0..8).map(|n| [n as f32, 0.0, 0.0, 1.0]).collect();
    let Some(Resource::Input(t)) = k.resource("s0") else {
        panic!()
    };
    let flat: Vec<f32> = tex.iter().flatten().copied().collect();
    let coords = vec![
        [0.0, 0.0, 0.0, 0.0],
        [0.3, 0.0, 0.0, 0.0],
        [0.75, 0.6, 0.0, 0.0],
        [1.25, 0.0, 0.0, 0.0],
        [-0.5, 0.0, 0.0, 0.0],
        [0.5, -0.25, 0.0, 0.0],
    ];
    let job = Job::new(6, 1).input(
        t,
        HostSurface::from_f32(Format::Float32_4, 4, 2, &flat).unwrap(),
    );
    let job = bind(&k, job, "v0", &[coords]);
    let Some(Resource::Output(o)) = k.resource("oC0") else {
        panic!()
    };
    let job = job.output_init(o, HostSurface::filled(Format::Float32_4, 6, 1, 9.0));
    let got = firsts(&output(&k, &run(&k, &job), "oC0"));
    assert_eq!(got, [0.0, 1.0, 7.0, 1.0, 9.0, 9.0]);
    // texldp divides by w first.
    let src = "ps_3_0
dcl_texcoord0 v0
dcl_2d s0
texldp r0, v0, s0
mov oC0, r0";
    let k = kernel(src);
    let Some(Resource::Input(t)) = k.resource("s0") else {
        panic!()
    };
    let job = Job::new(1, 1).input(
        t,
        HostSurface::from_f32(Format::Float32_4, 4, 2, &flat).unwrap(),
    );
    let job = bind(&k, job, "v0", &[vec![[1.5, 1.0, 0.0, 2.0]]]);
    let job = with_output(&k, job, "oC0");
    assert_eq!(firsts(&output(&k, &run(&k, &job), "oC0")), [7.0]);
}

#[test]
fn inputs_addressed_through_al() {
    let src = "ps_3_0
dcl_texcoord0 v0
dcl_texcoord1 v1
dcl_texcoord2 v2
def c0, 0, 0, 0, 0
defi i0, 3, 0, 1, 0
mov r0, c0
loop aL, i0
  add r0, r0, v[aL]
endloop
mov oC0, r0";
    let k = kernel(src);
    let mut job = Job::new(1, 1);
    for (n, reg) in ["v0", "v1", "v2"].iter().enumerate() {
        job = bind(&k, job, reg, &[vec![[10f32.powi(n as i32), 0.0, 0.0, 0.0]]]);
    }
    let job = with_output(&k, job, "oC0");
    assert_eq!(firsts(&output(&k, &run(&k, &job), "oC0")), [111.0]);
}

/// A w × h float32_4 texture whose texel (x, y) is (x, y, 10x + y, 1).
fn ramp(w: u32, h: u32) -> HostSurface {
    let v: Vec<f32> = (0..h)
        .flat_map(|y| (0..w).flat_map(move |x| [x as f32, y as f32, (10 * x + y) as f32, 1.0]))
        .collect();
    HostSurface::from_f32(Format::Float32_4, w, h, &v).unwrap()
}

const CTM_SHADER: &str = "ps_3_0
dcl_texcoord0 v0.xy
dcl vPos.xy
dcl_2d s0
def c0, 100, 0, 0, 0
texld r0, vPos, s0
texld r1, v0, s0
mad oC0, r1, c0.x, r0
mov oC1, v0
";

fn ctm_run(job: impl Fn(Job) -> Job) -> (Vec<[f32; 4]>, Vec<[f32; 4]>) {
    let k = kernel_in(CTM_SHADER, ctm::d3d9::Dialect::Ctm);
    let Some(Resource::Input(s0)) = k.resource("s0") else {
        panic!("{:?}", k.exe.info.bindings)
    };
    assert!(k.resource("s0.size").is_none());
    let j = Job::new(8, 4).input(s0, ramp(8, 4));
    let j = job(with_output(&k, with_output(&k, j, "oC0"), "oC1"));
    let r = run(&k, &j);
    (output(&k, &r, "oC0"), output(&k, &r, "oC1"))
}

#[test]
fn the_ctm_dialect_reads_texels_at_vpos_and_at_interpolants() {
    // No parameters given: every interpolant is the pixel's centre.
    let (out, v0) = ctm_run(|j| j);
    for j in 0..4 {
        for i in 0..8 {
            let p = (j * 8 + i) as usize;
            let t = [i as f32, j as f32, (10 * i + j) as f32, 1.0];
            assert_eq!(out[p], t.map(|x| 101.0 * x), "({i}, {j})");
            assert_eq!(v0[p], [i as f32 + 0.5, j as f32 + 0.5, 0.0, 1.0]);
        }
    }
}

#[test]
fn ctm_dialect_interpolants_follow_the_parameters() {
    // The SDK client's triangle: vertices at (0, 0), (3w, 0), (0, 3h);
    // v0 = (2x − 1.45, y − 0.45, 7, −1) at each vertex, so pixel (i, j)
    // sees (2i − 0.45, j + 0.05, 7, −1) and reads texel (2i − 1, j).
    let (w, h) = (8.0f32, 4.0f32);
    let mut p = [0.0f32; 96];
    for (v, (x, y)) in [(0.0, 0.0), (3.0 * w, 0.0), (0.0, 3.0 * h)]
        .into_iter()
        .enumerate()
    {
        p[32 * v..32 * v + 4].copy_from_slice(&[x, y, 0.0, 1.0]);
        p[32 * v + 4..32 * v + 8].copy_from_slice(&[2.0 * x - 1.45, y - 0.45, 7.0, -1.0]);
    }
    let (out, v0) = ctm_run(|j| j.params(p));
    for j in 0..4 {
        for i in 0..8 {
            let q = (j * 8 + i) as usize;
            let near = |a: f32, b: f32| (a - b).abs() < 1e-5;
            assert!(
                near(v0[q][0], 2.0 * i as f32 - 0.45) && near(v0[q][1], j as f32 + 0.05),
                "({i}, {j}): {:?}",
                v0[q]
            );
            assert_eq!([v0[q][2], v0[q][3]], [7.0, -1.0]);
            // Texel (2i − 1, j): outside the texture for i = 0 and i ≥ 5.
            let x = 2 * i - 1;
            let t = if (0..8).contains(&x) {
                [x as f32, j as f32, (10 * x + j) as f32, 1.0]
            } else {
                [0.0; 4]
            };
            let at = [i as f32, j as f32, (10 * i + j) as f32, 1.0];
            assert_eq!(
                out[q],
                std::array::from_fn(|c| 100.0 * t[c] + at[c]),
                "({i}, {j})"
            );
        }
    }
}

#[test]
fn the_ctm_dialect_says_what_it_cannot_compile() {
    let fails = |src: &str| {
        let s = ctm::d3d9::assemble(src).unwrap();
        ctm::d3d9::compile_dialect(&s, ctm::d3d9::Dialect::Ctm)
            .unwrap_err()
            .to_string()
    };
    let e = fails("ps_3_0\ndcl_texcoord7 v7\nmov oC0, v7\n");
    assert!(e.contains("interpolants v0–v6"), "{e}");
    let e = fails("ps_2_0\ndcl t0\nmov oC0, t0\n");
    assert!(e.contains("ps_3_0"), "{e}");
}

#[test]
fn shader_limits_are_compile_errors_naming_the_instruction() {
    let fails = |src: &str| {
        let s = ctm::d3d9::assemble(src).unwrap();
        ctm::d3d9::compile(&s).unwrap_err().to_string()
    };
    let nest = |open: &str, close: &str, n: usize| {
        format!(
            "ps_3_0\ndefi i0, 2, 0, 0, 0\n{}add r0, r0, r0\n{}mov oC0, r0\n",
            format!("{open}\n").repeat(n),
            format!("{close}\n").repeat(n)
        )
    };
    // Four loops compile; five do not (they compiled, then every run
    // overflowed a stack, before).
    assert!(
        ctm::d3d9::compile(&ctm::d3d9::assemble(&nest("rep i0", "endrep", 4)).unwrap()).is_ok()
    );
    let e = fails(&nest("rep i0", "endrep", 5));
    assert!(e.contains("`rep i0`") && e.contains("allow 4"), "{e}");
    // Where: the line and column in text, the token offset in bytecode.
    let text = nest("rep i0", "endrep", 5);
    let shader = ctm::d3d9::assemble(&text).unwrap();
    let err = ctm::d3d9::compile(&shader).unwrap_err();
    let at = ctm::program::compile_error_at(text.as_bytes(), &err);
    assert!(at.starts_with("7:1: item 6 (`rep i0`)"), "{at}");
    let tokens: Vec<u8> = ctm::d3d9::write(&shader)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    let at = ctm::program::compile_error_at(&tokens, &err);
    let offset = ctm::d3d9::item_offsets(&shader)[5];
    assert!(at.starts_with(&format!("token {offset}: item 6")), "{at}");
    assert_eq!(tokens[4 * offset], 38, "the rep opcode stands there");
    let e = fails(&nest("loop aL, i0", "endloop", 64));
    assert!(e.contains("rep/loop nested 64 deep"), "{e}");
    let e = fails(&nest("if b0", "endif", 25));
    assert!(
        e.contains("if nested 25 deep") && e.contains("allow 24"),
        "{e}"
    );
    // A loop in a subroutine counts at the depth of its call.
    let e = fails(
        "ps_3_0\ndefi i0, 2, 0, 0, 0\nrep i0\nrep i0\nrep i0\ncall l0\nendrep\nendrep\nendrep\nmov oC0, r0\nret\n\
         label l0\nrep i0\nrep i0\nadd r0, r0, r0\nendrep\nendrep\nret\n",
    );
    assert!(
        e.contains("`call l0`") && e.contains("rep/loop nested 5"),
        "{e}"
    );
    // Chains of calls and recursion.
    let chain = |n: usize| {
        let mut s = "ps_3_0\ncall l0\nmov oC0, r0\nret\n".to_string();
        for k in 0..n {
            s += &format!("label l{k}\ncall l{}\nret\n", k + 1);
        }
        s + &format!("label l{n}\nmov r0, c0\nret\n")
    };
    assert!(ctm::d3d9::compile(&ctm::d3d9::assemble(&chain(3)).unwrap()).is_ok());
    let e = fails(&chain(4));
    assert!(e.contains("call nested 5 deep"), "{e}");
    let e = fails(
        "ps_3_0\ncall l0\nmov oC0, r0\nret\nlabel l0\ncall l1\nret\nlabel l1\ncall l0\nret\n",
    );
    assert!(e.contains("calls itself"), "{e}");
    // A call to a label no `label` defines: an error at the call (it was
    // a panic in the encoder, found by fuzzing), however it is called.
    for call in ["call l3", "callnz l3, b0", "callnz l3, !p0.x"] {
        let e = fails(&format!(
            "ps_3_0\ndefb b0, true\nsetp_lt p0, r0.x, c0.x\nif b0\n{call}\nendif\nmov oC0, r0\nret\nlabel l0\nret\n"
        ));
        assert!(
            e.contains(&format!("`{call}`")) && e.contains("l3 is not defined"),
            "{e}"
        );
    }
    // More than the instruction store holds: an error at the instruction
    // that overflows it, not an internal error with a listing.
    let many = format!(
        "ps_3_0\ndef c0, 1, 1, 1, 1\nmov r0, c0\n{}mov oC0, r0\n",
        "add r0, r0, c0\n".repeat(200_000)
    );
    let e = fails(&many);
    assert!(
        e.contains("more than the DPP's 512 instructions") && e.len() < 300,
        "{e}"
    );
    assert!(!e.contains("internal"), "{e}");
}
