//! Staging a job: the device, the memory it needs and the command buffer a
//! CTM application would submit (`docs/machine.md` §3, §6), ready to run —
//! or to be written out and replayed with `ctm exec`.

use super::surface::{fetch, place, reserve};
use super::{Job, JobResult, Kernel, KernelError, MAX_ARENA, Resource, check};
use crate::device::{Device, DeviceConfig};
use crate::mc::{ArenaKind, Format, SurfaceFormat};
use crate::pe::{Command, CommandBuffer};
use crate::runtime::Domain;

/// What a staged job's device is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Use {
    /// The caller's ([`Kernel::stage`]): its memory stays with it.
    Caller,
    /// Prepared runs: the memory goes back to the kernel when they are
    /// dropped.
    Prepared,
    /// One run, at once ([`Kernel::run`]): the memory goes back to the
    /// kernel after it.
    Run,
}

/// A job placed on a fresh device (its memory zero, perhaps reused from
/// the kernel's last run), its command buffer built but not yet submitted.
#[derive(Debug)]
pub struct Staged {
    /// The device: the program loaded and every surface and constant file
    /// placed in its cached system arena.
    pub dev: Device,
    /// The commands that run the job.
    pub commands: CommandBuffer,
    /// Where the program was loaded.
    pub program_base: u32,
    /// Outputs: id, base, format.
    pub outputs: Vec<(u8, u32, SurfaceFormat)>,
    /// The conditional buffer: base and format.
    pub cond: Option<(u32, SurfaceFormat)>,
    /// Where the float constants are.
    pub(super) constf: u32,
    /// Inputs: id, base, format, width, height.
    pub(super) inputs: Vec<(u8, u32, SurfaceFormat, u32, u32)>,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) threads: usize,
    /// Where the device's memory goes when the job is done with it.
    pub(super) pool: Option<super::pool::MemoryPool>,
}

impl Staged {
    /// Hands the device's memory to the kernel for its next run, which
    /// zeroes what it does not overwrite (the job wrote nowhere but its
    /// blocks).
    pub(super) fn give_back(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.give((self.dev.take_spare(), self.dev.take_pe()));
        }
    }

    /// Submits the commands and reads the results back.
    pub fn run(mut self) -> Result<JobResult, KernelError> {
        let id = self.dev.submit_commands(&self.commands)?;
        let report = self
            .dev
            .wait(id)?
            .runs
            .into_iter()
            .next()
            .unwrap_or_default();
        let (w, h, t) = (self.width, self.height, self.threads);
        let mut outputs = Vec::new();
        for &(n, base, fmt) in &self.outputs {
            outputs.push((n, fetch(&self.dev, base, fmt, w, h, t)?));
        }
        let cond = match self.cond {
            Some((base, fmt)) => Some(fetch(&self.dev, base, fmt, w, h, t)?),
            None => None,
        };
        self.give_back();
        Ok(JobResult {
            outputs,
            cond,
            report,
        })
    }

    /// The memory the job placed: the cached system arena from its base to
    /// the end of the last block, as (base, bytes).
    pub fn memory_image(&self) -> Result<(u32, Vec<u8>), KernelError> {
        let base = self.dev.info().base_address_sys_c;
        let mut bytes = vec![0u8; self.dev.allocated(ArenaKind::SystemCached) as usize];
        self.dev.read(base, &mut bytes)?;
        Ok((base, bytes))
    }

    /// Bytes a device surface of the job's domain takes (rows padded to
    /// the pitch).
    pub fn surface_bytes(&self, fmt: SurfaceFormat) -> u32 {
        fmt.pitch * fmt.format.bytes() as u32 * self.height
    }
}

impl Kernel {
    /// Places `job` on a fresh device and builds its command buffer,
    /// without running it ([`Kernel::run`] is `stage` then
    /// [`Staged::run`]). The device's memory is not handed back to the
    /// kernel afterwards: its `dev` is the caller's to write anywhere.
    pub fn stage(&self, job: &Job) -> Result<Staged, KernelError> {
        self.stage_in(job, Use::Caller)
    }

    /// [`Kernel::stage`] for `usage` (which says whether the device's
    /// memory goes back to the kernel, and when).
    pub(super) fn stage_in(&self, job: &Job, usage: Use) -> Result<Staged, KernelError> {
        self.check(job)?;
        let mut config = DeviceConfig {
            cache_mode: job.cache_mode,
            settings: job.settings.clone(),
            ..DeviceConfig::default()
        };
        // The cached system arena holds the whole job (memory is only
        // allocated where it is written).
        let need = check::memory_needed(self, job).next_multiple_of(1 << 20);
        config.arena_sizes[3] = config.arena_sizes[3].max(need.min(u64::from(MAX_ARENA)) as u32);
        let (memory, pe) = self.memory.take().unzip();
        let mut dev = Device::open_spare(config, memory, pe)?;
        let arena = ArenaKind::SystemCached;
        let mut cb = CommandBuffer::new();
        // Blocks the job writes whole are not zeroed first.
        let prog = dev.alloc_written(arena, self.exe.code.len() * 4)?;
        dev.load_program(&self.exe, prog)?;
        let none = SurfaceFormat::linear(Format::Float32_4, 0);
        cb.push(Command::SetInstFmt {
            base: prog,
            fmt: none,
        });

        let (constf, consti, constb) = self.constant_files(job);
        let mut files = Vec::new();
        for (data, make) in [
            (
                &constf,
                (|base, fmt| Command::SetConstfFmt { base, fmt })
                    as fn(u32, SurfaceFormat) -> Command,
            ),
            (&consti, |base, fmt| Command::SetConstiFmt { base, fmt }),
            (&constb, |base, fmt| Command::SetConstbFmt { base, fmt }),
        ] {
            let base = dev.alloc_written(arena, data.len())?;
            dev.write(base, data)?;
            cb.push(make(base, none));
            files.push(base);
        }

        let (inputs, outs, cond) = self.surfaces(&mut dev, &mut cb, job, usage)?;
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
        dev.settle();
        Ok(Staged {
            dev,
            commands: cb,
            program_base: prog,
            outputs: outs,
            cond,
            constf: files[0],
            inputs,
            width: job.width,
            height: job.height,
            threads: job.settings.threads,
            pool: (usage != Use::Caller).then(|| self.memory.clone()),
        })
    }

    /// The float, integer and boolean constant files: the executable's
    /// defaults, the samplers' sizes, the job's values, then the values
    /// the executable carries.
    fn constant_files(&self, job: &Job) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut constf = vec![0u8; 256 * 16];
        // Defaults the executable carries, then the job's values.
        for &(n, v) in &self.exe.info.values.defaults {
            let n = n as usize;
            for (k, x) in v.iter().enumerate() {
                constf[n * 16 + 4 * k..n * 16 + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        // A compiled shader's sampler sizes (`s0.size=c254` beside
        // `s0=in1`): (width, height, 1/width, 1/height) of the bound input.
        let bindings = &self.exe.info.bindings;
        for (name, resource) in bindings {
            let Some(sampler) = name.strip_suffix(".size") else {
                continue;
            };
            let bound = match Resource::resolve(bindings, sampler) {
                Some(Resource::Input(s)) => job.inputs.iter().find(|(k, _)| *k == s),
                _ => None,
            };
            if let (Some(Resource::Float(n)), Some((_, h))) = (Resource::parse(resource), bound) {
                let (n, w, hh) = (usize::from(n), h.width as f32, h.height as f32);
                for (k, x) in [w, hh, 1.0 / w, 1.0 / hh].iter().enumerate() {
                    constf[n * 16 + 4 * k..n * 16 + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
                }
            }
        }
        for &(n, v) in &job.consts {
            let slot = &mut constf[n * 16..n * 16 + 16];
            for (k, x) in v.iter().enumerate() {
                slot[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        let mut consti = vec![0u8; 32 * 4];
        for &(n, k) in &job.ints {
            let slot = &mut consti[n * 4..n * 4 + 4];
            slot.copy_from_slice(&[k.count, k.init, k.step as u8, 0]);
        }
        let mut constb = vec![0u8; 32 * 4];
        for &(n, b) in &job.bools {
            let slot = &mut constb[n * 4..n * 4 + 4];
            slot[0] = u8::from(b);
        }
        // Values the executable carries win over the job's (a shader's
        // `def` overrides what the host sets, as in Direct3D 9).
        let carried = &self.exe.info.values;
        for &(n, v) in &carried.floats {
            let n = n as usize;
            for (k, x) in v.iter().enumerate() {
                constf[n * 16 + 4 * k..n * 16 + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        for &(n, v) in &carried.ints {
            let n = n as usize;
            consti[n * 4..n * 4 + 4].copy_from_slice(&[v[0], v[1], v[2], 0]);
        }
        for &(n, b) in &carried.bools {
            constb[n as usize * 4] = u8::from(b);
        }
        (constf, consti, constb)
    }

    /// Places the job's inputs, outputs, conditional buffer and
    /// interpolation parameters on `dev` and names them in `cb`.
    fn surfaces(
        &self,
        dev: &mut Device,
        cb: &mut CommandBuffer,
        job: &Job,
        usage: Use,
    ) -> Result<Surfaces, KernelError> {
        let threads = job.settings.threads;
        let arena = ArenaKind::SystemCached;
        let bindings = &self.exe.info.bindings;
        let mut inputs = Vec::new();
        for (n, s) in &job.inputs {
            let (base, fmt) = place(dev, s, &format!("input {n}"), threads)?;
            inputs.push((*n, base, fmt, s.width, s.height));
            cb.push(Command::SetInpFmt {
                input: *n,
                base,
                fmt,
                height: s.height,
            });
        }
        let mut outs = Vec::new();
        for &(n, format) in &job.outputs {
            let what = format!("output {n}");
            let (base, fmt) = match job.output_init.iter().rev().find(|(k, _)| *k == n) {
                Some((_, s)) => place(dev, s, &what, threads)?,
                // Fresh device memory reads as zero: nothing to copy. An
                // output the run about to start overwrites whole need not
                // even be zeroed (what a former run left is never seen).
                None => {
                    let whole = usage == Use::Run && super::prepared::covers(&self.exe, job, n);
                    reserve(dev, format, job.width, job.height, whole, &what)?
                }
            };
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
            let (base, fmt) = place(dev, &c.buffer, "the conditional buffer", threads)?;
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
        // Interpolation parameters for a program that reads interpolants
        // (the ctm dialect's v0–v6): the job's, else pixel centres.
        if crate::pe::params::planes(bindings)
            .iter()
            .any(Option::is_some)
        {
            let params = job.params.unwrap_or_else(crate::pe::params::identity);
            let bytes: Vec<u8> = params.iter().flat_map(|f| f.to_le_bytes()).collect();
            let base = dev.alloc_written(arena, bytes.len())?;
            dev.write(base, &bytes)?;
            cb.push(Command::SetParams { base });
        }
        Ok((inputs, outs, cond))
    }
}

/// Where a staged job's inputs (id, base, format, width, height), outputs
/// (id, base, format) and conditional buffer are.
type Surfaces = (
    Vec<(u8, u32, SurfaceFormat, u32, u32)>,
    Vec<(u8, u32, SurfaceFormat)>,
    Option<(u32, SurfaceFormat)>,
);
