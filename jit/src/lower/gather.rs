//! The 2×2 gather in compiled code (`docs/isa.md` §5.4, the memory
//! controller's lookup of a one-channel input whose gather bit is set):
//! channels 0–3 are channel 0 of the elements (x+1, y), (x, y+1),
//! (x+1, y+1) and (x, y), where (x, y) is the texel floor of the
//! coordinates — −1 for a coordinate without one (NaN, |c| ≥ 2^31), as the
//! memory controller takes it — each element read if it lies inside the
//! surface, else zero and counted outside (lanes that fetch, helpers
//! excepted). Only a body compiled for [`Lookups::Gathered`] reads such an
//! input (the runtime compiles it the first time a run binds one).
//!
//! [`Lookups::Gathered`]: super::Lookups::Gathered

use super::elements::Source;
use super::fetch::{Lanes, Lookup};
use super::{GROUP_QUADS, Lowering};
use crate::state::io_offsets;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Value, types};

/// The elements' offsets from (x, y), in channel order.
const ELEMENTS: [(u32, u32); 4] = [(1, 0), (0, 1), (1, 1), (0, 0)];

impl Lowering<'_, '_> {
    /// The gather of `op` for the batch (see the module docs): the element
    /// addresses of channel `c` into `Io::args[c]`, then one word per lane
    /// and element (16 bits for uint16_1), converted and masked as any
    /// lookup's.
    pub(super) fn fetch_gather(
        &mut self,
        op: Lookup,
        coords: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
        desc: Value,
        pages: Value,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let form = self.forms[usize::from(op.input & 15)];
        let geometry = self.geometry(desc, form, true);
        let size = geometry.size;
        let [fzero, fone, none, limit] =
            [0.0f32, 1.0, -1.0, 2147483648.0].map(|x| self.b.ins().f32const(x));
        let [fzero, fone, none, limit] =
            [fzero, fone, none, limit].map(|x| self.b.ins().splat(types::F32X4, x));
        let helpers = self.helpers();
        let mut outside: Option<Value> = None;
        for k in 0..self.w {
            // Per axis: the texel floor as f32 (−1 without one) and as an
            // integer, and per offset d whether floor + d is inside.
            let axis = |l: &mut Self, c: Value, size: Value| {
                let c = if op.unscaled {
                    c
                } else {
                    l.b.ins().fmul(c, size)
                };
                let f = l.b.ins().floor(c);
                let a = l.b.ins().fabs(f);
                let has = l.b.ins().fcmp(FloatCC::LessThan, a, limit);
                let f = l.select_f(has, f, none);
                let inside = [fzero, fone].map(|d| {
                    let g = l.b.ins().fadd(f, d);
                    let ge = l.b.ins().fcmp(FloatCC::GreaterThanOrEqual, g, fzero);
                    let lt = l.b.ins().fcmp(FloatCC::LessThan, g, size);
                    l.b.ins().band(ge, lt)
                });
                (l.b.ins().x86_cvtt2dq(types::I32X4, f), inside)
            };
            let (x, in_x) = axis(self, coords[0][k], size[0]);
            let (y, in_y) = axis(self, coords[1][k], size[1]);
            for (c, (dx, dy)) in ELEMENTS.into_iter().enumerate() {
                let lanes = Lanes {
                    inside: self.b.ins().band(in_x[dx as usize], in_y[dy as usize]),
                    enable: enable.map(|m| m[k]),
                    helper: helpers[k],
                };
                let [dx, dy] = [dx, dy].map(|d| self.splat_i(d));
                let ex = self.b.ins().iadd(x, dx);
                let ey = self.b.ins().iadd(y, dy);
                let (at, _) = self.lane_address(&geometry, (ex, ey), lanes, &mut outside);
                let off = io_offsets::ARGS as i32 + c as i32 * super::CHAN_BYTES;
                self.store_vec(at, self.io_base, off, k);
            }
        }
        if let Some(outside) = outside {
            self.count_outside(outside);
        }
        // One-channel formats: 4-byte words (float32_1) or 16-bit ones
        // (uint16_1); an input of known form reads in its one way.
        if matches!(form.shift, 1 | 2) {
            let half = form.shift == 1;
            let raw: [[Value; GROUP_QUADS]; 4] = std::array::from_fn(|c| {
                self.each(|l, k| l.words(Source::Paged(pages), (c, k), half))
            });
            return self.fetched(desc, raw, enable, (form, true));
        }
        let (words, halves) = (self.b.create_block(), self.b.create_block());
        let (merge, out) = self.merge_block(types::I32X4);
        let is_half = self.b.ins().icmp_imm_s(IntCC::Equal, geometry.shift, 1);
        self.b.ins().brif(is_half, halves, &[], words, &[]);
        let memo = self.memo.clone();
        for (block, half) in [(words, false), (halves, true)] {
            self.arm(block, &memo);
            let raw: [[Value; GROUP_QUADS]; 4] = std::array::from_fn(|c| {
                self.each(|l, k| l.words(Source::Paged(pages), (c, k), half))
            });
            self.jump_with(merge, &raw);
        }
        self.rejoin(merge, memo);
        self.fetched(desc, out, enable, (form, true))
    }
}
