//! GPU memory: a sparse, little-endian, byte-addressable 32-bit address
//! space made of arenas (`docs/machine.md` §4.1, `docs/design.md` "Host-visible
//! arenas"). Only arenas are mapped, each as one contiguous anonymous
//! mapping that the system commits page by page as it is touched, so large
//! arenas cost nothing until used.

use std::fmt;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Base addresses handed to the MC are multiples of this (§3.2).
pub const BASE_ALIGN: u32 = 2048;

const PAGE_BITS: u32 = 16;
const PAGE: usize = 1 << PAGE_BITS;

/// Which kind of memory an arena is (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArenaKind {
    /// Local (board) memory, "GPU".
    Local,
    /// The second local arena, "GPU b".
    LocalB,
    /// Uncached system memory, "SYS".
    System,
    /// Cached system memory, "SYSc".
    SystemCached,
}

impl fmt::Display for ArenaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArenaKind::Local => "local",
            ArenaKind::LocalB => "local b",
            ArenaKind::System => "system (uncached)",
            ArenaKind::SystemCached => "system (cached)",
        })
    }
}

/// One mapped region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arena {
    /// What it is.
    pub kind: ArenaKind,
    /// First address (2 KiB aligned).
    pub base: u32,
    /// Size in bytes.
    pub size: u32,
}

impl Arena {
    /// The first and last 64 KiB page the arena touches; `None` when it
    /// runs past the 32-bit address space.
    fn pages(&self) -> Option<(u32, u32)> {
        let end = u64::from(self.base) + u64::from(self.size).max(1);
        (end <= 1 << 32).then(|| (self.base >> PAGE_BITS, ((end - 1) >> PAGE_BITS) as u32))
    }

    /// Whether `[addr, addr + len)` lies inside.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= u64::from(self.base) && addr + len <= u64::from(self.base) + u64::from(self.size)
    }
}

/// An access outside every arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes at {addr:#010x} are not inside one mapped arena")]
pub struct Unmapped {
    /// First byte.
    pub addr: u64,
    /// Length.
    pub len: u64,
}

/// The address space: a flat table of 64 KiB pages, indexed directly by
/// the top 16 bits of an address (no hashing on the access path). Each
/// arena is one anonymous mapping made when the memory is created (the
/// system commits a page on its first touch), and every page of an arena
/// points into it, so an arena's bytes are contiguous and the host may read
/// and write them in place ([`Memory::arena_ptr`]). Pages are written
/// through shared references by the workers of a run
/// ([`Memory::write_shared`]), so they are kept as raw pointers.
pub struct Memory {
    arenas: Vec<Arena>,
    pages: Vec<Option<NonNull<u8>>>,
    /// One mapping per non-empty arena, starting at the arena's base rounded
    /// down to a page. Never accessed through the map itself, only through
    /// the pointers taken at creation.
    maps: Vec<memmap2::MmapMut>,
}

// SAFETY: bytes are only changed through `&mut Memory`, through
// `write_shared`, whose contract is that no other thread reads or writes the
// same bytes at the same time, or through `arena_ptr`, whose users promise
// the same. The page pointers point into mappings the memory owns.
unsafe impl Sync for Memory {}
// SAFETY: as above; nothing is tied to the creating thread.
unsafe impl Send for Memory {}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            arenas: Vec::new(),
            pages: vec![None; 1 << (32 - PAGE_BITS)],
            maps: Vec::new(),
        }
    }
}

/// Why arenas could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// Two arenas share a 64 KiB page (or overlap).
    #[error("the {0} and {1} arenas share a 64 KiB page")]
    Shared(ArenaKind, ArenaKind),
    /// An arena that runs past the 32-bit address space.
    #[error("the {0} arena runs past the 32-bit address space")]
    TooHigh(ArenaKind),
    /// The system refused the mapping.
    #[error("could not reserve {bytes} bytes for the {kind} arena: {source}")]
    System {
        /// Which arena.
        kind: ArenaKind,
        /// Its size.
        bytes: u64,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("arenas", &self.arenas)
            .field("pages", &self.pages.iter().filter(|p| p.is_some()).count())
            .finish()
    }
}

impl Memory {
    /// A memory with `arenas` mapped, each as one zeroed mapping committed
    /// lazily by the system. Arenas may not share a 64 KiB page.
    pub fn new(arenas: Vec<Arena>) -> Result<Memory, MapError> {
        let mut m = Memory::default();
        for a in &arenas {
            if a.size == 0 {
                m.arenas.push(*a);
                continue;
            }
            let Some((first, last)) = a.pages() else {
                return Err(MapError::TooHigh(a.kind));
            };
            if let Some(o) = m.arenas.iter().find(|o| {
                o.pages()
                    .is_some_and(|(f, l)| f <= last && first <= l && o.size > 0)
            }) {
                return Err(MapError::Shared(o.kind, a.kind));
            }
            let bytes = (u64::from(last - first) + 1) << PAGE_BITS;
            let mut map = memmap2::MmapOptions::new()
                .len(bytes as usize)
                .map_anon()
                .map_err(|source| MapError::System {
                    kind: a.kind,
                    bytes,
                    source,
                })?;
            let base = map.as_mut_ptr();
            for k in first..=last {
                let off = ((k - first) as usize) << PAGE_BITS;
                // SAFETY: inside the mapping of `bytes` bytes.
                m.pages[k as usize] = NonNull::new(unsafe { base.add(off) });
            }
            m.maps.push(map);
            m.arenas.push(*a);
        }
        Ok(m)
    }

    /// The arenas.
    pub fn arenas(&self) -> &[Arena] {
        &self.arenas
    }

    /// The host address of arena `k`'s first byte (its bytes follow
    /// contiguously for the arena's size); null for an empty arena or one
    /// that does not exist. Reading or writing through it is the caller's
    /// business: no byte may be written while a run reads or writes it.
    pub fn arena_ptr(&self, k: usize) -> *mut u8 {
        match self.arenas.get(k) {
            Some(a) if a.size > 0 => match self.pages[(a.base >> PAGE_BITS) as usize] {
                // SAFETY: the offset is inside the arena's first page.
                Some(p) => unsafe { p.as_ptr().add((a.base as usize) & (PAGE - 1)) },
                None => std::ptr::null_mut(),
            },
            _ => std::ptr::null_mut(),
        }
    }

    /// Arena `k`'s bytes.
    pub fn arena(&self, k: usize) -> &[u8] {
        let (p, n) = (self.arena_ptr(k), self.arenas.get(k).map_or(0, |a| a.size));
        if p.is_null() {
            return &[];
        }
        // SAFETY: the arena's `n` bytes are contiguous from `p` and live as
        // long as `self`; writers through `&self` (`write_shared`,
        // `arena_ptr`) promise not to touch bytes that are being read.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }

    /// Arena `k`'s bytes, to change in place.
    pub fn arena_mut(&mut self, k: usize) -> &mut [u8] {
        let (p, n) = (self.arena_ptr(k), self.arenas.get(k).map_or(0, |a| a.size));
        if p.is_null() {
            return &mut [];
        }
        // SAFETY: as in `arena`; `&mut self` excludes every other access.
        unsafe { std::slice::from_raw_parts_mut(p, n as usize) }
    }

    /// Checks that `[addr, addr + len)` is inside one arena.
    pub fn check(&self, addr: u64, len: u64) -> Result<(), Unmapped> {
        if self.arenas.iter().any(|a| a.contains(addr, len)) {
            Ok(())
        } else {
            Err(Unmapped { addr, len })
        }
    }

    /// Reads `buf.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Unmapped> {
        self.check(addr, buf.len() as u64)?;
        self.read_unchecked(addr as u32, buf);
        Ok(())
    }

    /// Reads `buf.len()` bytes at `addr` that the caller knows to be mapped
    /// (a surface checked before a run): no arena lookup. Anything outside
    /// the 32-bit address space reads as zero.
    pub fn read_mapped(&self, addr: u64, buf: &mut [u8]) {
        match u32::try_from(addr) {
            Ok(a) if u64::from(a) + buf.len() as u64 <= 1 << 32 => self.read_unchecked(a, buf),
            _ => buf.fill(0),
        }
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Unmapped> {
        self.check(addr, data.len() as u64)?;
        // SAFETY: `&mut self` excludes every other access.
        let done = unsafe { self.write_shared(addr, data) };
        debug_assert!(done, "every page of an arena is mapped");
        Ok(())
    }

    /// The first byte of page `k` (address `k << 16`), if an arena maps it.
    /// Its 64 KiB may be read through the pointer while `self` is borrowed
    /// and nothing writes them.
    pub fn page_ptr(&self, k: usize) -> Option<*const u8> {
        Some(self.pages.get(k).copied()??.as_ptr().cast_const())
    }

    /// The host address of guest address `addr`, where `[addr, addr +
    /// len)` lies inside one arena (an arena is one mapping: the bytes are
    /// contiguous there). Nothing is read or written.
    pub fn host_addr(&self, addr: u64, len: u64) -> Option<usize> {
        if len == 0 || self.check(addr, len).is_err() {
            return None;
        }
        let page = self.pages[(addr >> PAGE_BITS) as usize]?;
        Some(page.as_ptr() as usize + ((addr as usize) & (PAGE - 1)))
    }

    /// The bytes `[addr, addr + len)` to write in place through a shared
    /// reference, if they lie inside one arena (an arena is one mapping, so
    /// they are contiguous).
    ///
    /// # Safety
    /// No other thread may read or write any of these bytes while the
    /// slice lives, and no other slice of them may exist.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn span_shared(&self, addr: u64, len: usize) -> Option<&mut [u8]> {
        if len == 0 || self.check(addr, len as u64).is_err() {
            return None;
        }
        let page = self.pages[(addr >> PAGE_BITS) as usize]?;
        let off = (addr as usize) & (PAGE - 1);
        // SAFETY: inside one arena, whose mapping holds every byte of the
        // span from this page on; the caller guarantees that nothing else
        // reads or writes them while the slice lives.
        Some(unsafe { std::slice::from_raw_parts_mut(page.as_ptr().add(off), len) })
    }

    /// Writes `data` at `addr` through a shared reference; returns false
    /// (writing nothing) if the span is not inside one arena.
    ///
    /// # Safety
    /// No other thread may read or write any byte of `[addr, addr +
    /// data.len())` while this runs.
    pub unsafe fn write_shared(&self, addr: u64, data: &[u8]) -> bool {
        if data.is_empty() {
            return true;
        }
        // SAFETY: guaranteed by the caller; the slice ends here.
        match unsafe { self.span_shared(addr, data.len()) } {
            Some(span) => {
                span.copy_from_slice(data);
                true
            }
            None => false,
        }
    }

    /// Reads a little-endian word.
    pub fn read_u32(&self, addr: u64) -> Result<u32, Unmapped> {
        let mut b = [0; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads bytes of mapped memory (never-written bytes are zero).
    fn read_unchecked(&self, addr: u32, buf: &mut [u8]) {
        // SAFETY: `buf` is valid for writes of its length.
        unsafe { self.read_raw(addr, buf.as_mut_ptr(), buf.len()) }
    }

    /// Reads `buf.len()` bytes at `addr` into memory not initialised yet
    /// (every byte is written).
    pub fn read_uninit(&self, addr: u64, buf: &mut [MaybeUninit<u8>]) -> Result<(), Unmapped> {
        self.check(addr, buf.len() as u64)?;
        // SAFETY: `buf` is valid for writes of its length.
        unsafe { self.read_raw(addr as u32, buf.as_mut_ptr().cast(), buf.len()) };
        Ok(())
    }

    /// Copies `len` bytes of mapped memory from `addr` to `dst`
    /// (never-written bytes are zero).
    ///
    /// # Safety
    /// `dst` must be valid for writes of `len` bytes.
    unsafe fn read_raw(&self, mut addr: u32, dst: *mut u8, len: usize) {
        let mut at = 0;
        while at < len {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(len - at);
            match self.pages[(addr >> PAGE_BITS) as usize] {
                // SAFETY: `n` bytes inside the page and inside `dst` (the
                // caller's promise); writers through `&self` (`write_shared`)
                // never touch bytes another thread reads.
                Some(p) => unsafe {
                    std::ptr::copy_nonoverlapping(p.as_ptr().add(off).cast_const(), dst.add(at), n)
                },
                // SAFETY: inside `dst`, as above.
                None => unsafe { std::ptr::write_bytes(dst.add(at), 0, n) },
            }
            at += n;
            addr = addr.wrapping_add(n as u32);
        }
    }
}
