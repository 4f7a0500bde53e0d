//! Texture lookups in compiled code: the memory controller's lookup rules
//! (texel floor, bounds, out-of-range reads as zero elements, missing
//! channels as (0, 0, 1); README, "Choices where the record is silent")
//! carried out without calling it.
//!
//! A fetch first looks at the input's [`TexDesc`](crate::state::TexDesc)
//! (through `Io::tex`). Where the runtime handed over none (strict caches
//! missing a line of the input, a gather over several channels, uncached
//! reads) or a one-channel 2×2
//! gather, the clause stores the coordinates into `Io::args` and calls the
//! runtime once for the group. Otherwise it reads memory itself. A clause
//! compiled for [`Lookups::Direct`] skips the test (the runtime calls it
//! only when every input it looks up has a descriptor and none is a
//! gather, and runs it in narrow batches like any other clause); one
//! compiled for [`Lookups::Gathered`] reads gathers too (`gather.rs`); one
//! compiled for [`Lookups::Host`] always calls the runtime. Reading memory:
//!
//! 1. in SIMD, per quad: texel coordinates `floor(s)` (`floor(s · pitch)`
//!    when scaled) and `floor(t)` (`floor(t · height)`), inside
//!    `0 ≤ x < pitch`, `0 ≤ y < height` (NaN and infinities are outside),
//!    the element's byte address relative to the surface's first page, or
//!    the zero element for lanes that are outside or do not fetch;
//! 2. per lane, the page pointer and the element: 16-byte elements one
//!    vector load per lane and a 4 × 4 transpose per quad, 4-byte elements
//!    one word per lane, 2-byte elements one 16-bit word per lane, other
//!    sizes a small loop over the batch's lanes through `Io::result`;
//! 3. in SIMD again: unorm channels (uint8_4's bytes, uint16_1's word)
//!    converted as the memory controller converts them — the integer as
//!    f32, divided by 255 or 65535, both exact to the bit — the channels a
//!    format lacks become (0, 0, 1), lanes that do not fetch become zeros,
//!    and lanes outside the surface are counted in `Io::oob`.
//!
//! That is the memory controller's lookup (`texel_floor`, the bounds check,
//! the element read) step for step; compiled code runs under MXCSR.DAZ,
//! which reads a denormal coordinate as the zero `texel_floor` flushes it
//! to. The differential tests of the texture path compare both engines'
//! outputs and out-of-bounds counts on every format.

use super::{CHAN_BYTES, GROUP_QUADS, Lookups, Lowering};
use crate::ir::{FetchKind, InputForm};
use crate::state::{io_offsets, offsets, tex_offsets};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Offset32 as Offset;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};

/// A surface's addressing as one quad's vectors (I32X4; `shift` a
/// scalar): see [`crate::state::TexDesc`].
pub(super) struct Geometry {
    pub pitch: Value,
    pub shift: Value,
    pub base_low: Value,
    pub zero_at: Value,
}

/// One quad's lanes for an element read: inside the surface, fetching
/// (every lane when `None`), helpers (I32X4 lane masks).
#[derive(Clone, Copy)]
pub(super) struct Lanes {
    pub inside: Value,
    pub enable: Option<Value>,
    pub helper: Value,
}

/// What a fetch reads: the op's fields the lowering needs.
#[derive(Clone, Copy)]
pub(super) struct Lookup {
    /// Node index in the clause (for the runtime call).
    pub node: u32,
    pub kind: FetchKind,
    pub input: u8,
    pub unscaled: bool,
}

impl Lowering<'_, '_> {
    /// The four channels (R, G, B, A) of a fetch for the batch: lanes whose
    /// mask in `enable` is set (every lane when `None`) fetch at `coords`
    /// (S, T, R, Q); the others receive zeros.
    pub(super) fn fetch(
        &mut self,
        op: Lookup,
        coords: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
    ) -> [[Value; GROUP_QUADS]; 4] {
        if op.kind == FetchKind::Uncached || self.lookups == Lookups::Host {
            return self.fetch_by_host(op, coords, enable);
        }
        let flags = MemFlagsData::trusted().with_readonly();
        let tex = self
            .b
            .ins()
            .load(self.ptr, flags, self.io, io_offsets::TEX as i32);
        let desc = self
            .b
            .ins()
            .iadd_imm_s(tex, (usize::from(op.input & 15) * tex_offsets::SIZE) as i64);
        let pages = self
            .b
            .ins()
            .load(self.ptr, flags, desc, tex_offsets::PAGES as i32);
        if self.lookups == Lookups::Direct {
            return self.fetch_direct(op, coords, enable, desc, pages);
        }
        let gather = self
            .b
            .ins()
            .load(types::I32, flags, desc, tex_offsets::GATHER as i32);
        let (direct, other) = (self.b.create_block(), self.b.create_block());
        let (merge, out) = self.merge_block(types::F32X4);
        match self.lookups {
            Lookups::Direct => unreachable!("returned above"),
            // The gather, or a plain read.
            Lookups::Gathered => self.b.ins().brif(gather, other, &[], direct, &[]),
            // A plain read where the input has a descriptor and is no
            // gather, else the runtime.
            Lookups::Either | Lookups::Host => {
                let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, pages, 0);
                let plain = self.b.ins().icmp_imm_s(IntCC::Equal, gather, 0);
                let ok = self.b.ins().band(has, plain);
                self.b.ins().brif(ok, direct, &[], other, &[])
            }
        };

        // Values memoised in one path must not leak into the other.
        let consts = self.consts.clone();
        self.b.switch_to_block(other);
        let got = if self.lookups == Lookups::Gathered {
            self.fetch_gather(op, coords, enable, desc, pages)
        } else {
            self.fetch_by_host(op, coords, enable)
        };
        self.jump_with(merge, &got);

        self.consts = consts.clone();
        self.b.switch_to_block(direct);
        let got = self.fetch_direct(op, coords, enable, desc, pages);
        self.jump_with(merge, &got);

        self.consts = consts;
        self.b.switch_to_block(merge);
        out
    }

    /// A fetch through the runtime callback.
    fn fetch_by_host(
        &mut self,
        op: Lookup,
        coords: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
    ) -> [[Value; GROUP_QUADS]; 4] {
        for (c, q) in coords.into_iter().enumerate() {
            self.store_arg(c, q);
        }
        let bits = self.enable_bits(enable);
        self.host_call(io_offsets::FETCH, op.node, bits);
        let p = self.io_base;
        std::array::from_fn(|c| {
            let off = io_offsets::RESULT as i32 + c as i32 * CHAN_BYTES;
            // Fetched channels are raw memory patterns.
            self.each(|l, k| l.load_vec(p, off, k))
        })
    }

    /// A fetch that reads memory itself (see the module docs).
    fn fetch_direct(
        &mut self,
        op: Lookup,
        coords: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
        desc: Value,
        pages: Value,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let flags = MemFlagsData::trusted().with_readonly();
        let word = |l: &mut Self, ty, off: usize| l.b.ins().load(ty, flags, desc, off as i32);
        let size_x = word(self, types::F32, tex_offsets::SIZE_F);
        let size_y = word(self, types::F32, tex_offsets::SIZE_F + 4);
        let (size_x, size_y) = (
            self.b.ins().splat(types::F32X4, size_x),
            self.b.ins().splat(types::F32X4, size_y),
        );
        let geometry = self.geometry(desc);
        let mut outside: Option<Value> = None;
        let helpers = self.helpers();
        for k in 0..self.w {
            let (x, in_x) = self.texel(coords[0][k], size_x, op.unscaled);
            let (y, in_y) = self.texel(coords[1][k], size_y, op.unscaled);
            let inside = self.b.ins().band(in_x, in_y);
            let lanes = Lanes {
                inside,
                enable: enable.map(|m| m[k]),
                helper: helpers[k],
            };
            let at = self.lane_address(&geometry, (x, y), lanes, &mut outside);
            let off = io_offsets::ARGS as i32;
            self.store_vec(at, self.io_base, off, k);
        }
        if let Some(outside) = outside {
            self.count_outside(outside);
        }
        let form = self.forms[usize::from(op.input & 15)];
        let raw = self.gather(desc, pages, geometry.shift, form);
        self.fetched(desc, raw, enable, form)
    }

    /// One axis of the texel floor (`texel_floor` of the memory controller;
    /// compiled code runs under DAZ, which reads a denormal as the zero it
    /// flushes to): `floor(c)` (`floor(c · size)` when scaled) as an integer
    /// per lane, and whether it lies in `0 ≤ f < size` (NaN and infinities
    /// do not). The integer is exact where inside (size < 2^31); elsewhere
    /// (x86's INT_MIN for NaN and overflow) it is not used.
    pub(super) fn texel(&mut self, c: Value, size: Value, unscaled: bool) -> (Value, Value) {
        let c = if unscaled {
            c
        } else {
            self.b.ins().fmul(c, size)
        };
        let f = self.b.ins().floor(c);
        let zero = self.splat_i(0);
        let fzero = self.bitcast(types::F32X4, zero);
        let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, f, fzero);
        let lt = self.b.ins().fcmp(FloatCC::LessThan, f, size);
        let inside = self.b.ins().band(ge, lt);
        (self.b.ins().x86_cvtt2dq(types::I32X4, f), inside)
    }

    /// The addressing of the surface `desc` describes.
    pub(super) fn geometry(&mut self, desc: Value) -> Geometry {
        let flags = MemFlagsData::trusted().with_readonly();
        let mut word = |off: usize| self.b.ins().load(types::I32, flags, desc, off as i32);
        let [pitch, base_low, shift, zero_at] = [
            tex_offsets::PITCH,
            tex_offsets::BASE_LOW,
            tex_offsets::SHIFT,
            tex_offsets::ZERO,
        ]
        .map(&mut word);
        let [pitch, base_low, zero_at] =
            [pitch, base_low, zero_at].map(|v| self.b.ins().splat(types::I32X4, v));
        Geometry {
            pitch,
            shift,
            base_low,
            zero_at,
        }
    }

    /// The batch's helper lanes, per quad: their lookups read like any
    /// other but are not counted outside a surface.
    pub(super) fn helpers(&mut self) -> Vec<Value> {
        if self.whole {
            vec![self.splat_i(0); self.w]
        } else {
            self.mask_vecs(offsets::HELPER)
        }
    }

    /// The byte address (relative to the surface's first page) each lane
    /// of a quad reads: element (x, y) where it fetches and lies inside,
    /// else the zero element; lanes that fetch outside the surface (helpers
    /// excepted) are added to `outside` as -1 each.
    pub(super) fn lane_address(
        &mut self,
        g: &Geometry,
        (x, y): (Value, Value),
        lanes: Lanes,
        outside: &mut Option<Value>,
    ) -> Value {
        let Lanes {
            inside,
            enable,
            helper,
        } = lanes;
        let (reads, out) = match enable {
            Some(m) => (
                self.b.ins().band(inside, m),
                self.b.ins().band_not(m, inside),
            ),
            None => (inside, self.b.ins().bnot(inside)),
        };
        let out = self.b.ins().band_not(out, helper);
        *outside = Some(match *outside {
            None => out,
            Some(acc) => self.b.ins().iadd(acc, out),
        });
        let at = self.b.ins().imul(y, g.pitch);
        let at = self.b.ins().iadd(at, x);
        let at = self.b.ins().ishl(at, g.shift);
        let at = self.b.ins().iadd(at, g.base_low);
        self.b.ins().bitselect(reads, at, g.zero_at)
    }

    /// Adds lanes outside the surface (of those that fetch), as -1 per
    /// lane, to `Io::oob`.
    pub(super) fn count_outside(&mut self, outside: Value) {
        let at = io_offsets::OOB as i32;
        let acc = self
            .b
            .ins()
            .load(types::I32X4, MemFlagsData::trusted(), self.io, at);
        let acc = self.b.ins().iadd(acc, outside);
        self.b
            .ins()
            .store(MemFlagsData::trusted(), acc, self.io, at);
    }

    /// The fetched channels from the raw words `raw`: unorm ones
    /// converted, each kept under its mask with its fill, zeros for lanes
    /// that do not fetch.
    pub(super) fn fetched(
        &mut self,
        desc: Value,
        raw: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
        form: InputForm,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let flags = MemFlagsData::trusted().with_readonly();
        let word = |l: &mut Self, ty, off: usize| l.b.ins().load(ty, flags, desc, off as i32);
        let raw = self.unorm(desc, raw, form);
        std::array::from_fn(|c| {
            let mask = word(self, types::I32, tex_offsets::CHAN_MASK + 4 * c);
            let fill = word(self, types::I32, tex_offsets::FILL + 4 * c);
            let mask = self.b.ins().splat(types::I32X4, mask);
            let fill = self.b.ins().splat(types::I32X4, fill);
            self.each(|l, k| {
                let v = l.b.ins().band(raw[c][k], mask);
                let v = l.b.ins().bor(v, fill);
                let v = match enable {
                    Some(m) => l.b.ins().band(v, m[k]),
                    None => v,
                };
                l.as_float(v)
            })
        })
    }

    /// The raw channel words (I32X4 per quad and channel) of the elements
    /// at the addresses in `Io::args[0]`, by element size: 16-byte
    /// elements (`shift` 4, channels at 0, 4, 8, 12) one vector load per
    /// lane and a 4 × 4 transpose per quad; 4-byte elements one word per
    /// lane (the other channels are the format's constants, which the
    /// channel masks keep); other sizes a loop over the lanes. Whole-group
    /// code (which also keeps the runtime's path) takes the loop alone: the
    /// unrolled forms, eight quads wide, cost more to compile and in code
    /// size than they save. An input of known form reads in its one way.
    fn gather(
        &mut self,
        desc: Value,
        pages: Value,
        shift: Value,
        form: InputForm,
    ) -> [[Value; GROUP_QUADS]; 4] {
        if !matches!(self.lookups, Lookups::Direct | Lookups::Gathered) {
            return self.gather_looped(desc, pages);
        }
        match form.shift {
            0 => {}
            4 => return self.gather_wide(pages),
            2 | 1 => return self.gather_words(pages, form.shift == 1),
            _ => return self.gather_looped(desc, pages),
        }
        let [wide, narrow, half, other, test_narrow, test_half] =
            std::array::from_fn(|_| self.b.create_block());
        let (merge, out) = self.merge_block(types::I32X4);
        let is_wide = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 4);
        self.b.ins().brif(is_wide, wide, &[], test_narrow, &[]);
        self.b.switch_to_block(test_narrow);
        let is_narrow = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 2);
        self.b.ins().brif(is_narrow, narrow, &[], test_half, &[]);
        self.b.switch_to_block(test_half);
        let is_half = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 1);
        self.b.ins().brif(is_half, half, &[], other, &[]);

        self.b.switch_to_block(wide);
        let chans = self.gather_wide(pages);
        self.jump_with(merge, &chans);

        // 4-byte and 2-byte elements: one word per lane, read by every
        // channel (a one-channel format's masks keep none of channels 1–3;
        // uint8_4's channels are bytes of the word).
        for (block, half) in [(narrow, false), (half, true)] {
            self.b.switch_to_block(block);
            let chans = self.gather_words(pages, half);
            self.jump_with(merge, &chans);
        }

        self.b.switch_to_block(other);
        let chans = self.gather_looped(desc, pages);
        self.jump_with(merge, &chans);

        self.b.switch_to_block(merge);
        out
    }

    /// The raw channel words of 16-byte elements: one vector load per lane
    /// and a 4 × 4 transpose per quad.
    fn gather_wide(&mut self, pages: Value) -> [[Value; GROUP_QUADS]; 4] {
        // Entries past the batch's quads are never read.
        let mut chans = [[pages; GROUP_QUADS]; 4];
        for k in 0..self.w {
            let e: [Value; 4] = std::array::from_fn(|l| {
                let p = self.element(pages, (0, k, l));
                // Elements are 16-byte aligned in their page; nothing here
                // relies on it.
                let flags = MemFlagsData::new().with_notrap().with_readonly();
                self.b.ins().load(types::I32X4, flags, p, 0)
            });
            let lo01 = self.shuffle32(e[0], e[1], [0, 4, 1, 5]);
            let lo23 = self.shuffle32(e[2], e[3], [0, 4, 1, 5]);
            let hi01 = self.shuffle32(e[0], e[1], [2, 6, 3, 7]);
            let hi23 = self.shuffle32(e[2], e[3], [2, 6, 3, 7]);
            let t = [
                self.shuffle32(lo01, lo23, [0, 1, 4, 5]),
                self.shuffle32(lo01, lo23, [2, 3, 6, 7]),
                self.shuffle32(hi01, hi23, [0, 1, 4, 5]),
                self.shuffle32(hi01, hi23, [2, 3, 6, 7]),
            ];
            for (chan, v) in chans.iter_mut().zip(t) {
                chan[k] = v;
            }
        }
        chans
    }

    /// The raw channel words of 4-byte and 2-byte elements (`half`): one
    /// word per lane, read by every channel (a one-channel format's masks
    /// keep none of channels 1–3; uint8_4's channels are bytes of the word).
    fn gather_words(&mut self, pages: Value, half: bool) -> [[Value; GROUP_QUADS]; 4] {
        let mut chans = [[pages; GROUP_QUADS]; 4];
        for k in 0..self.w {
            let v = self.words(pages, (0, k), half);
            for c in chans.iter_mut() {
                c[k] = v;
            }
        }
        chans
    }

    /// Quad `k`'s four elements at the addresses in `Io::args[c]` as an
    /// I32X4: one 32-bit word each, or one 16-bit word each (`half`,
    /// zero-extended).
    pub(super) fn words(&mut self, pages: Value, (c, k): (usize, usize), half: bool) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let words: [Value; 4] = std::array::from_fn(|l| {
            let p = self.element(pages, (c, k, l));
            if half {
                self.b.ins().uload16(types::I32, flags, p, 0)
            } else {
                self.b.ins().load(types::I32, flags, p, 0)
            }
        });
        let mut v = self.b.ins().scalar_to_vector(types::I32X4, words[0]);
        for (l, &x) in words.iter().enumerate().skip(1) {
            v = self.b.ins().insertlane(v, x, l as u8);
        }
        v
    }

    /// The channels of a unorm format as f32 bits (`TexDesc::unorm`): each
    /// channel's integer, converted and divided by the scale — the
    /// memory controller's conversion, exact (the integer converts
    /// exactly, and the division is correctly rounded in both). Float
    /// formats pass unchanged.
    fn unorm(
        &mut self,
        desc: Value,
        raw: [[Value; GROUP_QUADS]; 4],
        form: InputForm,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let flags = MemFlagsData::trusted().with_readonly();
        let bits = self
            .b
            .ins()
            .load(types::I32, flags, desc, tex_offsets::UNORM as i32);
        // An input of known form converts, or not, without a test.
        if form.shift != 0 {
            return if form.unorm {
                self.convert_unorm(desc, bits, raw)
            } else {
                raw
            };
        }
        let convert = self.b.create_block();
        let (merge, out) = self.merge_block(types::I32X4);
        let args: Vec<_> = raw
            .iter()
            .flat_map(|c| c[..self.w].iter().map(|&v| v.into()))
            .collect();
        self.b.ins().brif(bits, convert, &[], merge, &args);

        self.b.switch_to_block(convert);
        let chans = self.convert_unorm(desc, bits, raw);
        self.jump_with(merge, &chans);
        self.b.switch_to_block(merge);
        out
    }

    /// [`Self::unorm`]'s conversion (`bits`: the descriptor's `unorm`).
    fn convert_unorm(
        &mut self,
        desc: Value,
        bits: Value,
        raw: [[Value; GROUP_QUADS]; 4],
    ) -> [[Value; GROUP_QUADS]; 4] {
        let flags = MemFlagsData::trusted().with_readonly();
        let mask = self.b.ins().splat(types::I32X4, bits);
        let scale = self
            .b
            .ins()
            .load(types::F32, flags, desc, tex_offsets::UNORM_SCALE as i32);
        let scale = self.b.ins().splat(types::F32X4, scale);
        let mut chans = raw;
        for (c, chan) in chans.iter_mut().enumerate() {
            let at = (tex_offsets::UNORM_SHIFT + 4 * c) as i32;
            let shift = self.b.ins().load(types::I32, flags, desc, at);
            for v in chan.iter_mut().take(self.w) {
                let x = self.b.ins().ushr(*v, shift);
                let x = self.b.ins().band(x, mask);
                let x = self.b.ins().fcvt_from_sint(types::F32X4, x);
                let x = self.b.ins().fdiv(x, scale);
                *v = self.bitcast(types::I32X4, x);
            }
        }
        chans
    }

    /// A block taking four channels of `w` vectors of type `ty`, and its
    /// parameters as those channels.
    pub(super) fn merge_block(&mut self, ty: types::Type) -> (Block, [[Value; GROUP_QUADS]; 4]) {
        let merge = self.b.create_block();
        let out = std::array::from_fn(|_| {
            let first = self.b.append_block_param(merge, ty);
            let mut chan = [first; GROUP_QUADS];
            for v in chan.iter_mut().take(self.w).skip(1) {
                *v = self.b.append_block_param(merge, ty);
            }
            chan
        });
        (merge, out)
    }

    /// Jumps to `merge` ([`Self::merge_block`]) with the batch's vectors
    /// of `chans`.
    pub(super) fn jump_with(&mut self, merge: Block, chans: &[[Value; GROUP_QUADS]; 4]) {
        let args: Vec<_> = chans
            .iter()
            .flat_map(|c| c[..self.w].iter().map(|&v| v.into()))
            .collect();
        self.b.ins().jump(merge, &args);
    }

    /// The address of the element lane `l` of quad `k` of the batch reads:
    /// its page's pointer plus its offset in the page (the address
    /// `Io::args[c]` holds).
    fn element(&mut self, pages: Value, (c, k, l): (usize, usize, usize)) -> Value {
        let off = io_offsets::ARGS as i32
            + c as i32 * CHAN_BYTES
            + (k as i32) * super::QUAD_BYTES
            + 4 * l as i32;
        let at = self
            .b
            .ins()
            .load(types::I32, MemFlagsData::trusted(), self.io_base, off);
        self.paged(pages, at)
    }

    /// The host address of byte `at` (relative to the surface's first
    /// page) through the page table `pages`.
    pub(super) fn paged(&mut self, pages: Value, at: Value) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let page = self.b.ins().ushr_imm_s(at, 16);
        let page = self.b.ins().uextend(self.ptr, page);
        let page = self.b.ins().ishl_imm_s(page, 3);
        let page = self.b.ins().iadd(pages, page);
        let page = self.b.ins().load(self.ptr, flags, page, 0);
        let within = self.b.ins().band_imm_s(at, 0xFFFF);
        let within = self.b.ins().uextend(self.ptr, within);
        self.b.ins().iadd(page, within)
    }

    /// The raw channel words through [`Self::gather_lanes`].
    fn gather_looped(&mut self, desc: Value, pages: Value) -> [[Value; GROUP_QUADS]; 4] {
        self.gather_lanes(desc, pages);
        let p = self.io_base;
        std::array::from_fn(|c| {
            let off = io_offsets::RESULT as i32 + c as i32 * CHAN_BYTES;
            self.each(|l, k| {
                let at = Offset::new(off + k as i32 * super::QUAD_BYTES);
                l.b.ins().load(types::I32X4, MemFlagsData::trusted(), p, at)
            })
        })
    }

    /// The loop over the batch's lanes: lane `l` reads its element at the
    /// address in `args[0][l]` into `result[c][l]`.
    fn gather_lanes(&mut self, desc: Value, pages: Value) {
        let flags = MemFlagsData::trusted().with_readonly();
        let shift = self
            .b
            .ins()
            .load(types::I32, flags, desc, tex_offsets::SHIFT as i32);
        let is_half = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 1);
        let chan_off: Vec<Value> = (0..4)
            .map(|c| {
                let off = (tex_offsets::CHAN_OFF + 4 * c) as i32;
                let o = self.b.ins().load(types::I32, flags, desc, off);
                self.b.ins().uextend(self.ptr, o)
            })
            .collect();
        let first = self.io_base;
        let last = self.b.ins().iadd_imm_s(first, 4 * 4 * self.w as i64);
        let (head, done) = (self.b.create_block(), self.b.create_block());
        self.b.append_block_param(head, self.ptr);
        self.b.ins().jump(head, &[first.into()]);
        self.b.switch_to_block(head);
        let lane = self.b.block_params(head)[0];
        let mem = MemFlagsData::trusted();
        let at = self
            .b
            .ins()
            .load(types::I32, mem, lane, io_offsets::ARGS as i32);
        let element = self.paged(pages, at);
        // A 2-byte element's one word, zero-extended, for every channel.
        let (half, words, next_lane) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(is_half, half, &[], words, &[]);
        self.b.switch_to_block(half);
        let v = self.b.ins().uload16(types::I32, flags, element, 0);
        for c in 0..4 {
            let off = io_offsets::RESULT as i32 + c * CHAN_BYTES;
            self.b.ins().store(mem, v, lane, off);
        }
        self.b.ins().jump(next_lane, &[]);
        self.b.switch_to_block(words);
        for (c, &o) in chan_off.iter().enumerate() {
            let p = self.b.ins().iadd(element, o);
            let v = self.b.ins().load(types::I32, flags, p, 0);
            let off = io_offsets::RESULT as i32 + c as i32 * CHAN_BYTES;
            self.b.ins().store(mem, v, lane, off);
        }
        self.b.ins().jump(next_lane, &[]);
        self.b.switch_to_block(next_lane);
        let next = self.b.ins().iadd_imm_s(lane, 4);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, next, last);
        self.b.ins().brif(more, head, &[next.into()], done, &[]);
        self.b.switch_to_block(done);
    }
}
