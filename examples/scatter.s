; Scatter with uncached (UMRT) writes: transpose a square one-channel image.
; Pixel (i, j) reads input 0 at (i, j) and writes the value to output 0 at
; (j, i) with an uncached write (R = value, G = x, B = y, A = 0; target C =
; one index per processor). Output 0 must be float32_1.

.uncached
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu r2.rgb = mad(s0.r00, s0.111, s1.0gr) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0 wait
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r2
    out _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 wait last
