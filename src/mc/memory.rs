//! GPU memory: a sparse, little-endian, byte-addressable 32-bit address
//! space made of arenas (`spec/system.md` §4.1). Only arenas are mapped;
//! pages are allocated on first write, so large arenas cost nothing until
//! used.

use std::cell::UnsafeCell;
use std::fmt;

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

/// One page of memory. Its bytes sit in `UnsafeCell`s so that workers of a
/// run may write disjoint bytes through a shared reference
/// ([`Memory::write_shared`]).
type Page = Box<[UnsafeCell<u8>]>;

fn new_page() -> Page {
    let zeroed: Box<[u8]> = vec![0u8; PAGE].into_boxed_slice();
    // SAFETY: `UnsafeCell<u8>` has the same layout as `u8`
    // (`repr(transparent)`), so the allocation is reinterpreted as it is.
    unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [UnsafeCell<u8>]) }
}

/// The address space: a flat table of 64 KiB pages, indexed directly by
/// the top 16 bits of an address (no hashing on the access path).
pub struct Memory {
    arenas: Vec<Arena>,
    pages: Vec<Option<Page>>,
}

// SAFETY: bytes are only changed through `&mut Memory`, or through
// `write_shared`, whose contract is that no other thread reads or writes the
// same bytes at the same time; pages are only allocated through `&mut`.
unsafe impl Sync for Memory {}

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
                let copy = new_page();
                // SAFETY: both pages are PAGE bytes; `&self` excludes
                // writers through `&mut`, and `write_shared` callers never
                // overlap a clone (it needs the whole memory).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        UnsafeCell::raw_get(p.as_ptr()),
                        UnsafeCell::raw_get(copy.as_ptr()),
                        PAGE,
                    )
                };
                m.pages[k] = Some(copy);
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
        let mut pages = Vec::new();
        pages.resize_with(1 << (32 - PAGE_BITS), || None);
        Memory { arenas, pages }
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
        let p = self.pages.get(k)?.as_ref()?;
        Some(UnsafeCell::raw_get(p.as_ptr()).cast_const())
    }

    /// Allocates the pages of `[addr, addr + len)` (inside one arena), so
    /// that [`Memory::write_shared`] can write there.
    pub fn allocate(&mut self, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        let first = (addr >> PAGE_BITS) as usize;
        let last = ((addr + len - 1) >> PAGE_BITS) as usize;
        for page in &mut self.pages[first..=last.min((1 << (32 - PAGE_BITS)) - 1)] {
            page.get_or_insert_with(new_page);
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
        while let Some(page) = self.pages[(a >> PAGE_BITS) as usize].as_ref()
            && !rest.is_empty()
        {
            let off = (a as usize) & (PAGE - 1);
            let n = (PAGE - off).min(rest.len());
            // SAFETY: `n` bytes inside an allocated page; the caller
            // guarantees that no other thread touches them meanwhile.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    rest.as_ptr(),
                    UnsafeCell::raw_get(page[off..].as_ptr()),
                    n,
                )
            };
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
    fn read_unchecked(&self, mut addr: u32, buf: &mut [u8]) {
        let mut at = 0;
        while at < buf.len() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(buf.len() - at);
            match &self.pages[(addr >> PAGE_BITS) as usize] {
                // SAFETY: `n` bytes inside the page; writers through `&self`
                // (`write_shared`) never touch bytes another thread reads.
                Some(p) => unsafe {
                    std::ptr::copy_nonoverlapping(
                        UnsafeCell::raw_get(p[off..].as_ptr()).cast_const(),
                        buf[at..].as_mut_ptr(),
                        n,
                    )
                },
                None => buf[at..at + n].fill(0),
            }
            at += n;
            addr = addr.wrapping_add(n as u32);
        }
    }
}
