//! GPU memory: a sparse, little-endian, byte-addressable 32-bit address
//! space made of arenas (`spec/system.md` §4.1). Only arenas are mapped;
//! pages are allocated on first write, so large arenas cost nothing until
//! used.

use std::collections::HashMap;
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

/// The address space.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    arenas: Vec<Arena>,
    pages: HashMap<u32, Box<[u8]>>,
}

impl Memory {
    /// A memory with `arenas` mapped (they must not overlap).
    pub fn new(arenas: Vec<Arena>) -> Memory {
        Memory {
            arenas,
            pages: HashMap::new(),
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

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Unmapped> {
        self.check(addr, data.len() as u64)?;
        let mut addr = addr as u32;
        let mut data = data;
        while !data.is_empty() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(data.len());
            let page = self
                .pages
                .entry(addr >> PAGE_BITS)
                .or_insert_with(|| vec![0; PAGE].into_boxed_slice());
            page[off..off + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            addr = addr.wrapping_add(n as u32);
        }
        Ok(())
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
            match self.pages.get(&(addr >> PAGE_BITS)) {
                Some(p) => buf[at..at + n].copy_from_slice(&p[off..off + n]),
                None => buf[at..at + n].fill(0),
            }
            at += n;
            addr = addr.wrapping_add(n as u32);
        }
    }
}
