; Tiny: one instruction per pixel (rtA = r0), so the run is all overhead.
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last
