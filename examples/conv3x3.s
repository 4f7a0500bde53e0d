; 3×3 convolution of a one-channel image (input 0, float32_1), zero outside.
;
; c0..c8 = tap offsets (dx, dy, 0, 0), c9..c17 = tap weights (w, w, w, w),
; i0 = {count 9, init 0, step 1}. Pixel (i, j) reads its neighbours with
; unscaled lookups at (i + dx, j + dy): out = Σ w_k · in(i + dx_k, j + dy_k),
; accumulated tap by tap in order k = 0..8 (one rounding per MAD).

    alu r3.rgb = max.off(s0, s0) | r3.a = max.off(s0, s0) src0=0.0        ; acc = 0
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0, s0.111, s1) | r1.a = max.off(s0, s0) src0=r0 src1=c[aL+0]
    tex ld r2.rgba, in0.rgba, r1.rgba unscaled acquire wait
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=r2 src1=c[aL+9] src2=r3
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last
