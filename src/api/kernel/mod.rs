//! The common case in one call: a program, a domain, inputs and constants in;
//! outputs out. [`Kernel::run`] checks the job against the program
//! ([`Kernel::check`]), opens a [`Device`](crate::device::Device) with a cached system arena sized
//! for the job, places everything there, builds the command buffer a CTM
//! application would (formats, cache invalidates, domain, start, flushes),
//! submits it and reads the results back.
//!
//! [`Kernel::stage`] stops before the run: the device and the command
//! buffer, for embedders that drive the device themselves and for
//! `ctm run --emit-cmdbuf`.
//!
//! A [`Job`] runs on the JIT where the host CPU supports it, else on the
//! interpreter, on all cores; its builder methods change that.
//! Output elements the program does not write stay zero (or keep the
//! contents given with [`Job::output_init`]).
//!
//! ```
//! use ctm::kernel::{HostSurface, Job, Kernel};
//! use ctm::mc::Format;
//!
//! // out = 2·x + y (c0 = 2), x and y from inputs 0 and 1.
//! let kernel = Kernel::assemble(
//!     "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
//!      tex ld r2.rgba, in1.rgba, r0.rgba unscaled acquire wait
//!      alu r3.rgb = mad(s0.rrr, s1, s2) | r3.a = mad(s0.r, s1, s2) src0=c0 src1=r1 src2=r2 wait
//!      out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last",
//! ).unwrap();
//! let x = HostSurface::from_f32(Format::Float32_1, 3, 1, &[1.0, 2.0, 3.0]).unwrap();
//! let y = HostSurface::from_f32(Format::Float32_1, 3, 1, &[10.0, 20.0, 30.0]).unwrap();
//! let job = Job::new(3, 1)
//!     .input(0, x)
//!     .input(1, y)
//!     .constant(0, [2.0; 4])
//!     .output(0, Format::Float32_1);
//! let result = kernel.run(&job).unwrap();
//! assert_eq!(result.output(0).unwrap().to_f32(), [12.0, 24.0, 36.0]);
//! ```

mod bind;
mod check;
mod pool;
mod prepared;
mod stage;
mod surface;

pub use bind::Binding;
pub use check::{JobWarning, Unbound};
pub use prepared::Prepared;
pub use stage::Staged;
pub use surface::{HostSurface, SizeMismatch};

use crate::abi::Executable;
use crate::co::{CondLoc, CondTest};
use crate::device::DeviceError;
use crate::engine::EngineKind;
use crate::isa::asm::{self, AsmError};
use crate::mc::{CacheMode, Format};
use crate::pe::{RunReport, RunSettings};
use crate::program::{self, LoadError};
use ctm_jit::compile::JitOptions;
use ctm_jit::state::IntConst;
use std::path::Path;

/// Largest pitch a format dword can hold: the widest surface row.
pub const MAX_PITCH: u32 = 0x1FFC;
/// Most rows a surface's 13-bit height field holds.
pub const MAX_ROWS: u32 = 0x1FFF;
/// Largest side of a [`Job`]'s domain: the widest surface row (both sides
/// use the same limit).
pub const MAX_DOMAIN: u32 = MAX_PITCH;
/// Largest arena the device offers (every surface of a run must lie in one).
pub const MAX_ARENA: u32 = 512 << 20;

/// The conditional-output setup of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct CondSetup {
    /// The test.
    pub test: CondTest,
    /// Where it applies.
    pub loc: CondLoc,
    /// Write the value back on a pass.
    pub write: bool,
    /// The buffer's initial contents (also gives its format); the domain's
    /// size.
    pub buffer: HostSurface,
}

/// A machine resource a program's named register stands for
/// ([`Kernel::resource`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Input surface.
    Input(u8),
    /// Output surface (render target).
    Output(u8),
    /// The conditional value.
    Cond,
    /// Float constant.
    Float(u8),
    /// Integer (loop) constant.
    Int(u8),
    /// Boolean constant.
    Bool(u8),
}

impl Resource {
    /// A resource by its name in the bindings: `in3`, `out1`, `cond`,
    /// `c5`, `i0`, `b2`.
    pub fn parse(text: &str) -> Option<Resource> {
        let num = |p: &str, limit: u16| {
            text.strip_prefix(p)
                .and_then(|n| n.parse::<u16>().ok())
                .filter(|&n| n < limit)
        };
        if text == "cond" {
            Some(Resource::Cond)
        } else if let Some(n) = num("in", 16) {
            Some(Resource::Input(n as u8))
        } else if let Some(n) = num("out", 4) {
            Some(Resource::Output(n as u8))
        } else if let Some(n) = num("c", 256) {
            Some(Resource::Float(n as u8))
        } else if let Some(n) = num("i", 32) {
            Some(Resource::Int(n as u8))
        } else {
            num("b", 32).map(|n| Resource::Bool(n as u8))
        }
    }

    /// What `name` stands for under a program's `bindings` (`v0=in0`, …;
    /// `docs/abi.md` §5.5); a name not bound is a resource name itself.
    pub fn resolve(bindings: &[(String, String)], name: &str) -> Option<Resource> {
        let bound = bindings
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, r)| r.as_str());
        Resource::parse(bound.unwrap_or(name))
    }
}

/// Everything one run needs besides the program: built with [`Job::new`]
/// and the builder methods, each binding replacing an earlier one of the
/// same resource.
#[derive(Clone, Debug)]
pub struct Job {
    /// Domain width: i runs over 0..width.
    pub(crate) width: u32,
    /// Domain height: j runs over 0..height.
    pub(crate) height: u32,
    /// Inputs by id.
    pub(crate) inputs: Vec<(u8, HostSurface)>,
    /// Outputs by id, each `width × height` of the format.
    pub(crate) outputs: Vec<(u8, Format)>,
    /// Initial contents of outputs (else they start zero).
    pub(crate) output_init: Vec<(u8, HostSurface)>,
    /// Float constants.
    pub(crate) consts: Vec<(usize, [f32; 4])>,
    /// Integer constants.
    pub(crate) ints: Vec<(usize, IntConst)>,
    /// Boolean constants.
    pub(crate) bools: Vec<(usize, bool)>,
    /// The conditional value handed to every pair (r0.b).
    pub(crate) cond_val: f32,
    /// Interpolation parameters for programs that read interpolants
    /// (`docs/machine.md` §6.1); `None`: every interpolant is the pixel's
    /// centre.
    pub(crate) params: Option<[f32; crate::pe::params::PARAM_FLOATS]>,
    /// Conditional output, if any.
    pub(crate) cond: Option<CondSetup>,
    /// Engine, threads, options.
    pub(crate) settings: RunSettings,
    /// Cache behaviour.
    pub(crate) cache_mode: CacheMode,
}

impl Job {
    /// A job over the domain `width × height` with nothing bound, to run on
    /// the JIT where the CPU supports it (else the interpreter) on all
    /// cores.
    pub fn new(width: u32, height: u32) -> Job {
        Job {
            width,
            height,
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_init: Vec::new(),
            consts: Vec::new(),
            ints: Vec::new(),
            bools: Vec::new(),
            cond_val: 0.0,
            params: None,
            cond: None,
            settings: RunSettings::default(),
            cache_mode: CacheMode::Coherent,
        }
    }

    /// Sets the domain to `width × height` (bindings unchanged).
    pub fn domain(mut self, width: u32, height: u32) -> Job {
        (self.width, self.height) = (width, height);
        self
    }

    /// Binds input `n`.
    pub fn input(mut self, n: u8, s: HostSurface) -> Job {
        self.inputs.retain(|(k, _)| *k != n);
        self.inputs.push((n, s));
        self
    }

    /// Requests output `n` in `format`, starting zero (replacing an earlier
    /// request for `n`).
    pub fn output(mut self, n: u8, format: Format) -> Job {
        self.outputs.retain(|&(k, _)| k != n);
        self.output_init.retain(|(k, _)| *k != n);
        self.outputs.push((n, format));
        self
    }

    /// Requests output `n` starting with the contents of `s` (its format;
    /// the domain's size): what the program does not write keeps them.
    /// Replaces an earlier request for `n`.
    pub fn output_init(mut self, n: u8, s: HostSurface) -> Job {
        self.outputs.retain(|&(k, _)| k != n);
        self.output_init.retain(|(k, _)| *k != n);
        self.outputs.push((n, s.format));
        self.output_init.push((n, s));
        self
    }

    /// Sets float constant `n`.
    pub fn constant(mut self, n: u8, v: [f32; 4]) -> Job {
        self.consts.retain(|c| c.0 != usize::from(n));
        self.consts.push((usize::from(n), v));
        self
    }

    /// Sets integer constant `n`.
    pub fn int(mut self, n: u8, count: u8, init: u8, step: i8) -> Job {
        self.ints.retain(|c| c.0 != usize::from(n));
        self.ints
            .push((usize::from(n), IntConst { count, init, step }));
        self
    }

    /// Sets boolean constant `n`.
    pub fn boolean(mut self, n: u8, b: bool) -> Job {
        self.bools.retain(|c| c.0 != usize::from(n));
        self.bools.push((usize::from(n), b));
        self
    }

    /// Sets the conditional value handed to every pair (r0.b).
    pub fn cond_val(mut self, v: f32) -> Job {
        self.cond_val = v;
        self
    }

    /// Sets the interpolation parameters: three vertices of 32 floats,
    /// each a position then seven float4 interpolants (`docs/machine.md`
    /// §6.1).
    pub fn params(mut self, params: [f32; crate::pe::params::PARAM_FLOATS]) -> Job {
        self.params = Some(params);
        self
    }

    /// Sets up the conditional output unit.
    pub fn cond(mut self, setup: CondSetup) -> Job {
        self.cond = Some(setup);
        self
    }

    /// Chooses the engine.
    pub fn engine(mut self, engine: EngineKind) -> Job {
        self.settings.engine = engine;
        self
    }

    /// Sets the most worker threads a run takes (at least 1; runs use no
    /// more than they have rows of quads for, nor more than the last run
    /// of the same program and domain kept busy: [`Job::work_per_worker`]).
    pub fn threads(mut self, threads: usize) -> Job {
        self.settings.threads = threads.max(1);
        self
    }

    /// Sets the host time of rows each worker beyond the first must have
    /// brought in the last such run for a run to take it
    /// ([`RunSettings::work_per_worker`]); zero: every run takes every
    /// thread it may.
    pub fn work_per_worker(mut self, time: std::time::Duration) -> Job {
        self.settings.work_per_worker = time;
        self
    }

    /// Sets the runaway budget: instructions one group of quads may execute.
    pub fn budget(mut self, budget: u64) -> Job {
        self.settings.options.budget = budget;
        self
    }

    /// Stops the run after `limit` of wall-clock time
    /// ([`RunError::Stopped`](crate::runtime::RunError::Stopped)).
    pub fn timeout(mut self, limit: std::time::Duration) -> Job {
        self.settings.timeout = Some(limit);
        self
    }

    /// Stops the run after `n` instructions in all (counted per group of
    /// quads, like [`Job::budget`]).
    pub fn max_instructions(mut self, n: u64) -> Job {
        self.settings.max_instructions = Some(n);
        self
    }

    /// Lets `handle` stop the run from another thread
    /// ([`Cancel::cancel`](crate::runtime::Cancel::cancel)).
    pub fn cancel(mut self, handle: &crate::runtime::Cancel) -> Job {
        self.settings.cancel = Some(handle.clone());
        self
    }

    /// Sets how the JIT compiles.
    pub fn jit(mut self, jit: JitOptions) -> Job {
        self.settings.jit = jit;
        self
    }

    /// Sets the code cache the JIT finds and keeps compiled code in
    /// (default: the process-wide one).
    pub fn code_cache(mut self, cache: &std::sync::Arc<crate::CodeCache>) -> Job {
        self.settings.code_cache = Some(cache.clone());
        self
    }

    /// Turns the texture-semaphore hazard checker on or off.
    pub fn check_hazards(mut self, on: bool) -> Job {
        self.settings.options.check_hazards = on;
        self
    }

    /// Chooses coherent or strictly modelled caches.
    pub fn cache_mode(mut self, mode: CacheMode) -> Job {
        self.cache_mode = mode;
        self
    }

    /// Sets every run setting at once (engine, threads, limits, JIT
    /// options, code cache, progress).
    pub fn with_settings(mut self, settings: RunSettings) -> Job {
        self.settings = settings;
        self
    }

    /// The domain: (width, height).
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The surface bound to input `n`, if any.
    pub fn bound_input(&self, n: u8) -> Option<&HostSurface> {
        self.inputs.iter().find(|(k, _)| *k == n).map(|(_, s)| s)
    }

    /// The value float constant `n` is set to, if it is.
    pub fn bound_constant(&self, n: u8) -> Option<[f32; 4]> {
        let n = usize::from(n);
        self.consts.iter().find(|(k, _)| *k == n).map(|&(_, v)| v)
    }

    /// The format output `n` is requested in, if it is.
    pub fn requested_output(&self, n: u8) -> Option<Format> {
        self.outputs.iter().find(|(k, _)| *k == n).map(|&(_, f)| f)
    }

    /// The contents output `n` starts with, if they are given.
    pub fn initial_output(&self, n: u8) -> Option<&HostSurface> {
        self.output_init
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, s)| s)
    }

    /// The cache behaviour.
    pub fn caches(&self) -> CacheMode {
        self.cache_mode
    }

    /// How the run is carried out.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// How the run is carried out, to change it in place.
    pub fn settings_mut(&mut self) -> &mut RunSettings {
        &mut self.settings
    }
}

/// What a job produced.
#[derive(Clone, Debug)]
pub struct JobResult {
    /// Outputs by id (those requested).
    pub outputs: Vec<(u8, HostSurface)>,
    /// The conditional buffer after the run.
    pub cond: Option<HostSurface>,
    /// What the run did.
    pub report: RunReport,
}

impl JobResult {
    /// Output `n`, if requested.
    pub fn output(&self, n: u8) -> Option<&HostSurface> {
        self.outputs.iter().find(|(k, _)| *k == n).map(|(_, s)| s)
    }
}

/// Why a job could not run.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// A job that does not fit the hardware's fields.
    #[error("{0}")]
    Job(String),
    /// The program has no instructions.
    #[error("the program has no instructions")]
    EmptyProgram,
    /// The program uses something the job does not bind.
    #[error("{0}")]
    Unbound(Unbound),
    /// Nothing the program could do would be visible.
    #[error(
        "the program writes no render target, no uncached output and no conditional value, and the job writes no conditional buffer: the run would have no effect"
    )]
    NoEffect,
    /// The job's surfaces do not fit one arena.
    #[error(
        "the job needs {} MiB of device memory, but one arena holds at most {} MiB (every surface of a run must lie in one arena); with these bindings the largest square domain that fits is {fits}×{fits}",
        need.div_ceil(1 << 20),
        MAX_ARENA >> 20
    )]
    TooLarge {
        /// Bytes needed.
        need: u64,
        /// The side of the largest square domain that fits with the same
        /// bindings.
        fits: u32,
    },
    /// The program file could not be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The device refused or the run faulted.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Data that does not fill its surface.
    #[error(transparent)]
    Size(#[from] SizeMismatch),
}

/// A program ready to run.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The executable.
    pub exe: Executable,
    /// Device memory a finished run leaves for the next.
    memory: pool::MemoryPool,
}

impl Kernel {
    /// A kernel for an executable.
    pub fn new(exe: Executable) -> Kernel {
        Kernel {
            exe,
            memory: pool::MemoryPool::default(),
        }
    }

    /// Compiles a Direct3D 9 pixel shader (`docs/d3d9.md`); its register
    /// bindings are in the executable ([`Kernel::resource`]).
    ///
    /// ```
    /// use ctm::kernel::{HostSurface, Job, Kernel, Resource};
    /// use ctm::mc::Format;
    /// let shader = ctm::d3d9::assemble("ps_3_0\ndcl_texcoord0 v0\nadd oC0, v0, v0\n").unwrap();
    /// let k = Kernel::from_d3d9(&shader).unwrap();
    /// let (Some(Resource::Input(v0)), Some(Resource::Output(oc0))) = (k.resource("v0"), k.resource("oC0")) else {
    ///     unreachable!()
    /// };
    /// let x = HostSurface::from_f32(Format::Float32_4, 1, 1, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    /// let out = k.run(&Job::new(1, 1).input(v0, x).output(oc0, Format::Float32_4)).unwrap();
    /// assert_eq!(out.output(oc0).unwrap().to_f32(), [2.0, 4.0, 6.0, 8.0]);
    /// ```
    pub fn from_d3d9(shader: &crate::d3d9::Shader) -> Result<Kernel, crate::d3d9::CompileError> {
        Ok(Kernel::new(crate::d3d9::compile(shader)?.exe))
    }

    /// What a named resource of the program's source (a shader register:
    /// `v0`, `s1`, `oC0`, `oDepth`, `c3`, `i0`, `b2`, `vFace`) is on the
    /// machine. Constant registers not in the bindings keep their number.
    pub fn resource(&self, name: &str) -> Option<Resource> {
        Resource::resolve(&self.exe.info.bindings, name)
    }

    /// Assembles a kernel from source (`docs/asm.md`).
    pub fn assemble(text: &str) -> Result<Kernel, AsmError> {
        let src = asm::assemble_source(text)?;
        let mut exe = Executable::from_code(src.words);
        exe.info.set_uncached(src.uncached);
        Ok(Kernel::new(exe))
    }

    /// Reads a kernel from a file: an ELF executable or assembly text
    /// ([`program::load`]).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Kernel, KernelError> {
        Ok(Kernel::new(program::load(path.as_ref(), false)?.exe))
    }

    /// Runs the kernel over `job`'s domain, after [`Kernel::check`].
    pub fn run(&self, job: &Job) -> Result<JobResult, KernelError> {
        self.stage_in(job, stage::Use::Run)?.run()
    }
}
