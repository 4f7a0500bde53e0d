//! The PE, the command processor (`docs/machine.md` §2.2, §3, §6–§8): it reads
//! a command stream, keeps the connection's state, runs programs over the
//! domain and keeps the performance counters.
//!
//! A stream executes packet by packet. A fault (bad header, unknown opcode,
//! wrong count, packet past the end, bad parameter, a run that cannot start
//! or stops with an error) names its byte offset; the stream stops there and
//! nothing after it touches memory.
//!
//! Clock model of the counters (§7, ctm): while counting, `total` advances
//! by one per command dword, and a run advances both `total` and `active` by
//! ⌈pixel-instructions / [`PROCESSORS`]⌉ — the time the R580's 48 pixel
//! processors would need at one instruction per clock.

mod command;
mod consts;
mod deliver;
mod handout;
mod overlap;
pub mod params;
mod pool;
mod program;
mod room;
mod rows;
mod run;
mod settings;
mod strip;
mod text;

pub use command::{
    Command, CommandBuffer, OPCODES, Op, OpInfo, ParamError, ParamInfo, ParamKind, StreamFault,
    decode_packet, decode_stream, header,
};
pub(crate) use pool::{on_threads, pool, spin};
pub use settings::{EngineFactory, Progress, RunReport, RunSettings, WORK_PER_WORKER, all_cores};
pub use text::{StreamTextError, assemble_stream, disassemble_stream};

use crate::abi::ProgramInfo;
use crate::co::Co;
use crate::mc::{CacheId, Mc, Surface, Unmapped};
use crate::runtime::{Domain, RunError};
use ctm_jit::ir::Program;
use std::collections::HashMap;
use std::sync::Arc;

/// A built program's identity: its words, uncached mode, whether every
/// register write is kept, one clause per instruction, and the forms of
/// the inputs bound (which its compiled code assumes).
type BuildKey = (
    Arc<[u32]>,
    bool,
    bool,
    bool,
    [ctm_jit::ir::InputForm; 16],
    Option<bool>,
    u8,
);

/// The program the last run used (see `Pe::last`).
#[derive(Clone, Debug)]
struct LastProgram {
    key: BuildKey,
    program: Arc<Program>,
    info: Arc<ProgramInfo>,
}

/// The executable image the last run found at an instruction base (see
/// `Pe::last_image`): its bytes, and its words and loader record.
#[derive(Clone, Debug)]
struct LastImage {
    base: u32,
    bytes: Vec<u8>,
    words: Arc<[u32]>,
    desc: ProgramDesc,
}

/// Built programs a PE keeps (see `Pe::compiled`).
pub const MAX_BUILT: usize = 64;

/// Processors of the modelled chip (R580), for the clock model.
pub const PROCESSORS: u64 = 48;

/// What the program loader knows about a program in memory: the register
/// state a CTM loader programs from the ELF notes (`docs/abi.md` §4, §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramDesc {
    /// Instructions (the end-of-program address).
    pub len: u16,
    /// The program writes uncached (UMRT) outputs.
    pub uncached: bool,
    /// Per interpolation slot, the first of the three float constants that
    /// receive its plane (`params::planes`).
    pub planes: [Option<u8>; params::SLOTS],
}

impl ProgramDesc {
    /// What the loader records of `exe`.
    pub fn of(exe: &crate::abi::Executable) -> ProgramDesc {
        ProgramDesc {
            len: exe.len() as u16,
            uncached: exe.info.uncached(),
            planes: params::planes(&exe.info.bindings),
        }
    }
}

/// The two performance counters (§7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// `init_perf_counters` was seen.
    pub enabled: bool,
    /// Counting (between start and stop).
    pub counting: bool,
    /// Clocks since the last start.
    pub total: u64,
    /// Clocks with a processor busy since the last start.
    pub active: u64,
}

/// A stream that stopped. `offset` is the byte offset of the packet in its
/// buffer.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PeError {
    /// The stream does not decode.
    #[error(transparent)]
    Stream(#[from] StreamFault),
    /// A command that cannot be carried out in the current state.
    #[error("byte {offset:#x}: {name}: {message}")]
    Command {
        /// Where.
        offset: usize,
        /// The command.
        name: &'static str,
        /// Why.
        message: String,
    },
    /// The program stopped with an error.
    #[error("byte {offset:#x}: start_program: {source}")]
    Run {
        /// Where.
        offset: usize,
        /// What happened.
        #[source]
        source: RunError,
    },
}

/// What a buffer did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferReport {
    /// Commands executed.
    pub commands: usize,
    /// One report per `start_program`.
    pub runs: Runs,
}

/// The run reports of a buffer, in order: a vector that holds one report
/// in place, so that a buffer of one run allocates nothing for its
/// report (it dereferences to a slice: `runs[0]`, `runs.iter()`).
pub type Runs = smallvec::SmallVec<[RunReport; 1]>;

/// The connection's state (§8) and the loader's program table.
#[derive(Debug, Default)]
pub struct Pe {
    /// Instruction memory base.
    pub(crate) inst: Option<u32>,
    /// Float-constant base.
    pub(crate) constf: Option<u32>,
    /// Integer-constant base.
    pub(crate) consti: Option<u32>,
    /// Boolean-constant base.
    pub(crate) constb: Option<u32>,
    /// Input surfaces.
    pub(crate) inputs: [Option<Surface>; 16],
    /// Output surfaces.
    pub(crate) outputs: [Option<Surface>; 4],
    /// The domain (initially empty).
    pub(crate) domain: Domain,
    /// The conditional value (f32 pattern).
    pub(crate) cond_val: u32,
    /// Output channel write enables.
    pub(crate) out_mask: u8,
    /// Where the interpolation parameters are (`set_params`).
    pub(crate) params: Option<u32>,
    /// The conditional output unit.
    pub(crate) co: Co,
    /// Performance counters.
    pub(crate) counters: Counters,
    /// Programs placed by the loader, by instruction base.
    pub(crate) programs: HashMap<u32, ProgramDesc>,
    /// Built programs by content and build options, with the tick they
    /// were last used (at most [`MAX_BUILT`], the least recently used go).
    compiled: HashMap<BuildKey, (Arc<Program>, Arc<ProgramInfo>, u64)>,
    /// Ticks of `compiled`.
    tick: u64,
    /// The last program run, found again by comparing its key alone.
    last: Option<LastProgram>,
    /// The last executable image read, found again by comparing its bytes
    /// (no parsing), and the buffer they are read into.
    last_image: Option<LastImage>,
    image_bytes: Vec<u8>,
    /// What earlier runs' workers left for the next run's.
    spare: Spare,
    /// The last run's uniforms, filled again by the next.
    spare_uniforms: Option<consts::KeptUniforms>,
    /// The work of recent runs, for the next runs' workers.
    paces: Vec<run::Pace>,
    /// The last run's room for its direct inputs' page tables.
    spare_pages: crate::mc::PageTables,
    /// The last run's copies of inputs the input cache held (strict
    /// caches), their memory reused by the next run's.
    spare_cached: crate::mc::CachedInputs,
}

/// What the workers of earlier runs leave for the next run's: their group
/// states, and their engines while the engine settings stay the same (a
/// kept engine still holds its prepared program, so a re-run of it
/// prepares nothing: `docs/dispatch.md`).
#[derive(Default)]
struct Spare {
    lanes: Vec<Box<ctm_jit::state::Lanes>>,
    /// The workers' own logs of uncached writes ([`rows::Worker::logs`]).
    logs: Vec<Vec<Vec<crate::mc::UncachedWrite>>>,
    /// The workers' own vectors of ordered delivery's pixels.
    pixels: Vec<Vec<Vec<deliver::Px>>>,
    /// (In a mutex only to keep the PE `Sync`: reached through `&mut`.)
    engines: std::sync::Mutex<Vec<Box<dyn crate::runtime::Engine + Send>>>,
    /// The settings the kept engines were made with.
    made_with: Option<EngineMade>,
    /// The vector the last run's workers were in, empty, for the next
    /// run's (a run allocated it afresh; it is aligned, which costs).
    workers: std::sync::Mutex<Vec<rows::Worker>>,
    /// The rows' logs, slots and records.
    room: room::Room,
}

impl Spare {
    /// The kept engines.
    fn engines(&mut self) -> &mut Vec<Box<dyn crate::runtime::Engine + Send>> {
        self.engines.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    /// The kept workers' vector, empty.
    fn worker_vec(&mut self) -> Vec<rows::Worker> {
        let mut v = std::mem::take(self.workers.get_mut().unwrap_or_else(|p| p.into_inner()));
        v.clear();
        v
    }
}

/// The settings an engine is made with ([`settings::RunSettings`]: kind, JIT
/// options, code cache).
type EngineMade = (
    crate::engine::EngineKind,
    ctm_jit::compile::JitOptions,
    Option<Arc<ctm_jit::compile::CodeCache>>,
);

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} spare group states, {} spare engines",
            self.lanes.len(),
            self.engines.lock().map_or(0, |e| e.len())
        )
    }
}

impl Pe {
    /// The initial state of a connection (§8).
    pub fn new() -> Pe {
        Pe {
            domain: Domain {
                i0: 1,
                j0: 1,
                i1: 0,
                j1: 0,
            },
            out_mask: 0xF,
            ..Pe::default()
        }
    }

    /// A PE in its initial state that keeps what runs on this one built
    /// and left: the built programs, and the workers' group states and
    /// engines (an engine still holds its prepared program). A kernel's
    /// next run, on a device set up afresh, starts from it and so builds,
    /// hashes and prepares nothing it ran before (`docs/design.md`,
    /// "Re-runs pay only for work").
    pub(crate) fn recycled(&mut self) -> Pe {
        Pe {
            compiled: std::mem::take(&mut self.compiled),
            tick: self.tick,
            last: self.last.take(),
            last_image: self.last_image.take(),
            image_bytes: std::mem::take(&mut self.image_bytes),
            spare: std::mem::take(&mut self.spare),
            spare_uniforms: self.spare_uniforms.take(),
            spare_pages: std::mem::take(&mut self.spare_pages),
            spare_cached: std::mem::take(&mut self.spare_cached),
            paces: std::mem::take(&mut self.paces),
            ..Pe::new()
        }
    }

    /// The domain the next `start_program` runs over.
    pub fn domain(&self) -> Domain {
        self.domain
    }

    /// The performance counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The conditional output unit.
    pub fn co(&self) -> &Co {
        &self.co
    }

    /// Input surface `k` (0–15), if one is set.
    pub fn input(&self, k: usize) -> Option<&Surface> {
        self.inputs.get(k)?.as_ref()
    }

    /// Output surface `k` (0–3), if one is set.
    pub fn output(&self, k: usize) -> Option<&Surface> {
        self.outputs.get(k)?.as_ref()
    }

    /// Programs runs on this PE have asked for, built or found built.
    #[cfg(test)]
    pub(crate) fn programs_asked(&self) -> u64 {
        self.tick
    }

    /// Programs built and kept for later runs (at most [`MAX_BUILT`]).
    pub fn built_programs(&self) -> usize {
        self.compiled.len()
    }

    /// Executes a stream of words; its runs execute as `settings` say
    /// (engine, threads, limits, progress: host policy, not machine state).
    pub fn execute(
        &mut self,
        mc: &mut Mc,
        words: &[u32],
        settings: &RunSettings,
    ) -> Result<BufferReport, PeError> {
        let mut report = BufferReport::default();
        for packet in decode_stream(words) {
            let (offset, cmd) = packet?;
            if self.counters.counting {
                self.counters.total += cmd.op().info().params as u64 + 1;
            }
            self.command(mc, offset, cmd, settings, &mut report.runs)?;
            report.commands += 1;
        }
        Ok(report)
    }

    fn command(
        &mut self,
        mc: &mut Mc,
        offset: usize,
        cmd: Command,
        settings: &RunSettings,
        runs: &mut Runs,
    ) -> Result<(), PeError> {
        use Command as C;
        match cmd {
            C::SetCondVal(v) => self.cond_val = v,
            C::SetDomain(d) => self.domain = d,
            C::StartProgram => {
                // The report is made where the buffer's report keeps it (a
                // report moved out of the run and into the list was copied
                // at every step).
                let k = runs.len();
                runs.push(RunReport::default());
                if let Err(e) = self.start(mc, offset, settings, &mut runs[k]) {
                    runs.pop();
                    return Err(e);
                }
            }
            C::InitPerfCounters => self.counters.enabled = true,
            C::StartPerfCounters => {
                self.counters.total = 0;
                self.counters.active = 0;
                self.counters.counting = self.counters.enabled;
            }
            C::StopPerfCounters => self.counters.counting = false,
            C::ReadPerfCounters { base } => {
                if self.counters.enabled {
                    let mut b = [0u8; 8];
                    b[..4].copy_from_slice(&(self.counters.total as u32).to_le_bytes());
                    b[4..].copy_from_slice(&(self.counters.active as u32).to_le_bytes());
                    mc.mem
                        .write(u64::from(base), &b)
                        .map_err(|e: Unmapped| PeError::Command {
                            offset,
                            name: "read_perf_counters",
                            message: e.to_string(),
                        })?;
                }
            }
            C::SetInstFmt { base, .. } => self.inst = Some(base),
            C::SetConstfFmt { base, .. } => self.constf = Some(base),
            C::SetConstiFmt { base, .. } => self.consti = Some(base),
            C::SetConstbFmt { base, .. } => self.constb = Some(base),
            C::SetInpFmt {
                input,
                base,
                fmt,
                height,
            } => self.inputs[usize::from(input)] = Some(Surface { base, fmt, height }),
            C::SetOutFmt {
                output,
                base,
                fmt,
                height,
            } => self.outputs[usize::from(output)] = Some(Surface { base, fmt, height }),
            C::SetCondOutFmt { base, fmt, height } => {
                self.co.buffer = Some(Surface { base, fmt, height })
            }
            C::InvInstCache => mc.invalidate(CacheId::Inst),
            C::InvConstfCache => mc.invalidate(CacheId::ConstF),
            C::InvConstiCache => mc.invalidate(CacheId::ConstI),
            C::InvConstbCache => mc.invalidate(CacheId::ConstB),
            C::InvInpCache => mc.invalidate(CacheId::Input),
            C::FlushOutCache => mc.flush(CacheId::Output),
            C::InvCondOutCache => mc.invalidate(CacheId::Cond),
            C::FlushCondOutCache => mc.flush(CacheId::Cond),
            C::SetOutMask(m) => self.out_mask = m,
            C::SetCondOutMask(w) => self.co.write = w,
            C::SetCondTest(t) => self.co.test = t,
            C::SetCondLoc(l) => self.co.loc = l,
            C::SetParams { base } => self.params = Some(base),
        }
        Ok(())
    }
}
