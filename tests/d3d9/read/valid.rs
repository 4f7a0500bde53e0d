//! Valid shaders of every version, built at random from their parts, for
//! the round trips of `read.rs`.

use ctm::d3d9::{
    Dcl, DclKind, Def, Dst, IDENTITY, Inst, Item, Opcode, Reg, RegKind, Rel, Shader, Src, SrcMod,
    Version,
};
use ctm_tools::diff::Rng;

/// A small generator of valid shaders (by construction) for the round
/// trips.
pub struct Gen(pub Rng);

impl Gen {
    fn next(&mut self) -> u64 {
        u64::from(self.0.next_u32()) << 32 | u64::from(self.0.next_u32())
    }
    fn below(&mut self, n: u64) -> u64 {
        u64::from(self.0.below(n as u32))
    }
    fn flip(&mut self) -> bool {
        self.below(2) == 0
    }
    fn reg(&mut self, v: Version, kinds: &[RegKind]) -> Reg {
        let kinds: Vec<RegKind> = kinds.iter().copied().filter(|&k| v.count(k) > 0).collect();
        let kind = kinds[self.below(kinds.len() as u64) as usize];
        Reg::new(kind, self.below(u64::from(v.count(kind))) as u16)
    }
    fn dst(&mut self, v: Version, kinds: &[RegKind]) -> Dst {
        Dst {
            reg: self.reg(v, kinds),
            mask: 1 + self.below(15) as u8,
            sat: self.flip(),
            pp: self.flip(),
            centroid: self.below(8) == 0 && !v.is_1x(),
            shift: 0,
        }
    }
    fn value(&mut self, v: Version) -> Src {
        use RegKind::*;
        let reg = self.reg(v, &[Temp, Input, Const, Texture, Misc]);
        let rel = (v == Version::Ps30 && matches!(reg.kind, Const | Input) && self.below(4) == 0)
            .then(|| Rel {
                reg: Reg::new(Loop, 0),
                swizzle: self.below(256) as u8,
            });
        Src {
            reg,
            rel,
            swizzle: if self.flip() {
                IDENTITY
            } else {
                self.below(256) as u8
            },
            modifier: [SrcMod::None, SrcMod::Neg, SrcMod::Abs, SrcMod::AbsNeg]
                [self.below(4) as usize],
        }
    }
    fn special(&mut self, v: Version, kind: RegKind) -> Src {
        let mut s = Src::plain(self.reg(v, &[kind]));
        s.swizzle = if self.flip() {
            IDENTITY
        } else {
            self.below(256) as u8
        };
        if kind == RegKind::Predicate && self.flip() {
            s.modifier = SrcMod::Not;
        }
        s
    }
    fn item(&mut self, v: Version) -> Item {
        use RegKind::*;
        match self.below(10) {
            0 => Item::Comment((0..self.below(4)).map(|_| self.next() as u32).collect()),
            1 => {
                let dst_kinds: &[RegKind] = if v == Version::Ps30 {
                    &[Input, Sampler, Misc]
                } else {
                    &[Input, Texture, Sampler]
                };
                let mut dst = self.dst(v, dst_kinds);
                dst.sat = false;
                let kind = match dst.reg.kind {
                    Sampler => DclKind::Sampler(2 + self.below(3) as u8),
                    Input if v == Version::Ps30 => DclKind::Usage {
                        usage: self.below(14) as u8,
                        index: self.below(16) as u8,
                    },
                    _ => DclKind::Plain,
                };
                Item::Dcl(Dcl { kind, dst })
            }
            2 => {
                let n = self.below(u64::from(v.count(Const))) as u16;
                match self.below(if v == Version::Ps20 { 1 } else { 3 }) {
                    0 => Item::Def(Def::Float(n, [0; 4].map(|_: u32| self.next() as u32))),
                    1 => Item::Def(Def::Int(n % 16, [0; 4].map(|_: i32| self.next() as i32))),
                    _ => Item::Def(Def::Bool(n % 16, self.flip())),
                }
            }
            _ => {
                let ops: Vec<Opcode> = Opcode::ALL
                    .iter()
                    .copied()
                    .filter(|o| o.in_version(v))
                    .collect();
                let op = ops[self.below(ops.len() as u64) as usize];
                let control = if op.compares() {
                    1 + self.below(6) as u8
                } else if op == Opcode::Tex {
                    self.below(3) as u8
                } else {
                    0
                };
                let dst = op.has_dst().then(|| match op {
                    Opcode::Setp => self.dst(v, &[Predicate]),
                    Opcode::Texkill if v == Version::Ps30 => self.dst(v, &[Temp, Input]),
                    Opcode::Texkill => self.dst(v, &[Temp, Texture]),
                    Opcode::Tex | Opcode::Texldd | Opcode::Texldl => self.dst(v, &[Temp]),
                    _ => self.dst(v, &[Temp, ColorOut, DepthOut]),
                });
                let predicate = (v != Version::Ps20 && op.predicable() && self.below(4) == 0)
                    .then(|| self.special(v, Predicate));
                let src = match op {
                    Opcode::Tex | Opcode::Texldl => vec![self.value(v), self.special(v, Sampler)],
                    Opcode::Texldd => vec![
                        self.value(v),
                        self.special(v, Sampler),
                        self.value(v),
                        self.value(v),
                    ],
                    Opcode::Call | Opcode::Label => vec![self.special(v, Label)],
                    Opcode::Callnz => {
                        let kind = if self.flip() { ConstBool } else { Predicate };
                        vec![self.special(v, Label), self.special(v, kind)]
                    }
                    Opcode::Loop => vec![self.special(v, Loop), self.special(v, ConstInt)],
                    Opcode::Rep => vec![self.special(v, ConstInt)],
                    Opcode::If => vec![self.special(v, ConstBool)],
                    Opcode::Breakp => vec![self.special(v, Predicate)],
                    Opcode::Sincos if v < Version::Ps30 => {
                        let mut c = || {
                            let mut s = self.value(v);
                            (s.reg, s.rel) = (Reg::new(Const, s.reg.num % 32), None);
                            s
                        };
                        let (a, b) = (c(), c());
                        vec![self.value(v), a, b]
                    }
                    _ => (0..op.sources(v)).map(|_| self.value(v)).collect(),
                };
                Item::Inst(Inst {
                    op,
                    control,
                    predicate,
                    dst,
                    src,
                    coissue: false,
                })
            }
        }
    }
    /// A ps_1_x item; `after_arithmetic`: whether it may be co-issued.
    fn item_1x(&mut self, v: Version, after_arithmetic: bool) -> Item {
        use RegKind::*;
        match self.below(10) {
            0 => Item::Comment((0..self.below(4)).map(|_| self.next() as u32).collect()),
            1 => Item::Def(Def::Float(
                self.below(8) as u16,
                [0; 4].map(|_: u32| self.next() as u32),
            )),
            _ => {
                let ops: Vec<Opcode> = Opcode::ALL
                    .iter()
                    .copied()
                    .filter(|o| o.in_version(v))
                    .collect();
                let op = ops[self.below(ops.len() as u64) as usize];
                let ps14 = v == Version::Ps14;
                let tex = op.is_tex_1x();
                let arithmetic = op.has_dst() && !tex;
                let mut dst = op.has_dst().then(|| {
                    let kinds: &[RegKind] = match op {
                        Opcode::Texkill if ps14 => &[Temp, Texture],
                        Opcode::Tex | Opcode::Texcoord | Opcode::Texdepth | Opcode::Bem if ps14 => {
                            &[Temp]
                        }
                        _ if tex => &[Texture],
                        _ if ps14 => &[Temp],
                        _ => &[Temp, Texture],
                    };
                    let mut d = self.dst(v, kinds);
                    if op == Opcode::Texdepth {
                        d.reg.num = 5;
                    }
                    if arithmetic {
                        let shifts: &[i8] = if ps14 {
                            &[0, 0, 0, 1, 2, 3, -1, -2, -3]
                        } else {
                            &[0, 0, 0, 1, 2, -1]
                        };
                        d.shift = shifts[self.below(shifts.len() as u64) as usize];
                    }
                    d
                });
                if let Some(d) = &mut dst
                    && !arithmetic
                {
                    d.sat = false;
                }
                // Arithmetic source modifiers: codes 0-6, and 7-8 (`_x2`) in
                // ps_1_4.
                let mods = &SrcMod::ALL[..if ps14 { 9 } else { 7 }];
                let mut src = Vec::new();
                for k in 0..op.sources(v) {
                    let kinds: &[RegKind] = match op {
                        Opcode::Tex | Opcode::Texcoord => &[Texture, Temp],
                        Opcode::Texm3x3spec if k == 1 => &[Const],
                        _ if tex => &[Texture],
                        _ => &[Temp, Input, Const, Texture],
                    };
                    let mut s = Src::plain(self.reg(v, kinds));
                    if self.flip() {
                        s.swizzle = self.below(256) as u8;
                    }
                    s.modifier = match op {
                        Opcode::Tex | Opcode::Texcoord => {
                            [SrcMod::None, SrcMod::Dz, SrcMod::Dw][self.below(3) as usize]
                        }
                        Opcode::Texm3x3spec if k == 1 => SrcMod::None,
                        _ if tex => [SrcMod::None, SrcMod::Bx2][self.below(2) as usize],
                        _ => mods[self.below(mods.len() as u64) as usize],
                    };
                    src.push(s);
                }
                if op == Opcode::Cnd && !ps14 {
                    src[0] = Src::plain(Reg::new(Temp, 0));
                    src[0].swizzle = 0xFF;
                }
                Item::Inst(Inst {
                    op,
                    control: 0,
                    predicate: None,
                    dst,
                    src,
                    coissue: arithmetic && after_arithmetic && self.flip(),
                })
            }
        }
    }
    pub fn shader(&mut self) -> Shader {
        let version = Version::ALL[self.below(Version::ALL.len() as u64) as usize];
        let n = self.below(24);
        let mut items: Vec<Item> = Vec::new();
        for _ in 0..n {
            let item = if version.is_1x() {
                let after = matches!(
                    items.iter().rev().find(|i| !matches!(i, Item::Comment(_))),
                    Some(Item::Inst(p)) if !p.coissue && p.op.has_dst() && !p.op.is_tex_1x()
                );
                self.item_1x(version, after)
            } else {
                self.item(version)
            };
            items.push(item);
        }
        Shader { version, items }
    }
}
