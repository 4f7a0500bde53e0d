; Z-buffered drawing of a plane with the conditional output unit: the
; program writes its own conditional value (depth = a·i + b·j + d) and a
; colour; run with the test `less`, write-back on and the conditional buffer
; as depth buffer, a pair's colour lands only where the plane is nearer than
; what the buffer holds, and the buffer keeps the minimum.
;
; c0 = (a, b, 0, 0), c1 = (d, d, d, d), c2 = colour (r, g, b, a).

    alu r1.rgb = mad(s0.rrr, s1.rrr, s2) | _ = max.off(s0, s0) src0=r0 src1=c0 src2=c1 ; a·i + d
    alu r1.rgb = mad(s0.ggg, s1.ggg, s2) | _ = max.off(s0, s0) src0=r0 src1=c0 src2=r1 ; + b·j
    out rtA.rgb = max.off(s0, s0) | depth = max.off(s1.r, s1.r) src0=c2 src1=r1
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c2 wait last
