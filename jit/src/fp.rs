//! The DPP's floating-point rules (`docs/isa.md` §4.5–§4.7, §7), one scalar
//! function per IR operation, on raw 32-bit patterns.
//!
//! This module is the single definition of every numeric result in ctm: the
//! interpreter calls these functions lane by lane, and the Cranelift lowering
//! emits the same sequence of IEEE operations as vector code, so both engines
//! agree bit for bit.
//!
//! Rules applied everywhere (§7.1):
//! * registers hold raw patterns; denormal *inputs* of arithmetic read as a
//!   zero of the same sign ([`daz`]) and denormal *results* are flushed to a
//!   zero of the same sign after IEEE round-to-nearest-even ([`ftz`]);
//! * comparisons see denormals as zero; selections (MIN, MAX, CND, CMP) return
//!   one of their inputs bit-exactly;
//! * sign modifiers are pure sign-bit operations (NaN payloads kept);
//! * MAD is a separately rounded multiply and add (§7.1 policy: not fused);
//! * the NaN payload of an arithmetic result is unspecified: every path from
//!   arithmetic into a register or an output passes through [`omod`] (which
//!   standardises NaN to `0x7FFF_FFFF`) or [`canon`]; the IR verifier checks
//!   nothing else is possible.
//!
//! Transcendentals (§7.5) use the vector algorithms below — range reduction
//! with `floor`/`nearest`, short polynomials evaluated by Horner's rule in
//! fused multiply-adds (each step rounded once), exponent assembly with
//! integer operations — which the JIT reproduces operation for operation.
//! Their accuracy is measured in this crate's tests (a few ulp at worst);
//! the IEEE special cases of §7.5 are exact.

/// The standard NaN an enabled output modifier produces (§4.7).
pub const STD_NAN: u32 = 0x7FFF_FFFF;
/// 1.0 as a pattern.
pub const ONE: u32 = 0x3F80_0000;
/// 0.5 as a pattern.
pub const HALF: u32 = 0x3F00_0000;

const SIGN: u32 = 0x8000_0000;
const EXP: u32 = 0x7F80_0000;

/// The value of a pattern as arithmetic sees it: denormals read as ±0.
#[inline]
pub fn daz(x: u32) -> f32 {
    if x & EXP == 0 {
        f32::from_bits(x & SIGN)
    } else {
        f32::from_bits(x)
    }
}

/// The pattern of an arithmetic result: denormals flushed to ±0.
#[inline]
pub fn ftz(x: f32) -> u32 {
    let b = x.to_bits();
    if b & EXP == 0 { b & SIGN } else { b }
}

/// −x (sign flip, payload kept).
#[inline]
pub fn neg(x: u32) -> u32 {
    x ^ SIGN
}

/// |x| (sign cleared).
#[inline]
pub fn abs(x: u32) -> u32 {
    x & !SIGN
}

/// −|x| (sign set).
#[inline]
pub fn nab(x: u32) -> u32 {
    x | SIGN
}

/// a + b.
#[inline]
pub fn add(a: u32, b: u32) -> u32 {
    ftz(daz(a) + daz(b))
}

/// a − b.
#[inline]
pub fn sub(a: u32, b: u32) -> u32 {
    ftz(daz(a) - daz(b))
}

/// a · b.
#[inline]
pub fn mul(a: u32, b: u32) -> u32 {
    ftz(daz(a) * daz(b))
}

/// a · b + c, rounded after the multiply and after the add.
#[inline]
pub fn mad(a: u32, b: u32, c: u32) -> u32 {
    add(mul(a, b), c)
}

/// a / b (used by the projective divide of LOOKUP_PROJ).
#[inline]
pub fn div(a: u32, b: u32) -> u32 {
    ftz(daz(a) / daz(b))
}

/// Dot product of up to four pairs plus an optional addend (DP3, DP4, D2A).
///
/// §7.2: "evaluated as one fused sum". ctm forms the exact products in f64,
/// adds them (and the addend) in f64 from left to right, and rounds the sum
/// once to f32.
#[inline]
pub fn dot(pairs: &[(u32, u32)], addend: Option<u32>) -> u32 {
    let mut sum = 0.0f64;
    for (i, &(a, b)) in pairs.iter().enumerate() {
        let p = f64::from(daz(a)) * f64::from(daz(b));
        sum = if i == 0 { p } else { sum + p };
    }
    if let Some(c) = addend {
        sum += f64::from(daz(c));
    }
    ftz(sum as f32)
}

/// a < b as the DPP compares (denormals are zero; NaN compares false).
#[inline]
pub fn lt(a: u32, b: u32) -> bool {
    daz(a) < daz(b)
}

/// MIN: `A < B ? A : B` — NaN or two zeros give B (§7.3).
#[inline]
pub fn min(a: u32, b: u32) -> u32 {
    if lt(a, b) { a } else { b }
}

/// MAX: `A > B ? A : B` — NaN or two zeros give B (§7.3).
#[inline]
pub fn max(a: u32, b: u32) -> u32 {
    if lt(b, a) { a } else { b }
}

/// CND: `C > 0.5 ? A : B` (NaN gives B).
#[inline]
pub fn cnd(c: u32, a: u32, b: u32) -> u32 {
    if daz(c) > 0.5 { a } else { b }
}

/// CMP: `C >= 0 ? A : B` (−0 counts as 0, NaN gives B).
#[inline]
pub fn cmp(c: u32, a: u32, b: u32) -> u32 {
    if daz(c) >= 0.0 { a } else { b }
}

/// FRC: a − floor(a).
#[inline]
pub fn frc(a: u32) -> u32 {
    let x = daz(a);
    ftz(x - x.floor())
}

/// The enabled output modifier: scale by 2^`shift` (−3..=3), standardise
/// NaN to [`STD_NAN`], flush denormals (§4.7 step 1, ×1 included).
#[inline]
pub fn omod(x: u32, shift: i8) -> u32 {
    let v = daz(x);
    if v.is_nan() {
        return STD_NAN;
    }
    ftz(v * pow2(i32::from(shift)))
}

/// Standardises NaN and flushes denormals without scaling: the result rule
/// ctm applies where the output modifier is disabled on an operation other
/// than MIN/MAX/CND/CMP (undefined in §4.7; see the frontend).
/// Equal to `omod(x, 0)` (a test checks), in integer operations only, so
/// that loops of it vectorise.
#[inline]
pub fn canon(x: u32) -> u32 {
    if x & EXP == 0 {
        x & SIGN
    } else if x & !SIGN > EXP {
        STD_NAN
    } else {
        x
    }
}

/// Clamp to [0, 1] after the output modifier; NaN and −0 give +0 (§4.7).
#[inline]
pub fn clamp(x: u32) -> u32 {
    let v = daz(x);
    if v > 0.0 {
        if v < 1.0 { x } else { ONE }
    } else {
        0
    }
}

/// Comparison of a result with zero, as used by the ALU result, predicate
/// bits and KILL: 0 `== 0`, 1 `< 0`, 2 `>= 0`, 3 `!= 0` (§4.8.3, §4.8.5).
/// Denormals count as zero; NaN makes every test but `!=` false.
#[inline]
pub fn test_zero(code: u8, x: u32) -> bool {
    let v = daz(x);
    match code & 3 {
        0 => v == 0.0,
        1 => v < 0.0,
        2 => v >= 0.0,
        _ => v != 0.0,
    }
}

/// a · b + c rounded once (IEEE fusedMultiplyAdd), a polynomial step of
/// the transcendentals: one instruction where the host has FMA (see
/// `with_fma!`), the C library's exact `fmaf` elsewhere — the same bits
/// either way, and the JIT's `fma`.
#[inline(always)]
fn fused(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// Horner's rule in fused steps: `p = c[0]; p = p·x + c[k]` for the rest.
#[inline(always)]
fn horner(coeffs: &[f32], x: f32) -> f32 {
    coeffs[1..].iter().fold(coeffs[0], |p, &c| fused(p, x, c))
}

/// Calls `$body($a)` compiled for FMA and SSE4.1 where the host has them
/// (checked at each call: a cached flag), so that `fused` and the
/// rounding to integers are single instructions in the interpreter too;
/// the plain build elsewhere computes the same bits.
macro_rules! with_fma {
    ($body:ident, $a:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "fma,sse4.1")]
            fn fast(a: u32) -> u32 {
                $body(a)
            }
            if std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("sse4.1")
            {
                // SAFETY: the host has both features `fast` is built for.
                return unsafe { fast($a) };
            }
        }
        $body($a)
    }};
}

/// 2^n for −126 ≤ n ≤ 127 (exact).
#[inline]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// Taylor coefficients of 2^f = e^(f·ln 2), k = 7 down to 1 (the k = 0 term is 1).
pub const EX2_POLY: [f32; 7] = [
    1.525_273_4e-5,
    1.540_353e-4,
    1.333_355_8e-3,
    9.618_129e-3,
    5.550_411e-2,
    0.240_226_5,
    std::f32::consts::LN_2,
];

/// EX2 saturates to +Inf from here up.
pub const EX2_INF_FROM: f32 = 128.0;
/// EX2 gives +0 below here (the true result would be denormal).
pub const EX2_ZERO_BELOW: f32 = -126.0;

/// EX2: 2^a.
///
/// Algorithm: n = nearest(a), f = a − n ∈ [−½, ½]; p(f) by Horner over
/// [`EX2_POLY`]; result = (p · 2^⌊n/2⌋) · 2^(n − ⌊n/2⌋). a ≥ 128 → +Inf,
/// a < −126 → +0 (the true result would be denormal and is flushed), NaN → NaN.
pub fn ex2(a: u32) -> u32 {
    with_fma!(ex2_body, a)
}

#[inline(always)]
fn ex2_body(a: u32) -> u32 {
    let x = daz(a);
    if x.is_nan() {
        return STD_NAN;
    }
    if x >= EX2_INF_FROM {
        return f32::INFINITY.to_bits();
    }
    if x < EX2_ZERO_BELOW {
        return 0;
    }
    let n = x.round_ties_even();
    let f = x - n;
    let p = fused(horner(&EX2_POLY, f), f, 1.0);
    let n = n as i32;
    let h = n >> 1;
    ftz(p * pow2(h) * pow2(n - h))
}

/// Coefficients of log2(m) = t·Σ c_k t^(2k), t = (m−1)/(m+1), highest first:
/// c_k = 2·log2(e)/(2k+1).
pub const LN2_POLY: [f32; 6] = [
    0.262_308_2,
    0.320_598_9,
    0.412_198_6,
    0.577_078,
    0.961_796_7,
    2.885_39,
];

/// LN2: log2(a) (the opcode's name notwithstanding, base 2).
///
/// Algorithm: split a = m·2^e with m ∈ (√½, √2]; t = (m−1)/(m+1);
/// result = e + t·p(t²) over [`LN2_POLY`]. ±0 → −Inf, a < 0 → NaN,
/// +Inf → +Inf, NaN → NaN.
pub fn ln2(a: u32) -> u32 {
    with_fma!(ln2_body, a)
}

#[inline(always)]
fn ln2_body(a: u32) -> u32 {
    let x = daz(a);
    if x.is_nan() || x < 0.0 {
        return STD_NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY.to_bits();
    }
    if x == f32::INFINITY {
        return f32::INFINITY.to_bits();
    }
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xFF) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007F_FFFF) | ONE);
    if m > std::f32::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let p = horner(&LN2_POLY, t * t);
    ftz(fused(t, p, e as f32))
}

/// RCP: 1 / a (correctly rounded; ±0 → ±Inf, ±Inf → ±0).
pub fn rcp(a: u32) -> u32 {
    ftz(1.0 / daz(a))
}

/// RSQ: 1 / sqrt(a), no absolute value (+0 → +Inf, −0 → −Inf, a < 0 → NaN).
pub fn rsq(a: u32) -> u32 {
    ftz(1.0 / daz(a).sqrt())
}

/// Odd Taylor coefficients of sin(2π·r), r in turns, for r^15 down to r^1.
pub const SIN_POLY: [f32; 8] = [
    -0.694_567_7,
    3.819_952_6,
    -15.094_643,
    42.058_694,
    -76.705_86,
    81.605_25,
    -41.341_7,
    6.283_185_5,
];

/// SIN: sin(2π·a), argument in turns.
///
/// Algorithm: r = a − nearest(a) ∈ [−½, ½]; fold into [−¼, ¼] with
/// r → ½ − r (r > ¼) or r → −½ − r (r < −¼); result = r·p(r²) over
/// [`SIN_POLY`]. ±Inf and NaN → NaN.
pub fn sin(a: u32) -> u32 {
    with_fma!(sin_body, a)
}

#[inline(always)]
fn sin_body(a: u32) -> u32 {
    let x = daz(a);
    sin_turns(x - x.round_ties_even())
}

/// COS: cos(2π·a) = sin(2π·(r + ¼)) with r = a − nearest(a), re-reduced.
pub fn cos(a: u32) -> u32 {
    with_fma!(cos_body, a)
}

#[inline(always)]
fn cos_body(a: u32) -> u32 {
    let x = daz(a);
    let r = (x - x.round_ties_even()) + 0.25;
    sin_turns(r - r.round_ties_even())
}

#[inline(always)]
fn sin_turns(r: f32) -> u32 {
    if r.is_nan() {
        return STD_NAN;
    }
    let r = if r > 0.25 {
        0.5 - r
    } else if r < -0.25 {
        -0.5 - r
    } else {
        r
    };
    ftz(r * horner(&SIN_POLY, r * r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if w == 0.0 {
            return (got as f64 - want).abs() / f64::from(f32::MIN_POSITIVE);
        }
        let ulp = f64::from(f32::from_bits(w.abs().to_bits() + 1) - w.abs());
        (f64::from(got) - want).abs() / ulp
    }

    fn sweep(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |k| lo + (hi - lo) * (k as f32 / n as f32))
    }

    #[test]
    fn canon_is_the_disabled_output_modifier() {
        // Every exponent and sign with mantissas at both ends and between.
        for hi in 0..=0x1FFu32 {
            for m in [
                0, 1, 2, 0x40_0000, 0x3F_FFFF, 0x7F_FFFE, 0x7F_FFFF, 0x12_3457,
            ] {
                let x = hi << 23 | m;
                assert_eq!(canon(x), omod(x, 0), "{x:#010x}");
            }
        }
    }

    #[test]
    fn special_cases_of_7_5() {
        let inf = f32::INFINITY.to_bits();
        let ninf = f32::NEG_INFINITY.to_bits();
        assert_eq!(ex2(ninf), 0);
        assert_eq!(ex2(inf), inf);
        assert_eq!(ln2(0), ninf);
        assert_eq!(ln2(SIGN), ninf);
        assert!(f32::from_bits(ln2((-1.0f32).to_bits())).is_nan());
        assert_eq!(ln2(inf), inf);
        assert_eq!(rcp(0), inf);
        assert_eq!(rcp(SIGN), ninf);
        assert_eq!(rcp(inf), 0);
        assert_eq!(rcp(ninf), SIGN);
        assert_eq!(rsq(0), inf);
        assert_eq!(rsq(SIGN), ninf);
        assert!(f32::from_bits(rsq((-4.0f32).to_bits())).is_nan());
        assert!(f32::from_bits(sin(inf)).is_nan());
        assert!(f32::from_bits(cos(ninf)).is_nan());
        // Exact points.
        assert_eq!(ex2(0), ONE);
        assert_eq!(ex2(3.0f32.to_bits()), 8.0f32.to_bits());
        assert_eq!(ex2((-126.0f32).to_bits()), f32::MIN_POSITIVE.to_bits());
        assert_eq!(ln2(8.0f32.to_bits()), 3.0f32.to_bits());
        assert_eq!(ln2(ONE), 0);
        assert_eq!(sin(0), 0);
        assert_eq!(sin(HALF), 0);
    }

    #[test]
    fn the_plain_build_of_the_transcendentals_gives_the_fma_builds_bits() {
        // Every 127th pattern (all exponents, signs and many mantissas),
        // through the plain build (here, outside `with_fma!`'s fast
        // function) and the public functions (the FMA build on this host).
        type Op = fn(u32) -> u32;
        let bodies: [(&str, Op, Op); 4] = [
            ("ex2", ex2, ex2_body),
            ("ln2", ln2, ln2_body),
            ("sin", sin, sin_body),
            ("cos", cos, cos_body),
        ];
        for (name, public, plain) in bodies {
            for x in (0..=u32::MAX).step_by(127) {
                assert_eq!(public(x), plain(x), "{name}({x:#010x})");
            }
        }
    }

    #[test]
    fn transcendental_accuracy() {
        let mut worst = [0f64; 4];
        for x in sweep(-126.0, 127.9, 200_000) {
            worst[0] = worst[0].max(ulps(f32::from_bits(ex2(x.to_bits())), 2f64.powf(x as f64)));
        }
        for x in sweep(1e-30, 4.0, 100_000).chain(sweep(1.0, 1e30, 100_000)) {
            worst[1] = worst[1].max(ulps(f32::from_bits(ln2(x.to_bits())), (x as f64).log2()));
        }
        for x in sweep(-3.0, 3.0, 200_000) {
            let t = std::f64::consts::TAU * x as f64;
            // Absolute error in units of 2^-24 (sin/cos have zeros).
            let e =
                |got: u32, want: f64| (f64::from(f32::from_bits(got)) - want).abs() * 2f64.powi(24);
            worst[2] = worst[2].max(e(sin(x.to_bits()), t.sin()));
            worst[3] = worst[3].max(e(cos(x.to_bits()), t.cos()));
        }
        assert!(worst[0] <= 4.0, "ex2 {worst:?}");
        assert!(worst[1] <= 4.0, "ln2 {worst:?}");
        assert!(worst[2] <= 8.0 && worst[3] <= 8.0, "sin/cos {worst:?}");
    }

    #[test]
    fn selections_follow_7_3() {
        let (pz, nz) = (0u32, SIGN);
        assert_eq!(min(pz, nz), nz);
        assert_eq!(min(nz, pz), pz);
        assert_eq!(max(pz, nz), nz);
        let nan = 0x7FC0_0001;
        assert_eq!(min(nan, ONE), ONE);
        assert_eq!(max(ONE, nan), nan);
        assert_eq!(cmp(nz, ONE, pz), ONE);
        assert_eq!(cnd(nan, ONE, pz), pz);
        // A denormal compares as zero but is returned bit-exactly.
        assert_eq!(max(1, SIGN), SIGN);
        assert_eq!(max(1, 2), 2);
    }
}
