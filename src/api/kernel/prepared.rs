//! A job placed once and run as often as wanted (`docs/design.md`,
//! "Re-runs pay only for work"): the device, its memory and the command
//! buffer stay; each run restores the outputs' starting contents (where the
//! program cannot be proved to overwrite them all), submits the same
//! commands and leaves the results in device memory, where they are read
//! only when asked for.

use super::stage::{Staged, Use};
use super::surface::{fetch, write_rows};
use super::{HostSurface, Job, Kernel, KernelError};
use crate::abi::Executable;
use crate::isa::{Body, InstType, PredSel, TexOp};
use crate::mc::{ArenaKind, SurfaceFormat};
use crate::pe::RunReport;

/// A job ready to run again and again ([`Kernel::prepare`]).
///
/// ```
/// use ctm::kernel::{Job, Kernel};
/// use ctm::mc::Format;
/// let words = ctm::isa::asm::assemble(
///     "out rtA.rgb = mad(s0, s1, s2) | rtA.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1 wait last",
/// ).unwrap();
/// let k = Kernel::new(ctm::abi::Executable::from_code(words));
/// let job = Job::new(4, 2)
///     .constant(0, [2.0; 4])
///     .constant(1, [0.0; 4])
///     .output(0, Format::Float32_4);
/// let mut p = k.prepare(&job).unwrap();
/// p.run().unwrap();
/// assert_eq!(p.output(0).unwrap().to_f32()[4], 2.0); // pixel (1, 0): 2·i
/// p.set_constant(0, [3.0; 4]);
/// p.run().unwrap();
/// assert_eq!(p.output(0).unwrap().to_f32()[4], 3.0);
/// ```
#[derive(Debug)]
pub struct Prepared {
    staged: Staged,
    /// Each output's and the conditional buffer's device span and what it
    /// holds before a run (`None`: zeros), for the spans a run may leave
    /// partly unwritten ([`covers`]).
    starts: Vec<(u32, usize, Option<Vec<u8>>)>,
    /// Whether device memory holds the results of a run (the starting
    /// contents must be put back before the next).
    dirty: bool,
    /// Constants the executable carries: setting them changes nothing.
    carried: Vec<u32>,
}

impl Kernel {
    /// Places `job` on a device of its own once; [`Prepared::run`] then
    /// runs it as often as wanted, paying only for the run: no new device,
    /// no placing of inputs, no read-back unless asked for, and the built
    /// program and compiled code found again.
    pub fn prepare(&self, job: &Job) -> Result<Prepared, KernelError> {
        let staged = self.stage_in(job, Use::Prepared)?;
        let span =
            |fmt: SurfaceFormat| fmt.pitch as usize * fmt.format.bytes() * job.height as usize;
        let mut starts = Vec::new();
        for &(n, base, fmt) in &staged.outputs {
            if covers(&self.exe, job, n) {
                continue;
            }
            let len = span(fmt);
            let init = job.output_init.iter().any(|(k, _)| *k == n);
            starts.push((
                base,
                len,
                init.then(|| read(&staged, base, len)).transpose()?,
            ));
        }
        if let Some((base, fmt)) = staged.cond {
            let len = span(fmt);
            starts.push((base, len, Some(read(&staged, base, len)?)));
        }
        let carried = self
            .exe
            .info
            .values
            .floats
            .iter()
            .map(|&(n, _)| n)
            .collect();
        Ok(Prepared {
            staged,
            starts,
            dirty: false,
            carried,
        })
    }
}

/// Whether every run of `job` writes all four channels of every element of
/// output `n` inside the domain, whatever its inputs and constants, so that
/// what the output held before a run is never seen and a re-run need not
/// put it back: the program has no flow control, no kill, no uncached
/// writes and no early end (LAST) before its last instruction, and its
/// unpredicated OUTPUT instructions together write every channel of render
/// target `n`; the job has no conditional test (which could discard
/// pixels). Elements outside the domain are written by no run.
pub(super) fn covers(exe: &Executable, job: &Job, n: u8) -> bool {
    if job.cond.is_some() || exe.info.uncached() {
        return false;
    }
    let insts = crate::isa::decode_program(&exe.code);
    let mut written = 0u8;
    for (k, inst) in insts.iter().enumerate() {
        let Ok(i) = inst else {
            return false;
        };
        if i.cmn.last && k + 1 != insts.len() {
            return false;
        }
        match &i.body {
            Body::Fc(_) => return false,
            Body::Tex(t) if t.inst.op == TexOp::Kill => return false,
            Body::Alu(a) if i.cmn.ty == InstType::Out => {
                let rgb = i.cmn.rgb_omask != 0 && a.rgb.target == n;
                let alpha = i.cmn.alpha_omask && a.alpha.target == n;
                if (rgb && i.cmn.rgb_pred_sel != PredSel::None)
                    || (alpha && i.cmn.alpha_pred_sel != PredSel::None)
                {
                    return false;
                }
                if rgb {
                    written |= i.cmn.rgb_omask;
                }
                if alpha {
                    written |= 8;
                }
            }
            _ => {}
        }
    }
    written == 0xF
}

fn read(staged: &Staged, base: u32, len: usize) -> Result<Vec<u8>, KernelError> {
    let mut v = vec![0u8; len];
    staged.dev.read(base, &mut v)?;
    Ok(v)
}

impl Drop for Prepared {
    /// The device's memory goes back to the kernel for its next run.
    fn drop(&mut self) {
        self.staged.give_back();
    }
}

impl Prepared {
    /// Runs the job: outputs start as the job said (zeros, or their
    /// initial contents), results stay in device memory.
    pub fn run(&mut self) -> Result<RunReport, KernelError> {
        if self.dirty {
            let arena_base = self.staged.dev.info().base_address_sys_c;
            let arena = self.staged.dev.arena_mut(ArenaKind::SystemCached);
            for (base, len, init) in &self.starts {
                let at = (base - arena_base) as usize;
                let span = &mut arena[at..at + len];
                match init {
                    Some(bytes) => span.copy_from_slice(bytes),
                    None => span.fill(0),
                }
            }
        }
        self.dirty = true;
        let id = self.staged.dev.submit_commands(&self.staged.commands)?;
        Ok(self
            .staged
            .dev
            .wait(id)?
            .runs
            .into_iter()
            .next()
            .unwrap_or_default())
    }

    /// Output `n` of the last run, read back (`None` if the job did not
    /// request it).
    pub fn output(&self, n: u8) -> Option<HostSurface> {
        let &(_, base, fmt) = self.staged.outputs.iter().find(|o| o.0 == n)?;
        let s = &self.staged;
        fetch(&s.dev, base, fmt, s.width, s.height, s.threads).ok()
    }

    /// Output `n` of the last run as it lies in device memory: rows of
    /// `pitch` elements (the first `width` of each are the output's),
    /// with no copy. `None` if the job did not request it.
    pub fn output_in_place(&self, n: u8) -> Option<(&[u8], SurfaceFormat)> {
        let &(_, base, fmt) = self.staged.outputs.iter().find(|o| o.0 == n)?;
        let s = &self.staged;
        let at = (base - s.dev.info().base_address_sys_c) as usize;
        let len = fmt.pitch as usize * fmt.format.bytes() * s.height as usize;
        Some((&s.dev.arena(ArenaKind::SystemCached)[at..at + len], fmt))
    }

    /// The conditional buffer after the last run, read back.
    pub fn cond(&self) -> Option<HostSurface> {
        let (base, fmt) = self.staged.cond?;
        let s = &self.staged;
        fetch(&s.dev, base, fmt, s.width, s.height, s.threads).ok()
    }

    /// Replaces input `n`'s contents for the runs that follow: the same
    /// format and size as the job's input `n`.
    pub fn set_input(&mut self, n: u8, s: &HostSurface) -> Result<(), KernelError> {
        let Some(&(_, base, fmt, w, h)) = self.staged.inputs.iter().rev().find(|i| i.0 == n) else {
            return Err(KernelError::Job(format!(
                "input {n} is not bound in the prepared job"
            )));
        };
        if (s.format, s.width, s.height) != (fmt.format, w, h) {
            return Err(KernelError::Job(format!(
                "input {n} is {w}×{h} of {} in the prepared job, the new contents {}×{} of {}",
                fmt.format, s.width, s.height, s.format
            )));
        }
        s.check(&format!("input {n}"))?;
        write_rows(&mut self.staged.dev, s, base, fmt, self.staged.threads)
    }

    /// Sets float constant `n` for the runs that follow (a constant the
    /// executable carries keeps its own value, as in [`Job::constant`]).
    pub fn set_constant(&mut self, n: u8, v: [f32; 4]) {
        if self.carried.contains(&u32::from(n)) {
            return;
        }
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let addr = self.staged.constf + 16 * u32::from(n);
        // Inside the constant file the device was given: cannot fail.
        let _ = self.staged.dev.write(addr, &bytes);
    }
}
