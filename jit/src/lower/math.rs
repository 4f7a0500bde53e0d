//! The numeric rules of [`crate::fp`] as F32X4 instruction sequences.
//!
//! Every function here mirrors the scalar function of the same name in
//! `fp.rs` operation for operation — the same IEEE operations on the same
//! operands in the same order — except where a function says which step
//! it makes differently with the same exact result (an exponent changed as
//! an integer where `fp.rs` scales by a power of two). Compiled code runs
//! with MXCSR.DAZ set, which is exactly `fp::daz` on every arithmetic and
//! comparison input; results are flushed only where a pattern becomes
//! observable (`omod`/`canon`, as `x · 1` under DAZ), never through
//! MXCSR.FTZ, whose tininess-after-rounding rule differs from
//! [`crate::fp::ftz`] in a one-ulp window below 2^-126. Lane masks are
//! I32X4 (all ones / all zeros per lane).

use super::Lowering;
use super::values::Memo;
use crate::fp;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

const INF: u32 = 0x7F80_0000;
const NEG_INF: u32 = 0xFF80_0000;
/// 1.5 · 2^23: adding it to an integral float |n| < 2^22 leaves n in the
/// low mantissa bits.
const MAGIC: u32 = 0x4B40_0000;

impl Lowering<'_, '_> {
    /// The pattern as I32X4.
    pub(super) fn as_int(&mut self, v: Value) -> Value {
        self.bitcast(types::I32X4, v)
    }

    /// The pattern as F32X4.
    pub(super) fn as_float(&mut self, v: Value) -> Value {
        self.bitcast(types::F32X4, v)
    }

    /// `fp::ftz`: under DAZ, `x · 1` reads a denormal `x` as a signed zero
    /// and returns it; every other non-NaN `x` comes back unchanged. (NaN
    /// lanes are replaced by the standard NaN wherever this is used.)
    pub(super) fn flush(&mut self, x: Value) -> Value {
        let one = self.one();
        self.b.ins().fmul(x, one)
    }

    /// Selects per lane between two F32X4 values by an I32X4 mask, in the
    /// integer domain: the float form of compare-and-select is matched to
    /// `minps`/`maxps`, which under DAZ would return a flushed operand where
    /// the DPP returns the raw one.
    pub(super) fn select_f(&mut self, mask: Value, a: Value, b: Value) -> Value {
        let r = self.select_bits(mask, a, b);
        self.as_float(r)
    }

    /// [`Self::select_f`] with the result left as I32X4, for a chain of
    /// selections (each would otherwise leave an unused F32X4 cast).
    fn select_bits(&mut self, mask: Value, a: Value, b: Value) -> Value {
        let (a, b) = (self.as_int(a), self.as_int(b));
        self.b.ins().bitselect(mask, a, b)
    }

    /// An F32X4 comparison as an I32X4 mask.
    pub(super) fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(cc, a, b)
    }

    /// A float constant in every lane.
    pub(super) fn splat_f(&mut self, x: f32) -> Value {
        self.splat_bits(types::F32X4, x.to_bits())
    }

    /// `fp::add`, `sub`, `mul`, `div`. The result is not flushed: every
    /// arithmetic result passes through `omod`/`canon` (which flush) before
    /// it can be stored (IR verifier), and every other use reads it under
    /// DAZ, where a denormal already counts as zero.
    pub(super) fn arith(&mut self, op: crate::ir::Binary, a: Value, b: Value) -> Value {
        use crate::ir::Binary::*;
        match op {
            Add => self.b.ins().fadd(a, b),
            Sub => self.b.ins().fsub(a, b),
            Mul => self.b.ins().fmul(a, b),
            Div => self.b.ins().fdiv(a, b),
            Min | Max => unreachable!("selections are not arithmetic"),
        }
    }

    /// `fp::min` / `fp::max`: the comparison sees denormals as zeros (DAZ),
    /// the result is one operand's raw pattern (integer-domain select).
    pub(super) fn minmax(&mut self, max: bool, a: Value, b: Value) -> Value {
        let lt = if max {
            self.fcmp(FloatCC::LessThan, b, a)
        } else {
            self.fcmp(FloatCC::LessThan, a, b)
        };
        self.select_f(lt, a, b)
    }

    /// A sign modifier (NEG, ABS, NAB) on the pattern (memoised: clauses
    /// negate the same constant in instruction after instruction).
    pub(super) fn sign(&mut self, op: crate::ir::Unary, x: Value) -> Value {
        use crate::ir::Unary::*;
        self.memoised(Memo::Sign(op, x), |l| {
            let x = l.as_int(x);
            let s = l.splat_i(0x8000_0000);
            let r = match op {
                Neg => l.b.ins().bxor(x, s),
                Abs => l.b.ins().band_not(x, s),
                Nab => l.b.ins().bor(x, s),
                _ => unreachable!("not a sign modifier: {op:?}"),
            };
            l.as_float(r)
        })
    }

    /// The scaling of `fp::omod` alone (2^k, k in −3..=3), without NaN
    /// standardisation or flush.
    pub(super) fn scale(&mut self, v: Value, k: i8) -> Value {
        if k == 0 {
            return v;
        }
        let s = self.splat_f(f32::from_bits(((127 + i32::from(k)) as u32) << 23));
        self.b.ins().fmul(v, s)
    }

    /// `fp::frc` on a flushed operand.
    pub(super) fn frc(&mut self, x: Value) -> Value {
        let f = self.b.ins().floor(x);
        self.b.ins().fsub(x, f)
    }

    /// `fp::omod` on a flushed operand: scale by 2^k, standardise NaN.
    pub(super) fn omod(&mut self, v: Value, k: i8) -> Value {
        let nan = self.fcmp(FloatCC::Unordered, v, v);
        let r = self.scale(v, k);
        // Only a down-scale (or none) can leave a denormal.
        let scaled = if k <= 0 { self.flush(r) } else { r };
        let std = self.splat_i(fp::STD_NAN);
        self.select_f(nan, std, scaled)
    }

    /// `fp::clamp`: `x` raw, `v` its flushed value.
    pub(super) fn clamp(&mut self, x: Value, v: Value) -> Value {
        let zero = self.splat_f(0.0);
        let one = self.splat_f(1.0);
        let gt0 = self.fcmp(FloatCC::GreaterThan, v, zero);
        let lt1 = self.fcmp(FloatCC::LessThan, v, one);
        let inner = self.select_bits(lt1, x, one);
        self.select_f(gt0, inner, zero)
    }

    /// `fp::test_zero` on a flushed value, as a lane mask.
    pub(super) fn test_zero(&mut self, code: u8, v: Value) -> Value {
        let zero = self.splat_f(0.0);
        self.test_against(code, v, zero)
    }

    /// The zero test `code` of `v − bound`, as a comparison of `v` with
    /// `bound` (exact only where the caller has shown it to be).
    pub(super) fn test_against(&mut self, code: u8, v: Value, bound: Value) -> Value {
        let cc = match code & 3 {
            0 => FloatCC::Equal,
            1 => FloatCC::LessThan,
            2 => FloatCC::GreaterThanOrEqual,
            _ => FloatCC::NotEqual,
        };
        self.fcmp(cc, v, bound)
    }

    /// `fp::cnd` / `fp::cmp` with `c` flushed.
    pub(super) fn select_op(&mut self, cmp: bool, c: Value, a: Value, b: Value) -> Value {
        let m = if cmp {
            let zero = self.splat_f(0.0);
            self.fcmp(FloatCC::GreaterThanOrEqual, c, zero)
        } else {
            let half = self.splat_f(0.5);
            self.fcmp(FloatCC::GreaterThan, c, half)
        };
        self.select_f(m, a, b)
    }

    /// `fp::horner`: Horner's rule in fused multiply-adds, `p = c[0];
    /// p = p·x + c[k]` for the rest, each step rounded once.
    fn horner(&mut self, coeffs: &[f32], x: Value) -> Value {
        let mut p = self.splat_f(coeffs[0]);
        for &c in &coeffs[1..] {
            let c = self.splat_f(c);
            p = self.b.ins().fma(p, x, c);
        }
        p
    }

    /// `fp::ex2` on a flushed operand. The scaling p · 2^n is made in the
    /// integer domain, n added to p's exponent field, where `fp::ex2` makes
    /// two multiplications: the same bits on every lane the selections
    /// keep. There −126 ≤ x < 128, so p ∈ [2^−½, 2^½] (exponent −1 or 0)
    /// and the result's exponent is a normal one (−126 ≤ n + e(p) ≤ 127),
    /// where scaling by a power of two is exact — but for n = 128 and
    /// p = 1, whose pattern 0x3F80_0000 + (128 << 23) is +Inf, the product's
    /// overflow.
    pub(super) fn ex2(&mut self, x: Value) -> Value {
        let n = self.b.ins().nearest(x);
        let f = self.b.ins().fsub(x, n);
        let p = self.horner(&fp::EX2_POLY, f);
        let one = self.splat_f(1.0);
        let p = self.b.ins().fma(p, f, one);
        // n + 1.5 · 2^23 holds n in its low bits (two's complement, exact for
        // |n| < 2^22); shifted into the exponent field, MAGIC's own bits
        // (22 and up) leave the word.
        let magic = self.splat_f(f32::from_bits(MAGIC));
        let nb = self.b.ins().fadd(n, magic);
        let nb = self.as_int(nb);
        let e = self.b.ins().ishl_imm_s(nb, 23);
        let pb = self.as_int(p);
        let r = self.b.ins().iadd(pb, e);
        let lim_hi = self.splat_f(fp::EX2_INF_FROM);
        let big = self.fcmp(FloatCC::GreaterThanOrEqual, x, lim_hi);
        let lim_lo = self.splat_f(fp::EX2_ZERO_BELOW);
        let small = self.fcmp(FloatCC::LessThan, x, lim_lo);
        let nan = self.fcmp(FloatCC::Unordered, x, x);
        let inf = self.splat_i(INF);
        let zero = self.splat_f(0.0);
        let std = self.splat_i(fp::STD_NAN);
        let r = self.select_bits(small, zero, r);
        let r = self.select_bits(big, inf, r);
        self.select_f(nan, std, r)
    }

    /// `fp::ln2` on a flushed operand.
    pub(super) fn ln2(&mut self, x: Value) -> Value {
        let bits = self.as_int(x);
        // The sign bit is clear on every lane the selections keep (x > 0),
        // so the exponent field is the word shifted down.
        let e = self.b.ins().ushr_imm_s(bits, 23);
        let bias = self.splat_i(127);
        let e = self.b.ins().isub(e, bias);
        let mant = self.splat_i(0x007F_FFFF);
        let m = self.b.ins().band(bits, mant);
        let one_i = self.splat_i(fp::ONE);
        let mb = self.b.ins().bor(m, one_i);
        let m = self.as_float(mb);
        let sqrt2 = self.splat_f(std::f32::consts::SQRT_2);
        let big = self.fcmp(FloatCC::GreaterThan, m, sqrt2);
        // m · ½ (exact, m in (√2, 2)) as one less in the exponent field.
        let unit = self.splat_i(0x0080_0000);
        let down = self.b.ins().band(big, unit);
        let mb = self.b.ins().isub(mb, down);
        let m = self.as_float(mb);
        // The mask is −1 where m was halved: e − (−1) = e + 1.
        let e = self.b.ins().isub(e, big);
        let one = self.splat_f(1.0);
        let num = self.b.ins().fsub(m, one);
        let den = self.b.ins().fadd(m, one);
        let t = self.b.ins().fdiv(num, den);
        let t2 = self.b.ins().fmul(t, t);
        let p = self.horner(&fp::LN2_POLY, t2);
        let ef = self.b.ins().fcvt_from_sint(types::F32X4, e);
        let r = self.b.ins().fma(t, p, ef);
        let zero = self.splat_f(0.0);
        let is_zero = self.fcmp(FloatCC::Equal, x, zero);
        let inf = self.splat_i(INF);
        let inf = self.as_float(inf);
        let is_inf = self.fcmp(FloatCC::Equal, x, inf);
        let bad = self.fcmp(FloatCC::UnorderedOrLessThan, x, zero);
        let ninf = self.splat_i(NEG_INF);
        let std = self.splat_i(fp::STD_NAN);
        let r = self.select_bits(is_inf, inf, r);
        let r = self.select_bits(is_zero, ninf, r);
        self.select_f(bad, std, r)
    }

    /// `fp::rcp` on a flushed operand.
    pub(super) fn rcp(&mut self, x: Value) -> Value {
        let one = self.splat_f(1.0);
        self.b.ins().fdiv(one, x)
    }

    /// `fp::rsq` on a flushed operand.
    pub(super) fn rsq(&mut self, x: Value) -> Value {
        let s = self.b.ins().sqrt(x);
        let one = self.splat_f(1.0);
        self.b.ins().fdiv(one, s)
    }

    /// `fp::sin` (`cos = false`) or `fp::cos` on a flushed operand. Where
    /// `fp::sin` returns the standard NaN (a NaN or infinite operand: the
    /// reduced argument is NaN), this gives a NaN, which the lowering
    /// standardises where it is observed (`lazy`): NaN-ness survives the
    /// folding selections and the polynomial.
    pub(super) fn sincos(&mut self, x: Value, cos: bool) -> Value {
        let n = self.b.ins().nearest(x);
        let mut r = self.b.ins().fsub(x, n);
        if cos {
            let q = self.splat_f(0.25);
            let s = self.b.ins().fadd(r, q);
            let n = self.b.ins().nearest(s);
            r = self.b.ins().fsub(s, n);
        }
        let quarter = self.splat_f(0.25);
        let hi = self.fcmp(FloatCC::GreaterThan, r, quarter);
        let mquarter = self.splat_f(-0.25);
        let lo = self.fcmp(FloatCC::LessThan, r, mquarter);
        let half = self.splat_f(0.5);
        let up = self.b.ins().fsub(half, r);
        let mhalf = self.splat_f(-0.5);
        let down = self.b.ins().fsub(mhalf, r);
        let folded = self.select_bits(lo, down, r);
        let r = self.select_f(hi, up, folded);
        let r2 = self.b.ins().fmul(r, r);
        let p = self.horner(&fp::SIN_POLY, r2);
        self.b.ins().fmul(r, p)
    }

    /// `fp::dot` on flushed operands: exact products in f64, summed left to
    /// right in f64, rounded once to f32, flushed. Each product after the
    /// first joins the sum in one fused multiply-add: a product of two f32
    /// is exact in f64, so the fused form rounds as the separate add does;
    /// only which NaN payload survives may differ, and a dot product's
    /// result is raw arithmetic, standardised before it is observed
    /// (`Op::raw_arith` in the IR).
    pub(super) fn dot(&mut self, pairs: &[(Value, Value)], addend: Option<Value>) -> Value {
        let mut halves = [None, None];
        for (h, half) in halves.iter_mut().enumerate() {
            let mut sum: Option<Value> = None;
            for &(a, b) in pairs {
                let a = self.widen(a, h == 1);
                let b = self.widen(b, h == 1);
                sum = Some(match sum {
                    None => self.b.ins().fmul(a, b),
                    // The product is exact in f64: one rounding of
                    // product plus sum is the separate add's rounding.
                    Some(s) => self.b.ins().fma(a, b, s),
                });
            }
            let mut s = sum.expect("a dot product has factors");
            if let Some(c) = addend {
                let c = self.widen(c, h == 1);
                s = self.b.ins().fadd(s, c);
            }
            *half = Some(self.b.ins().fvdemote(s));
        }
        let [lo, hi] = halves.map(|h| h.expect("both halves"));
        // [lo0, lo1, hi0, hi1]
        self.shuffle32(lo, hi, [0, 1, 4, 5])
    }

    /// Lanes 0, 1 (or 2, 3 when `high`) of an F32X4 as F64X2, made once
    /// per path (a uniform factor's, widened where the clause loads it,
    /// serves both halves: [`super::uniforms`]).
    fn widen(&mut self, v: Value, high: bool) -> Value {
        self.memoised(super::values::Memo::Widened(v, high), |l| {
            let v = if high {
                l.shuffle32(v, v, [2, 3, 2, 3])
            } else {
                v
            };
            l.b.ins().fvpromote_low(v)
        })
    }
}
