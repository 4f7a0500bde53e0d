//! Lowering of one IR operation ([`Op`]) inside a batch: the value each
//! node produces, register and output writes under their gates, mask
//! updates and host calls (`docs/design.md`, "The data path"; numeric rules
//! in [`super::math`]).

use super::*;

impl Lowering<'_, '_> {
    pub(super) fn node(&mut self, index: u32, op: &Op) {
        match op {
            Op::Const { .. } | Op::Imm { .. } => {}
            Op::Temp { dst, index, chan } => {
                let (p, off) = self.temp_addr(*index, *chan);
                let q = self.each(|l, k| l.load_vec(p, off, k));
                self.set(*dst, q);
            }
            Op::Unary { dst, op, a } => self.unary(*dst, *op, *a),
            Op::Binary { dst, op, a, b } => {
                let (da, db) = (self.daz(*a), self.daz(*b));
                let q = match op {
                    Binary::Min | Binary::Max => {
                        let (ra, rb) = (self.get(*a).q, self.get(*b).q);
                        let max = *op == Binary::Max;
                        let q = self.each(|l, k| l.minmax(max, ra[k], rb[k]));
                        self.set(*dst, q);
                        return;
                    }
                    _ => self.each(|l, k| l.arith(*op, da[k], db[k])),
                };
                self.set(*dst, q);
            }
            Op::Mad { dst, a, b, c } => {
                // Under DAZ, x · 1 is x, x + (−0) and (−0) + x are x, and a
                // square plus +0 is the square (never −0) for every operand:
                // a denormal reads as the zero it is flushed to, NaN stays
                // NaN and is standardised where observed. Skip them.
                const ONE: u32 = 0x3F80_0000;
                const NEG_ZERO: u32 = 0x8000_0000;
                let is = |l: &Self, v: &crate::ir::V, bits| l.imm[v.0 as usize] == Some(bits);
                let (a, b) = if is(self, a, ONE) { (b, a) } else { (a, b) };
                let times_one = is(self, b, ONE);
                if times_one && is(self, a, NEG_ZERO) {
                    let q = self.get(*c).q;
                    self.set(*dst, q);
                    return;
                }
                let square_plus_zero = a == b && is(self, c, 0);
                let add = !(is(self, c, NEG_ZERO) || square_plus_zero);
                let (da, dc) = (self.daz(*a), self.daz(*c));
                let product = (!times_one).then(|| self.daz(*b));
                let q = self.each(|l, k| {
                    let p = match product {
                        Some(db) => l.b.ins().fmul(da[k], db[k]),
                        None => da[k],
                    };
                    if add { l.b.ins().fadd(p, dc[k]) } else { p }
                });
                self.set(*dst, q);
            }
            Op::Dot { dst, pairs, addend } => {
                let pairs: Vec<_> = pairs
                    .iter()
                    .map(|&(a, b)| (self.daz(a), self.daz(b)))
                    .collect();
                let addend = addend.map(|c| self.daz(c));
                let q = self.each(|l, k| {
                    let p: Vec<_> = pairs.iter().map(|(a, b)| (a[k], b[k])).collect();
                    l.dot(&p, addend.map(|c| c[k]))
                });
                self.set(*dst, q);
            }
            Op::Select { dst, op, c, a, b } => {
                let dc = self.daz(*c);
                let (va, vb) = (self.get(*a), self.get(*b));
                let cmp = *op == Select::Cmp;
                let q = self.each(|l, k| l.select_op(cmp, dc[k], va.q[k], vb.q[k]));
                self.set(*dst, q);
            }
            Op::QuadLane { dst, a, lane } => {
                let va = self.get(*a);
                let lane = *lane;
                let q = self.each(|l, k| l.shuffle32(va.q[k], va.q[k], [lane; 4]));
                self.set(*dst, q);
            }
            Op::SetTemp {
                index,
                chan,
                v,
                gate,
                ..
            } => {
                let m = self.enabled(*gate);
                let (p, off) = self.temp_addr(*index, *chan);
                let v = self.get(*v).q;
                self.blend_store(v, &m, p, off);
            }
            Op::SetOut {
                target,
                chan,
                v,
                gate,
            } => {
                let m = self.enabled(*gate);
                let (t, c) = (usize::from(*target), usize::from(*chan));
                let off = (offsets::OUT + (t * 4 + c) * CHAN_BYTES as usize) as i32;
                let v = self.get(*v).q;
                self.blend_store(v, &m, self.base, off);
                self.note_written(offsets::OUT_WRITTEN + (t * 4 + c) * 4, &m);
            }
            Op::SetDepth { v, gate } => {
                let m = self.enabled(*gate);
                let v = self.get(*v).q;
                self.blend_store(v, &m, self.base, offsets::DEPTH as i32);
                self.note_written(offsets::DEPTH_WRITTEN, &m);
            }
            Op::SetPred {
                chan,
                test,
                v,
                gate,
            } => {
                let m = self.enabled(*gate);
                let t = self.truth(*v, *test);
                let c = usize::from(*chan & 3);
                let old = self.masks.as_ref().expect("masks loaded").pred[c].clone();
                let new: Vec<_> = (0..self.w)
                    .map(|k| self.b.ins().bitselect(m[k], t[k], old[k]))
                    .collect();
                let masks = self.masks.as_mut().expect("masks loaded");
                masks.pred[c] = new;
                masks.dirty_pred[c] = true;
            }
            Op::SetAluResult { test, v, gate } => {
                let m = self.enabled(*gate);
                let t = self.truth(*v, *test);
                let old = self.masks.as_ref().expect("masks loaded").alu.clone();
                let new: Vec<_> = (0..self.w)
                    .map(|k| self.b.ins().bitselect(m[k], t[k], old[k]))
                    .collect();
                let masks = self.masks.as_mut().expect("masks loaded");
                masks.alu = new;
                masks.dirty_alu = true;
            }
            Op::Kill { checks } => {
                let mut kill: Option<Vec<Value>> = None;
                for (v, gate) in checks {
                    let m = self.enabled(*gate);
                    let t = self.truth(*v, Test::Lt);
                    let k: Vec<_> = (0..self.w).map(|k| self.b.ins().band(t[k], m[k])).collect();
                    kill = Some(match kill {
                        None => k,
                        Some(prev) => (0..self.w)
                            .map(|q| self.b.ins().bor(prev[q], k[q]))
                            .collect(),
                    });
                }
                let Some(kill) = kill else { return };
                let m = self.masks.take().expect("masks loaded");
                let mut m = m;
                for (k, &kill) in kill.iter().enumerate() {
                    m.killed[k] = self.b.ins().bor(m.killed[k], kill);
                    m.running[k] = self.b.ins().band_not(m.running[k], kill);
                    m.active[k] = self.b.ins().band_not(m.active[k], kill);
                }
                m.dirty_flow = true;
                self.masks = Some(m);
            }
            Op::Fetch {
                dst,
                coords,
                inactive,
                kind,
                input,
                unscaled,
            } => {
                let gate = Gate {
                    pred: None,
                    inactive: *inactive,
                };
                let m = self.enabled(gate);
                let coords = coords.map(|v| self.get(v).q);
                let op = fetch::Lookup {
                    node: index,
                    kind: *kind,
                    input: *input,
                    unscaled: *unscaled,
                };
                let got = self.fetch(op, coords, Some(&m));
                for (d, q) in dst.iter().zip(got) {
                    self.set(*d, q);
                }
            }
            Op::UmrtWrite {
                value, x, y, gate, ..
            } => {
                let m = self.enabled(*gate);
                for (c, v) in [value, x, y].into_iter().enumerate() {
                    let q = self.get(*v).q;
                    self.store_arg(c, q);
                }
                let bits = self.batch_bits(&m);
                let helper = self.load_bits(offsets::HELPER);
                let helper = self.b.ins().ushr(helper, self.lane0);
                let bits = self.b.ins().band_not(bits, helper);
                self.host_call(io_offsets::UMRT, index, bits);
            }
            Op::SemWait | Op::SemAcquire { .. } => {}
        }
    }

    /// `test(v)` per lane as masks.
    pub(super) fn truth(&mut self, v: crate::ir::V, t: Test) -> [Value; GROUP_QUADS] {
        let d = self.daz(v);
        self.each(|l, k| l.test_zero(t.code(), d[k]))
    }

    pub(super) fn unary(&mut self, dst: crate::ir::V, op: Unary, a: crate::ir::V) {
        let va = self.get(a);
        let q = match op {
            Unary::Neg | Unary::Abs | Unary::Nab => self.each(|l, k| l.sign(op, va.q[k])),
            Unary::Clamp => {
                let d = self.daz(a);
                self.each(|l, k| l.clamp(va.q[k], d[k]))
            }
            _ => {
                let d = self.daz(a);
                self.each(|l, k| {
                    let x = d[k];
                    match op {
                        Unary::Frc => l.frc(x),
                        Unary::Ex2 => l.ex2(x),
                        Unary::Ln2 => l.ln2(x),
                        Unary::Rcp => l.rcp(x),
                        Unary::Rsq => l.rsq(x),
                        Unary::Sin => l.sincos(x, false),
                        Unary::Cos => l.sincos(x, true),
                        Unary::Omod(s) => l.omod(x, s),
                        Unary::Canon => l.omod(x, 0),
                        Unary::Neg | Unary::Abs | Unary::Nab | Unary::Clamp => {
                            unreachable!("handled above")
                        }
                    }
                })
            }
        };
        self.set(dst, q);
    }
}
