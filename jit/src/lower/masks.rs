//! Lane masks in the general clause body: the group's bit masks
//! (running, active, killed, predicate bits, ALU result, outputs written)
//! read into one I32X4 lane mask per quad of the batch, updated as
//! operations run, and written back at the end of the batch; the gate
//! rule of a write (`interp::enabled`'s twin); and the blends of writes.
//!
//! A write to a register or output at a fixed address is held until
//! something could see the memory it goes to — a read of that register,
//! a read or write addressed through aL, a runtime call, the batch's end —
//! and a later write to the same place under the same lanes replaces it:
//! the lanes end with the last value either way, and the general body
//! loads, blends and stores each place once per batch instead of once per
//! write.

use super::hash::FastMap;
use super::{GROUP_QUADS, Lowering};
use crate::ir::{Clause, Gate, Op, V};
use crate::state::offsets;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

/// Lane masks of the batch, one I32X4 per quad, and which changed.
pub(super) struct Masks {
    /// Running and active lanes, each on its own, where the clause reads
    /// them so (a write to inactive lanes, a kill); else empty.
    pub(super) running: Vec<Value>,
    pub(super) active: Vec<Value>,
    /// Running and active lanes together, where the clause reads only
    /// them; else empty.
    both: Vec<Value>,
    pub(super) killed: Vec<Value>,
    pub(super) pred: [Vec<Value>; 4],
    pub(super) alu: Vec<Value>,
    /// Output channels and the depth value written, OR-ed per quad.
    pub(super) written: FastMap<usize, Vec<Value>>,
    pub(super) dirty_flow: bool,
    pub(super) dirty_pred: [bool; 4],
    pub(super) dirty_alu: bool,
    /// The lanes of each gate asked for since the masks last changed.
    gates: Vec<(Gate, Vec<Value>)>,
    /// Writes not yet made, at most one per place.
    held: Vec<Held>,
}

/// A write held back ([`Lowering::hold_write`]): the canonical form of `v`
/// into the lanes `lanes` (per quad) of the batch's vectors at `off`.
struct Held {
    off: i32,
    lanes: Vec<Value>,
    v: V,
}

impl Masks {
    /// Forgets the gates' lanes: for a change of the masks they read.
    pub(super) fn changed(&mut self) {
        self.gates.clear();
    }
}

impl Lowering<'_, '_> {
    /// A whole-group bit mask word of the lanes.
    pub(super) fn load_bits(&mut self, off: usize) -> Value {
        self.b
            .ins()
            .load(types::I32, MemFlagsData::trusted(), self.lanes, off as i32)
    }

    /// Quad `k` of the batch's 4 bits of `word` as an I32X4 lane mask.
    pub(super) fn quad_mask(&mut self, word: Value, k: usize) -> Value {
        let s = self.add_imm(self.lane0, 4 * k as i64);
        let bits = self.b.ins().ushr(word, s);
        self.lane_mask(bits)
    }

    /// The low four bits of `bits` (bit `i` for lane `i`) as an I32X4 lane
    /// mask.
    pub(super) fn lane_mask(&mut self, bits: Value) -> Value {
        let v = self.b.ins().splat(types::I32X4, bits);
        let lane_bits = self.vconst4([1, 2, 4, 8]);
        let m = self.b.ins().band(v, lane_bits);
        let zero = self.splat_i(0);
        self.b.ins().icmp(IntCC::NotEqual, m, zero)
    }

    pub(super) fn mask_vecs(&mut self, off: usize) -> Vec<Value> {
        let word = self.load_bits(off);
        self.quad_masks(word)
    }

    /// The lane masks of the batch's quads in `word`.
    fn quad_masks(&mut self, word: Value) -> Vec<Value> {
        (0..self.w).map(|k| self.quad_mask(word, k)).collect()
    }

    /// The lane masks the clause's operations read (running and active
    /// always; killed, predicate bits and the ALU result only where an
    /// operation uses or updates them).
    pub(super) fn load_masks(&mut self, clause: &Clause) -> Masks {
        let mut pred_used = [false; 4];
        let (mut kills, mut alu_used) = (false, false);
        for n in &clause.nodes {
            let gate = match &n.op {
                Op::SetTemp { gate, .. }
                | Op::SetOut { gate, .. }
                | Op::SetDepth { gate, .. }
                | Op::SetAluResult { gate, .. }
                | Op::UmrtWrite { gate, .. } => Some(*gate),
                Op::SetPred { gate, chan, .. } => {
                    pred_used[usize::from(*chan & 3)] = true;
                    Some(*gate)
                }
                Op::Kill { checks } => {
                    kills = true;
                    for (_, g) in checks {
                        if let Some((c, _)) = g.pred {
                            pred_used[usize::from(c & 3)] = true;
                        }
                    }
                    None
                }
                _ => None,
            };
            alu_used |= matches!(n.op, Op::SetAluResult { .. });
            if let Some((c, _)) = gate.and_then(|g| g.pred) {
                pred_used[usize::from(c & 3)] = true;
            }
        }
        let load = |l: &mut Self, used: bool, off: usize| {
            if used { l.mask_vecs(off) } else { Vec::new() }
        };
        let pred = [0, 1, 2, 3].map(|c| load(self, pred_used[c], offsets::PRED + 4 * c));
        // The batch loop's test read the running and active words already
        // and took their intersection.
        let [running, active, both] = match self.batch_bits {
            Some(words) => words,
            None => {
                let [r, a] = [offsets::RUNNING, offsets::ACTIVE].map(|off| self.load_bits(off));
                [r, a, self.b.ins().band(r, a)]
            }
        };
        // Only writes to inactive lanes and kills read running and active
        // apart; every other gate reads their intersection.
        let apart = kills || super::writes_inactive(clause);
        let (running, active, both) = if apart {
            (
                self.quad_masks(running),
                self.quad_masks(active),
                Vec::new(),
            )
        } else {
            (Vec::new(), Vec::new(), self.quad_masks(both))
        };
        Masks {
            running,
            active,
            both,
            killed: load(self, kills, offsets::KILLED),
            pred,
            alu: load(self, alu_used, offsets::ALU_RESULT),
            written: FastMap::default(),
            dirty_flow: false,
            dirty_pred: [false; 4],
            dirty_alu: false,
            gates: Vec::new(),
            held: Vec::new(),
        }
    }

    /// The batch's lanes of per-quad masks as bits relative to the batch's
    /// first lane.
    pub(super) fn batch_bits(&mut self, m: &[Value]) -> Value {
        let mut acc: Option<Value> = None;
        for (k, &v) in m.iter().enumerate() {
            let b = self.b.ins().vhigh_bits(types::I32, v);
            let b = if k == 0 {
                b
            } else {
                self.b.ins().ishl_imm_s(b, 4 * k as i64)
            };
            acc = Some(match acc {
                None => b,
                Some(a) => self.b.ins().bor(a, b),
            });
        }
        acc.expect("a batch has quads")
    }

    /// Replaces the batch's bits of the mask word at `off` by `m`
    /// (`or_only`: OR them in instead).
    pub(super) fn store_bits(&mut self, off: usize, m: &[Value], or_only: bool) {
        let bits = self.batch_bits(m);
        let s = self.lane0;
        let bits = self.b.ins().ishl(bits, s);
        let word = self.load_bits(off);
        let word = if or_only {
            word
        } else {
            let all = self.b.ins().iconst(types::I32, (1i64 << (4 * self.w)) - 1);
            let all = self.b.ins().ishl(all, s);
            self.b.ins().band_not(word, all)
        };
        let word = self.b.ins().bor(word, bits);
        self.b
            .ins()
            .store(MemFlagsData::trusted(), word, self.lanes, off as i32);
    }

    pub(super) fn store_masks(&mut self) {
        self.make_writes(None);
        let m = self.masks.take().expect("masks loaded");
        if m.dirty_flow {
            self.store_bits(offsets::RUNNING, &m.running, false);
            self.store_bits(offsets::ACTIVE, &m.active, false);
            self.store_bits(offsets::KILLED, &m.killed, false);
        }
        for c in 0..4 {
            if m.dirty_pred[c] {
                self.store_bits(offsets::PRED + 4 * c, &m.pred[c], false);
            }
        }
        if m.dirty_alu {
            self.store_bits(offsets::ALU_RESULT, &m.alu, false);
        }
        let mut written: Vec<_> = m.written.into_iter().collect();
        written.sort_by_key(|w| w.0);
        for (off, v) in written {
            self.store_bits(off, &v, true);
        }
    }

    /// The lanes a gated write touches, per quad (`interp::enabled`).
    pub(super) fn enabled(&mut self, gate: Gate) -> Vec<Value> {
        let m = self.masks.as_ref().expect("masks loaded");
        if let Some((_, lanes)) = m.gates.iter().find(|(g, _)| *g == gate) {
            return lanes.clone();
        }
        let (running, active, both) = (m.running.clone(), m.active.clone(), m.both.clone());
        let pred = gate
            .pred
            .map(|(c, inv)| (m.pred[usize::from(c & 3)].clone(), inv));
        let lanes = (0..self.w)
            .map(|k| {
                let mut e = if gate.inactive {
                    running[k]
                } else if let Some(&both) = both.get(k) {
                    both
                } else {
                    self.b.ins().band(running[k], active[k])
                };
                if let Some((p, inv)) = &pred {
                    e = if *inv {
                        self.b.ins().band_not(e, p[k])
                    } else {
                        self.b.ins().band(e, p[k])
                    };
                }
                e
            })
            .collect::<Vec<_>>();
        let m = self.masks.as_mut().expect("masks loaded");
        m.gates.push((gate, lanes.clone()));
        lanes
    }

    /// Writes the canonical form of `v` into the lanes `lanes` (per quad)
    /// of the batch's vectors at `off` (a place whose address does not
    /// depend on aL) when something could see it (module doc): what a
    /// later write to the same place under the same lanes replaces is
    /// never made.
    pub(super) fn hold_write(&mut self, off: i32, lanes: Vec<Value>, v: V) {
        let m = self.masks.as_mut().expect("masks loaded");
        if let Some(i) = m.held.iter().position(|h| h.off == off) {
            if m.held[i].lanes == lanes {
                m.held[i].v = v;
                return;
            }
            self.make_writes(Some(off));
        }
        let m = self.masks.as_mut().expect("masks loaded");
        m.held.push(Held { off, lanes, v });
    }

    /// Makes the held writes to the batch's vectors at `at` (`None`: every
    /// held write).
    pub(super) fn make_writes(&mut self, at: Option<i32>) {
        let Some(m) = self.masks.as_mut() else { return };
        let held = std::mem::take(&mut m.held);
        let (now, keep): (Vec<_>, Vec<_>) = held
            .into_iter()
            .partition(|h| at.is_none_or(|a| a == h.off));
        self.masks.as_mut().expect("masks loaded").held = keep;
        for h in now {
            let q = self.canonical(h.v);
            self.blend_store(q, &h.lanes, self.base, h.off);
        }
    }

    /// Blends `v` into the vectors at `p + off` under `m`.
    pub(super) fn blend_store(&mut self, v: [Value; GROUP_QUADS], m: &[Value], p: Value, off: i32) {
        for k in 0..self.w {
            self.blend_vec(m[k], v[k], p, off, k);
        }
    }

    pub(super) fn note_written(&mut self, off: usize, m: &[Value]) {
        let masks = self.masks.as_mut().expect("masks loaded");
        match masks.written.get(&off).cloned() {
            Some(prev) => {
                let merged = (0..self.w)
                    .map(|k| self.b.ins().bor(prev[k], m[k]))
                    .collect();
                self.masks
                    .as_mut()
                    .expect("masks loaded")
                    .written
                    .insert(off, merged);
            }
            None => {
                masks.written.insert(off, m.to_vec());
            }
        }
    }
}
