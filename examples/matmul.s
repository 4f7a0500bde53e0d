; Matrix multiply C = A·B: A (K×M: K columns, M rows) is input 0, B (N×K) is
; input 1, both float32_1; the domain is N×M and pixel (i, j) computes
; C[j][i] = Σ_k A[j][k]·B[k][i], k = 0..K−1 in order.
;
; The loop register walks the constants: c[aL+0] = (k, k, k, k) for
; k = 0..K−1, so c0..c(K−1) must hold 0, 1, …, K−1; i0 = {count K, init 0,
; step 1}.

    alu r3.rgb = max.off(s0, s0) | r3.a = max.off(s0, s0) src0=0.0        ; acc = 0
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0.r00, s1.111, s1.0g0) | _ = max.off(s0, s0) src0=c[aL+0] src1=r0   ; (k, j): A[j][k]
    alu r2.rgb = mad(s1.r00, s1.111, s0.0r0) | _ = max.off(s0, s0) src0=c[aL+0] src1=r0   ; (i, k): B[k][i]
    tex ld r4.rgba, in0.rgba, r1.rgba unscaled
    tex ld r5.rgba, in1.rgba, r2.rgba unscaled acquire wait
    alu r3.rgb = mad(s0, s1, s2) | _ = max.off(s0, s0) src0=r4 src1=r5 src2=r3
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last
