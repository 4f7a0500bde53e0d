; Divergent branches: each pixel takes one of two IF arms by the parity of
; i + j (so every quad diverges), inside a loop of i0 trips. The arms work on
; r1, which starts from half the pixel's column, so that no two quads of a
; row compute the same values.
    alu r1.rgb = mad(s0.rrr, s0.hhh, s0.000) | r1.a = mad(s0.r, s0.h, s0.0) src0=r0
    alu r2.rgb = frc(s0) | r2.a = frc(s0) src0=r0 src1=0.5
    alu r3.rgb = mad(s0.rrr, s1.hhh, s2.ggg) | r3.a = max.off(s0, s0) src0=r0 src1=r0 src2=r0
    LOOP i0 -> done
body:
    alu _ = frc(s0.rrr) | _ = frc(s0.r) src0=r3 res=r==0 wait
    IF alu_result != 0 -> odd jump=incr
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r1 src1=c0 src2=c1
    ELSE -> endif
odd:
    alu r1.rgb = mad(s0, s1, -s2) | r1.a = mad(s0, s1, -s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, -s2) | r1.a = mad(s0, s1, -s2) src0=r1 src1=c0 src2=c1
    alu r1.rgb = mad(s0, s1, -s2) | r1.a = mad(s0, s1, -s2) src0=r1 src1=c0 src2=c1
    ENDIF
endif:
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
