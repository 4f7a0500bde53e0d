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

mod cache;
mod direct;
mod format;
mod memory;
mod view;

pub use cache::{CacheId, CacheMode};
pub use direct::{CachedInputs, DirectInputs, PageTables, input_form, narrow_targets};
pub use format::{
    Format, Layout, Linear, ReservedFormat, Surface, SurfaceFormat, TILED_IS_LINEAR, Tiled,
};
pub use memory::{Arena, ArenaKind, BASE_ALIGN, MapError, Memory, Unmapped};
pub use view::{RunView, UncachedWrite};

#[cfg(test)]
use cache::LINE;
use cache::{CACHES, Cache};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

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

    /// Whether cache `id` holds every line of `[addr, addr + len)`.
    pub(crate) fn cache_holds(&self, id: CacheId, addr: u64, len: u64) -> bool {
        self.cache(id).holds(addr, len)
    }

    /// Copies the bytes `[addr, addr + out.len())` as cache `id` holds
    /// them into `out`, if every line they touch is in it (strict caches):
    /// reading them through the cache would return these bytes and fill no
    /// line. False (and `out` partly written) where a line is missing.
    pub(crate) fn cached_copy_into(&self, id: CacheId, addr: u64, out: &mut [u8]) -> bool {
        self.cache(id).copy_into(addr, out)
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
        let format = s.fmt.format;
        let n = format.bytes();
        let mut e = [0u8; 16];
        if mask & format.channel_mask() != format.channel_mask() {
            // A partial write keeps the element's other bytes (a whole one
            // leaves none; the write fills the line as the read would).
            self.read(id, a, &mut e[..n]);
        }
        format.write(&mut e[..n], value, mask);
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
        // SAFETY: guaranteed by the caller; the slice ends here.
        if let Some(span) = unsafe { self.span_shared(s, x, y, count) } {
            span.copy_from_slice(&bytes[..count * n]);
            return true;
        }
        (0..count).all(|e| match s.address(x + e as u32, y) {
            // SAFETY: guaranteed by the caller.
            Some(a) => unsafe { self.mem.write_shared(a, &bytes[e * n..(e + 1) * n]) },
            None => {
                Diagnostics::bump(&self.diagnostics.out_of_bounds_writes);
                true
            }
        })
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

    /// Where surface `s`'s rows lie in host memory, for a run that writes
    /// them in place ([`RowsInPlace::row`]): where the caches are coherent,
    /// its layout is row-major and one arena holds the whole surface.
    /// Found once per run instead of per row as [`Mc::span_shared`] does.
    pub fn rows_in_place(&self, s: &Surface) -> Option<RowsInPlace> {
        if self.mode != CacheMode::Coherent || (s.fmt.tiled && !format::TILED_IS_LINEAR) {
            return None;
        }
        Some(RowsInPlace {
            at: self.mem.host_addr(u64::from(s.base), s.span())?,
            pitch: s.fmt.pitch,
            height: s.height,
            bytes: s.fmt.format.bytes(),
        })
    }

    /// Counts an output write of an output with no format set.
    pub fn note_unconfigured_output(&self) {
        Diagnostics::bump(&self.diagnostics.unconfigured_outputs);
    }
}

/// A row-major surface's elements in host memory ([`Mc::rows_in_place`]).
#[derive(Clone, Copy, Debug)]
pub struct RowsInPlace {
    /// The host address of the surface's first element.
    at: usize,
    pitch: u32,
    height: u32,
    bytes: usize,
}

impl RowsInPlace {
    /// The first of elements `x..x + count` of row `y`, if they are the
    /// surface's ([`Mc::span_shared`]'s answer, without its look-ups).
    pub fn row(&self, x: u32, y: u32, count: usize) -> Option<*mut u8> {
        let end = u64::from(x) + count as u64;
        if count == 0 || end > u64::from(self.pitch) || y >= self.height {
            return None;
        }
        let k = u64::from(y) * u64::from(self.pitch) + u64::from(x);
        Some((self.at + k as usize * self.bytes) as *mut u8)
    }

    /// The bytes from an element to the one below it.
    pub fn row_bytes(&self) -> usize {
        self.pitch as usize * self.bytes
    }
}

/// One local arena of 1 MiB, for tests.
#[cfg(test)]
pub(crate) const TEST_ARENA: Arena = Arena {
    kind: ArenaKind::Local,
    base: 0x1000_0000,
    size: 1 << 20,
};

#[cfg(test)]
impl Mc {
    /// A controller over [`TEST_ARENA`] alone.
    pub(crate) fn over_test_arena(mode: CacheMode) -> Mc {
        Mc::new(Memory::new(vec![TEST_ARENA]).unwrap(), mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write of every channel of an element leaves none of its old bytes
    /// (so `write_element` need not read them first).
    #[test]
    fn a_whole_element_write_keeps_no_old_byte() {
        for format in Format::ALL {
            let n = format.bytes();
            let value = [0x3F80_0000, 7, 0xC000_0000, 0x7F7F_FFFF];
            let (mut a, mut b) = ([0u8; 16], [0xA5u8; 16]);
            format.write(&mut a[..n], value, format.channel_mask());
            format.write(&mut b[..n], value, format.channel_mask());
            assert_eq!(a[..n], b[..n], "{format}");
        }
    }

    /// Strict caches, ranges across lines: a read returns what memory
    /// held when its lines were filled, a write is seen by later reads at
    /// once and reaches memory at the flush — its bytes alone (the line's
    /// other bytes keep what memory has by then) — and an invalidation
    /// drops clean lines.
    #[test]
    fn strict_ranges_across_lines_read_write_and_flush_their_own_bytes() {
        let arena = TEST_ARENA;
        let mut mc = Mc::over_test_arena(CacheMode::Strict);
        let start = u64::from(arena.base) + 3 * LINE as u64 - 5;
        let held: Vec<u8> = (0..3 * LINE as u32).map(|k| (k % 251) as u8).collect();
        mc.mem.write(start - 7, &held).unwrap();
        let mut got = vec![0; 2 * LINE + 9];
        mc.read(CacheId::Output, start, &mut got);
        assert_eq!(got[..], held[7..7 + got.len()]);
        let data: Vec<u8> = (0..LINE as u32 + 10).map(|k| 200 ^ k as u8).collect();
        mc.write(CacheId::Output, start + 3, &data);
        // Memory changes under the cache; the cache keeps its lines.
        mc.mem.write(start - 7, &vec![9; held.len()]).unwrap();
        let mut again = vec![0; got.len()];
        mc.read(CacheId::Output, start, &mut again);
        let mut want = got.clone();
        want[3..3 + data.len()].copy_from_slice(&data);
        assert_eq!(again, want);
        mc.flush(CacheId::Output);
        let mut memory = vec![0; held.len()];
        mc.mem.read(start - 7, &mut memory).unwrap();
        let mut want = vec![9; held.len()];
        want[10..10 + data.len()].copy_from_slice(&data);
        assert_eq!(memory, want, "the written bytes alone");
        mc.invalidate(CacheId::Output);
        mc.read(CacheId::Output, start, &mut again);
        assert_eq!(again[..], memory[7..7 + again.len()], "filled again");
    }

    /// A row found in place is the row `span_shared` finds, and the
    /// elements it refuses are the ones outside the surface.
    #[test]
    fn rows_in_place_are_the_spans_of_the_surface() {
        let arena = TEST_ARENA;
        let mc = Mc::over_test_arena(CacheMode::Coherent);
        for (format, pitch, height) in [(Format::Float32_4, 64, 16), (Format::Float32_1, 20, 7)] {
            let s = Surface {
                base: arena.base + 0x800,
                fmt: SurfaceFormat {
                    pitch,
                    tiled: true,
                    gather: false,
                    format,
                },
                height,
            };
            let rows = mc.rows_in_place(&s).expect("one arena holds it");
            for (x, y, n) in [
                (0, 0, 1),
                (2, 3, 8),
                (pitch - 4, height - 1, 4),
                (0, 5, pitch as usize),
            ] {
                // SAFETY: the slice is dropped at once; nothing else runs.
                let span = unsafe { mc.span_shared(&s, x, y, n) }.unwrap();
                assert_eq!(rows.row(x, y, n), Some(span.as_mut_ptr()), "{x}, {y}, {n}");
            }
            for (x, y, n) in [(0, height, 1), (pitch - 3, 0, 4), (0, 0, 0), (pitch, 0, 1)] {
                assert_eq!(rows.row(x, y, n), None, "{x}, {y}, {n}");
                // SAFETY: as above.
                assert!(unsafe { mc.span_shared(&s, x, y, n) }.is_none());
            }
        }
        // Past the arena's end, or with caches that hold writes back: none.
        let s = Surface {
            base: arena.base + arena.size - 0x800,
            fmt: SurfaceFormat {
                pitch: 64,
                tiled: false,
                gather: false,
                format: Format::Float32_4,
            },
            height: 4,
        };
        assert!(mc.rows_in_place(&s).is_none());
        let strict = Mc::new(Memory::new(vec![arena]).unwrap(), CacheMode::Strict);
        assert!(
            strict
                .rows_in_place(&Surface {
                    base: arena.base,
                    ..s
                })
                .is_none()
        );
    }
}
