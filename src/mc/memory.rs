//! GPU memory: a sparse, little-endian, byte-addressable 32-bit address
//! space made of arenas (`docs/machine.md` §4.1). Only arenas are mapped;
//! pages are allocated on first write, so large arenas cost nothing until
//! used.

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

/// Pages at least this many in a row (8 MiB) are allocated as one
/// anonymous mapping: the system hands it out zeroed and fills it in only
/// where it is first touched — by the workers of a run that write there, in
/// parallel — instead of the allocating thread zeroing every byte first.
/// Smaller runs come from the heap, whose recycled memory is cheaper to
/// zero than fresh pages are to fault in (measured: a 4 MiB output is
/// faster from the heap on one thread, a 16 MiB one scales from 1.0× to
/// 1.8× on two threads when mapped).
const MAPPED_RUN: usize = 128;

/// Memory that pages point into; freed when the [`Memory`] drops.
enum Chunk {
    /// One page from the heap (`Box<[u8]>` of [`PAGE`] bytes, as a raw
    /// pointer so that pages may be written through shared references).
    Heap(NonNull<u8>),
    /// Consecutive pages in an anonymous mapping (never accessed through
    /// the map itself: only through the page pointers taken at creation).
    Mapped(#[expect(dead_code, reason = "owns the mapping")] memmap2::MmapMut),
}

impl Chunk {
    /// `n` zeroed pages, and the first byte of each.
    fn zeroed(n: usize) -> Vec<(Chunk, Vec<NonNull<u8>>)> {
        if n >= MAPPED_RUN
            && let Ok(mut map) = memmap2::MmapOptions::new().len(n * PAGE).map_anon()
        {
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            let base = map.as_mut_ptr();
            let pages = (0..n)
                // SAFETY: inside the mapping of `n · PAGE` bytes.
                .map(|k| NonNull::new(unsafe { base.add(k * PAGE) }).expect("mapped"))
                .collect();
            return vec![(Chunk::Mapped(map), pages)];
        }
        (0..n)
            .map(|_| {
                let page = Box::into_raw(vec![0u8; PAGE].into_boxed_slice()).cast::<u8>();
                let page = NonNull::new(page).expect("a box is never null");
                (Chunk::Heap(page), vec![page])
            })
            .collect()
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if let Chunk::Heap(p) = *self {
            let slice = std::ptr::slice_from_raw_parts_mut(p.as_ptr(), PAGE);
            // SAFETY: made by `Box::into_raw` of a `PAGE`-byte boxed slice in
            // `Chunk::zeroed`, freed once, here.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

/// The address space: a flat table of 64 KiB pages, indexed directly by
/// the top 16 bits of an address (no hashing on the access path). Pages
/// are written through shared references by the workers of a run
/// ([`Memory::write_shared`]), so they are kept as raw pointers into the
/// chunks the memory owns.
pub struct Memory {
    arenas: Vec<Arena>,
    pages: Vec<Option<NonNull<u8>>>,
    chunks: Vec<Chunk>,
}

// SAFETY: bytes are only changed through `&mut Memory`, or through
// `write_shared`, whose contract is that no other thread reads or writes the
// same bytes at the same time; pages are only allocated through `&mut`. The
// page pointers point into chunks the memory owns.
unsafe impl Sync for Memory {}
// SAFETY: as above; nothing is tied to the creating thread.
unsafe impl Send for Memory {}

impl Default for Memory {
    fn default() -> Self {
        Memory::new(Vec::new())
    }
}

impl Clone for Memory {
    fn clone(&self) -> Self {
        let mut m = Memory::new(self.arenas.clone());
        for (k, page) in self.pages.iter().enumerate() {
            if let Some(p) = page {
                m.allocate((k as u64) << PAGE_BITS, PAGE as u64);
                let copy = m.pages[k].expect("allocated above");
                // SAFETY: both pages are PAGE bytes; `&self` excludes
                // writers through `&mut`, and `write_shared` callers never
                // overlap a clone (it needs the whole memory).
                unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), copy.as_ptr(), PAGE) };
            }
        }
        m
    }
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
    /// A memory with `arenas` mapped (they must not overlap).
    pub fn new(arenas: Vec<Arena>) -> Memory {
        Memory {
            arenas,
            pages: vec![None; 1 << (32 - PAGE_BITS)],
            chunks: Vec::new(),
        }
    }

    /// The arenas.
    pub fn arenas(&self) -> &[Arena] {
        &self.arenas
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
        self.allocate(addr, data.len() as u64);
        // SAFETY: `&mut self` excludes every other access, and the pages
        // were just allocated.
        let done = unsafe { self.write_shared(addr, data) };
        debug_assert!(done, "pages allocated above");
        Ok(())
    }

    /// The first byte of page `k` (address `k << 16`), if it is allocated.
    /// Its 64 KiB may be read through the pointer while `self` is borrowed
    /// and nothing writes them.
    pub fn page_ptr(&self, k: usize) -> Option<*const u8> {
        Some(self.pages.get(k).copied()??.as_ptr().cast_const())
    }

    /// Allocates the pages of `[addr, addr + len)` (inside one arena), so
    /// that [`Memory::write_shared`] can write there.
    pub fn allocate(&mut self, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        let first = (addr >> PAGE_BITS) as usize;
        let last = (((addr + len - 1) >> PAGE_BITS) as usize).min(self.pages.len() - 1);
        let mut k = first;
        while k <= last {
            if self.pages[k].is_some() {
                k += 1;
                continue;
            }
            // A run of missing pages.
            let n = self.pages[k..=last]
                .iter()
                .take_while(|p| p.is_none())
                .count();
            let mut at = k;
            for (chunk, pages) in Chunk::zeroed(n) {
                for p in pages {
                    self.pages[at] = Some(p);
                    at += 1;
                }
                self.chunks.push(chunk);
            }
            k += n;
        }
    }

    /// Writes `data` at `addr` through a shared reference; returns false
    /// (writing nothing) if a page of the span was not allocated (see
    /// [`Memory::allocate`]) or the span is not mapped.
    ///
    /// # Safety
    /// No other thread may read or write any byte of `[addr, addr +
    /// data.len())` while this runs.
    pub unsafe fn write_shared(&self, addr: u64, data: &[u8]) -> bool {
        if data.is_empty() {
            return true;
        }
        if self.check(addr, data.len() as u64).is_err() {
            return false;
        }
        let (first, last) = (
            addr >> PAGE_BITS,
            (addr + data.len() as u64 - 1) >> PAGE_BITS,
        );
        if (first..=last).any(|k| self.pages[k as usize].is_none()) {
            return false;
        }
        let mut a = addr as u32;
        let mut rest = data;
        while let Some(page) = self.pages[(a >> PAGE_BITS) as usize]
            && !rest.is_empty()
        {
            let off = (a as usize) & (PAGE - 1);
            let n = (PAGE - off).min(rest.len());
            // SAFETY: `n` bytes inside an allocated page; the caller
            // guarantees that no other thread touches them meanwhile.
            unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), page.as_ptr().add(off), n) };
            rest = &rest[n..];
            a = a.wrapping_add(n as u32);
        }
        true
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
