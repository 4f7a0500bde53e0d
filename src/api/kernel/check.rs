//! Checks of a job against its program before anything runs: the
//! program's notes (`docs/abi.md` §5) say which inputs, outputs and
//! constants it uses, and each must be bound.

use super::surface::HostSurface;
use super::{Job, Kernel, KernelError, MAX_DOMAIN};
use crate::mc::BASE_ALIGN;
use std::fmt;

/// Something a program uses that the job does not provide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unbound {
    /// An input the program reads.
    Input(u8),
    /// A render target the program writes (uncached programs: output 0,
    /// which their writes address).
    Output(u8),
    /// An integer (loop) constant a LOOP or REP uses.
    IntConst(u8),
}

impl fmt::Display for Unbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unbound::Input(n) => write!(f, "the program reads input {n}, which is not bound"),
            Unbound::Output(n) => write!(
                f,
                "the program writes output {n}, which has no surface (give it one to keep or discard the result)"
            ),
            Unbound::IntConst(n) => write!(
                f,
                "the program's loops use integer constant i{n} (count, initial aL, step), which is not set"
            ),
        }
    }
}

/// Something suspicious about a job that does not stop it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobWarning {
    /// The program reads float constant `cN`, which the job does not set
    /// (it reads as zero).
    UnsetConst(u8),
    /// The job binds an input the program never reads.
    UnreadInput(u8),
    /// The job requests an output the program never writes (it stays zero).
    UnwrittenOutput(u8),
}

impl fmt::Display for JobWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobWarning::UnsetConst(n) => write!(
                f,
                "the program reads float constant c{n}, which is not set (it reads as 0, 0, 0, 0)"
            ),
            JobWarning::UnreadInput(n) => {
                write!(f, "input {n} is bound but the program never reads it")
            }
            JobWarning::UnwrittenOutput(n) => write!(
                f,
                "output {n} is requested but the program never writes it (it stays zero)"
            ),
        }
    }
}

/// Device memory a job needs in the arena [`Kernel::run`] places it in.
pub(super) fn memory_needed(kernel: &Kernel, job: &Job) -> u64 {
    needed_for(kernel, job, job.width, job.height)
}

/// [`memory_needed`] if the job's domain were `w × h`.
fn needed_for(kernel: &Kernel, job: &Job, w: u32, h: u32) -> u64 {
    let granule = |n: u64| n.next_multiple_of(u64::from(BASE_ALIGN));
    let mut need = granule(kernel.exe.code.len() as u64 * 4)
        + granule(256 * 16)
        + 2 * granule(32 * 4)
        // The command buffer, generously.
        + granule(4096);
    for (_, s) in &job.inputs {
        need += HostSurface::device_bytes(s.format, s.width, s.height);
    }
    for &(_, f) in &job.outputs {
        need += HostSurface::device_bytes(f, w, h);
    }
    if let Some(c) = &job.cond {
        need += HostSurface::device_bytes(c.buffer.format, w, h);
    }
    need
}

/// The side of the largest square domain whose surfaces fit one arena
/// with the job's bindings (0 if none does).
pub(super) fn largest_square(kernel: &Kernel, job: &Job) -> u32 {
    let fits = |s: u32| needed_for(kernel, job, s, s) <= u64::from(super::MAX_ARENA);
    let (mut lo, mut hi) = (0u32, MAX_DOMAIN);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) { lo = mid } else { hi = mid - 1 }
    }
    lo
}

impl Kernel {
    /// Checks `job` against the program before anything runs: the domain,
    /// every binding's index and surface, and the program's notes — every
    /// input it reads, output it writes and loop constant it uses must be
    /// bound ([`KernelError::Unbound`]). Returns what is suspicious but
    /// allowed. [`Kernel::run`] runs these checks itself.
    ///
    /// ```
    /// use ctm::kernel::{Job, JobWarning, Kernel, KernelError, Unbound};
    /// use ctm::mc::Format;
    /// let k = Kernel::assemble(
    ///     "alu r1.rgb = mad(s0, s1, s0) | r1.a = mad(s0, s1, s0) src0=r0 src1=c2
    ///      out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last").unwrap();
    /// let e = k.check(&Job::new(4, 4)).unwrap_err();
    /// assert!(matches!(e, KernelError::Unbound(Unbound::Output(0))));
    /// let w = k.check(&Job::new(4, 4).output(0, Format::Float32_4)).unwrap();
    /// assert_eq!(w, [JobWarning::UnsetConst(2)]);
    /// ```
    pub fn check(&self, job: &Job) -> Result<Vec<JobWarning>, KernelError> {
        if self.exe.code.is_empty() {
            return Err(KernelError::EmptyProgram);
        }
        check_shape(job)?;
        let writes = self.check_bindings(job)?;
        Ok(self.warnings(job, &writes))
    }

    /// What the program needs bound is bound, it has an effect and the job
    /// fits in memory; returns the outputs the program writes.
    fn check_bindings(&self, job: &Job) -> Result<Vec<u32>, KernelError> {
        let info = &self.exe.info;
        let uncached = info.uncached();
        let bound_input = |n: u32| job.inputs.iter().any(|(k, _)| u32::from(*k) == n);
        let bound_output = |n: u32| job.outputs.iter().any(|(k, _)| u32::from(*k) == n);
        if let Some(&n) = info.inputs.iter().find(|&&n| !bound_input(n)) {
            return Err(KernelError::Unbound(Unbound::Input(n as u8)));
        }
        let writes: Vec<u32> = if uncached {
            vec![0]
        } else {
            info.outputs.clone()
        };
        if let Some(&n) = writes.iter().find(|&&n| !bound_output(n)) {
            return Err(KernelError::Unbound(Unbound::Output(n as u8)));
        }
        if let Some(&n) = info.i32_consts.iter().find(|&&n| {
            !job.ints.iter().any(|&(k, _)| k as u32 == n)
                && !info.values.ints.iter().any(|&(k, _)| k == n)
        }) {
            return Err(KernelError::Unbound(Unbound::IntConst(n as u8)));
        }
        let cond_written = job.cond.as_ref().is_some_and(|c| c.write);
        if writes.is_empty() && !cond_written {
            return Err(KernelError::NoEffect);
        }
        let need = memory_needed(self, job);
        if need > u64::from(super::MAX_ARENA) {
            return Err(KernelError::TooLarge {
                need,
                fits: largest_square(self, job),
            });
        }

        Ok(writes)
    }

    /// Constants the program reads that nothing sets, inputs it does not
    /// read, outputs it does not write.
    fn warnings(&self, job: &Job, writes: &[u32]) -> Vec<JobWarning> {
        let info = &self.exe.info;
        let mut warnings = Vec::new();
        // Constants the PE fills with interpolation planes.
        let planes = crate::pe::params::constants(&crate::pe::params::planes(&info.bindings));
        // Relative reads name every constant their loop reaches with the
        // integer constants of this job (the executable's own win).
        let insts: Vec<crate::isa::Inst> = crate::isa::decode_program(&self.exe.code)
            .into_iter()
            .flatten()
            .collect();
        let reads = crate::abi::reachable_consts(&insts, &info.f32_consts, |k| {
            let own = info.values.ints.iter().rev().find(|(n, _)| *n == k);
            match own {
                Some(&(_, [c, i, s])) => Some((c, i, s as i8)),
                None => job
                    .ints
                    .iter()
                    .rev()
                    .find(|(n, _)| *n as u32 == k)
                    .map(|(_, v)| (v.count, v.init, v.step)),
            }
        });
        for &n in &reads {
            if !job.consts.iter().any(|&(k, _)| k as u32 == n)
                && !planes.contains(&n)
                && !info.values.floats.iter().any(|&(k, _)| k == n)
                && !info.values.defaults.iter().any(|&(k, _)| k == n)
                && !info.bindings.iter().any(|(name, r)| {
                    name.ends_with(".size")
                        && super::Resource::parse(r) == Some(super::Resource::Float(n as u8))
                })
            {
                warnings.push(JobWarning::UnsetConst(n as u8));
            }
        }
        for (n, _) in &job.inputs {
            if !info.inputs.contains(&u32::from(*n)) {
                warnings.push(JobWarning::UnreadInput(*n));
            }
        }
        for &(n, _) in &job.outputs {
            if !writes.contains(&u32::from(n)) {
                warnings.push(JobWarning::UnwrittenOutput(n));
            }
        }
        warnings
    }
}

/// The job's own sizes and ranges: domain, input, output and constant
/// numbers, initial contents, the conditional buffer.
fn check_shape(job: &Job) -> Result<(), KernelError> {
    let bad = |m: String| Err(KernelError::Job(m));
    let (w, h) = (job.width, job.height);
    if w == 0 || h == 0 || w > MAX_DOMAIN || h > MAX_DOMAIN {
        return bad(format!(
            "domain {w}×{h}: each side must be 1–{MAX_DOMAIN} (the widest surface row)"
        ));
    }
    for (n, s) in &job.inputs {
        if *n > 15 {
            return bad(format!("input {n} out of range (0–15)"));
        }
        s.check(&format!("input {n}"))?;
    }
    for &(n, _) in &job.outputs {
        if n > 3 {
            return bad(format!("output {n} out of range (0–3)"));
        }
    }
    for (n, s) in &job.output_init {
        let Some(&(_, format)) = job.outputs.iter().rev().find(|(k, _)| k == n) else {
            return bad(format!(
                "output {n} has initial contents but is not requested"
            ));
        };
        if (s.width, s.height, s.format) != (w, h, format) {
            return bad(format!(
                "output {n}: initial contents are {}×{} of {}, the output {w}×{h} of {format}",
                s.width, s.height, s.format
            ));
        }
        s.check(&format!("output {n}'s initial contents"))?;
    }
    if let Some((n, _)) = job.consts.iter().find(|c| c.0 > 255) {
        return bad(format!("float constant {n} out of range (0–255)"));
    }
    if let Some((n, _)) = job.ints.iter().find(|c| c.0 > 31) {
        return bad(format!("integer constant {n} out of range (0–31)"));
    }
    if let Some((n, _)) = job.bools.iter().find(|c| c.0 > 31) {
        return bad(format!("boolean constant {n} out of range (0–31)"));
    }
    if let Some(c) = &job.cond {
        c.buffer.check("the conditional buffer")?;
        if (c.buffer.width, c.buffer.height) != (w, h) {
            return bad(format!(
                "conditional buffer is {}×{}, the domain {w}×{h}",
                c.buffer.width, c.buffer.height
            ));
        }
    }

    Ok(())
}
