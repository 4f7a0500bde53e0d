//! The MC as the workers of a run see it (`docs/machine.md` §5): a row of
//! quads reads its inputs through the input cache and uncached memory
//! through output 0 with the row's own writes overlaid; the writes are
//! delivered in row order after the row.
//!
//! An uncached write stores one value: channel 0 of its element, the only
//! channel such a write has (`docs/isa.md` §5.4). A write is kept as the
//! bytes of that channel, so it reads nothing from memory, and the overlay
//! that lets the row's uncached lookups see its own writes is brought up to
//! date only when the row makes an uncached lookup. Compiled code may append
//! writes itself ([`TextureUnit::uncached_log`]).

use super::direct::DirectInputs;
use super::format::TILED_IS_LINEAR;
use super::{CacheId, Diagnostics, Format, Mc, Surface};
use crate::runtime::texture::texel_floor;
use crate::runtime::{FetchRequest, TexFault, TextureUnit};
use ctm_jit::ir::FetchKind;
pub use ctm_jit::state::UncachedWrite;
use ctm_jit::state::{Mask, TexTable, UmrtLog};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::Ordering;

/// Makes the uncached write of `value` (an f32 pattern) to channel 0 of
/// the element of format `format` at `element`.
fn uncached_write(format: Format, element: u64, value: u32) -> UncachedWrite {
    let mut e = [0u8; 16];
    format.write(&mut e[..format.bytes()], [value, 0, 0, 0], 0b0001);
    let (off, len) = format.channel0();
    let mut bytes = [0u8; 4];
    bytes[..len].copy_from_slice(&e[off..off + len]);
    // Output 0 lies in an arena, below 2^32 (checked before the run).
    match u32::try_from(element + off as u64) {
        Ok(addr) => UncachedWrite { addr, bytes },
        Err(_) => UncachedWrite::outside(),
    }
}

/// Hashes the element addresses of the uncached overlay, and the strict
/// caches' line tags: one multiply, its high half folded into the low bits
/// (addresses are multiples of the element size, so their low bits alone
/// would pick few buckets). Keys are the run's own addresses, not an
/// adversary's: SipHash's protection is not needed, and it was a fifth of
/// a scatter run.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// The MC as one row of quads of a run sees it: inputs through the input
/// cache, uncached memory through output 0 with this row's own writes
/// overlaid. It is the DPP's [`TextureUnit`].
#[derive(Debug)]
pub struct RunView<'a> {
    mc: &'a Mc,
    inputs: &'a [Option<Surface>; 16],
    out0: Option<Surface>,
    /// Channel address → the row's last write there, for the first
    /// `absorbed` of `writes`: brought up to date at each uncached lookup
    /// (the first one builds it).
    overlay: HashMap<u64, [u8; 4], BuildHasherDefault<AddrHasher>>,
    absorbed: usize,
    direct: &'a TexTable,
    /// Uncached writes made, in order.
    pub writes: Vec<UncachedWrite>,
}

impl<'a> RunView<'a> {
    /// A view over `mc` with `inputs` bound and output 0 (if configured) as
    /// uncached memory.
    pub fn new(mc: &'a Mc, inputs: &'a [Option<Surface>; 16], out0: Option<Surface>) -> Self {
        RunView {
            mc,
            inputs,
            out0,
            overlay: HashMap::default(),
            absorbed: 0,
            direct: &TexTable::NONE,
            writes: Vec::new(),
        }
    }

    /// Makes room for `n` uncached writes (where there is uncached memory):
    /// a row's writes then go to one allocation, not a chain of growing ones.
    pub fn expecting(mut self, n: usize) -> Self {
        if self.out0.is_some() {
            self.writes.reserve(n);
        }
        self
    }

    /// Logs the run's uncached writes in `log` (empty: a previous row's,
    /// for its room).
    pub fn with_log(mut self, log: Vec<UncachedWrite>) -> Self {
        debug_assert!(log.is_empty());
        self.writes = log;
        self
    }

    /// Lets compiled code read the inputs of `direct` itself.
    pub fn with_direct(mut self, direct: &'a DirectInputs<'a>) -> Self {
        self.direct = direct.table();
        self
    }

    fn uncached(&self) -> Result<Surface, TexFault> {
        self.out0.ok_or_else(|| {
            TexFault("uncached memory is output 0, which has no format set (set_out_fmt)".into())
        })
    }

    /// The element of `s` at `addr` as this row sees it: memory, with the
    /// row's last write to its channel 0 overlaid.
    fn uncached_element(&mut self, s: &Surface, addr: u64) -> [u8; 16] {
        let mut e = [0u8; 16];
        let format = s.fmt.format;
        if self.mc.mem.read(addr, &mut e[..format.bytes()]).is_err() {
            e = [0; 16];
        }
        let fresh = self.writes[self.absorbed..]
            .iter()
            .filter(|w| !w.is_outside());
        self.overlay
            .extend(fresh.map(|w| (u64::from(w.addr), w.bytes)));
        self.absorbed = self.writes.len();
        let (off, len) = format.channel0();
        if let Some(c) = self.overlay.get(&(addr + off as u64)) {
            e[off..off + len].copy_from_slice(&c[..len]);
        }
        e
    }
}

impl TextureUnit for RunView<'_> {
    fn fetch(
        &mut self,
        req: FetchRequest,
        coords: &[[u32; 4]],
        mask: Mask,
        _pixels: &[(u32, u32)],
        out: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        let lanes = coords.iter().zip(out.iter_mut()).enumerate();
        match req.kind {
            FetchKind::Lookup => {
                let s = self.inputs[usize::from(req.input & 15)].ok_or_else(|| {
                    TexFault(format!(
                        "input {} has no format set (set_inp_fmt)",
                        req.input
                    ))
                })?;
                let one_channel = s.fmt.format.channels() == 1;
                if s.fmt.gather && !one_channel {
                    Diagnostics::bump(&self.mc.diagnostics.gather_multichannel);
                }
                for (lane, (c, o)) in lanes {
                    if mask & (1 << lane) == 0 {
                        continue;
                    }
                    let (x, y) = (
                        texel_floor(c[0], s.fmt.pitch, req.unscaled).unwrap_or(-1),
                        texel_floor(c[1], s.height, req.unscaled).unwrap_or(-1),
                    );
                    let count = req.helpers & (1 << lane) == 0;
                    let read = |x, y| {
                        self.mc
                            .read_element_counted(CacheId::Input, &s, x, y, count)
                    };
                    *o = if s.fmt.gather && one_channel {
                        // §5.4: c0..c3 = (x+1, y), (x, y+1), (x+1, y+1), (x, y).
                        [(1, 0), (0, 1), (1, 1), (0, 0)].map(|(dx, dy)| read(x + dx, y + dy)[0])
                    } else {
                        read(x, y)
                    };
                }
            }
            FetchKind::Uncached => {
                let s = self.uncached()?;
                for (lane, (c, o)) in lanes {
                    if mask & (1 << lane) == 0 {
                        continue;
                    }
                    let at = s.address_at(
                        texel_floor(c[0], s.fmt.pitch, req.unscaled).unwrap_or(-1),
                        texel_floor(c[1], s.height, req.unscaled).unwrap_or(-1),
                    );
                    let n = s.fmt.format.bytes();
                    *o = match at {
                        Some(a) => s.fmt.format.read(&self.uncached_element(&s, a)[..n]),
                        None => {
                            if req.helpers & (1 << lane) == 0 {
                                Diagnostics::bump(&self.mc.diagnostics.out_of_bounds_reads);
                            }
                            s.fmt.format.read(&[0; 16][..n])
                        }
                    };
                }
            }
        }
        Ok(())
    }

    fn direct(&self) -> &TexTable {
        self.direct
    }

    fn count_out_of_bounds(&mut self, n: u64) {
        self.mc
            .diagnostics
            .out_of_bounds_reads
            .fetch_add(n, Ordering::Relaxed);
    }

    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), TexFault> {
        let s = self.uncached()?;
        let at = s.address_at(
            texel_floor(x, s.fmt.pitch, true).unwrap_or(-1),
            texel_floor(y, s.height, true).unwrap_or(-1),
        );
        // Outside the surface: counted when the row is delivered.
        self.writes.push(match at {
            Some(addr) => uncached_write(s.fmt.format, addr, value),
            None => UncachedWrite::outside(),
        });
        Ok(())
    }

    /// Room in the row's writes, where uncached memory is a linear surface
    /// inside the 32-bit address space.
    fn uncached_log(&mut self, n: usize) -> UmrtLog {
        let Some(s) = self.out0 else {
            return UmrtLog::NONE;
        };
        let format = s.fmt.format;
        if (s.fmt.tiled && !TILED_IS_LINEAR) || u64::from(s.base) + s.span() > 1 << 32 {
            return UmrtLog::NONE;
        }
        self.writes.reserve(n);
        let (chan_off, _) = format.channel0();
        UmrtLog {
            at: self.writes.spare_capacity_mut().as_mut_ptr().cast(),
            base: u64::from(s.base),
            pitch: s.fmt.pitch,
            shift: format.bytes().trailing_zeros(),
            size: [s.fmt.pitch as f32, s.height as f32],
            chan_off: chan_off as u32,
            unorm: match format {
                Format::Uint8_4 => 255.0,
                Format::Uint16_1 => 65535.0,
                _ => 0.0,
            },
        }
    }

    unsafe fn uncached_logged(&mut self, n: usize) {
        // SAFETY: the caller guarantees that the first `n` entries of the
        // spare capacity handed out by `uncached_log` (which reserved at
        // least `n`) were written; nothing touched `writes` in between.
        unsafe { self.writes.set_len(self.writes.len() + n) };
    }
}
