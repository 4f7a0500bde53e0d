//! The MC as the workers of a run see it (`docs/machine.md` §5): a row of
//! quads reads its inputs through the input cache and uncached memory
//! through output 0 with the row's own writes overlaid; the writes are
//! delivered in row order after the row.

use super::direct::DirectInputs;
use super::{CacheId, Diagnostics, Mc, Surface};
use crate::runtime::texture::texel_floor;
use crate::runtime::{FetchRequest, TexFault, TextureUnit};
use ctm_jit::ir::FetchKind;
use ctm_jit::state::{Mask, TexTable};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::Ordering;

/// One uncached write of a run, to be delivered to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UncachedWrite {
    /// Element address.
    pub addr: u64,
    /// The whole element after the write.
    pub bytes: [u8; 16],
    /// Element size.
    pub len: u8,
}

/// Hashes the element addresses of the uncached overlay: one multiply,
/// its high half folded into the low bits (addresses are multiples of the
/// element size, so their low bits alone would pick few buckets). Keys are
/// the run's own addresses, not an adversary's: SipHash's protection is not
/// needed, and it was a fifth of a scatter run.
#[derive(Clone, Copy, Debug, Default)]
struct AddrHasher(u64);

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

/// Elements a row's uncached overlay holds before it grows: a row of quads
/// of a wide domain writes about this many.
const OVERLAY: usize = 1024;

/// The MC as one row of quads of a run sees it: inputs through the input
/// cache, uncached memory through output 0 with this row's own writes
/// overlaid. It is the DPP's [`TextureUnit`].
#[derive(Debug)]
pub struct RunView<'a> {
    mc: &'a Mc,
    inputs: &'a [Option<Surface>; 16],
    out0: Option<Surface>,
    overlay: HashMap<u64, [u8; 16], BuildHasherDefault<AddrHasher>>,
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
            // Only uncached memory (output 0 of an uncached program) has
            // an overlay.
            overlay: HashMap::with_capacity_and_hasher(
                if out0.is_some() { OVERLAY } else { 0 },
                Default::default(),
            ),
            direct: &TexTable::NONE,
            writes: Vec::new(),
        }
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

    fn uncached_element(&self, s: &Surface, addr: u64) -> [u8; 16] {
        if let Some(e) = self.overlay.get(&addr) {
            return *e;
        }
        let mut e = [0u8; 16];
        let n = s.fmt.format.bytes();
        if self.mc.mem.read(addr, &mut e[..n]).is_err() {
            e = [0; 16];
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
        let Some(addr) = at else {
            Diagnostics::bump(&self.mc.diagnostics.out_of_bounds_writes);
            return Ok(());
        };
        let n = s.fmt.format.bytes();
        let mut e = self.uncached_element(&s, addr);
        s.fmt.format.write(&mut e[..n], [value, 0, 0, 0], 0b0001);
        self.overlay.insert(addr, e);
        self.writes.push(UncachedWrite {
            addr,
            bytes: e,
            len: n as u8,
        });
        Ok(())
    }
}
