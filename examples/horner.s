; Horner's rule: out0 = c3·x³ + c2·x² + c1·x + c0 per channel, x from input 0.
;
; The integer constant i0 must be {count 4, init 3, step -1}: the loop register
; aL takes 3, 2, 1, 0 and c[aL+0] walks the coefficients downwards.

    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0 wait   ; acc = 0
    LOOP i0 -> done
body:
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=r1 src2=c[aL+0]
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last
