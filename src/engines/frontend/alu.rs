//! ALU and OUTPUT instructions → clause operations (docs/isa.md §4):
//! source reads (§4.3–4.4), presubtract, swizzles and modifiers (§4.5), the
//! RGB and alpha operations with their cross-unit rules (§4.6), output
//! modifier and clamp (§4.7), then the gated writes (§4.8, §4.9).

use super::*;

impl Builder {
    /// Reads channel `chan` of an address-word source (§4.3).
    fn read(&mut self, src: Src, chan: u8) -> V {
        match src.kind {
            SrcKind::Temp(n) => self.def(|dst| Op::Temp {
                dst,
                index: Index {
                    base: n,
                    rel: src.rel,
                },
                chan,
            }),
            SrcKind::Const(n) => self.def(|dst| Op::Const {
                dst,
                index: Index {
                    base: n,
                    rel: src.rel,
                },
                chan,
            }),
            SrcKind::Inline(code) => self.imm(inline_value(code).to_bits()),
        }
    }

    /// Channel `chan` of src_k: r, g, b from the RGB address, a from the
    /// alpha address (§4.4).
    fn src(&mut self, alu: &Alu, ops: &mut Operands, k: usize, chan: usize) -> V {
        if let Some(v) = ops.src[k][chan] {
            return v;
        }
        let word = if chan < 3 {
            &alu.rgb_addr
        } else {
            &alu.alpha_addr
        };
        let v = self.read(word.src(k), chan as u8);
        ops.src[k][chan] = Some(v);
        v
    }

    /// Channel `chan` of srcp (§4.4): the RGB presubtract for r, g, b, the
    /// alpha one for a.
    fn srcp(&mut self, alu: &Alu, ops: &mut Operands, chan: usize) -> V {
        if let Some(v) = ops.srcp[chan] {
            return v;
        }
        let op = if chan < 3 {
            alu.rgb_addr.srcp_op
        } else {
            alu.alpha_addr.srcp_op
        };
        let s0 = self.src(alu, ops, 0, chan);
        let raw = match op {
            SrcpOp::Bias => {
                let two = self.imm(2.0f32.to_bits());
                let one = self.imm(fp::ONE);
                let t = self.binary(Binary::Mul, two, s0);
                self.binary(Binary::Sub, one, t)
            }
            SrcpOp::Sub => {
                let s1 = self.src(alu, ops, 1, chan);
                self.binary(Binary::Sub, s1, s0)
            }
            SrcpOp::Add => {
                let s1 = self.src(alu, ops, 1, chan);
                self.binary(Binary::Add, s1, s0)
            }
            SrcpOp::Inv => {
                let one = self.imm(fp::ONE);
                self.binary(Binary::Sub, one, s0)
            }
        };
        let v = self.unary(Unary::Canon, raw);
        ops.srcp[chan] = Some(v);
        v
    }

    /// One input component: select, swizzle, modifier (§4.5).
    fn input(&mut self, alu: &Alu, ops: &mut Operands, sel: Sel, swz: Swz, m: Mod) -> V {
        let chan = match swz {
            Swz::R => 0,
            Swz::G => 1,
            Swz::B => 2,
            Swz::A => 3,
            Swz::Zero => return self.modify(Err(0), m),
            Swz::Half => return self.modify(Err(fp::HALF), m),
            Swz::One => return self.modify(Err(fp::ONE), m),
        };
        let v = match sel {
            Sel::Src0 => self.src(alu, ops, 0, chan),
            Sel::Src1 => self.src(alu, ops, 1, chan),
            Sel::Src2 => self.src(alu, ops, 2, chan),
            Sel::SrcP => self.srcp(alu, ops, chan),
        };
        self.modify(Ok(v), m)
    }

    /// Applies an input modifier to a value (`Ok`) or to a swizzle
    /// constant's pattern (`Err`), which folds to another constant.
    fn modify(&mut self, v: Result<V, u32>, m: Mod) -> V {
        match v {
            // A modified swizzle constant folds to another constant.
            Err(bits) => {
                let bits = match m {
                    Mod::Nop => bits,
                    Mod::Neg => fp::neg(bits),
                    Mod::Abs => fp::abs(bits),
                    Mod::Nab => fp::nab(bits),
                };
                self.imm(bits)
            }
            Ok(v) => match m {
                Mod::Nop => v,
                Mod::Neg => self.unary(Unary::Neg, v),
                Mod::Abs => self.unary(Unary::Abs, v),
                Mod::Nab => self.unary(Unary::Nab, v),
            },
        }
    }

    /// RGB input `i` (A, B, C), channel c (0–2); c = 3 gives DP4's fourth
    /// component, taken from the alpha input of the same letter (§4.5).
    fn rgb_in(&mut self, alu: &Alu, ops: &mut Operands, i: usize, c: usize) -> V {
        if c == 3 {
            let a = alu.alpha_input(i);
            return self.input(alu, ops, a.sel, a.swz, a.modifier);
        }
        let x = alu.rgb_input(i);
        self.input(alu, ops, x.sel, x.swz[c], x.modifier)
    }

    fn alpha_in(&mut self, alu: &Alu, ops: &mut Operands, i: usize) -> V {
        let x = alu.alpha_input(i);
        self.input(alu, ops, x.sel, x.swz, x.modifier)
    }

    /// MDH/MDV input A or C: src0's natural channel from quad lane `lane`,
    /// with the input's modifier (§4.6.3).
    fn neighbour(&mut self, alu: &Alu, ops: &mut Operands, chan: usize, lane: u8, m: Mod) -> V {
        let s = self.src(alu, ops, 0, chan);
        let n = self.def(|dst| Op::QuadLane { dst, a: s, lane });
        self.modify(Ok(n), m)
    }

    fn dot(&mut self, pairs: Vec<(V, V)>, addend: Option<V>) -> V {
        self.def(|dst| Op::Dot { dst, pairs, addend })
    }

    /// The RGB unit's three channels before its output modifier, given the
    /// alpha unit's raw result for SOP.
    fn rgb_op(&mut self, alu: &Alu, ops: &mut Operands, alpha_raw: Option<V>) -> [V; 3] {
        let op = alu.rgba.op;
        fn ch(b: &mut Builder, f: &mut dyn FnMut(&mut Builder, usize) -> V) -> [V; 3] {
            [f(b, 0), f(b, 1), f(b, 2)]
        }
        match op {
            RgbOp::Mad => ch(self, &mut |b, c| {
                let (x, y, z) = (
                    b.rgb_in(alu, ops, 0, c),
                    b.rgb_in(alu, ops, 1, c),
                    b.rgb_in(alu, ops, 2, c),
                );
                b.def(|dst| Op::Mad {
                    dst,
                    a: x,
                    b: y,
                    c: z,
                })
            }),
            RgbOp::Dp3 | RgbOp::Dp4 | RgbOp::D2a => {
                let n = match op {
                    RgbOp::Dp3 => 3,
                    RgbOp::Dp4 => 4,
                    _ => 2,
                };
                let pairs = (0..n)
                    .map(|c| (self.rgb_in(alu, ops, 0, c), self.rgb_in(alu, ops, 1, c)))
                    .collect();
                let addend = (op == RgbOp::D2a).then(|| self.rgb_in(alu, ops, 2, 2));
                let d = self.dot(pairs, addend);
                [d, d, d]
            }
            RgbOp::Min | RgbOp::Max => ch(self, &mut |b, c| {
                let (x, y) = (b.rgb_in(alu, ops, 0, c), b.rgb_in(alu, ops, 1, c));
                let o = if op == RgbOp::Min {
                    Binary::Min
                } else {
                    Binary::Max
                };
                b.binary(o, x, y)
            }),
            RgbOp::Cnd | RgbOp::Cmp => ch(self, &mut |b, c| {
                let (x, y, z) = (
                    b.rgb_in(alu, ops, 0, c),
                    b.rgb_in(alu, ops, 1, c),
                    b.rgb_in(alu, ops, 2, c),
                );
                let o = if op == RgbOp::Cnd {
                    Select::Cnd
                } else {
                    Select::Cmp
                };
                b.def(|dst| Op::Select {
                    dst,
                    op: o,
                    c: z,
                    a: x,
                    b: y,
                })
            }),
            RgbOp::Frc => ch(self, &mut |b, c| {
                let x = b.rgb_in(alu, ops, 0, c);
                b.unary(Unary::Frc, x)
            }),
            RgbOp::Sop => {
                let a = alpha_raw.expect("SOP lowered without the alpha result");
                [a, a, a]
            }
            RgbOp::Mdh | RgbOp::Mdv => {
                let (ma, mc) = (alu.rgb_input(0).modifier, alu.rgb_input(2).modifier);
                let lane_c = if op == RgbOp::Mdh { 1 } else { 2 };
                ch(self, &mut |b, c| {
                    let x = b.neighbour(alu, ops, c, 0, ma);
                    let y = b.rgb_in(alu, ops, 1, c);
                    let z = b.neighbour(alu, ops, c, lane_c, mc);
                    b.def(|dst| Op::Mad {
                        dst,
                        a: x,
                        b: y,
                        c: z,
                    })
                })
            }
        }
    }

    /// The alpha unit's result before its output modifier, given the RGB
    /// unit's raw red result for alpha DP.
    fn alpha_op(&mut self, alu: &Alu, ops: &mut Operands, rgb_raw: Option<V>) -> V {
        let op = alu.alpha.op;
        let un = |b: &mut Builder, ops: &mut Operands, u: Unary| {
            let x = b.alpha_in(alu, ops, 0);
            b.unary(u, x)
        };
        match op {
            AlphaOp::Mad => {
                let (x, y, z) = (
                    self.alpha_in(alu, ops, 0),
                    self.alpha_in(alu, ops, 1),
                    self.alpha_in(alu, ops, 2),
                );
                self.def(|dst| Op::Mad {
                    dst,
                    a: x,
                    b: y,
                    c: z,
                })
            }
            AlphaOp::Dp => rgb_raw.expect("alpha DP lowered without the RGB result"),
            AlphaOp::Min | AlphaOp::Max => {
                let (x, y) = (self.alpha_in(alu, ops, 0), self.alpha_in(alu, ops, 1));
                let o = if op == AlphaOp::Min {
                    Binary::Min
                } else {
                    Binary::Max
                };
                self.binary(o, x, y)
            }
            AlphaOp::Cnd | AlphaOp::Cmp => {
                let (x, y, z) = (
                    self.alpha_in(alu, ops, 0),
                    self.alpha_in(alu, ops, 1),
                    self.alpha_in(alu, ops, 2),
                );
                let o = if op == AlphaOp::Cnd {
                    Select::Cnd
                } else {
                    Select::Cmp
                };
                self.def(|dst| Op::Select {
                    dst,
                    op: o,
                    c: z,
                    a: x,
                    b: y,
                })
            }
            AlphaOp::Frc => un(self, ops, Unary::Frc),
            AlphaOp::Ex2 => un(self, ops, Unary::Ex2),
            AlphaOp::Ln2 => un(self, ops, Unary::Ln2),
            AlphaOp::Rcp => un(self, ops, Unary::Rcp),
            AlphaOp::Rsq => un(self, ops, Unary::Rsq),
            AlphaOp::Sin => un(self, ops, Unary::Sin),
            AlphaOp::Cos => un(self, ops, Unary::Cos),
            AlphaOp::Mdh | AlphaOp::Mdv => {
                let (ma, mc) = (alu.alpha.mod_a, alu.rgba.alpha_mod_c);
                let lane_c = if op == AlphaOp::Mdh { 1 } else { 2 };
                let x = self.neighbour(alu, ops, 3, 0, ma);
                let y = self.alpha_in(alu, ops, 1);
                let z = self.neighbour(alu, ops, 3, lane_c, mc);
                self.def(|dst| Op::Mad {
                    dst,
                    a: x,
                    b: y,
                    c: z,
                })
            }
        }
    }

    /// Output modifier and clamp of one unit (§4.7).
    fn finish(&mut self, v: V, omod: Omod, clamp: bool, select: bool) -> V {
        match omod_shift(omod) {
            Some(k) => {
                let v = self.unary(Unary::Omod(k), v);
                if clamp {
                    self.unary(Unary::Clamp, v)
                } else {
                    v
                }
            }
            None if select => v,
            None => self.unary(Unary::Canon, v),
        }
    }

    pub(super) fn alu(&mut self, inst: &Inst, alu: &Alu, uncached: bool) -> Result<(), String> {
        let c = &inst.cmn;
        let (rop, aop) = (alu.rgba.op, alu.alpha.op);
        if rop == RgbOp::Sop && aop == AlphaOp::Dp {
            return Err("RGB SOP paired with alpha DP: each unit waits for the other".into());
        }
        let is_out = c.ty == InstType::Out;
        if is_out && uncached {
            let full = c.rgb_omask == 7 && c.alpha_omask;
            let none = c.rgb_omask == 0 && !c.alpha_omask;
            if !full && !none {
                return Err("uncached (UMRT) output must write all four channels or none".into());
            }
        }
        if c.tex_sem_wait {
            self.emit(Op::SemWait);
        }
        let mut ops = Operands::default();
        // Raw (pre-OMOD) results; SOP needs alpha first, alpha DP needs RGB first.
        let (rgb_raw, a_raw) = if rop == RgbOp::Sop {
            let a = self.alpha_op(alu, &mut ops, None);
            (self.rgb_op(alu, &mut ops, Some(a)), a)
        } else {
            let r = self.rgb_op(alu, &mut ops, None);
            (r, self.alpha_op(alu, &mut ops, Some(r[0])))
        };
        let rgb_sel = matches!(rop, RgbOp::Min | RgbOp::Max | RgbOp::Cnd | RgbOp::Cmp);
        let a_sel = matches!(
            aop,
            AlphaOp::Min | AlphaOp::Max | AlphaOp::Cnd | AlphaOp::Cmp
        );
        let mut rgb = rgb_raw;
        if rgb_raw[0] == rgb_raw[1] && rgb_raw[1] == rgb_raw[2] {
            let v = self.finish(rgb_raw[0], alu.rgb.omod, c.rgb_clamp, rgb_sel);
            rgb = [v, v, v];
        } else {
            for ch in rgb.iter_mut() {
                *ch = self.finish(*ch, alu.rgb.omod, c.rgb_clamp, rgb_sel);
            }
        }
        let a = self.finish(a_raw, alu.alpha.omod, c.alpha_clamp, a_sel);
        let res = [rgb[0], rgb[1], rgb[2], a];

        self.write_temps(inst, alu, res);
        self.write_outputs(inst, alu, res, uncached);
        // The ALU result (§4.8.5).
        if alu.rgb.alu_wmask {
            let from = match c.alu_result_sel {
                crate::isa::table::ResultSel::Red => 0,
                crate::isa::table::ResultSel::Alpha => 3,
            };
            self.emit(Op::SetAluResult {
                test: test_code(c.alu_result_op as u8),
                v: res[from],
                gate: gate(inst, from),
            });
        }
        Ok(())
    }

    /// The writes to temporaries (§4.8.1).
    fn write_temps(&mut self, inst: &Inst, alu: &Alu, res: [V; 4]) {
        let c = &inst.cmn;
        let a = res[3];
        let rgb_dst = Index {
            base: alu.rgba.addrd,
            rel: alu.rgba.addrd_rel,
        };
        let a_dst = Index {
            base: alu.alpha.addrd,
            rel: alu.alpha.addrd_rel,
        };
        for (ch, &v) in res.iter().enumerate().take(3) {
            if c.rgb_wmask & (1 << ch) != 0 {
                self.emit(Op::SetTemp {
                    index: rgb_dst,
                    chan: ch as u8,
                    v,
                    gate: gate(inst, ch),
                    fetched: false,
                });
            }
        }
        if c.alpha_wmask {
            self.emit(Op::SetTemp {
                index: a_dst,
                chan: 3,
                v: a,
                gate: gate(inst, 3),
                fetched: false,
            });
        }
    }

    /// The writes to outputs (§4.8.2, §5.4; uncached ones as UMRT writes)
    /// or to predicate bits (§4.8.3), and the conditional value.
    fn write_outputs(&mut self, inst: &Inst, alu: &Alu, res: [V; 4], uncached: bool) {
        let c = &inst.cmn;
        let is_out = c.ty == InstType::Out;
        let a = res[3];
        if is_out && uncached {
            if c.rgb_omask == 7 {
                let (index, acquire) = match alu.rgb.target & 3 {
                    0 => (UmrtIndex::Shared, false),
                    1 => (UmrtIndex::Shared, true),
                    2 => (UmrtIndex::PerProcessor, false),
                    _ => (UmrtIndex::PerProcessor, true),
                };
                self.emit(Op::UmrtWrite {
                    value: res[0],
                    x: res[1],
                    y: res[2],
                    index,
                    gate: gate(inst, 0),
                });
                if acquire {
                    self.emit(Op::SemAcquire {
                        wait: c.tex_sem_wait,
                    });
                }
            }
        } else if is_out {
            for (ch, &v) in res.iter().enumerate().take(3) {
                if c.rgb_omask & (1 << ch) != 0 {
                    self.emit(Op::SetOut {
                        target: alu.rgb.target & 3,
                        chan: ch as u8,
                        v,
                        gate: gate(inst, ch),
                    });
                }
            }
            if c.alpha_omask {
                self.emit(Op::SetOut {
                    target: alu.alpha.target & 3,
                    chan: 3,
                    v: a,
                    gate: gate(inst, 3),
                });
            }
        } else {
            for (ch, &v) in res.iter().enumerate().take(3) {
                if c.rgb_omask & (1 << ch) != 0 {
                    self.emit(Op::SetPred {
                        chan: ch as u8,
                        test: test_code(alu.rgb.target),
                        v,
                        gate: gate(inst, ch),
                    });
                }
            }
            if c.alpha_omask {
                self.emit(Op::SetPred {
                    chan: 3,
                    test: test_code(alu.alpha.target),
                    v: a,
                    gate: gate(inst, 3),
                });
            }
        }
        if is_out && alu.alpha.w_omask {
            self.emit(Op::SetDepth {
                v: a,
                gate: gate(inst, 3),
            });
        }
    }
}
