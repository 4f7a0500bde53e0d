//! How compiled code reads inputs itself: per-input descriptors of linear
//! float surfaces and their page tables (`docs/design.md`, "Texture lookups
//! in compiled code").

/// How compiled code reads one input directly, without calling the
/// runtime: a linear surface in memory that nothing writes during the run
/// (coherent caches). Built by the memory controller for each stretch of a
/// run; `pages` null means "call the runtime" (the 2×2 gather, strict
/// caches, no input).
///
/// Lane `l` reads element (x, y) at byte `a = base_low + ((y · pitch + x) <<
/// shift)` from `pages[a >> 16] + (a & 0xFFFF)`, channel `c`'s word at
/// offset `chan_off[c]` (a 2-byte element: its 16 bits), and returns
/// `(u & chan_mask[c]) | fill[c]`, where `u` is the word itself for float
/// formats (`unorm` 0) and for unorm formats the f32 bits of `((word >>
/// unorm_shift[c]) & unorm) / unorm_scale` — the channels a format lacks
/// read as (0, 0, 1). Lanes outside pitch × height read at `zero` (a zero
/// element) and count as out-of-bounds reads.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TexDesc {
    /// Page pointers: entry `k` holds the bytes from `(base & !0xFFFF) + k ·
    /// 64 KiB`; the entry at `zero >> 16` points at zeros. Null: not direct.
    pub pages: *const *const u8,
    /// `base & 0xFFFF`.
    pub base_low: u32,
    /// Elements per row.
    pub pitch: u32,
    /// log2 of the element's bytes.
    pub shift: u32,
    /// `zero_entry << 16`: where lanes that read nothing read.
    pub zero: u32,
    /// Pitch and height as f32 (bounds and scaled coordinates).
    pub size: [f32; 2],
    /// Byte offset of each channel within the element.
    pub chan_off: [u32; 4],
    /// Bits kept of each channel's word.
    pub chan_mask: [u32; 4],
    /// Bits set in each channel afterwards.
    pub fill: [u32; 4],
    /// Unorm formats: the bits of a channel's integer (0xFF, 0xFFFF); 0
    /// for float formats.
    pub unorm: u32,
    /// Unorm formats: where each channel's integer lies in the word.
    pub unorm_shift: [u32; 4],
    /// Unorm formats: the integer that reads as 1.0 (255.0, 65535.0).
    pub unorm_scale: f32,
    /// 1: the 2×2 gather of a one-channel format — channels 0–3 are
    /// channel 0 of the elements (x+1, y), (x, y+1), (x+1, y+1) and (x, y),
    /// each inside the surface or zero, where (x, y) is the texel floor, −1
    /// for a coordinate without one (NaN, |c| ≥ 2^31); `chan_mask` keeps
    /// every channel. Only code compiled for it reads such an input
    /// ([`TexTable::covers_gathered`]).
    pub gather: u32,
    /// Where the surface's pages lie one after another in host memory
    /// (entry `k` of `pages` is `flat + k · 64 KiB` for every page of the
    /// surface): byte `a` is at `flat + a`. Null where they do not; code
    /// compiled for the input's form ([`crate::ir::InputForm`]) reads
    /// through it and runs only where it is set.
    pub flat: *const u8,
}

impl TexDesc {
    /// A descriptor that sends lookups to the runtime.
    pub const NONE: TexDesc = TexDesc {
        pages: std::ptr::null(),
        base_low: 0,
        pitch: 0,
        shift: 0,
        zero: 0,
        size: [0.0; 2],
        chan_off: [0; 4],
        chan_mask: [0; 4],
        fill: [0; 4],
        unorm: 0,
        unorm_shift: [0; 4],
        unorm_scale: 0.0,
        gather: 0,
        flat: std::ptr::null(),
    };
}

use crate::ir::InputForm;

/// One [`TexDesc`] per input, as compiled code indexes them.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TexTable([TexDesc; 16]);

// SAFETY: the page pointers are only read through, by compiled code, while
// the memory they point into is borrowed by the run that built the table.
unsafe impl Sync for TexTable {}
// SAFETY: as above.
unsafe impl Send for TexTable {}

impl TexTable {
    /// No input is read directly.
    pub const NONE: TexTable = TexTable([TexDesc::NONE; 16]);

    /// Lets compiled code read input `input` (0–15) through `desc`.
    ///
    /// # Safety
    /// Compiled code will read, for any lane and any coordinates, the 4
    /// bytes (2 where `shift` is 1) at `pages[a >> 16] + (a & 0xFFFF) +
    /// chan_off[c]` for every `a = base_low + ((y · pitch + x) << shift)`
    /// with 0 ≤ x < `size[0]` and 0 ≤ y < `size[1]`, and at `a = zero`:
    /// `desc.pages` must point to a table with an entry for every such `a >>
    /// 16`, each entry to 64 KiB of readable memory, and all of it must stay
    /// valid and unwritten for as long as this table is handed to compiled
    /// code ([`crate::state::Io::tex`]). `size` must not exceed `pitch` ×
    /// the rows the pages cover, `shift` must be 1–4, and elements must not
    /// straddle a page. Where `desc.flat` is not null, compiled code reads
    /// the same bytes at `flat + a` instead (for the same `a`, and at
    /// `a = base_low` in place of `zero`): `flat + k · 64 KiB` must then be
    /// `pages[k]` for every page of the surface. Compiled code reads 16-byte elements (`shift` 4)
    /// as one vector whose words are channels 0–3 (`chan_off` must be 0, 4,
    /// 8, 12), 4-byte elements (`shift` 2) as one word that every channel
    /// reads and 2-byte elements (`shift` 1) as one 16-bit word that every
    /// channel reads (`chan_off` 0 for every channel whose `chan_mask` keeps
    /// bits).
    pub unsafe fn set(&mut self, input: usize, desc: TexDesc) {
        self.0[input & 15] = desc;
    }

    /// The descriptor of input `input` (0–15).
    pub fn desc(&self, input: usize) -> &TexDesc {
        &self.0[input & 15]
    }

    /// Whether every input of `inputs` (bit `k` = input `k`) has a
    /// descriptor that code compiled for `forms` may read: code that reads
    /// them directly may run with this table.
    ///
    /// ```
    /// use ctm_jit::state::TexTable;
    /// let any = Default::default();
    /// assert!(TexTable::NONE.covers(0, &any));
    /// assert!(!TexTable::NONE.covers(0b10, &any));
    /// ```
    #[inline]
    pub fn covers(&self, inputs: u16, forms: &[InputForm; 16]) -> bool {
        self.described(inputs, forms, false)
    }

    /// Whether every input of `inputs` has a descriptor that code compiled
    /// for `forms` may read, 2×2 gathers included: code compiled for
    /// gathers may run with this table.
    #[inline]
    pub fn covers_gathered(&self, inputs: u16, forms: &[InputForm; 16]) -> bool {
        self.described(inputs, forms, true)
    }

    fn described(&self, inputs: u16, forms: &[InputForm; 16], gathers: bool) -> bool {
        if inputs == 0 {
            return true;
        }
        (0..16).all(|k| {
            let (d, f) = (&self.0[k], forms[k]);
            inputs & (1 << k) == 0
                || (!d.pages.is_null()
                    && (gathers || d.gather == 0)
                    && (f.shift == 0
                        || (!d.flat.is_null()
                            && d.shift == u32::from(f.shift)
                            && (d.unorm != 0) == f.unorm
                            && f.channels(d.gather != 0) == Some((d.chan_mask, d.fill)))))
        })
    }

    /// The table as compiled code reads it.
    pub fn as_ptr(&self) -> *const TexDesc {
        self.0.as_ptr()
    }
}

/// Byte offsets of [`TexDesc`] compiled code relies on.
pub mod tex_offsets {
    use super::TexDesc;
    use std::mem::{offset_of, size_of};
    /// Bytes of one descriptor.
    pub const SIZE: usize = size_of::<TexDesc>();
    /// `TexDesc::pages`.
    pub const PAGES: usize = offset_of!(TexDesc, pages);
    /// `TexDesc::flat`.
    pub const FLAT: usize = offset_of!(TexDesc, flat);
    /// `TexDesc::base_low`.
    pub const BASE_LOW: usize = offset_of!(TexDesc, base_low);
    /// `TexDesc::pitch`.
    pub const PITCH: usize = offset_of!(TexDesc, pitch);
    /// `TexDesc::shift`.
    pub const SHIFT: usize = offset_of!(TexDesc, shift);
    /// `TexDesc::zero`.
    pub const ZERO: usize = offset_of!(TexDesc, zero);
    /// `TexDesc::size`.
    pub const SIZE_F: usize = offset_of!(TexDesc, size);
    /// `TexDesc::chan_off`.
    pub const CHAN_OFF: usize = offset_of!(TexDesc, chan_off);
    /// `TexDesc::chan_mask`.
    pub const CHAN_MASK: usize = offset_of!(TexDesc, chan_mask);
    /// `TexDesc::fill`.
    pub const FILL: usize = offset_of!(TexDesc, fill);
    /// `TexDesc::unorm`.
    pub const UNORM: usize = offset_of!(TexDesc, unorm);
    /// `TexDesc::unorm_shift`.
    pub const UNORM_SHIFT: usize = offset_of!(TexDesc, unorm_shift);
    /// `TexDesc::unorm_scale`.
    pub const UNORM_SCALE: usize = offset_of!(TexDesc, unorm_scale);
    /// `TexDesc::gather`.
    pub const GATHER: usize = offset_of!(TexDesc, gather);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_compiled_for_one_form_never_reads_another() {
        let pages = [std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const(); 2];
        let mut table = TexTable::NONE;
        // A uint8_4 input: 4-byte elements, unorm channels, all four kept.
        let desc = TexDesc {
            pages: pages.as_ptr(),
            shift: 2,
            unorm: 0xFF,
            chan_mask: [u32::MAX; 4],
            flat: pages[0],
            ..TexDesc::NONE
        };
        // SAFETY: no compiled code runs with this table.
        unsafe { table.set(3, desc) };
        let form = |shift, unorm| {
            let mut forms = [InputForm::default(); 16];
            forms[3] = InputForm { shift, unorm };
            forms
        };
        assert!(table.covers(1 << 3, &form(0, false)), "any form");
        assert!(table.covers(1 << 3, &form(2, true)), "its own form");
        assert!(!table.covers(1 << 3, &form(2, false)), "float32_1's");
        assert!(!table.covers(1 << 3, &form(4, false)), "float32_4's");
        assert!(!table.covers_gathered(1 << 3, &form(1, true)), "uint16_1's");
        // Forms of inputs the code does not read do not matter.
        assert!(table.covers(0, &form(4, false)));
        // Code compiled for a form reads through `flat`: none, no run.
        let scattered = TexDesc {
            flat: std::ptr::null(),
            ..desc
        };
        // SAFETY: as above.
        unsafe { table.set(3, scattered) };
        assert!(!table.covers(1 << 3, &form(2, true)), "no flat pointer");
        assert!(table.covers(1 << 3, &form(0, false)), "any form, paged");
        // Code compiled for a form takes its channel masks and fills as
        // constants: a descriptor that says otherwise is not its form's.
        for (mask, fill) in [([u32::MAX, 0, 0, 0], [0; 4]), ([u32::MAX; 4], [0, 0, 0, 1])] {
            let odd = TexDesc {
                chan_mask: mask,
                fill,
                ..desc
            };
            // SAFETY: as above.
            unsafe { table.set(3, odd) };
            assert!(!table.covers(1 << 3, &form(2, true)), "{mask:x?} {fill:x?}");
            assert!(table.covers(1 << 3, &form(0, false)), "any form");
        }
    }

    #[test]
    fn known_forms_keep_their_formats_channels() {
        let form = |shift, unorm| InputForm { shift, unorm };
        let one = 1f32.to_bits();
        let (all, none) = ([u32::MAX; 4], [0; 4]);
        assert_eq!(form(0, false).channels(false), None, "unknown");
        assert_eq!(form(4, false).channels(false), Some((all, none)));
        assert_eq!(form(2, true).channels(false), Some((all, none)));
        let r = [u32::MAX, 0, 0, 0];
        assert_eq!(form(2, false).channels(false), Some((r, [0, 0, 0, one])));
        assert_eq!(form(1, true).channels(false), Some((r, [0, 0, 0, one])));
        let rg = [u32::MAX, u32::MAX, 0, 0];
        assert_eq!(form(3, false).channels(false), Some((rg, [0, 0, 0, one])));
        // A gather's four channels are channel 0 of four elements.
        assert_eq!(form(1, true).channels(true), Some((all, none)));
        assert_eq!(form(2, false).channels(true), Some((all, none)));
    }
}
