; 1 independent MAD chain of 64 MADs each (64 MADs per pixel in all, four
; channels each): chain k starts as r0.xxxx·c(3+k) + c(11+k), from its own
; constants and, in every channel, the pixel's column, then runs r = r·c0 + c1.
; No compiler can prove two chains equal (their constants are the host's), nor
; one channel of two quads of a row (each has its own column; from r0's other
; channels, which a row's quads share, a batch of quads would compute three of
; the four channels once), and the final sum observes every chain.
; Set c0, c1 and c3..c3, c11..c11 (`ctm bench --suite` does).
    alu r1.rgb = mad(s0.rrr, s1, s2) | r1.a = mad(s0.r, s1, s2) src0=r0 src1=c3 src2=c11
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
