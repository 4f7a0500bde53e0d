//! The reference evaluator's arithmetic, transcendental and lookup
//! instructions: each one's value from its operands.

use super::{NEG_ZERO, ONE, State, canon, dot, each};
use ctm::d3d9::{Dst, Inst, Opcode, Src, swizzle_channel};
use ctm::fp;

/// The arithmetic instructions built from MAD, MIN/MAX, the selects and
/// dot products.
pub(super) fn arith(st: &mut State, i: &Inst) -> Result<[u32; 4], String> {
    use Opcode::*;
    let src = |st: &State, k: usize| st.read(&i.src[k]);
    Ok(match i.op {
        Mov => src(st, 0)?,
        Abs => src(st, 0)?.map(fp::abs),
        Add => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            each(|c| canon(fp::mad(a[c], ONE, b[c])))
        }
        Sub => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            each(|c| canon(fp::mad(a[c], ONE, fp::neg(b[c]))))
        }
        Mul => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            each(|c| canon(fp::mad(a[c], b[c], NEG_ZERO)))
        }
        Mad => {
            let (a, b, x) = (src(st, 0)?, src(st, 1)?, src(st, 2)?);
            each(|c| canon(fp::mad(a[c], b[c], x[c])))
        }
        Min => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            each(|c| fp::min(a[c], b[c]))
        }
        Max => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            each(|c| fp::max(b[c], a[c]))
        }
        Cmp => {
            let (a, b, x) = (src(st, 0)?, src(st, 1)?, src(st, 2)?);
            each(|c| fp::cmp(a[c], b[c], x[c]))
        }
        Cnd => {
            let (a, b, x) = (src(st, 0)?, src(st, 1)?, src(st, 2)?);
            each(|c| fp::cnd(a[c], b[c], x[c]))
        }
        Frc => src(st, 0)?.map(|x| canon(fp::frc(x))),
        Slt | Sge => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            let (t, f) = if i.op == Sge { (ONE, 0) } else { (0, ONE) };
            each(|c| fp::cmp(canon(fp::mad(a[c], ONE, fp::neg(b[c]))), t, f))
        }
        Dp3 => [dot(&src(st, 0)?, &src(st, 1)?, 3); 4],
        Dp4 => [dot(&src(st, 0)?, &src(st, 1)?, 4); 4],
        Dp2add => {
            let (a, b, x) = (src(st, 0)?, src(st, 1)?, src(st, 2)?);
            [canon(fp::dot(&[(a[0], b[0]), (a[1], b[1])], Some(x[0]))); 4]
        }
        op => return Err(format!("`{}` is not evaluated here", op.name())),
    })
}

/// The instructions built from the transcendentals, and the compound
/// ones (LRP, NRM, CRS).
pub(super) fn transcendental(st: &mut State, i: &Inst) -> Result<[u32; 4], String> {
    use Opcode::*;
    let src = |st: &State, k: usize| st.read(&i.src[k]);
    Ok(match i.op {
        Rcp => [canon(fp::rcp(src(st, 0)?[0])); 4],
        Rsq => [canon(fp::rsq(fp::abs(src(st, 0)?[0]))); 4],
        Exp => [canon(fp::ex2(src(st, 0)?[0])); 4],
        Log => [canon(fp::ln2(fp::abs(src(st, 0)?[0]))); 4],
        Pow => {
            let a = fp::abs(src(st, 0)?[0]);
            let b = src(st, 1)?[0];
            let l = canon(fp::ln2(a));
            [canon(fp::ex2(canon(fp::mad(l, b, NEG_ZERO)))); 4]
        }
        Lrp => {
            let (a, b, x) = (src(st, 0)?, src(st, 1)?, src(st, 2)?);
            each(|c| {
                canon(fp::mad(
                    a[c],
                    canon(fp::mad(b[c], ONE, fp::neg(x[c]))),
                    x[c],
                ))
            })
        }
        Nrm => {
            let a = src(st, 0)?;
            let f = canon(fp::rsq(dot(&a, &a, 3)));
            each(|c| canon(fp::mad(a[c], f, NEG_ZERO)))
        }
        Crs => {
            let (a, b) = (src(st, 0)?, src(st, 1)?);
            let s = [
                canon(fp::mad(a[2], b[1], NEG_ZERO)),
                canon(fp::mad(a[0], b[2], NEG_ZERO)),
                canon(fp::mad(a[1], b[0], NEG_ZERO)),
            ];
            [
                canon(fp::mad(a[1], b[2], fp::neg(s[0]))),
                canon(fp::mad(a[2], b[0], fp::neg(s[1]))),
                canon(fp::mad(a[0], b[1], fp::neg(s[2]))),
                0,
            ]
        }
        Sincos => {
            let k = (1.0f32 / std::f32::consts::TAU).to_bits();
            let t = canon(fp::mad(src(st, 0)?[0], k, NEG_ZERO));
            [canon(fp::cos(t)), canon(fp::sin(t)), 0, 0]
        }
        op => return Err(format!("`{}` is not evaluated here", op.name())),
    })
}

/// Lookups and texture coordinates: the value and where it goes.
pub(super) fn texture(st: &mut State, i: &Inst, d: Dst) -> Result<([u32; 4], Dst), String> {
    use Opcode::*;
    let v = match i.op {
        // ps_1_1–1_3's `tex tN`: stage N at tN; ps_1_4's `texld rN, src`.
        Tex if st.one_x => {
            let uv = match i.src.first() {
                None => st.read(&Src::plain(d.reg))?,
                Some(s) => st.coordinates(s)?,
            };
            st.sample(d.reg.num, uv[0], uv[1])?
        }
        // `texcoord tN`: (u, v, w) in [0, 1], and 1; `texcrd rN, src`.
        Texcoord => match i.src.first() {
            None => {
                let t = st.read(&Src::plain(d.reg))?;
                [
                    fp::clamp(canon(t[0])),
                    fp::clamp(canon(t[1])),
                    fp::clamp(canon(t[2])),
                    ONE,
                ]
            }
            Some(s) => {
                let v = st.coordinates(s)?;
                let d = Dst {
                    mask: d.mask & 7,
                    ..d
                };
                return Ok((v, d));
            }
        },
        Tex | Texldl | Texldd => {
            let uv = st.read(&i.src[0])?;
            let (mut u, mut v) = (uv[0], uv[1]);
            if i.op == Tex && i.control == 1 {
                let r = canon(fp::rcp(uv[3]));
                u = canon(fp::mad(u, r, NEG_ZERO));
                v = canon(fp::mad(v, r, NEG_ZERO));
            }
            let texel = st.sample(i.src[1].reg.num, u, v)?;
            each(|c| texel[swizzle_channel(i.src[1].swizzle, c)])
        }
        op => return Err(format!("`{}` is not evaluated here", op.name())),
    };
    Ok((v, d))
}
