; Transcendentals beside MADs: four chains, each starting as
; r = r0.xxxx·c(3+k) + c(11+k) (every channel from the pixel's column, so that
; no two quads of a row compute the same values); each instruction's RGB unit runs
; r.rgb = r·c0 + c1 while its alpha unit runs one of rsq ex2 ln2 rcp sin cos
; on the chain's own alpha (|x| first, so logs and roots see positive values),
; 48 rounds; the final sum observes every chain.
    alu r1.rgb = mad(s0.rrr, s1, s2) | r1.a = mad(s0.r, s1, s2) src0=r0 src1=c3 src2=c11
    alu r2.rgb = mad(s0.rrr, s1, s2) | r2.a = mad(s0.r, s1, s2) src0=r0 src1=c4 src2=c12
    alu r3.rgb = mad(s0.rrr, s1, s2) | r3.a = mad(s0.r, s1, s2) src0=r0 src1=c5 src2=c13
    alu r4.rgb = mad(s0.rrr, s1, s2) | r4.a = mad(s0.r, s1, s2) src0=r0 src1=c6 src2=c14
    alu r1.rgb = mad(s0, s1, s2) | r1.a = rsq(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = ex2(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = ln2(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = rcp(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = ex2(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = ln2(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = rcp(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = sin(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = ln2(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = rcp(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = sin(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = cos(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = rcp(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = sin(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = cos(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = rsq(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = sin(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = cos(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = rsq(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = ex2(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = cos(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = rsq(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = ex2(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = ln2(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = rsq(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = ex2(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = ln2(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = rcp(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = ex2(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = ln2(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = rcp(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = sin(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = ln2(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = rcp(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = sin(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = cos(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = rcp(abs(s0)) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = sin(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = cos(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = rsq(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = sin(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = cos(s0) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = rsq(abs(s0)) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = ex2(s0) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = cos(s0) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = rsq(abs(s0)) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = ex2(s0) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = ln2(abs(s0)) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=1.0 src2=r2
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=1.0 src2=r4
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=1.0 src2=r3
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
