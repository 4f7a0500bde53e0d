//! The seeds the fuzz targets start from: small programs that reach every
//! instruction type and flow control, and shaders of every version (their
//! bytecode and their text).

/// Small programs that exercise every instruction type and flow control.
pub(super) fn seed_sources() -> Vec<String> {
    let mut v = vec![
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last".to_string(),
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
alu r2.rgb = mad(s0.rrr, s1, s2) | r2.a = rcp(s0) src0=r1 src1=c0 src2=r0 srcp=sub
alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r2 res=r<0
IF alu_result != 0 -> @6 jump=incr
alu r3.rgb = sop() | r3.a = sin(s0) src0=r2
ELSE -> @7
alu r3.rgb = dp3(s0, s1) | r3.a = dp() src0=r2 src1=r1
ENDIF
out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last"
            .to_string(),
        "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
LOOP i0 -> @5
alu r1.rgb = mad(s0, s1, c[aL+0]) | r1.a = ex2(s0) src0=r1 src1=r0
alu p.r<0 = mad(s0, s1, s2) | _ = max.off(s0, s0) src0=r1 src1=1.0 src2=-1.0
BREAKLOOP p.r == 0 -> @5
ENDLOOP i0 -> @2
out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last"
            .to_string(),
        ".uncached
tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
alu r2.rgb = mad(s0.r00, s0.111, s1.0gr) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0
out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r2
out _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 wait last"
            .to_string(),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for p in files {
            if p.extension().is_some_and(|e| e == "s")
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                v.push(t);
            }
        }
    }
    v
}

/// Shaders that reach every part of the reader and the text.
pub(super) const SHADER_SEEDS: [&str; 6] = [
    "ps_2_0
dcl t0.xy
dcl_2d s0
def c0, 0.5, -1, 0x7fc00001, 1e-40
texld r0, t0, s0
mad_sat r1, r0, c0.x, -c0_abs.yzwx
sincos r2.xy, r1.x, c1, c2
mov oC0, r1",
    "ps_2_x
defb b0, true
defi i0, 4, 0, 0, 0
if b0
rep i0
setp_lt p0, r0.x, c0.x
(!p0.y) add r0, r0, c1
break_ge r0.x, c2.x
breakp p0.x
endrep
else
callnz l0, !p0.x
endif
dsx r1, r0
texldd r2, r0, s1, r1, r1
mov oDepth, r2.x
ret
label l0
ret",
    "ps_3_0
.comment 0x42415443, 0x1c
dcl_texcoord0_centroid v0.xy
dcl_color1 v1
dcl vPos.xy
dcl vFace
dcl_cube s2
loop aL, i0
add r0, r0, c[aL+3]
add_pp r0.xz, r0, v[aL.x+1]_abs
endloop
texldl r1, r0, s2
texkill v0
cmp oC1, vFace, r1, -r1",
    "ps_1_1
def c0, 2, -0.5, 0.25, 1
tex t0
texm3x3pad t1, t0_bx2
texm3x3pad t2, t0_bx2
texm3x3spec t3, t0_bx2, c0
mul_x2 r0.rgb, t3, v0_bias
+mad_sat r0.a, 1-v1.b, -c0_bx2, t0.a
cnd r1, r0.a, t3, c1",
    "ps_1_3
tex t0
texbeml t1, t0
texreg2gb t2, t1
texm3x2pad t3, t0
texkill t2
dp3_d2 r0, t1, t2_bx2",
    "ps_1_4
texld r0, t0_dz
texcrd r1.rgb, t1_dw.xyw
bem r2.rg, r1, r0
phase
texld r3, r2
texdepth r5
cmp_x8 r0, -r3_x2, r1_bias, c0",
];
