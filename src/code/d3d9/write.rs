//! Writing bytecode: [`Shader`] → tokens, the inverse of [`super::read`]
//! (same layouts; the length field of every instruction is filled in from
//! ps_2_0 on and left 0 in ps_1_x, whose operations say their length).

use super::read::{COMMENT, DCL, DEF, DEFB, DEFI, END};
use super::{Dcl, DclKind, Def, Dst, Inst, Item, Reg, Shader, Src};

/// A parameter token's register bits and bit 31.
fn reg_bits(r: Reg) -> u32 {
    let code = r.kind.code();
    (1 << 31) | ((code & 7) << 28) | ((code & 0x18) << 8) | u32::from(r.num & 0x7FF)
}

fn dst(d: &Dst) -> u32 {
    let m = u32::from(d.sat) | (u32::from(d.pp) << 1) | (u32::from(d.centroid) << 2);
    reg_bits(d.reg) | (u32::from(d.mask & 0xF) << 16) | (m << 20) | ((d.shift as u32 & 0xF) << 24)
}

fn src(s: &Src, out: &mut Vec<u32>) {
    let rel = if s.rel.is_some() { 1 << 13 } else { 0 };
    out.push(reg_bits(s.reg) | rel | (u32::from(s.swizzle) << 16) | (s.modifier.code() << 24));
    if let Some(r) = s.rel {
        out.push(reg_bits(r.reg) | (u32::from(r.swizzle) << 16));
    }
}

/// The tokens of `shader`, version token to `end`.
pub fn write(shader: &Shader) -> Vec<u32> {
    write_at(shader).0
}

/// The token offset at which each item of `shader` is written (what read
/// errors and compile errors of bytecode point at).
pub fn item_offsets(shader: &Shader) -> Vec<usize> {
    write_at(shader).1
}

fn write_at(shader: &Shader) -> (Vec<u32>, Vec<usize>) {
    let mut out = vec![shader.version.token()];
    let mut offsets = Vec::with_capacity(shader.items.len());
    for item in &shader.items {
        offsets.push(out.len());
        let at = out.len();
        out.push(0);
        let head = match item {
            Item::Comment(words) => {
                // A comment token holds at most 32,767 words: longer
                // payloads become several comments.
                out.pop();
                for chunk in words.chunks(0x7FFF) {
                    out.push(COMMENT | ((chunk.len() as u32) << 16));
                    out.extend_from_slice(chunk);
                }
                if words.is_empty() {
                    out.push(COMMENT);
                }
                continue;
            }
            Item::Dcl(Dcl { kind, dst: d }) => {
                out.push(
                    (1 << 31)
                        | match *kind {
                            DclKind::Plain => 0,
                            DclKind::Usage { usage, index } => {
                                u32::from(usage & 0x1F) | (u32::from(index & 0xF) << 16)
                            }
                            DclKind::Sampler(tt) => u32::from(tt & 0xF) << 27,
                        },
                );
                out.push(dst(d));
                DCL
            }
            Item::Def(def) => {
                let (code, reg, values): (u32, Reg, Vec<u32>) = match *def {
                    Def::Float(n, v) => (DEF, Reg::new(super::RegKind::Const, n), v.to_vec()),
                    Def::Int(n, v) => (
                        DEFI,
                        Reg::new(super::RegKind::ConstInt, n),
                        v.iter().map(|&x| x as u32).collect(),
                    ),
                    Def::Bool(n, b) => (
                        DEFB,
                        Reg::new(super::RegKind::ConstBool, n),
                        vec![u32::from(b)],
                    ),
                };
                out.push(dst(&Dst::full(reg)));
                out.extend(values);
                code
            }
            Item::Inst(Inst {
                op,
                control,
                predicate,
                dst: d,
                src: s,
                coissue,
            }) => {
                if let Some(d) = d {
                    out.push(dst(d));
                }
                if let Some(p) = predicate {
                    src(p, &mut out);
                }
                for x in s {
                    src(x, &mut out);
                }
                u32::from(op.code())
                    | (u32::from(*control) << 16)
                    | (u32::from(predicate.is_some()) << 28)
                    | (u32::from(*coissue) << 30)
            }
        };
        let len = if shader.version.is_1x() {
            0
        } else {
            (out.len() - at - 1) as u32
        };
        out[at] = head | ((len & 0xF) << 24);
    }
    out.push(END);
    (out, offsets)
}
