; Mandelbrot: escape-time iteration count per pixel, coloured.
;
; c0 = (dx, dy, 0, 0)  pixel step      c1 = (x0, y0, 0, 0)  top-left corner
; c2 = palette frequencies (r, g, b)    i0 = {count N, 0, 0} iterations (≤ 255)
;
; Pixel (i, j) iterates z ← z² + c with c = (x0 + i·dx, y0 + j·dy) until
; |z|² ≥ 4 or N steps; n counts the steps taken. Each pixel leaves the loop
; on its own (a divergent BREAKLOOP). Output 0 = (frc(n·c2.r), frc(n·c2.g),
; frc(n·c2.b), 1).

    alu r1.rgb = mad(s0, s1, s2) | _ = max.off(s0, s0) src0=r0 src1=c0 src2=c1   ; r1 = c
    alu r2.rgb = max.off(s0, s0) | _ = max.off(s0, s0) src0=0.0                  ; z = 0, n = 0
    LOOP i0 -> done
body:
    alu r3.rgb = mad(s0.rgr, s0.rgg, s1.000) | _ = max.off(s0, s0) src0=r2     ; t = (zx², zy², zx·zy)
    alu r4.rgb = mad(s0.rrr, s0.111, s0.ggg) | _ = max.off(s0, s0) src0=r3     ; m = zx² + zy²
    alu _ = mad(s0.rrr, s0.111, -s1.rrr) | _ = max.off(s0, s0) src0=r4 src1=4.0 res=r>=0
    BREAKLOOP alu_result != 0 -> done
    alu r5.rgb = mad(s0.rb0, s1.1rr, s2) | _ = max.off(s0, s0) src0=r3 src1=2.0 src2=r1  ; (zx² + cx, 2·zx·zy + cy)
    alu r2.rg = mad(-s0.g00, s1.111, s2) | _ = max.off(s0, s0) src0=r3 src1=r0 src2=r5 ; zx = (zx² + cx) − zy²
    alu r2.b = mad(s0.111, s0.111, s0) | _ = max.off(s0, s0) src0=r2                 ; n += 1
    ENDLOOP i0 -> body
done:
    alu r6.rgb = mad(s0.bbb, s1, s1.000) | _ = max.off(s0, s0) src0=r2 src1=c2
    alu r6.rgb = frc(s0) | r6.a = max.off(s0.1, s0.1) src0=r6
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r6 wait last
