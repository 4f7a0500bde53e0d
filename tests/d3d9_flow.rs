//! Compiled Direct3D 9 flow control, predication, derivatives, texture
//! reads and kills on both engines, with hand-computed results.

mod common;

use common::shader::{bind, kernel, output, run, with_output};
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
