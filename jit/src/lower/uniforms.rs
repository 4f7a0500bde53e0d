//! A clause's uniform values — constants, immediates and what the
//! lowering derives from them once — loaded where the clause starts, so
//! that every batch of quads shares them (docs/isa.md §1.2 and §4.3: the
//! constant registers and their aL-relative addressing).

use super::hash::FastMap;
use super::values::Memo;
use super::{Lowering, lazy};
use crate::ir::{Clause, Op};
use crate::state::{GROUP_QUADS, io_offsets};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

impl Lowering<'_, '_> {
    /// Starts the lowering of `clause`: no values yet, then its uniform
    /// values (constants, immediates), each constant channel loaded once
    /// however many nodes read it (relative ones too: aL does not change
    /// within a clause).
    pub(super) fn uniforms(&mut self, clause: &Clause) {
        let n = clause.values as usize;
        self.vals = vec![None; n];
        self.lazy = vec![lazy::Lazy::No; n];
        self.imm = vec![None; n];
        self.neg = vec![None; n];
        self.shifted = vec![None; n];
        // aL is the same throughout a clause: so are relative constants.
        let mut loaded: FastMap<(u8, bool, u8), Value> = FastMap::default();
        let mut rel = FastMap::default();
        let mut uniform = vec![false; n];
        for node in &clause.nodes {
            if let Op::Const { dst, .. } | Op::Imm { dst, .. } = node.op {
                uniform[dst.0 as usize] = true;
            }
            match node.op {
                Op::Const { dst, index, chan } => {
                    let key = (index.base, index.rel, chan);
                    let v = match loaded.get(&key) {
                        Some(&v) => v,
                        None => {
                            let v = self.load_const(index, chan, &mut rel);
                            loaded.insert(key, v);
                            v
                        }
                    };
                    self.set(dst, [v; GROUP_QUADS]);
                }
                Op::Imm { dst, bits } => {
                    let v = self.splat_bits(types::F32X4, bits);
                    self.set(dst, [v; GROUP_QUADS]);
                    self.imm[dst.0 as usize] = Some(bits);
                }
                Op::Unary {
                    dst,
                    op: crate::ir::Unary::Neg,
                    a,
                } => self.neg[dst.0 as usize] = Some(a),
                Op::Unary {
                    dst,
                    op: crate::ir::Unary::Canon | crate::ir::Unary::Omod(0),
                    a,
                } => self.shifted[dst.0 as usize] = self.shifted[a.0 as usize],
                Op::Mad { dst, a, b, c } => self.shifted[dst.0 as usize] = self.shift(a, b, c),
                _ => {}
            }
        }
        // Dot products' uniform factors, widened here (dominating every
        // use) and once for both halves: every lane holds the same value,
        // so the high half's widening is the low half's ([`super::math`]'s
        // `dot`).
        for node in &clause.nodes {
            let Op::Dot { pairs, addend, .. } = &node.op else {
                continue;
            };
            let factors = pairs.iter().flat_map(|&(a, b)| [a, b]).chain(*addend);
            for v in factors.filter(|v| uniform[v.0 as usize]) {
                let v = self.get(v).q[0];
                if !self.memo.contains_key(&Memo::Widened(v, false)) {
                    let w = self.b.ins().fvpromote_low(v);
                    self.memo.insert(Memo::Widened(v, false), w);
                    self.memo.insert(Memo::Widened(v, true), w);
                }
            }
        }
    }

    /// The effective register index of `index` as a byte offset (scalar).
    pub(super) fn rel_offset(&mut self, index: crate::ir::Index, size: i64, stride: i64) -> Value {
        let r = self.add_imm(self.al, i64::from(index.base));
        let r = self.b.ins().band_imm_s(r, size - 1);
        let r = self.b.ins().imul_imm_s(r, stride);
        self.b.ins().uextend(self.ptr, r)
    }

    /// Channel `chan` of constant `index` as a vector; `rel` memoises the
    /// address of a relative constant (`uni` plus its offset), which the
    /// channels of one clause share.
    fn load_const(
        &mut self,
        index: crate::ir::Index,
        chan: u8,
        rel: &mut FastMap<u8, Value>,
    ) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let chan_off = i32::from(chan) * 4 + io_offsets::CONSTS as i32;
        if !index.rel {
            // Already broadcast by the host (`Io::splat`): one vector load.
            // The engine fills `Io::splat` before it calls compiled code and
            // nothing changes it during the call, so the load may be merged
            // with its repeats, dropped where unused and hoisted out of the
            // batch loop (eight MAD chains: re-runs 9.9 -> 8.9 ns per pixel).
            let at =
                io_offsets::SPLAT as i32 + (i32::from(index.base) * 4 + i32::from(chan & 3)) * 16;
            return self
                .b
                .ins()
                .load(types::F32X4, flags.with_can_move(), self.io, at);
        }
        let p = match rel.get(&index.base) {
            Some(&p) => p,
            None => {
                let off = self.rel_offset(index, crate::ir::CONSTS as i64, 16);
                let p = self.b.ins().iadd(self.uni, off);
                rel.insert(index.base, p);
                p
            }
        };
        let x = self.b.ins().load(types::F32, flags, p, chan_off);
        self.b.ins().splat(types::F32X4, x)
    }
}
