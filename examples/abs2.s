; Divergent IF/ELSE: out0 = x >= 0 ? 2x : -x, decided on the red channel of
; input 0. Processors of one quad may take different sides.

    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r1 res=r<0 wait   ; ALU result = (x.r < 0)
    IF alu_result != 0 -> negative jump=incr                           ; x < 0 skips the THEN part
    alu r2.rgb = max.x2(s0, s0) | r2.a = max.x2(s0, s0) src0=r1         ; 2x
    ELSE -> done
negative:
    alu r2.rgb = max(-s0, -s0) | r2.a = max(-s0, -s0) src0=r1           ; -x
    ENDIF
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last
