; Dot products mixed with MADs: four chains, each starting as
;   r = r0.xxxx·c(3+k) + c(11+k)   (every channel from the pixel's column)
; then alternating
;   r.rgb = dp4(r, c(3+k)) | r.a = dp(r, c(3+k))   (a four-term dot product, broadcast;
;   the alpha unit's inputs are its fourth pair)
;   r = r·c0 + c1
; sixteen rounds of the pair; the final sum observes every chain.
    alu r1.rgb = mad(s0.rrr, s1, s2) | r1.a = mad(s0.r, s1, s2) src0=r0 src1=c3 src2=c11
    alu r2.rgb = mad(s0.rrr, s1, s2) | r2.a = mad(s0.r, s1, s2) src0=r0 src1=c4 src2=c12
    alu r3.rgb = mad(s0.rrr, s1, s2) | r3.a = mad(s0.r, s1, s2) src0=r0 src1=c5 src2=c13
    alu r4.rgb = mad(s0.rrr, s1, s2) | r4.a = mad(s0.r, s1, s2) src0=r0 src1=c6 src2=c14
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3
    alu r2.rgb = dp4(s0, s1) | r2.a = dp(s0, s1) src0=r2 src1=c4
    alu r3.rgb = dp4(s0, s1) | r3.a = dp(s0, s1) src0=r3 src1=c5
    alu r4.rgb = dp4(s0, s1) | r4.a = dp(s0, s1) src0=r4 src1=c6
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=c0 src2=c1
    alu r4.rgb = mad(s0, s1, s2) | r4.a = mad(s0, s1, s2) src0=r4 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=1.0 src2=r2
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r3 src1=1.0 src2=r4
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=1.0 src2=r3
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
