//! ps_1_x's texture addressing instructions and `bem` for the reference
//! evaluator (`docs/d3d9.md` §6.4).

use super::{NEG_ZERO, ONE, State, dot, each};
use ctm::d3d9::{Dst, Inst, Opcode, RegKind, Src};
use ctm::fp;

fn canon(x: u32) -> u32 {
    fp::canon(x)
}

/// x / y, 1 where y is ±0.
fn quotient(x: u32, y: u32) -> u32 {
    let q = canon(fp::mad(x, canon(fp::rcp(y)), NEG_ZERO));
    fp::cmp(fp::nab(y), ONE, q)
}

/// The ps_1_x texture addressing instructions and `bem`, with the DPP's
/// arithmetic as `docs/d3d9.md` §6.4 spells out each.
pub(super) fn addressing(st: &mut State, i: &Inst, d: Dst) -> Result<(), String> {
    use Opcode::*;
    let mad = |a: u32, b: u32, c: u32| canon(fp::mad(a, b, c));
    let stage = usize::from(d.reg.num);
    let whole = Dst {
        mask: 0xF,
        shift: 0,
        sat: false,
        ..d
    };
    let m = st.px.bumpenv[stage % 8];
    // (u, v) + (m00, m01)·du + (m10, m11)·dv.
    let bump = |uv: [u32; 4], dd: [u32; 4]| -> [u32; 2] {
        let first = [mad(dd[0], m[0], uv[0]), mad(dd[0], m[1], uv[1])];
        [mad(dd[1], m[2], first[0]), mad(dd[1], m[3], first[1])]
    };
    let depth = |st: &mut State, v: u32| -> Result<(), String> {
        let out = Dst {
            mask: 1,
            ..Dst::full(ctm::d3d9::Reg::new(RegKind::DepthOut, 0))
        };
        st.write(i, &out, [v; 4])
    };
    if i.op == Texdepth {
        let r5 = st.read(&Src::plain(d.reg))?;
        return depth(st, quotient(r5[0], r5[1]));
    }
    if i.op == Bem {
        let (a, b) = (st.read(&i.src[0])?, st.read(&i.src[1])?);
        let [x, y] = bump(a, b);
        let out = Dst {
            mask: d.mask & 3,
            ..d
        };
        return st.write(i, &out, [x, y, 0, 0]);
    }
    let own = st.read(&Src::plain(d.reg))?;
    let src = st.read(&i.src[0])?;
    let dot3 = |a: &[u32; 4], b: &[u32; 4]| dot(a, b, 3);
    let texture = |st: &State, back: u16| -> Result<[u32; 4], String> {
        let n = d.reg.num.checked_sub(back).ok_or("no pad register")?;
        Ok(st.t[usize::from(n)])
    };
    let v = match i.op {
        Texbem | Texbeml => {
            let factor = i.op == Texbeml;
            let l = st.px.bumpenvl[stage % 8];
            let lum = mad(src[2], l[0], l[1]);
            let [u, v] = bump(own, src);
            let texel = st.sample(d.reg.num, u, v)?;
            if factor {
                texel.map(|x| mad(x, lum, NEG_ZERO))
            } else {
                texel
            }
        }
        Texreg2ar => st.sample(d.reg.num, src[3], src[0])?,
        Texreg2gb => st.sample(d.reg.num, src[1], src[2])?,
        Texreg2rgb => st.sample(d.reg.num, src[0], src[1])?,
        Texm3x2pad | Texm3x3pad => {
            let x = dot3(&own, &src);
            return st.write(i, &Dst { mask: 1, ..whole }, [x; 4]);
        }
        Texdp3 => [dot3(&own, &src); 4],
        Texdp3tex => st.sample(d.reg.num, dot3(&own, &src), 0)?,
        Texm3x2tex | Texm3x2depth => {
            let u = texture(st, 1)?[0];
            let v = dot3(&own, &src);
            if i.op == Texm3x2depth {
                return depth(st, quotient(u, v));
            }
            st.sample(d.reg.num, u, v)?
        }
        _ => {
            let (a, b) = (texture(st, 2)?, texture(st, 1)?);
            let n = [a[0], b[0], dot3(&own, &src), 0];
            match i.op {
                Texm3x3tex => st.sample(d.reg.num, n[0], n[1])?,
                Texm3x3 => [n[0], n[1], n[2], ONE],
                _ => {
                    let e = if i.op == Texm3x3spec {
                        st.read(&i.src[1])?
                    } else {
                        [a[3], b[3], own[3], 0]
                    };
                    let ne = dot3(&n, &e);
                    let nn = dot3(&n, &n);
                    let k = fp::omod(fp::mad(ne, canon(fp::rcp(nn)), NEG_ZERO), 1);
                    let r = each(|c| mad(k, n[c], fp::neg(e[c])));
                    st.sample(d.reg.num, r[0], r[1])?
                }
            }
        }
    };
    st.write(i, &whole, v)
}
