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
//!    the element's byte address relative to the surface's first page (to
//!    its first element where its pages are one mapping), or the zero
//!    element for lanes that are outside or do not fetch;
//! 2. per lane, the page pointer and the element (`elements.rs`): 16-byte
//!    elements one vector load per lane and a 4 × 4 transpose per quad,
//!    4-byte elements one word per lane, 2-byte elements one 16-bit word
//!    per lane, other sizes a small loop over the batch's lanes through
//!    `Io::result` — for an input of known form (`Program::forms`) only
//!    its own way;
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

use super::elements::Source;
use super::values::Memo;
use super::{CHAN_BYTES, GROUP_QUADS, Lookups, Lowering};
use crate::ir::{FetchKind, InputForm};
use crate::state::{io_offsets, offsets, tex_offsets};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};

/// A surface's addressing as one quad's vectors (I32X4; `shift` a
/// scalar): see [`crate::state::TexDesc`].
pub(super) struct Geometry {
    /// Pitch and height as F32X4 (bounds and scaled coordinates).
    pub size: [Value; 2],
    pub pitch: Value,
    /// A constant for an input of known form.
    pub shift: Value,
    /// `base_low` as a scalar.
    pub base: Value,
    /// Through the page table: `base_low` (where the surface starts in its
    /// first page) and `zero` (where lanes that read nothing read), both
    /// broadcast. `None`: addresses count from the surface's first element,
    /// which those lanes read.
    pub paged: Option<[Value; 2]>,
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

/// Flags of a load from the input descriptors (`Io::tex` and the
/// [`TexDesc`](crate::state::TexDesc) fields): the engine sets `Io::tex`
/// before it calls compiled code and resets it afterwards, and the table
/// stays borrowed, unchanged, for the whole call (the runtime's callbacks
/// included), so such a load may be merged with another of the same word
/// and hoisted out of the batch loop.
pub(super) fn described() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

impl Lowering<'_, '_> {
    /// A word of the input descriptor at `desc`, or of `Io` where `desc`
    /// is `io` (see [`described`]; read once per path).
    pub(super) fn desc_word(&mut self, ty: types::Type, desc: Value, off: usize) -> Value {
        let off = off as i32;
        self.memoised(Memo::DescWord(desc, ty, off), |l| {
            l.b.ins().load(ty, described(), desc, off)
        })
    }

    /// The address of input `input`'s descriptor (read once per path).
    fn desc_of(&mut self, input: u8) -> Value {
        let k = input & 15;
        self.memoised(Memo::Desc(k), |l| {
            let tex = l.desc_word(l.ptr, l.io, io_offsets::TEX);
            l.add_imm(tex, (usize::from(k) * tex_offsets::SIZE) as i64)
        })
    }

    /// Whether a fetch of `kind` may be handed to the runtime (the other
    /// lookups read memory themselves): see [`Self::fetch`].
    pub(super) fn may_ask_runtime(&self, kind: FetchKind) -> bool {
        kind == FetchKind::Uncached || matches!(self.lookups, Lookups::Either | Lookups::Host)
    }

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
        let desc = self.desc_of(op.input);
        if self.lookups == Lookups::Direct {
            return self.fetch_direct(op, coords, enable, desc, None);
        }
        let pages = self.desc_word(self.ptr, desc, tex_offsets::PAGES);
        let gather = self.desc_word(types::I32, desc, tex_offsets::GATHER);
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

        let memo = self.memo.clone();
        self.arm(other, &memo);
        let got = if self.lookups == Lookups::Gathered {
            self.fetch_gather(op, coords, enable, desc, pages)
        } else {
            self.fetch_by_host(op, coords, enable)
        };
        self.jump_with(merge, &got);

        self.arm(direct, &memo);
        let got = self.fetch_direct(op, coords, enable, desc, Some(pages));
        self.jump_with(merge, &got);

        self.rejoin(merge, memo);
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

    /// A fetch that reads memory itself (see the module docs); `pages` is
    /// the descriptor's page table where already read.
    fn fetch_direct(
        &mut self,
        op: Lookup,
        coords: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
        desc: Value,
        pages: Option<Value>,
    ) -> [[Value; GROUP_QUADS]; 4] {
        let form = self.forms[usize::from(op.input & 15)];
        // Code compiled for the input's form, which runs only where the
        // runtime handed over a descriptor with `flat` set
        // (`TexTable::covers`), reads its elements from the surface's one
        // mapping, addressed from its first element; a lane that reads
        // nothing reads that element instead of the zero page, and its
        // words are cleared afterwards.
        let checked = matches!(self.lookups, Lookups::Direct | Lookups::Gathered);
        let flat_read = checked && matches!(form.shift, 1 | 2 | 4);
        let geometry = self.geometry(desc, form, !flat_read);
        let [size_x, size_y] = geometry.size;
        let flat = flat_read.then(|| {
            let flat = self.desc_word(self.ptr, desc, tex_offsets::FLAT);
            let base = self.b.ins().uextend(self.ptr, geometry.base);
            self.b.ins().iadd(flat, base)
        });
        // Only paged reads take the page table.
        let src = match (flat, pages) {
            (Some(flat), _) => Source::Flat(flat),
            (None, Some(pages)) => Source::Paged(pages),
            (None, None) => Source::Paged(self.desc_word(self.ptr, desc, tex_offsets::PAGES)),
        };
        let mut outside: Option<Value> = None;
        let mut reads = Vec::with_capacity(self.w);
        let helpers = self.helpers();
        let tx = self.texels(&coords[0], size_x, op.unscaled);
        let ty = self.texels(&coords[1], size_y, op.unscaled);
        for k in 0..self.w {
            let ((x, in_x), (y, in_y)) = (tx[k], ty[k]);
            let inside = self.b.ins().band(in_x, in_y);
            let lanes = Lanes {
                inside,
                enable: enable.map(|m| m[k]),
                helper: helpers[k],
            };
            let (at, read) = self.lane_address(&geometry, (x, y), lanes, &mut outside);
            reads.push(read);
            let off = io_offsets::ARGS as i32;
            self.store_vec(at, self.io_base, off, k);
        }
        if let Some(outside) = outside {
            self.count_outside(outside);
        }
        let mut raw = self.gather(desc, src, geometry.shift, form);
        if flat.is_some() {
            for (k, &read) in reads.iter().enumerate() {
                let first = raw[0][k];
                for c in 0..4 {
                    // 4- and 2-byte elements: one word for every channel.
                    raw[c][k] = if c > 0 && raw[c][k] == first {
                        raw[0][k]
                    } else {
                        self.b.ins().band(raw[c][k], read)
                    };
                }
            }
        }
        self.fetched(desc, raw, enable, (form, false))
    }

    /// [`Self::texel`] of each quad's `c[k]`, computed once for quads of
    /// the same coordinate vector (a strip's pixel row, a constant).
    pub(super) fn texels(
        &mut self,
        c: &[Value; GROUP_QUADS],
        size: Value,
        unscaled: bool,
    ) -> [(Value, Value); GROUP_QUADS] {
        self.per_quad(|k| c[k] == c[k - 1], |l, k| l.texel(c[k], size, unscaled))
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
        let fzero = self.splat_f(0.0);
        let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, f, fzero);
        let lt = self.b.ins().fcmp(FloatCC::LessThan, f, size);
        let inside = self.b.ins().band(ge, lt);
        (self.b.ins().x86_cvtt2dq(types::I32X4, f), inside)
    }

    /// The addressing of the surface `desc` describes, an input of form
    /// `form`, read through the page table where `paged` (else from the
    /// surface's first element: `Geometry::paged` is `None`).
    pub(super) fn geometry(&mut self, desc: Value, form: InputForm, paged: bool) -> Geometry {
        let mut word = |off: usize| self.desc_word(types::I32, desc, off);
        let [pitch, base] = [tex_offsets::PITCH, tex_offsets::BASE_LOW].map(&mut word);
        // `TexTable::covers` checks the descriptor's against the form's.
        let shift = match form.shift {
            0 => self.desc_word(types::I32, desc, tex_offsets::SHIFT),
            k => self.b.ins().iconst(types::I32, i64::from(k)),
        };
        let pitch = self.splat_of(types::I32X4, pitch);
        let paged = paged.then(|| {
            let zero_at = self.desc_word(types::I32, desc, tex_offsets::ZERO);
            [base, zero_at].map(|v| self.splat_of(types::I32X4, v))
        });
        let size = [tex_offsets::SIZE_F, tex_offsets::SIZE_F + 4].map(|o| {
            let s = self.desc_word(types::F32, desc, o);
            self.splat_of(types::F32X4, s)
        });
        Geometry {
            size,
            pitch,
            shift,
            base,
            paged,
        }
    }

    /// The batch's helper lanes, per quad: their lookups read like any
    /// other but are not counted outside a surface.
    pub(super) fn helpers(&mut self) -> Vec<Value> {
        if let Some(h) = &self.helpers {
            h.clone()
        } else if self.whole {
            vec![self.splat_i(0); self.w]
        } else {
            self.mask_vecs(offsets::HELPER)
        }
    }

    /// The byte address (relative to the surface's first page, or to its
    /// first element where `g.paged` is `None`) each lane of a quad reads:
    /// element (x, y) where it fetches and lies inside, else the zero
    /// element (or the first); and which lanes read their element (a lane
    /// mask). Lanes that fetch outside the surface (helpers excepted) are
    /// added to `outside` as -1 each.
    pub(super) fn lane_address(
        &mut self,
        g: &Geometry,
        (x, y): (Value, Value),
        lanes: Lanes,
        outside: &mut Option<Value>,
    ) -> (Value, Value) {
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
        // Whole groups have no helpers.
        let out = if self.whole {
            out
        } else {
            self.b.ins().band_not(out, helper)
        };
        *outside = Some(match *outside {
            None => out,
            Some(acc) => self.b.ins().iadd(acc, out),
        });
        let at = self.memoised(Memo::RowOffset(y, g.pitch), |l| l.b.ins().imul(y, g.pitch));
        let at = self.b.ins().iadd(at, x);
        let at = self.b.ins().ishl(at, g.shift);
        let at = match g.paged {
            Some([base, zero]) => {
                let at = self.b.ins().iadd(at, base);
                self.b.ins().bitselect(reads, at, zero)
            }
            None => self.b.ins().band(at, reads),
        };
        (at, reads)
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

    /// The fetched channels from the raw words `raw` (of a 2×2 gather:
    /// `gather`): unorm ones converted, each kept under its mask with its
    /// fill — constants for an input of known form
    /// ([`InputForm::channels`]) — zeros for lanes that do not fetch.
    pub(super) fn fetched(
        &mut self,
        desc: Value,
        raw: [[Value; GROUP_QUADS]; 4],
        enable: Option<&[Value]>,
        (form, gather): (InputForm, bool),
    ) -> [[Value; GROUP_QUADS]; 4] {
        let raw = self.unorm(desc, raw, form);
        let known = form.channels(gather);
        std::array::from_fn(|c| {
            let (mask, fill) = match known {
                // A channel the format lacks: its fill alone.
                Some((mask, fill)) if mask[c] == 0 => {
                    let bits = fill[c];
                    return self.each(|l, k| match enable {
                        Some(m) if bits != 0 => {
                            let v = l.splat_i(bits);
                            let v = l.b.ins().band(v, m[k]);
                            l.as_float(v)
                        }
                        _ => l.splat_f(f32::from_bits(bits)),
                    });
                }
                Some((mask, fill)) => (
                    (mask[c] != u32::MAX).then(|| self.splat_i(mask[c])),
                    (fill[c] != 0).then(|| self.splat_i(fill[c])),
                ),
                None => {
                    let mut word = |off: usize| {
                        let x = self.desc_word(types::I32, desc, off + 4 * c);
                        Some(self.splat_of(types::I32X4, x))
                    };
                    (word(tex_offsets::CHAN_MASK), word(tex_offsets::FILL))
                }
            };
            self.each(|l, k| {
                let mut v = raw[c][k];
                if let Some(mask) = mask {
                    v = l.b.ins().band(v, mask);
                }
                if let Some(fill) = fill {
                    v = l.b.ins().bor(v, fill);
                }
                if let Some(m) = enable {
                    v = l.b.ins().band(v, m[k]);
                }
                l.as_float(v)
            })
        })
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
}
