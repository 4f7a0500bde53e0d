//! The memory controller (`docs/machine.md` §2.4, §4, §5): GPU memory, the
//! surfaces its clients address, element formats, the 2×2 input gather,
//! bounds, and the caches.
//!
//! * **Bounds** (§5.5, ctm): an element (x, y) with x ≥ pitch or y ≥ height
//!   is out of range: a read gives an all-zero element (then converted like
//!   any other, so a one-channel format reads (0, 0, 0, 1.0)), a write is
//!   dropped; both bump [`Diagnostics`]. Surfaces a run uses are checked to
//!   lie inside one arena before the run starts, so no access of a run can
//!   leave mapped memory.
//! * **Caches** (§5.6): [`CacheMode::Coherent`] (the default) reads and
//!   writes memory directly and makes flush/invalidate no-ops.
//!   [`CacheMode::Strict`] keeps 256-byte lines: reads fill lines that stay
//!   until the matching invalidate (later memory changes are not seen),
//!   writes stay in lines until the matching flush. A command stream that
//!   forgets a flush or an invalidate then reads stale data, as it could on
//!   hardware.
//! * **Uncached memory** (UMRT, `docs/isa.md` §5.4): uncached writes and
//!   lookups address output 0's surface and bypass the caches. Within a run a
//!   pixel's uncached lookups see memory as the run found it plus the
//!   uncached writes already made by its own row of quads; writes of other
//!   rows land when that row's results are delivered (in row order), so the
//!   result does not depend on the number of threads (ctm).

mod direct;
mod format;
mod memory;

pub use direct::DirectInputs;
pub use format::{Format, Layout, Linear, ReservedFormat, Surface, SurfaceFormat, Tiled};
pub use memory::{Arena, ArenaKind, BASE_ALIGN, MapError, Memory, Unmapped};

use crate::runtime::texture::texel_floor;
use crate::runtime::{FetchRequest, TexFault, TextureUnit};
use ctm_jit::ir::FetchKind;
use ctm_jit::state::{Mask, TexTable};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How the caches behave (§5.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// Reads and writes go straight to memory.
    #[default]
    Coherent,
    /// Writes wait for a flush, reads keep what they saw until an invalidate.
    Strict,
}

/// The MC's caches (§5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheId {
    /// Program instructions.
    Inst,
    /// Float constants.
    ConstF,
    /// Integer constants.
    ConstI,
    /// Boolean constants.
    ConstB,
    /// Inputs.
    Input,
    /// The output write cache shared by outputs 0–3.
    Output,
    /// The conditional output buffer.
    Cond,
}

const CACHES: usize = 7;
const LINE: usize = 256;

#[derive(Clone, Debug)]
struct Line {
    data: [u8; LINE],
    dirty: [u64; LINE / 64],
}

impl Line {
    fn is_dirty(&self) -> bool {
        self.dirty.iter().any(|&d| d != 0)
    }
}

#[derive(Clone, Debug, Default)]
struct Cache {
    lines: HashMap<u64, Line>,
}

impl Cache {
    fn line(&mut self, mem: &Memory, tag: u64) -> &mut Line {
        self.lines.entry(tag).or_insert_with(|| {
            let mut data = [0; LINE];
            // Lines of unmapped memory read as zero (accesses are checked
            // before they reach the cache).
            let _ = mem.read(tag * LINE as u64, &mut data);
            Line {
                data,
                dirty: [0; LINE / 64],
            }
        })
    }

    fn read(&mut self, mem: &Memory, addr: u64, buf: &mut [u8]) {
        for (k, b) in buf.iter_mut().enumerate() {
            let a = addr + k as u64;
            *b = self.line(mem, a / LINE as u64).data[(a % LINE as u64) as usize];
        }
    }

    fn write(&mut self, mem: &Memory, addr: u64, data: &[u8]) {
        for (k, &b) in data.iter().enumerate() {
            let a = addr + k as u64;
            let off = (a % LINE as u64) as usize;
            let line = self.line(mem, a / LINE as u64);
            line.data[off] = b;
            line.dirty[off / 64] |= 1 << (off % 64);
        }
    }

    fn flush(&mut self, mem: &mut Memory) {
        for (&tag, line) in &mut self.lines {
            for off in 0..LINE {
                if line.dirty[off / 64] & (1 << (off % 64)) != 0 {
                    let _ = mem.write(tag * LINE as u64 + off as u64, &[line.data[off]]);
                }
            }
            line.dirty = [0; LINE / 64];
        }
    }

    /// Drops clean lines; lines holding unflushed writes stay.
    fn invalidate(&mut self) {
        self.lines.retain(|_, l| l.is_dirty());
    }
}

/// Counters of recoverable oddities, for reports (§4.1, §5.4, §5.5, ctm).
#[derive(Debug, Default)]
pub struct Diagnostics {
    /// Reads outside pitch × height (returned zero).
    pub out_of_bounds_reads: AtomicU64,
    /// Writes outside pitch × height (dropped).
    pub out_of_bounds_writes: AtomicU64,
    /// 2×2 gathers on multi-channel inputs (performed as plain reads).
    pub gather_multichannel: AtomicU64,
    /// Output writes of outputs with no format set (dropped).
    pub unconfigured_outputs: AtomicU64,
}

/// A copy of [`Diagnostics`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiagnosticCounts {
    /// See [`Diagnostics::out_of_bounds_reads`].
    pub out_of_bounds_reads: u64,
    /// See [`Diagnostics::out_of_bounds_writes`].
    pub out_of_bounds_writes: u64,
    /// See [`Diagnostics::gather_multichannel`].
    pub gather_multichannel: u64,
    /// See [`Diagnostics::unconfigured_outputs`].
    pub unconfigured_outputs: u64,
}

impl DiagnosticCounts {
    /// What was counted between `before` and these values.
    pub fn since(&self, before: &DiagnosticCounts) -> DiagnosticCounts {
        DiagnosticCounts {
            out_of_bounds_reads: self.out_of_bounds_reads - before.out_of_bounds_reads,
            out_of_bounds_writes: self.out_of_bounds_writes - before.out_of_bounds_writes,
            gather_multichannel: self.gather_multichannel - before.gather_multichannel,
            unconfigured_outputs: self.unconfigured_outputs - before.unconfigured_outputs,
        }
    }
}

impl Diagnostics {
    /// The current values.
    pub fn counts(&self) -> DiagnosticCounts {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        DiagnosticCounts {
            out_of_bounds_reads: g(&self.out_of_bounds_reads),
            out_of_bounds_writes: g(&self.out_of_bounds_writes),
            gather_multichannel: g(&self.gather_multichannel),
            unconfigured_outputs: g(&self.unconfigured_outputs),
        }
    }

    fn bump(a: &AtomicU64) {
        a.fetch_add(1, Ordering::Relaxed);
    }
}

/// Memory plus caches.
#[derive(Debug)]
pub struct Mc {
    /// The memory behind the caches.
    pub mem: Memory,
    mode: CacheMode,
    caches: [Mutex<Cache>; CACHES],
    /// Counters.
    pub diagnostics: Diagnostics,
}

impl Mc {
    /// A controller over `mem`.
    pub fn new(mem: Memory, mode: CacheMode) -> Mc {
        Mc {
            mem,
            mode,
            caches: Default::default(),
            diagnostics: Diagnostics::default(),
        }
    }

    /// The cache mode.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    fn cache(&self, id: CacheId) -> std::sync::MutexGuard<'_, Cache> {
        // A poisoned lock can only follow a panic elsewhere; the data is
        // still a valid cache.
        self.caches[id as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Reads through cache `id` (memory must have been checked mapped).
    pub fn read(&self, id: CacheId, addr: u64, buf: &mut [u8]) {
        match self.mode {
            CacheMode::Coherent => self.mem.read_mapped(addr, buf),
            CacheMode::Strict => self.cache(id).read(&self.mem, addr, buf),
        }
    }

    /// Reads one word through cache `id`.
    pub fn read_u32(&self, id: CacheId, addr: u64) -> u32 {
        let mut b = [0; 4];
        self.read(id, addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Writes through cache `id` (memory must have been checked mapped).
    pub fn write(&mut self, id: CacheId, addr: u64, data: &[u8]) {
        match self.mode {
            CacheMode::Coherent => {
                let _ = self.mem.write(addr, data);
            }
            CacheMode::Strict => {
                let mem = &self.mem;
                self.caches[id as usize]
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .write(mem, addr, data)
            }
        }
    }

    /// Writes the pending writes of cache `id` to memory.
    pub fn flush(&mut self, id: CacheId) {
        let cache = self.caches[id as usize]
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        cache.flush(&mut self.mem);
    }

    /// Forgets what cache `id` read, so later reads see memory.
    pub fn invalidate(&mut self, id: CacheId) {
        self.caches[id as usize]
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .invalidate();
    }

    /// Reads the bytes of element (x, y) of `s` through cache `id`,
    /// bounds-checked: outside the surface it is all zero (and counted).
    #[inline]
    pub fn read_bytes(&self, id: CacheId, s: &Surface, x: i64, y: i64) -> [u8; 16] {
        self.read_bytes_counted(id, s, x, y, true)
    }

    /// [`Mc::read_bytes`], counting a read outside the surface only with
    /// `count` (helper lanes' reads are not counted).
    #[inline]
    fn read_bytes_counted(
        &self,
        id: CacheId,
        s: &Surface,
        x: i64,
        y: i64,
        count: bool,
    ) -> [u8; 16] {
        let mut e = [0u8; 16];
        match s.address_at(x, y) {
            Some(a) => self.read(id, a, &mut e[..s.fmt.format.bytes()]),
            None if count => Diagnostics::bump(&self.diagnostics.out_of_bounds_reads),
            None => {}
        }
        e
    }

    /// Reads element (x, y) of `s`, bounds-checked, as shader channels.
    #[inline]
    pub fn read_element(&self, id: CacheId, s: &Surface, x: i64, y: i64) -> [u32; 4] {
        self.read_element_counted(id, s, x, y, true)
    }

    #[inline]
    fn read_element_counted(
        &self,
        id: CacheId,
        s: &Surface,
        x: i64,
        y: i64,
        count: bool,
    ) -> [u32; 4] {
        let e = self.read_bytes_counted(id, s, x, y, count);
        s.fmt.format.read(&e[..s.fmt.format.bytes()])
    }

    /// Writes the channels of `value` selected by `mask` to element (x, y)
    /// of `s` through cache `id`.
    pub fn write_element(
        &mut self,
        id: CacheId,
        s: &Surface,
        x: u32,
        y: u32,
        value: [u32; 4],
        mask: u8,
    ) {
        let Some(a) = s.address(x, y) else {
            Diagnostics::bump(&self.diagnostics.out_of_bounds_writes);
            return;
        };
        let n = s.fmt.format.bytes();
        let mut e = [0u8; 16];
        self.read(id, a, &mut e[..n]);
        s.fmt.format.write(&mut e[..n], value, mask);
        self.write(id, a, &e[..n]);
    }

    /// [`Mc::write_element`] through a shared reference, for the workers
    /// of a run that write disjoint elements straight to memory. Only in
    /// [`CacheMode::Coherent`]. Returns false where it could not write
    /// (outside every arena, wrong mode).
    ///
    /// # Safety
    /// No other thread may read or write element (x, y) of `s` meanwhile.
    pub unsafe fn write_element_shared(
        &self,
        s: &Surface,
        x: u32,
        y: u32,
        value: [u32; 4],
        mask: u8,
    ) -> bool {
        let format = s.fmt.format;
        let n = format.bytes();
        let mut e = [0u8; 16];
        if mask & format.channel_mask() != format.channel_mask()
            && let Some(a) = s.address(x, y)
        {
            // A partial write keeps the element's other bytes.
            let _ = self.mem.read(a, &mut e[..n]);
        }
        format.write(&mut e[..n], value, mask);
        // SAFETY: guaranteed by the caller.
        unsafe { self.write_encoded_shared(s, x, y, &e[..n], 1) }
    }

    /// Writes `count` elements already in `s`'s format (`bytes`), from (x,
    /// y) rightwards, through a shared reference; elements outside the
    /// surface are dropped and counted. Conditions as for
    /// [`Mc::write_element_shared`].
    ///
    /// # Safety
    /// No other thread may read or write these elements meanwhile.
    pub unsafe fn write_encoded_shared(
        &self,
        s: &Surface,
        x: u32,
        y: u32,
        bytes: &[u8],
        count: usize,
    ) -> bool {
        if self.mode != CacheMode::Coherent || count == 0 {
            return count == 0;
        }
        let n = s.fmt.format.bytes();
        let first = s.address(x, y);
        let last = s.address(x + count as u32 - 1, y);
        match (first, last) {
            // SAFETY: guaranteed by the caller.
            (Some(a), Some(b)) if b == a + ((count - 1) * n) as u64 => unsafe {
                self.mem.write_shared(a, &bytes[..count * n])
            },
            _ => (0..count).all(|e| match s.address(x + e as u32, y) {
                // SAFETY: guaranteed by the caller.
                Some(a) => unsafe { self.mem.write_shared(a, &bytes[e * n..(e + 1) * n]) },
                None => {
                    Diagnostics::bump(&self.diagnostics.out_of_bounds_writes);
                    true
                }
            }),
        }
    }

    /// The encoded bytes of `count` elements of `s` from (x, y) along x,
    /// to be written in place, if they are consecutive in one arena and the
    /// cache is coherent (else [`Mc::write_encoded_shared`] writes them).
    ///
    /// # Safety
    /// No other thread may read or write these elements while the slice
    /// lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn span_shared(
        &self,
        s: &Surface,
        x: u32,
        y: u32,
        count: usize,
    ) -> Option<&mut [u8]> {
        if self.mode != CacheMode::Coherent || count == 0 {
            return None;
        }
        let n = s.fmt.format.bytes();
        let first = s.address(x, y)?;
        let last = s.address(x + count as u32 - 1, y)?;
        if last != first + ((count - 1) * n) as u64 {
            return None;
        }
        // SAFETY: guaranteed by the caller.
        unsafe { self.mem.span_shared(first, count * n) }
    }

    /// Counts an output write of an output with no format set.
    pub fn note_unconfigured_output(&self) {
        Diagnostics::bump(&self.diagnostics.unconfigured_outputs);
    }
}

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
            overlay: HashMap::default(),
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
