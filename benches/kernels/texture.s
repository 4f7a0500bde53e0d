; Texture-bound: five lookups of input 0 around (i, j), summed.
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r0 src1=r0 src2=c0
    tex ld r3.rgba, in0.rgba, r2.rgba unscaled
    alu r4.rgb = mad(s0, s1.111, s2) | r4.a = mad(s0, s1.1, s2) src0=r0 src1=r0 src2=c1
    tex ld r5.rgba, in0.rgba, r4.rgba unscaled
    alu r6.rgb = mad(s0, s1.111, s2) | r6.a = mad(s0, s1.1, s2) src0=r0 src1=r0 src2=c2
    tex ld r7.rgba, in0.rgba, r6.rgba unscaled
    alu r8.rgb = mad(s0, s1.111, s2) | r8.a = mad(s0, s1.1, s2) src0=r0 src1=r0 src2=c3
    tex ld r9.rgba, in0.rgba, r8.rgba unscaled acquire wait
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r3 wait
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r5
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r7
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r9
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
