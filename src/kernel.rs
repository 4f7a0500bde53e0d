//! The common case in one call: a program, a domain, inputs and constants in;
//! outputs out. [`Kernel::run`] opens a [`Device`], places everything in
//! cached system memory, builds the command buffer a CTM application would
//! (formats, cache invalidates, domain, start, flushes), submits it and reads
//! the results back.
//!
//! Host surfaces are tightly packed row-major arrays in the memory layout of
//! `spec/system.md` §5.1; on the device each row is padded to a pitch that is
//! a multiple of 4 elements. Output elements the program does not write stay
//! zero.
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
//! let x = HostSurface::from_f32(Format::Float32_1, 3, 1, &[1.0, 2.0, 3.0]);
//! let y = HostSurface::from_f32(Format::Float32_1, 3, 1, &[10.0, 20.0, 30.0]);
//! let job = Job::new(3, 1)
//!     .input(0, x)
//!     .input(1, y)
//!     .constant(0, [2.0; 4])
//!     .output(0, Format::Float32_1);
//! let result = kernel.run(&job).unwrap();
//! assert_eq!(result.output(0).unwrap().to_f32(), [12.0, 24.0, 36.0]);
//! ```

use crate::abi::Executable;
use crate::co::{CondLoc, CondTest};
use crate::device::{Device, DeviceConfig, DeviceError};
use crate::isa::asm::{self, AsmError};
use crate::mc::{ArenaKind, CacheMode, Format, SurfaceFormat};
use crate::pe::{Command, CommandBuffer, RunReport, RunSettings};
use crate::runtime::Domain;
use ctm_jit::state::IntConst;
use std::mem::MaybeUninit;

/// Largest pitch a format dword can hold.
pub const MAX_PITCH: u32 = 0x1FFC;
/// Largest height (and domain side) the 13-bit fields hold.
pub const MAX_HEIGHT: u32 = 0x1FFF;

/// A host-side surface: `width × height` elements of `format`, tightly
/// packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSurface {
    /// Element format.
    pub format: Format,
    /// Elements per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width · height · bytes per element` bytes.
    pub data: Vec<u8>,
}

impl HostSurface {
    /// A zero-filled surface.
    pub fn zeroed(format: Format, width: u32, height: u32) -> HostSurface {
        HostSurface {
            format,
            width,
            height,
            data: vec![0; width as usize * height as usize * format.bytes()],
        }
    }

    /// A float surface from values (`channels` per element, row-major).
    /// Integer formats store the values converted as a program's output
    /// would be.
    pub fn from_f32(format: Format, width: u32, height: u32, values: &[f32]) -> HostSurface {
        let mut s = HostSurface::zeroed(format, width, height);
        let ch = format.channels();
        for (e, v) in s
            .data
            .chunks_exact_mut(format.bytes())
            .zip(values.chunks(ch))
        {
            let mut c = [0u32; 4];
            for (k, x) in v.iter().enumerate() {
                c[k] = x.to_bits();
            }
            format.write(e, c, 0xF);
        }
        s
    }

    /// The elements as shader values, channels the format has, row-major.
    pub fn to_f32(&self) -> Vec<f32> {
        let ch = self.format.channels();
        self.data
            .chunks_exact(self.format.bytes())
            .flat_map(|e| self.format.read(e)[..ch].to_vec())
            .map(f32::from_bits)
            .collect()
    }
}

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

/// Everything one run needs besides the program.
#[derive(Clone, Debug)]
pub struct Job {
    /// Domain width: i runs over 0..width.
    pub width: u32,
    /// Domain height: j runs over 0..height.
    pub height: u32,
    /// Inputs by id.
    pub inputs: Vec<(u8, HostSurface)>,
    /// Outputs by id, each `width × height` of the format.
    pub outputs: Vec<(u8, Format)>,
    /// Float constants.
    pub consts: Vec<(usize, [f32; 4])>,
    /// Integer constants.
    pub ints: Vec<(usize, IntConst)>,
    /// Boolean constants.
    pub bools: Vec<(usize, bool)>,
    /// The conditional value handed to every pair (r0.b).
    pub cond_val: f32,
    /// Conditional output, if any.
    pub cond: Option<CondSetup>,
    /// Engine, threads, options.
    pub settings: RunSettings,
    /// Cache behaviour.
    pub cache_mode: CacheMode,
}

impl Job {
    /// A job over the domain `width × height` with nothing bound.
    pub fn new(width: u32, height: u32) -> Job {
        Job {
            width,
            height,
            inputs: Vec::new(),
            outputs: Vec::new(),
            consts: Vec::new(),
            ints: Vec::new(),
            bools: Vec::new(),
            cond_val: 0.0,
            cond: None,
            settings: RunSettings::default(),
            cache_mode: CacheMode::Coherent,
        }
    }

    /// Binds input `n`.
    pub fn input(mut self, n: u8, s: HostSurface) -> Job {
        self.inputs.push((n, s));
        self
    }

    /// Requests output `n` in `format`.
    pub fn output(mut self, n: u8, format: Format) -> Job {
        self.outputs.push((n, format));
        self
    }

    /// Sets float constant `n`.
    pub fn constant(mut self, n: usize, v: [f32; 4]) -> Job {
        self.consts.push((n, v));
        self
    }

    /// Sets integer constant `n`.
    pub fn int(mut self, n: usize, count: u8, init: u8, step: i8) -> Job {
        self.ints.push((n, IntConst { count, init, step }));
        self
    }

    /// Sets boolean constant `n`.
    pub fn boolean(mut self, n: usize, b: bool) -> Job {
        self.bools.push((n, b));
        self
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
    /// The device refused or the run faulted.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// A program ready to run.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The executable.
    pub exe: Executable,
}

impl Kernel {
    /// A kernel for an executable.
    pub fn new(exe: Executable) -> Kernel {
        Kernel { exe }
    }

    /// Assembles a kernel from source (`docs/asm.md`).
    pub fn assemble(text: &str) -> Result<Kernel, AsmError> {
        let src = asm::assemble_source(text)?;
        let mut exe = Executable::from_code(src.words);
        exe.info.set_uncached(src.uncached);
        Ok(Kernel { exe })
    }

    /// Runs the kernel over `job`'s domain.
    pub fn run(&self, job: &Job) -> Result<JobResult, KernelError> {
        let bad = |m: String| Err(KernelError::Job(m));
        if job.width == 0 || job.height == 0 {
            return bad(format!("empty domain {}×{}", job.width, job.height));
        }
        if job.width > MAX_HEIGHT + 1 || job.height > MAX_HEIGHT + 1 {
            return bad(format!(
                "domain {}×{} exceeds the 13-bit domain fields (at most 8192×8192)",
                job.width, job.height
            ));
        }
        let mut dev = Device::open(DeviceConfig {
            cache_mode: job.cache_mode,
            settings: job.settings.clone(),
            ..DeviceConfig::default()
        });
        let arena = ArenaKind::SystemCached;
        let mut cb = CommandBuffer::new();
        let prog = dev.alloc(arena, self.exe.code.len() * 4)?;
        dev.load_program(&self.exe, prog)?;
        let none = SurfaceFormat::linear(Format::Float32_4, 0);
        cb.push(Command::SetInstFmt {
            base: prog,
            fmt: none,
        });

        let mut constf = vec![0u8; 256 * 16];
        for &(n, v) in &job.consts {
            let Some(slot) = constf.get_mut(n * 16..n * 16 + 16) else {
                return bad(format!("float constant {n} out of range (0–255)"));
            };
            for (k, x) in v.iter().enumerate() {
                slot[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        let mut consti = vec![0u8; 32 * 4];
        for &(n, k) in &job.ints {
            let Some(slot) = consti.get_mut(n * 4..n * 4 + 4) else {
                return bad(format!("integer constant {n} out of range (0–31)"));
            };
            slot.copy_from_slice(&[k.count, k.init, k.step as u8, 0]);
        }
        let mut constb = vec![0u8; 32 * 4];
        for &(n, b) in &job.bools {
            let Some(slot) = constb.get_mut(n * 4..n * 4 + 4) else {
                return bad(format!("boolean constant {n} out of range (0–31)"));
            };
            slot[0] = u8::from(b);
        }
        for (data, make) in [
            (
                &constf,
                (|base, fmt| Command::SetConstfFmt { base, fmt })
                    as fn(u32, SurfaceFormat) -> Command,
            ),
            (&consti, |base, fmt| Command::SetConstiFmt { base, fmt }),
            (&constb, |base, fmt| Command::SetConstbFmt { base, fmt }),
        ] {
            let base = dev.alloc(arena, data.len())?;
            dev.write(base, data)?;
            cb.push(make(base, none));
        }

        for (n, s) in &job.inputs {
            if *n > 15 {
                return bad(format!("input {n} out of range (0–15)"));
            }
            let (base, fmt) = place(&mut dev, s, &format!("input {n}"))?;
            cb.push(Command::SetInpFmt {
                input: *n,
                base,
                fmt,
                height: s.height,
            });
        }
        let mut outs = Vec::new();
        for &(n, format) in &job.outputs {
            if n > 3 {
                return bad(format!("output {n} out of range (0–3)"));
            }
            // Fresh device memory reads as zero: nothing to copy.
            let (base, fmt) = reserve(
                &mut dev,
                format,
                job.width,
                job.height,
                &format!("output {n}"),
            )?;
            cb.push(Command::SetOutFmt {
                output: n,
                base,
                fmt,
                height: job.height,
            });
            outs.push((n, base, fmt));
        }
        let mut cond = None;
        if let Some(c) = &job.cond {
            if (c.buffer.width, c.buffer.height) != (job.width, job.height) {
                return bad(format!(
                    "conditional buffer is {}×{}, the domain {}×{}",
                    c.buffer.width, c.buffer.height, job.width, job.height
                ));
            }
            let (base, fmt) = place(&mut dev, &c.buffer, "the conditional buffer")?;
            cb.push(Command::SetCondOutFmt {
                base,
                fmt,
                height: job.height,
            })
            .push(Command::SetCondTest(c.test))
            .push(Command::SetCondLoc(c.loc))
            .push(Command::SetCondOutMask(c.write));
            cond = Some((base, fmt));
        }
        cb.push(Command::SetCondVal(job.cond_val.to_bits()))
            .push(Command::InvInstCache)
            .push(Command::InvConstfCache)
            .push(Command::InvConstiCache)
            .push(Command::InvConstbCache)
            .push(Command::InvInpCache)
            .push(Command::InvCondOutCache)
            .push(Command::SetDomain(Domain::new(job.width, job.height)))
            .push(Command::StartProgram)
            .push(Command::FlushOutCache)
            .push(Command::FlushCondOutCache);
        let id = dev.submit_commands(&cb)?;
        let report = dev.wait(id)?.runs.first().cloned().unwrap_or_default();
        let mut outputs = Vec::new();
        for (n, base, fmt) in outs {
            outputs.push((
                n,
                fetch(&dev, base, fmt, job.width, job.height, job.settings.threads)?,
            ));
        }
        let cond = match cond {
            Some((base, fmt)) => Some(fetch(
                &dev,
                base,
                fmt,
                job.width,
                job.height,
                job.settings.threads,
            )?),
            None => None,
        };
        Ok(JobResult {
            outputs,
            cond,
            report,
        })
    }
}

/// Copies a host surface into new device memory with a padded pitch.
fn place(
    dev: &mut Device,
    s: &HostSurface,
    what: &str,
) -> Result<(u32, SurfaceFormat), KernelError> {
    let bpe = s.format.bytes();
    if s.data.len() != s.width as usize * s.height as usize * bpe {
        return Err(KernelError::Job(format!(
            "{what}: {} bytes of data for {}×{} elements of {} ({} bytes expected)",
            s.data.len(),
            s.width,
            s.height,
            s.format,
            s.width as usize * s.height as usize * bpe
        )));
    }
    let (base, fmt) = reserve(dev, s.format, s.width, s.height, what)?;
    let row = fmt.pitch as usize * bpe;
    for (y, chunk) in s.data.chunks(s.width as usize * bpe).enumerate() {
        dev.write(base + (y * row) as u32, chunk)?;
    }
    Ok((base, fmt))
}

/// Allocates device memory (zero) for a `width × height` surface of
/// `format` with a padded pitch.
fn reserve(
    dev: &mut Device,
    format: Format,
    width: u32,
    height: u32,
    what: &str,
) -> Result<(u32, SurfaceFormat), KernelError> {
    if width > MAX_PITCH || height > MAX_HEIGHT {
        return Err(KernelError::Job(format!(
            "{what} is {width}×{height}; surfaces hold at most {MAX_PITCH} elements per row and {MAX_HEIGHT} rows"
        )));
    }
    let fmt = SurfaceFormat::linear(format, width.max(1));
    let row = fmt.pitch as usize * format.bytes();
    let base = dev.alloc(ArenaKind::SystemCached, row * height as usize)?;
    Ok((base, fmt))
}

/// Reads a device surface back, tightly packed.
fn fetch(
    dev: &Device,
    base: u32,
    fmt: SurfaceFormat,
    width: u32,
    height: u32,
    threads: usize,
) -> Result<HostSurface, KernelError> {
    let bpe = fmt.format.bytes();
    let row = fmt.pitch as usize * bpe;
    let line = width as usize * bpe;
    let len = line * height as usize;
    // Every byte is copied from the device: no zeroing first (on one thread,
    // before the copy could start).
    let mut data: Vec<u8> = Vec::with_capacity(len);
    let out = &mut data.spare_capacity_mut()[..len];
    // Large surfaces are copied by several threads, a band of rows each
    // (the copy and the fresh pages' faults then scale with the run).
    let threads = if len >= 1 << 20 { threads.max(1) } else { 1 };
    let band = (height as usize).div_ceil(threads).max(1);
    let copy = |first: usize, part: &mut [MaybeUninit<u8>]| -> Result<(), KernelError> {
        for (y, chunk) in part.chunks_mut(line).enumerate() {
            let addr = base + ((first + y) * row) as u32;
            dev.mc()
                .mem
                .read_uninit(u64::from(addr), chunk)
                .map_err(DeviceError::from)?;
        }
        Ok(())
    };
    if threads == 1 || line == 0 {
        copy(0, out)?;
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = out
                .chunks_mut(line * band)
                .enumerate()
                .map(|(k, part)| scope.spawn(move || copy(k * band, part)))
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
    }
    // SAFETY: every band's rows were read in full (an error returned above
    // before this), so the first `len` bytes are initialised.
    unsafe { data.set_len(len) };
    let s = HostSurface {
        format: fmt.format,
        width,
        height,
        data,
    };
    Ok(s)
}
