//! The host API (`docs/machine.md` §9): a [`Device`] is one managed connection
//! to an emulated CTM board — arenas of GPU memory, a PE with its state, a
//! program loader and a command-buffer queue.
//!
//! It follows the four CTM calls: [`Device::open`] (`amOpenManagedConnection`,
//! reporting the arenas in [`DeviceInfo`]), [`Device::submit`]
//! (`amSubmitCommandBuffer`, size in bytes), [`Device::consumed`]
//! (`amCommandBufferConsumed`) and dropping the device
//! (`amCloseManagedConnection`). Like CTM, there is no allocation call on the
//! board; [`Device::alloc`] is the bump allocator applications wrote
//! themselves, handing out 2 KiB-aligned blocks. (ctm) choices: the emulated
//! board executes a buffer completely inside `submit`, so a returned id is
//! already consumed; a buffer that faults still counts as consumed and
//! [`Device::wait`] returns its fault; the host may read and write every arena
//! (on hardware local memory is reached through DPP copy programs).
//!
//! ```
//! use ctm::device::{Device, DeviceConfig};
//! use ctm::mc::{ArenaKind, Format, SurfaceFormat};
//! use ctm::pe::{Command, CommandBuffer};
//! use ctm::runtime::Domain;
//!
//! // r0 = (i, j, v, 1): write (i + j, i + j, i + j, 2) to output 0.
//! let exe = ctm::abi::Executable::from_code(ctm::isa::asm::assemble(
//!     "out rtA.rgb = mad(s0.rrr, s1, s0.ggg) | rtA.a = mad(s1, s1, s1) src0=r0 src1=1.0 wait last",
//! ).unwrap());
//! let mut dev = Device::open(DeviceConfig::default()).unwrap();
//! let prog = dev.alloc(ArenaKind::SystemCached, exe.code.len() * 4).unwrap();
//! dev.load_program(&exe, prog).unwrap();
//! let out = dev.alloc(ArenaKind::SystemCached, 8 * 4 * 16).unwrap();
//! let mut cb = CommandBuffer::new();
//! cb.push(Command::SetInstFmt { base: prog, fmt: SurfaceFormat::linear(Format::Float32_1, 0) })
//!     .push(Command::SetOutFmt { output: 0, base: out, fmt: SurfaceFormat::linear(Format::Float32_4, 8), height: 4 })
//!     .push(Command::SetDomain(Domain::new(8, 4)))
//!     .push(Command::StartProgram)
//!     .push(Command::FlushOutCache);
//! let id = dev.submit_commands(&cb).unwrap();
//! assert!(dev.consumed(id));
//! dev.wait(id).unwrap();
//! let mut px = [0u8; 16];
//! dev.read(out + (2 * 8 + 3) * 16, &mut px).unwrap(); // (i, j) = (3, 2)
//! assert_eq!(f32::from_le_bytes(px[..4].try_into().unwrap()), 5.0);
//! ```

use crate::abi::Executable;
use crate::engine::{EngineKind, EngineUnavailable};
use crate::isa::MAX_INSTS;
use crate::mc::{Arena, ArenaKind, BASE_ALIGN, CacheMode, MapError, Mc, Memory, Unmapped};
use crate::pe::{BufferReport, CommandBuffer, Pe, PeError, ProgramDesc, RunSettings};

/// Arena sizes and run settings of a new connection.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// Size of each arena in bytes, in the order local, local b, system,
    /// cached system (each at most 512 MiB; the system commits memory as
    /// it is touched).
    pub arena_sizes: [u32; 4],
    /// Cache behaviour.
    pub cache_mode: CacheMode,
    /// Engine, threads, budget, hazard checking, progress.
    pub settings: RunSettings,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            arena_sizes: [256 << 20, 256 << 20, 64 << 20, 256 << 20],
            cache_mode: CacheMode::Coherent,
            settings: RunSettings::default(),
        }
    }
}

/// Arena kinds in [`DeviceConfig::arena_sizes`] order, with their bases.
const ARENAS: [(ArenaKind, u32); 4] = [
    (ArenaKind::Local, 0x1000_0000),
    (ArenaKind::LocalB, 0x3000_0000),
    (ArenaKind::System, 0x5000_0000),
    (ArenaKind::SystemCached, 0x7000_0000),
];
const MAX_ARENA: u32 = 512 << 20;

/// Where `kind` stands in [`ARENAS`] (and in the memory's arena list).
fn arena_index(kind: ArenaKind) -> usize {
    ARENAS
        .iter()
        .position(|&(k, _)| k == kind)
        .expect("every arena kind has a row")
}
/// Unread buffer reports a device keeps.
pub const MAX_UNREAD: usize = 1024;

/// What `amOpenManagedConnection` reports: base GPU address and size of each
/// arena (the attested `AMmanagedDeviceInfo` members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `baseAddressGPU`.
    pub base_address_gpu: u32,
    /// `arenaSizeGPU`.
    pub arena_size_gpu: u32,
    /// Base of the second local arena.
    pub base_address_gpu_b: u32,
    /// `arenaSizeGPUb`.
    pub arena_size_gpu_b: u32,
    /// `baseAddressSYS` (uncached system memory).
    pub base_address_sys: u32,
    /// `arenaSizeSYS`.
    pub arena_size_sys: u32,
    /// `baseAddressSYSc` (cached system memory).
    pub base_address_sys_c: u32,
    /// `arenaSizeSYSc`.
    pub arena_size_sys_c: u32,
}

/// A submitted command buffer (`amSubmitCommandBuffer`'s non-zero id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

/// Why a host call failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// Memory outside the arenas.
    #[error(transparent)]
    Unmapped(#[from] Unmapped),
    /// An arena is full.
    #[error(
        "{arena} arena: {requested} bytes requested, {free} free (arenas are sized by DeviceConfig::arena_sizes, at most 512 MiB; `ctm exec --memory`)"
    )]
    OutOfMemory {
        /// Which arena.
        arena: ArenaKind,
        /// Bytes asked for (rounded to 2 KiB).
        requested: u64,
        /// Bytes left.
        free: u64,
    },
    /// A base address that is not 2 KiB aligned.
    #[error("address {addr:#010x} is not 2 KiB aligned")]
    Misaligned {
        /// The address.
        addr: u32,
    },
    /// A command buffer size that is not a whole number of dwords.
    #[error("command buffer size {size} is not a multiple of 4 bytes")]
    BadSize {
        /// The size.
        size: u32,
    },
    /// A program that does not fit the instruction store.
    #[error("program of {len} instructions; the instruction store holds {MAX_INSTS}")]
    ProgramTooLong {
        /// Instructions.
        len: usize,
    },
    /// An id `submit` never returned.
    #[error("no command buffer has id {0}")]
    UnknownBuffer(u32),
    /// A report already read, or dropped as one of more than
    /// [`MAX_UNREAD`] unread ones.
    #[error(
        "the report of command buffer {0} was already read (or dropped: at most {MAX_UNREAD} unread reports are kept)"
    )]
    ReportGone(u32),
    /// A buffer stopped with a fault.
    #[error("command buffer {id}: {source}")]
    Buffer {
        /// The buffer.
        id: u32,
        /// What happened.
        #[source]
        source: PeError,
    },
    /// The requested engine cannot run.
    #[error(transparent)]
    Engine(#[from] EngineUnavailable),
    /// The arenas could not be mapped.
    #[error(transparent)]
    Map(#[from] MapError),
    /// A connection's worker thread could not be started.
    #[error("could not start the device's worker thread: {0}")]
    Worker(String),
    /// A submit to a connection that is closing.
    #[error("the connection is closed")]
    Closed,
    /// Executing a buffer panicked (a bug in ctm, reported instead of
    /// taking the host down).
    #[error("internal error while executing the buffer: {0}")]
    Panicked(String),
}

/// A device's memory as a run left it, with the extent of each arena that
/// may hold data ([`Device::take_spare`], [`Device::open_spare`]).
pub(crate) type SpareMemory = (Memory, [u32; 4]);

/// One managed connection.
#[derive(Debug)]
pub struct Device {
    mc: Mc,
    pe: Pe,
    /// How the PE's runs execute: host policy beside the machine's state.
    settings: RunSettings,
    /// Bytes handed out from each arena (blocks lie back to back from its
    /// base).
    next: [u32; 4],
    /// Bytes of each arena, from its base, that may still hold an earlier
    /// device's data (memory taken over unzeroed, [`Device::open_spare`]):
    /// zeroed as blocks are handed out over them, and past the last block
    /// by [`Device::settle`].
    dirty: [u32; 4],
    /// Reports of submitted buffers not yet read, by id (at most
    /// [`MAX_UNREAD`]; the oldest go first).
    buffers: std::collections::BTreeMap<u32, Result<BufferReport, PeError>>,
    /// Ids handed out so far.
    submitted: u32,
    staging: Option<(u32, usize)>,
    /// A submitted buffer's bytes and words, read into the same vectors on
    /// every submit.
    command_bytes: Vec<u8>,
    command_words: Vec<u32>,
}

impl Device {
    /// Opens a connection (`amOpenManagedConnection`): maps its arenas
    /// (committed by the system as they are touched) and sets up the PE.
    /// Fails only when the system refuses the mappings.
    pub fn open(config: DeviceConfig) -> Result<Device, DeviceError> {
        Device::open_on(config, None)
    }

    /// [`Device::open`] on `memory` — a device's memory given back by
    /// [`Device::take_memory`], so zero — when it has the arenas `config`
    /// asks for; on fresh memory otherwise. Reusing memory spares the
    /// system's work of committing pages on first touch and of unmapping
    /// them (`docs/design.md`, "Re-runs pay only for work").
    pub fn open_on(config: DeviceConfig, memory: Option<Memory>) -> Result<Device, DeviceError> {
        Device::open_spare(config, memory.map(|m| (m, [0; 4])), None)
    }

    /// [`Device::open_on`] on memory whose arenas may hold data up to the
    /// given extents ([`Device::take_spare`]); those bytes are zeroed as
    /// blocks are handed out over them and by [`Device::settle`], which the
    /// caller must call before the device's memory is read or run on. The
    /// PE is `pe` (one recycled by [`Device::take_pe`]) or a new one.
    pub(crate) fn open_spare(
        config: DeviceConfig,
        memory: Option<SpareMemory>,
        pe: Option<Pe>,
    ) -> Result<Device, DeviceError> {
        let arenas: Vec<Arena> = ARENAS
            .iter()
            .zip(config.arena_sizes)
            .map(|(&(kind, base), size)| Arena {
                kind,
                base,
                size: size.min(MAX_ARENA) / BASE_ALIGN * BASE_ALIGN,
            })
            .collect();
        let (memory, dirty) = match memory {
            Some((m, dirty)) if m.arenas() == arenas.as_slice() => (m, dirty),
            _ => (Memory::new(arenas)?, [0; 4]),
        };
        Ok(Device {
            mc: Mc::new(memory, config.cache_mode),
            // Not `Pe::default()`: a new PE's domain is empty and its
            // output channels enabled.
            #[allow(clippy::unwrap_or_default)]
            pe: pe.unwrap_or_else(Pe::new),
            settings: config.settings,
            next: [0; 4],
            dirty,
            buffers: Default::default(),
            submitted: 0,
            staging: None,
            command_bytes: Vec::new(),
            command_words: Vec::new(),
        })
    }

    /// An arena's bytes, in place: what the next command buffer reads and
    /// where results appear (`docs/dispatch.md`).
    pub fn arena(&self, arena: ArenaKind) -> &[u8] {
        self.mc.mem.arena(arena_index(arena))
    }

    /// An arena's bytes, to write in place.
    pub fn arena_mut(&mut self, arena: ArenaKind) -> &mut [u8] {
        self.mc.mem.arena_mut(arena_index(arena))
    }

    /// The host address of an arena's first byte (null for an empty
    /// arena): the C interface's `baseAddressCPU`/`baseAddressCPUc`. Valid
    /// while the device lives; see [`Memory::arena_ptr`] for who may write
    /// through it when.
    pub fn arena_ptr(&self, arena: ArenaKind) -> *mut u8 {
        self.mc.mem.arena_ptr(arena_index(arena))
    }

    /// The arenas, as `AMmanagedDeviceInfo` reports them.
    pub fn info(&self) -> DeviceInfo {
        let a = self.mc.mem.arenas();
        DeviceInfo {
            base_address_gpu: a[0].base,
            arena_size_gpu: a[0].size,
            base_address_gpu_b: a[1].base,
            arena_size_gpu_b: a[1].size,
            base_address_sys: a[2].base,
            arena_size_sys: a[2].size,
            base_address_sys_c: a[3].base,
            arena_size_sys_c: a[3].size,
        }
    }

    /// Takes `bytes` (rounded up to 2 KiB) from an arena; the block is
    /// 2 KiB aligned, as every MC base must be.
    pub fn alloc(&mut self, arena: ArenaKind, bytes: usize) -> Result<u32, DeviceError> {
        self.alloc_block(arena, bytes, 0)
    }

    /// [`Device::alloc`] for a block whose first `bytes` the caller writes
    /// whole before anything reads them: only the rest of it is zeroed
    /// where it may hold an earlier device's data.
    pub(crate) fn alloc_written(
        &mut self,
        arena: ArenaKind,
        bytes: usize,
    ) -> Result<u32, DeviceError> {
        self.alloc_block(arena, bytes, bytes)
    }

    fn alloc_block(
        &mut self,
        arena: ArenaKind,
        bytes: usize,
        written: usize,
    ) -> Result<u32, DeviceError> {
        let k = arena_index(arena);
        let a = self.mc.mem.arenas()[k];
        let need = (bytes.max(1) as u64).next_multiple_of(u64::from(BASE_ALIGN));
        let free = u64::from(a.size - self.next[k]);
        if need > free {
            return Err(DeviceError::OutOfMemory {
                arena,
                requested: need,
                free,
            });
        }
        let (start, end) = (self.next[k] as usize, self.next[k] as usize + need as usize);
        let dirty = (self.dirty[k] as usize).min(end);
        let from = start + written.min(need as usize);
        if from < dirty {
            self.mc.mem.arena_mut(k)[from..dirty].fill(0);
        }
        let addr = a.base + self.next[k];
        self.next[k] += need as u32;
        Ok(addr)
    }

    /// Zeroes what an earlier device left past the blocks handed out so
    /// far ([`Device::open_spare`]): afterwards the memory outside the
    /// blocks reads as a fresh device's.
    pub(crate) fn settle(&mut self) {
        for k in 0..self.dirty.len() {
            let (next, dirty) = (self.next[k] as usize, self.dirty[k] as usize);
            if next < dirty {
                self.mc.mem.arena_mut(k)[next..dirty].fill(0);
            }
            self.dirty[k] = self.dirty[k].min(self.next[k]);
        }
    }

    /// The device's memory, zeroed where [`Device::alloc`] handed out
    /// blocks, for [`Device::open_on`]; the device is left without memory.
    /// Only for a device whose memory was written through its blocks alone
    /// (as a kernel's jobs place and run theirs): bytes written elsewhere
    /// would survive.
    pub fn take_memory(&mut self) -> Memory {
        let (mut memory, used) = self.take_spare();
        for (k, used) in used.into_iter().enumerate() {
            let bytes = memory.arena_mut(k);
            let used = (used as usize).min(bytes.len());
            bytes[..used].fill(0);
        }
        memory
    }

    /// The device's memory as it is, with the extent of each arena that
    /// may hold data (its blocks, and what an earlier device left that was
    /// not zeroed yet), for [`Device::open_spare`]: the next device zeroes
    /// only what it does not overwrite. The same condition as
    /// [`Device::take_memory`]: only for a device written through its
    /// blocks alone.
    pub(crate) fn take_spare(&mut self) -> SpareMemory {
        let mut used = std::mem::take(&mut self.next);
        for (u, d) in used.iter_mut().zip(std::mem::take(&mut self.dirty)) {
            *u = (*u).max(d);
        }
        (std::mem::take(&mut self.mc.mem), used)
    }

    /// The PE's built programs and workers, kept for a device opened next
    /// with [`Device::open_spare`] ([`Pe::recycled`]); this device's PE
    /// starts afresh.
    pub(crate) fn take_pe(&mut self) -> Pe {
        self.pe.recycled()
    }

    /// Bytes [`Device::alloc`] has handed out from an arena so far (the
    /// blocks lie back to back from the arena's base).
    pub fn allocated(&self, arena: ArenaKind) -> u32 {
        self.next[arena_index(arena)]
    }

    /// Writes host bytes to GPU memory.
    pub fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), DeviceError> {
        Ok(self.mc.mem.write(u64::from(addr), data)?)
    }

    /// Reads GPU memory (what is in memory: run results need a flush first).
    pub fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.mc.mem.read(u64::from(addr), buf)?)
    }

    /// Places a program's instructions at `addr` (2 KiB aligned) and records
    /// what the loader knows about it (length, uncached mode), as the CTM
    /// loader programs the DPP from the ELF notes. Point `set_inst_fmt` at
    /// `addr` to run it.
    pub fn load_program(&mut self, exe: &Executable, addr: u32) -> Result<(), DeviceError> {
        if !addr.is_multiple_of(BASE_ALIGN) {
            return Err(DeviceError::Misaligned { addr });
        }
        if exe.len() > MAX_INSTS {
            return Err(DeviceError::ProgramTooLong { len: exe.len() });
        }
        let bytes: Vec<u8> = exe.code.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write(addr, &bytes)?;
        self.pe.programs.insert(addr, ProgramDesc::of(exe));
        Ok(())
    }

    /// Submits `size` bytes of commands at `addr` (`amSubmitCommandBuffer`)
    /// and executes them. The id is returned even when the buffer faults;
    /// [`Device::wait`] reports the fault.
    pub fn submit(&mut self, addr: u32, size: u32) -> Result<BufferId, DeviceError> {
        if !size.is_multiple_of(4) {
            return Err(DeviceError::BadSize { size });
        }
        let mut bytes = std::mem::take(&mut self.command_bytes);
        bytes.clear();
        bytes.resize(size as usize, 0);
        let read = self.read(addr, &mut bytes);
        let mut words = std::mem::take(&mut self.command_words);
        words.clear();
        words.extend(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        self.command_bytes = bytes;
        read?;
        let result = self.pe.execute(&mut self.mc, &words, &self.settings);
        self.command_words = words;
        self.submitted += 1;
        self.buffers.insert(self.submitted, result);
        while self.buffers.len() > MAX_UNREAD {
            self.buffers.pop_first();
        }
        Ok(BufferId(self.submitted))
    }

    /// Copies `cb` into cached system memory (a staging area reused between
    /// calls) and submits it.
    pub fn submit_commands(&mut self, cb: &CommandBuffer) -> Result<BufferId, DeviceError> {
        let mut bytes = std::mem::take(&mut self.command_bytes);
        bytes.clear();
        bytes.extend(cb.words().iter().flat_map(|w| w.to_le_bytes()));
        let staged = self.stage(&bytes);
        self.command_bytes = bytes;
        let (addr, len) = staged?;
        self.submit(addr, len)
    }

    /// Writes `bytes` to the staging area (made, or made larger, as
    /// needed); returns its address and the length.
    fn stage(&mut self, bytes: &[u8]) -> Result<(u32, u32), DeviceError> {
        let addr = match self.staging {
            Some((addr, cap)) if cap >= bytes.len() => addr,
            _ => {
                let cap = bytes.len().next_power_of_two().max(4096);
                let addr = self.alloc(ArenaKind::SystemCached, cap)?;
                self.staging = Some((addr, cap));
                addr
            }
        };
        self.write(addr, bytes)?;
        Ok((addr, bytes.len() as u32))
    }

    /// Whether buffer `id` has been consumed (`amCommandBufferConsumed`);
    /// false for an unknown id.
    pub fn consumed(&self, id: BufferId) -> bool {
        id.0 != 0 && id.0 <= self.submitted
    }

    /// Waits for buffer `id` and returns what it did, or its fault. A
    /// report is kept until it is read once (and at most [`MAX_UNREAD`]
    /// unread reports are kept): a long-lived device does not grow.
    pub fn wait(&mut self, id: BufferId) -> Result<BufferReport, DeviceError> {
        match self.buffers.remove(&id.0) {
            Some(r) => r.map_err(|source| DeviceError::Buffer { id: id.0, source }),
            None if self.consumed(id) => Err(DeviceError::ReportGone(id.0)),
            None => Err(DeviceError::UnknownBuffer(id.0)),
        }
    }

    /// Reports submitted but not yet read (at most [`MAX_UNREAD`]).
    pub fn unread_reports(&self) -> usize {
        self.buffers.len()
    }

    /// Chooses the clause engine for later runs.
    pub fn set_engine(&mut self, engine: EngineKind) -> Result<(), DeviceError> {
        engine.check()?;
        self.settings.engine = engine;
        Ok(())
    }

    /// How runs execute (engine, threads, budget, hazard checking,
    /// progress).
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// How runs execute, to change.
    pub fn settings_mut(&mut self) -> &mut RunSettings {
        &mut self.settings
    }

    /// The PE's state (domain, surfaces, counters, …).
    pub fn pe(&self) -> &Pe {
        &self.pe
    }

    /// The memory controller (memory, cache mode, diagnostics).
    pub fn mc(&self) -> &Mc {
        &self.mc
    }
}
