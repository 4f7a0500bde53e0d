//! Executable memory for compiled code, kept between modules.
//!
//! Every program, strip and body compiled on first use is a module of its
//! own, and each used to map fresh pages for its code, fault them in,
//! protect them and unmap them when the code was dropped: four kernel
//! entries or more per function. A module here takes its code pages from a
//! process-wide pool of pages other modules gave back, already mapped and
//! touched, so a compilation makes two protection changes (writable while
//! Cranelift writes the code, then readable and executable) and nothing
//! else; pages are never writable and executable at once, and a module's
//! pages are its own (no other module's code shares them). Data other than
//! code (Cranelift places a function's constants with its code, so ctm's
//! modules have none) goes to Cranelift's own provider.
//!
//! Measured (`docs/compile.md`, "Where it stands"): a strip's quick compile,
//! best of four alternations of a hundred, 4–10% shorter (`saxpy` 222 →
//! 201 µs, `texture` 353 → 328, `matmul` 394 → 378).

use cranelift_jit::{BranchProtection, JITMemoryKind, JITMemoryProvider, SystemMemoryProvider};
use cranelift_module::{ModuleError, ModuleResult};
use memmap2::{Mmap, MmapMut};
use std::io;
use std::sync::Mutex;

/// The least a fresh code chunk holds (most functions' code fits in one).
const CHUNK_BYTES: usize = 16 << 10;

/// The most bytes of code pages kept for reuse; more are unmapped.
const POOL_BYTES: usize = 4 << 20;

/// Code chunks given back by dropped modules, readable and executable.
type Pool = Mutex<Vec<Mmap>>;

/// The process's pool.
static POOL: Pool = Mutex::new(Vec::new());

/// A module's memory: code in pooled chunks, the rest Cranelift's.
pub(super) struct PooledMemory {
    pool: &'static Pool,
    /// Chunks being written (the last is filled from `at`).
    writing: Vec<MmapMut>,
    at: usize,
    /// Chunks finalised: executable, possibly running.
    done: Vec<Mmap>,
    other: SystemMemoryProvider,
}

impl PooledMemory {
    pub(super) fn new() -> PooledMemory {
        PooledMemory::with_pool(&POOL)
    }

    fn with_pool(pool: &'static Pool) -> PooledMemory {
        PooledMemory {
            pool,
            writing: Vec::new(),
            at: 0,
            done: Vec::new(),
            other: SystemMemoryProvider::new(),
        }
    }

    /// A writable chunk of at least `size` bytes: a pooled one if one is
    /// large enough, else a fresh mapping.
    fn chunk(&self, size: usize) -> io::Result<MmapMut> {
        let pooled = {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            let fit = pool.iter().position(|m| m.len() >= size);
            fit.map(|k| pool.swap_remove(k))
        };
        match pooled {
            Some(m) => m.make_mut(),
            None => MmapMut::map_anon(size.max(CHUNK_BYTES)),
        }
    }
}

impl JITMemoryProvider for PooledMemory {
    fn allocate(&mut self, size: usize, align: u64, kind: JITMemoryKind) -> io::Result<*mut u8> {
        if !matches!(kind, JITMemoryKind::Executable) {
            return self.other.allocate(size, align, kind);
        }
        let align = usize::try_from(align)
            .ok()
            .filter(|a| a.is_power_of_two())
            .ok_or_else(|| io::Error::other("unsupported code alignment"))?;
        let at = self.at.next_multiple_of(align);
        if let Some(chunk) = self.writing.last_mut()
            && at.checked_add(size).is_some_and(|end| end <= chunk.len())
        {
            self.at = at + size;
            return Ok(chunk[at..].as_mut_ptr());
        }
        // A mapping does not move with the value that owns it.
        let mut chunk = self.chunk(size)?;
        let p = chunk.as_mut_ptr();
        self.writing.push(chunk);
        self.at = size;
        Ok(p)
    }

    unsafe fn free_memory(&mut self) {
        self.writing.clear();
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        let mut kept: usize = pool.iter().map(|m| m.len()).sum();
        for m in self.done.drain(..) {
            // The caller guarantees that none of this code runs any more.
            if kept + m.len() <= POOL_BYTES {
                kept += m.len();
                pool.push(m);
            }
        }
        drop(pool);
        // SAFETY: passed on from the caller.
        unsafe { self.other.free_memory() };
    }

    fn finalize(&mut self, branch_protection: BranchProtection) -> ModuleResult<()> {
        for m in self.writing.drain(..) {
            let m = m
                .make_exec()
                .map_err(|err| ModuleError::Allocation { err })?;
            self.done.push(m);
        }
        self.at = 0;
        self.other.finalize(branch_protection)
    }
}

impl Drop for PooledMemory {
    fn drop(&mut self) {
        // Code handed out may still run where a module is dropped without
        // `free_memory` (as with Cranelift's own provider, it stays mapped).
        for m in self.done.drain(..) {
            std::mem::forget(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool of the test's own (the process's is shared with every
    /// compilation the other tests make).
    fn own_pool() -> &'static Pool {
        Box::leak(Box::new(Mutex::new(Vec::new())))
    }

    /// Fills `n` bytes at `p` with x86-64 `ret`, makes them executable and
    /// calls them (on other hosts, only fills them).
    fn fill_and_call(m: &mut PooledMemory, p: *mut u8, n: usize) {
        // SAFETY: `p` is `n` writable bytes `m` handed out.
        unsafe { p.write_bytes(0xC3, n) };
        m.finalize(BranchProtection::None).unwrap();
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `ret` alone, now readable and executable.
            let f = unsafe { std::mem::transmute::<*mut u8, extern "C" fn()>(p) };
            f();
        }
    }

    #[test]
    fn code_pages_given_back_are_written_and_run_again() {
        let pool = own_pool();
        let mut a = PooledMemory::with_pool(pool);
        let p = a.allocate(100, 16, JITMemoryKind::Executable).unwrap();
        let q = a.allocate(40, 32, JITMemoryKind::Executable).unwrap();
        // One chunk, aligned places, in order.
        assert_eq!(q as usize % 32, 0);
        assert!(q as usize >= p as usize + 100 && (q as usize) < p as usize + CHUNK_BYTES);
        fill_and_call(&mut a, p, 100);
        // SAFETY: nothing runs this code any more.
        unsafe { a.free_memory() };
        assert_eq!(pool.lock().unwrap().len(), 1);
        // The next module gets the same pages, writable again.
        let mut b = PooledMemory::with_pool(pool);
        let r = b.allocate(300, 16, JITMemoryKind::Executable).unwrap();
        assert_eq!(r, p);
        assert!(pool.lock().unwrap().is_empty());
        fill_and_call(&mut b, r, 300);
        // SAFETY: as above.
        unsafe { b.free_memory() };
    }

    #[test]
    fn large_code_gets_its_own_chunk_and_the_pool_stays_bounded() {
        let pool = own_pool();
        let mut a = PooledMemory::with_pool(pool);
        let small = a.allocate(64, 16, JITMemoryKind::Executable).unwrap();
        let big = a.allocate(POOL_BYTES + 1, 16, JITMemoryKind::Executable);
        let big = big.unwrap();
        assert_ne!(small, big);
        fill_and_call(&mut a, small, 64);
        // SAFETY: nothing runs this code any more.
        unsafe { a.free_memory() };
        // The small chunk is kept; the one larger than the pool is not.
        let kept: Vec<usize> = pool.lock().unwrap().iter().map(|m| m.len()).collect();
        assert_eq!(kept, [CHUNK_BYTES]);
    }
}
