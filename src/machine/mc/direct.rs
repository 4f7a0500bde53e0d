//! Inputs that compiled code reads from memory itself (the lookup rules are
//! this module's parent's, [`crate::mc`]): the page tables and descriptors of
//! [`ctm_jit::state::TexDesc`], built for a stretch of a run during which
//! nothing writes memory.
//!
//! An input qualifies when it is a linear surface (float formats read as
//! they are, unorm ones converted as the MC converts them, a one-channel
//! 2×2 gather read by code compiled for it) and either the caches are
//! coherent (a lookup is then a plain memory read) or, with strict caches,
//! the input cache holds every line of it ([`CachedInputs`]); every other
//! input keeps going through
//! [`TextureUnit::fetch`](crate::runtime::TextureUnit::fetch). Every page of
//! an arena is mapped; the zero page stands for what lies outside the
//! surface (`docs/dispatch.md`).

use super::format::TILED_IS_LINEAR;
use super::{CacheId, CacheMode, Format, Mc, Surface};
use ctm_jit::ir::InputForm;
use ctm_jit::state::{TexDesc, TexTable};
use std::marker::PhantomData;

/// 64 KiB of zeros: the page of every entry without memory behind it
/// (aligned like an arena page, so elements in it are aligned alike).
#[repr(C, align(4096))]
struct ZeroPage([u8; 1 << 16]);
static ZEROS: ZeroPage = ZeroPage([0; 1 << 16]);

/// The direct inputs of a stretch of a run. It borrows the memory
/// controller, so no arena is unmapped meanwhile, and nothing writes what
/// it points into while it lives: ordered delivery writes after the
/// stretch, direct delivery only to outputs disjoint from every input
/// (`pe::deliver::direct_allowed`).
pub struct DirectInputs<'a> {
    table: TexTable,
    /// The page tables `table` points into, one after another (not
    /// resized while it lives).
    pages: Vec<*const u8>,
    _mc: PhantomData<&'a Mc>,
}

/// Room for the page tables of a run's direct inputs, kept from one run to
/// the next so that a re-run allocates none (empty between runs).
#[derive(Debug, Default)]
pub struct PageTables(Vec<*const u8>);

// SAFETY: it holds no pointers between runs (`DirectInputs::into_spare`
// clears it): only its allocation moves between threads.
unsafe impl Send for PageTables {}
// SAFETY: as above.
unsafe impl Sync for PageTables {}

impl std::fmt::Debug for DirectInputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let direct = (0..16)
            .filter(|&k| !self.table.desc(k).pages.is_null())
            .count();
        f.debug_struct("DirectInputs")
            .field("direct", &direct)
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers point into pages borrowed from `Mc` for `'a`
// (or at `ZEROS`), and are only read through.
unsafe impl Sync for DirectInputs<'_> {}
// SAFETY: as above.
unsafe impl Send for DirectInputs<'_> {}

/// Strict caches: copies of the inputs whose every line the input cache
/// holds, taken when a run starts. A lookup through the cache would read
/// exactly these bytes and fill no line, so compiled code may read the
/// copy instead; the cache does not change during the run (reads of held
/// lines fill nothing, and nothing writes through the input cache). An
/// input with a line the cache lacks goes through the runtime.
#[derive(Debug, Default)]
pub struct CachedInputs {
    /// Per input: the address of its first 64 KiB page and the bytes from
    /// there to the end of its last page.
    copies: [Option<(u64, Box<[u8]>)>; 16],
}

impl CachedInputs {
    /// The copies of the inputs of `inputs` that a run reads (`read`:
    /// their numbers); none with coherent caches. An input's copy goes in
    /// the memory `kept` held for the same input where it is of the same
    /// size (a re-run of a prepared job allocates none).
    pub fn new(
        mc: &Mc,
        inputs: &[Option<Surface>; 16],
        read: &[u32],
        kept: CachedInputs,
    ) -> CachedInputs {
        let mut c = CachedInputs::default();
        if mc.mode != CacheMode::Strict {
            return c;
        }
        let each = c.copies.iter_mut().zip(inputs).zip(kept.copies);
        for (k, ((copy, s), old)) in each.enumerate() {
            let Some(s) = s.filter(|_| read.contains(&(k as u32))) else {
                continue;
            };
            let (base, span) = (u64::from(s.base), s.span());
            if span == 0 || base + span > 1 << 32 {
                continue;
            }
            // Where a line is missing, no memory is taken for a copy.
            if !mc.cache_holds(CacheId::Input, base, span) {
                continue;
            }
            let (first, last) = ((base >> 16) << 16, (((base + span - 1) >> 16) + 1) << 16);
            let size = (last - first) as usize;
            let mut pages = match old {
                Some((_, pages)) if pages.len() == size => pages,
                _ => vec![0u8; size].into_boxed_slice(),
            };
            let (at, end) = ((base - first) as usize, (base - first + span) as usize);
            // Outside the input, zeros, as in fresh memory.
            pages[..at].fill(0);
            pages[end..].fill(0);
            if mc.cached_copy_into(CacheId::Input, base, &mut pages[at..end]) {
                *copy = Some((first, pages));
            }
        }
        c
    }
}

impl<'a> DirectInputs<'a> {
    /// The descriptors of `inputs` over `mc`'s memory (coherent caches) or
    /// over `cached`'s copies (strict caches), their page tables in
    /// `room` (a previous run's, given back by [`DirectInputs::into_spare`]).
    pub fn new(
        mc: &'a Mc,
        inputs: &[Option<Surface>; 16],
        cached: &'a CachedInputs,
        room: PageTables,
    ) -> DirectInputs<'a> {
        let mut pages = room.0;
        pages.clear();
        // Each described input's descriptor and where its table starts:
        // the pointers are set once every table is in place.
        let mut described: [Option<(TexDesc, usize)>; 16] = [None; 16];
        for (k, s) in inputs.iter().enumerate() {
            let Some(s) = s else { continue };
            let page = |p: u64| -> Option<*const u8> {
                match mc.mode {
                    CacheMode::Coherent => mc.mem.page_ptr(p as usize),
                    CacheMode::Strict => {
                        let (first, bytes) = cached.copies[k].as_ref()?;
                        let at = ((p << 16) - first) as usize;
                        bytes.get(at..).map(<[u8]>::as_ptr)
                    }
                }
            };
            let held = mc.mode == CacheMode::Coherent || cached.copies[k].is_some();
            let start = pages.len();
            if held && let Some(d) = describe(s, page, &mut pages) {
                described[k] = Some((d, start));
            }
        }
        let mut table = TexTable::NONE;
        for (k, d) in described.into_iter().enumerate() {
            let Some((mut d, start)) = d else { continue };
            d.pages = pages[start..].as_ptr();
            // SAFETY: `describe` built a page table, at `start`, with an
            // entry for every 64 KiB page of the surface's span (pitch ×
            // height elements from its base, bounds = pitch and height)
            // plus the zero page, each a 64 KiB page of `mc`'s memory, of
            // `cached`'s copy (which covers whole pages from the surface's
            // first to its last) or the static zero page (elements never
            // straddle a page: the base is 2 KiB aligned and the element
            // sizes divide 64 KiB); `pages` keeps the tables and is not
            // changed while `self` lives, and `'a` borrows `mc` and
            // `cached`, so nothing frees or writes them while the table is
            // in use; shift is 1–4, float32_4 has its channels at 0, 4, 8,
            // 12, and the 4- and 2-byte formats read every channel at 0
            // (float32_1 keeps no bits of channels 1–3, uint16_1 none of
            // 1–3, uint8_4's channels are bytes of the word).
            unsafe { table.set(k, d) };
        }
        DirectInputs {
            table,
            pages,
            _mc: PhantomData,
        }
    }

    /// The descriptors, one per input.
    pub fn table(&self) -> &TexTable {
        &self.table
    }

    /// The room of the page tables, emptied, for the next run's.
    pub fn into_spare(self) -> PageTables {
        let mut pages = self.pages;
        pages.clear();
        PageTables(pages)
    }
}

/// Which of the render targets with these output formats hold float32_1
/// elements (`Program::narrow`; bit `t` = target `t`).
pub fn narrow_targets(formats: [Option<Format>; 4]) -> u8 {
    (0..4).fold(0, |n, t| {
        n | u8::from(formats[t] == Some(Format::Float32_1)) << t
    })
}

/// What code compiled for an input of `format` may assume of its elements
/// (`Program::forms`): what its descriptor says.
pub fn input_form(format: Format) -> InputForm {
    InputForm {
        shift: format.bytes().trailing_zeros() as u8,
        unorm: unorm_of(format).0 != 0,
    }
}

/// A unorm format's integer bits, where each channel's integer lies in the
/// word, and the integer that reads as 1.0 (zeros for float formats).
fn unorm_of(format: Format) -> (u32, [u32; 4], f32) {
    match format {
        // B, G, R, A bytes: R is bits 16–23 of the little-endian word.
        Format::Uint8_4 => (0xFF, [16, 8, 0, 24], 255.0),
        Format::Uint16_1 => (0xFFFF, [0; 4], 65535.0),
        _ => (0, [0; 4], 0.0),
    }
}

/// The descriptor of `s`, if `s` qualifies, its page table pushed onto
/// `pages` (the descriptor's `pages` is left null: the caller points it at
/// the table once no more are pushed).
fn describe(
    s: &Surface,
    page: impl Fn(u64) -> Option<*const u8>,
    pages: &mut Vec<*const u8>,
) -> Option<TexDesc> {
    let format = s.fmt.format;
    // A gather over several channels reads plainly, but is counted by the
    // memory controller: the runtime reads it.
    let gather = s.fmt.gather;
    if (s.fmt.tiled && !TILED_IS_LINEAR) || (gather && format.channels() != 1) {
        return None;
    }
    let (base, span) = (u64::from(s.base), s.span());
    if span == 0 || base + span > 1 << 32 {
        return None;
    }
    let (first, last) = (base >> 16, (base + span - 1) >> 16);
    let start = pages.len();
    pages.extend((first..=last).map(|k| page(k).unwrap_or(ZEROS.0.as_ptr())));
    // The pages one after another in host memory (an arena is one
    // mapping; a strict cache's copy one buffer): compiled code may address
    // them from the first.
    let contiguous = (first..=last).all(|k| {
        page(k).is_some_and(|p| {
            std::ptr::eq(p, pages[start].wrapping_add(((k - first) as usize) << 16))
        })
    });
    let flat = if contiguous {
        pages[start]
    } else {
        std::ptr::null()
    };
    let zero_entry = (pages.len() - start) as u32;
    pages.push(ZEROS.0.as_ptr());
    // The format's own conversion says which channels it has and what the
    // others read as: a channel whose bits follow the element's is kept,
    // the others are the constant that an all-zero element gives. A unorm
    // channel is kept whole once converted.
    let bytes = format.bytes();
    let zero = format.read(&[0; 16][..bytes]);
    let ones = format.read(&[0xFF; 16][..bytes]);
    let (unorm, unorm_shift, unorm_scale) = unorm_of(format);
    // A gather's four channels are channel 0 of four elements.
    let kept = |c: usize| {
        if gather || (unorm != 0 && c < format.channels()) {
            u32::MAX
        } else {
            zero[c] ^ ones[c]
        }
    };
    let desc = TexDesc {
        pages: std::ptr::null(),
        flat,
        base_low: s.base & 0xFFFF,
        pitch: s.fmt.pitch,
        shift: u32::from(input_form(format).shift),
        zero: zero_entry << 16,
        size: [s.fmt.pitch as f32, s.height as f32],
        chan_off: std::array::from_fn(|c| {
            if unorm == 0 && c < format.channels() {
                4 * c as u32
            } else {
                0
            }
        }),
        chan_mask: std::array::from_fn(kept),
        fill: std::array::from_fn(|c| if kept(c) == u32::MAX { 0 } else { zero[c] }),
        unorm,
        unorm_shift,
        unorm_scale,
        gather: u32::from(gather),
    };
    Some(desc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mc::{SurfaceFormat, TEST_ARENA};

    /// Strict caches: an input the input cache holds whole is copied, its
    /// pages' other bytes zero; the next run's copy goes in the same
    /// memory; an input with a line the cache lacks, or one the run does
    /// not read, gets none.
    #[test]
    fn cached_copies_reuse_the_last_runs_memory() {
        let arena = TEST_ARENA;
        let mut mc = Mc::over_test_arena(CacheMode::Strict);
        let s = Surface {
            base: arena.base + 0x1100,
            fmt: SurfaceFormat {
                pitch: 16,
                tiled: false,
                gather: false,
                format: Format::Float32_1,
            },
            height: 4,
        };
        let base = u64::from(s.base);
        let bytes: Vec<u8> = (0..s.span()).map(|k| k as u8 | 1).collect();
        mc.mem.write(base, &bytes).unwrap();
        let mut inputs = [None; 16];
        inputs[2] = Some(s);
        let c = CachedInputs::new(&mc, &inputs, &[2], CachedInputs::default());
        assert!(c.copies[2].is_none(), "no line held yet");
        let mut through = vec![0; bytes.len()];
        mc.read(CacheId::Input, base, &mut through);
        let c = CachedInputs::new(&mc, &inputs, &[2], c);
        let (first, pages) = c.copies[2].as_ref().expect("every line held");
        let at = (base - first) as usize;
        assert_eq!(&pages[at..at + bytes.len()], &bytes[..]);
        let others = pages[..at].iter().chain(&pages[at + bytes.len()..]);
        assert!(others.into_iter().all(|&b| b == 0));
        let memory = pages.as_ptr();
        let c = CachedInputs::new(&mc, &inputs, &[2], c);
        assert_eq!(c.copies[2].as_ref().unwrap().1.as_ptr(), memory);
        // The input 64 bytes on, its page the same: the same memory, and
        // zeros where the last copy had bytes.
        let t = Surface {
            base: s.base + 64,
            ..s
        };
        let mut through = vec![0; bytes.len()];
        mc.read(CacheId::Input, base + 64, &mut through);
        inputs[2] = Some(t);
        let c = CachedInputs::new(&mc, &inputs, &[2], c);
        let (_, pages) = c.copies[2].as_ref().expect("every line held");
        assert_eq!(pages.as_ptr(), memory);
        assert!(pages[..at + 64].iter().all(|&b| b == 0));
        assert_eq!(&pages[at + 64..at + 64 + bytes.len()], &through[..]);
        let c = CachedInputs::new(&mc, &inputs, &[1], c);
        assert!(c.copies[2].is_none(), "not read by the run");
    }

    /// Code compiled for an input's form uses the form's channel masks
    /// and fills as constants, and runs only where the descriptor has the
    /// same ones: every format's descriptor must agree with its form, or
    /// no lookup of that format would be read by compiled code.
    #[test]
    fn every_formats_descriptor_has_its_forms_channels() {
        let page = [0u8; 1 << 16];
        for format in Format::ALL {
            for gather in [false, true] {
                if gather && format.channels() != 1 {
                    continue;
                }
                let s = Surface {
                    base: 0,
                    fmt: SurfaceFormat {
                        pitch: 64,
                        tiled: false,
                        gather,
                        format,
                    },
                    height: 16,
                };
                let d = describe(&s, |_| Some(page.as_ptr()), &mut Vec::new()).expect("described");
                assert_eq!(
                    input_form(format).channels(gather),
                    Some((d.chan_mask, d.fill)),
                    "{format:?}, gather {gather}"
                );
            }
        }
    }
}
