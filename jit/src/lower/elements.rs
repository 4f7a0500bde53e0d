//! Reading a lookup's elements (`fetch.rs` computes where): by element
//! size — 16-byte elements one vector load per lane and a 4 × 4 transpose
//! per quad, 4- and 2-byte ones one word per lane, other sizes a loop over
//! the batch's lanes — in the one way an input of known form
//! (`Program::forms`) is read, or choosing by the descriptor's size; then
//! unorm channels converted as the memory controller converts them.

use super::{CHAN_BYTES, GROUP_QUADS, Lookups, Lowering};
use crate::ir::InputForm;
use crate::state::{io_offsets, tex_offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::immediates::Offset32 as Offset;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

/// Where a lookup's element addresses (relative to the surface's first
/// page, or to its first element when flat) point into.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// Through the page table (`TexDesc::pages`).
    Paged(Value),
    /// From the surface's first element, its pages one host mapping
    /// (`TexDesc::flat` plus `base_low`): code compiled for the input's
    /// form.
    Flat(Value),
}

impl Lowering<'_, '_> {
    /// The raw channel words (I32X4 per quad and channel) of the elements
    /// at the addresses in `Io::args[0]`, by element size: 16-byte
    /// elements (`shift` 4, channels at 0, 4, 8, 12) one vector load per
    /// lane and a 4 × 4 transpose per quad; 4-byte elements one word per
    /// lane (the other channels are the format's constants, which the
    /// channel masks keep); other sizes a loop over the lanes. Whole-group
    /// code (which also keeps the runtime's path) takes the loop alone: the
    /// unrolled forms, eight quads wide, cost more to compile and in code
    /// size than they save. An input of known form reads in its one way.
    /// `src` says where the addresses point; the ways that read through
    /// the page table read it from the descriptor where `src` is flat.
    pub(super) fn gather(
        &mut self,
        desc: Value,
        src: Source,
        shift: Value,
        form: InputForm,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let pages = |l: &mut Self| match src {
            Source::Paged(pages) => pages,
            Source::Flat(_) => l.desc_word(l.ptr, desc, tex_offsets::PAGES),
        };
        if !matches!(self.lookups, Lookups::Direct | Lookups::Gathered) {
            let pages = pages(self);
            return self.gather_looped(desc, pages);
        }
        match form.shift {
            0 => {}
            4 => return self.gather_wide(src),
            2 | 1 => return self.gather_words(src, form.shift == 1),
            _ => {
                let pages = pages(self);
                return self.gather_looped(desc, pages);
            }
        }
        let pages = pages(self);
        let src = Source::Paged(pages);
        let [wide, narrow, half, other, test_narrow, test_half] =
            std::array::from_fn(|_| self.b.create_block());
        let (merge, out) = self.merge_block(types::I32X4);
        let memo = self.memo.clone();
        let is_wide = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 4);
        self.b.ins().brif(is_wide, wide, &[], test_narrow, &[]);
        self.arm(test_narrow, &memo);
        let is_narrow = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 2);
        self.b.ins().brif(is_narrow, narrow, &[], test_half, &[]);
        self.arm(test_half, &memo);
        let is_half = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 1);
        self.b.ins().brif(is_half, half, &[], other, &[]);

        self.arm(wide, &memo);
        let chans = self.gather_wide(src);
        self.jump_with(merge, &chans);

        // 4-byte and 2-byte elements: one word per lane, read by every
        // channel (a one-channel format's masks keep none of channels 1–3;
        // uint8_4's channels are bytes of the word).
        for (block, half) in [(narrow, false), (half, true)] {
            self.arm(block, &memo);
            let chans = self.gather_words(src, half);
            self.jump_with(merge, &chans);
        }

        self.arm(other, &memo);
        let chans = self.gather_looped(desc, pages);
        self.jump_with(merge, &chans);

        self.rejoin(merge, memo);
        out
    }

    /// The raw channel words of 16-byte elements: one vector load per lane
    /// and a 4 × 4 transpose per quad.
    fn gather_wide(&mut self, src: Source) -> [[Value; GROUP_QUADS]; 4] {
        // Entries past the batch's quads are never read.
        let mut chans = [[self.io_base; GROUP_QUADS]; 4];
        for k in 0..self.w {
            let e: [Value; 4] = std::array::from_fn(|l| {
                let p = self.element(src, (0, k, l));
                // Elements are 16-byte aligned in their page; nothing here
                // relies on it.
                let flags = MemFlagsData::new().with_notrap().with_readonly();
                self.b.ins().load(types::I8X16, flags, p, 0)
            });
            for (chan, v) in chans.iter_mut().zip(self.transpose4(e)) {
                chan[k] = self.bitcast(types::I32X4, v);
            }
        }
        chans
    }

    /// The raw channel words of 4-byte and 2-byte elements (`half`): one
    /// word per lane, read by every channel (a one-channel format's masks
    /// keep none of channels 1–3; uint8_4's channels are bytes of the word).
    fn gather_words(&mut self, src: Source, half: bool) -> [[Value; GROUP_QUADS]; 4] {
        let mut chans = [[self.io_base; GROUP_QUADS]; 4];
        for k in 0..self.w {
            let v = self.words(src, (0, k), half);
            for c in chans.iter_mut() {
                c[k] = v;
            }
        }
        chans
    }

    /// Quad `k`'s four elements at the addresses in `Io::args[c]` as an
    /// I32X4: one 32-bit word each, or one 16-bit word each (`half`,
    /// zero-extended).
    pub(super) fn words(&mut self, src: Source, (c, k): (usize, usize), half: bool) -> Value {
        let flags = MemFlagsData::trusted().with_readonly();
        let words: [Value; 4] = std::array::from_fn(|l| {
            let p = self.element(src, (c, k, l));
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
    pub(super) fn unorm(
        &mut self,
        desc: Value,
        raw: [[Value; GROUP_QUADS]; 4],
        form: InputForm,
    ) -> [[Value; GROUP_QUADS]; 4] {
        // An input of known form converts, or not, without a test.
        if form.shift != 0 && !form.unorm {
            return raw;
        }
        let bits = self.desc_word(types::I32, desc, tex_offsets::UNORM);
        if form.shift != 0 {
            return self.convert_unorm(desc, bits, raw);
        }
        let convert = self.b.create_block();
        let (merge, out) = self.merge_block(types::I32X4);
        let args: Vec<_> = raw
            .iter()
            .flat_map(|c| c[..self.w].iter().map(|&v| v.into()))
            .collect();
        self.b.ins().brif(bits, convert, &[], merge, &args);

        let memo = self.memo.clone();
        self.arm(convert, &memo);
        let chans = self.convert_unorm(desc, bits, raw);
        self.jump_with(merge, &chans);
        self.rejoin(merge, memo);
        out
    }

    /// [`Self::unorm`]'s conversion (`bits`: the descriptor's `unorm`).
    fn convert_unorm(
        &mut self,
        desc: Value,
        bits: Value,
        raw: [[Value; GROUP_QUADS]; 4],
    ) -> [[Value; GROUP_QUADS]; 4] {
        let mask = self.splat_of(types::I32X4, bits);
        let scale = self.desc_word(types::F32, desc, tex_offsets::UNORM_SCALE);
        let scale = self.splat_of(types::F32X4, scale);
        let mut chans = raw;
        for (c, chan) in chans.iter_mut().enumerate() {
            let shift = self.desc_word(types::I32, desc, tex_offsets::UNORM_SHIFT + 4 * c);
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

    /// The address of the element lane `l` of quad `k` of the batch reads
    /// (`Io::args[c]` holds it relative to the surface's first page, or to
    /// its first element when flat): its page's pointer plus its offset in
    /// the page, or the surface's first element plus it.
    fn element(&mut self, src: Source, (c, k, l): (usize, usize, usize)) -> Value {
        let off = io_offsets::ARGS as i32
            + c as i32 * CHAN_BYTES
            + (k as i32) * super::QUAD_BYTES
            + 4 * l as i32;
        let flags = MemFlagsData::trusted();
        match src {
            Source::Paged(pages) => {
                let at = self.b.ins().load(types::I32, flags, self.io_base, off);
                self.paged(pages, at)
            }
            Source::Flat(flat) => {
                // One zero-extending load.
                let at = self.b.ins().uload32(flags, self.io_base, off);
                self.b.ins().iadd(flat, at)
            }
        }
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
        let shift = self.desc_word(types::I32, desc, tex_offsets::SHIFT);
        let is_half = self.b.ins().icmp_imm_s(IntCC::Equal, shift, 1);
        let chan_off: Vec<Value> = (0..4)
            .map(|c| {
                let o = self.desc_word(types::I32, desc, tex_offsets::CHAN_OFF + 4 * c);
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
