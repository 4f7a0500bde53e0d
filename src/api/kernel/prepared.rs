//! A job placed once and run as often as wanted (`docs/design.md`,
//! "Re-runs pay only for work"): the device, its memory and the command
//! buffer stay; each run restores the outputs' starting contents (where the
//! program cannot be proved to overwrite them all), submits the same
//! commands and leaves the results in device memory, where they are read
//! only when asked for.

use super::stage::{Staged, Use};
use super::surface::{fetch, in_bands, write_rows};
use super::{HostSurface, Job, Kernel, KernelError};
use crate::abi::Executable;
use crate::isa::{AOp, BOp, Body, Fc, FcOp, Inst, InstType, PredSel, TexOp};
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
/// put it back: the program has no kill, no uncached writes and no early
/// end (LAST) before its last instruction; its unpredicated OUTPUT
/// instructions that every lane runs active ([`all_active_from`])
/// together write every channel of render target `n`; the job has no
/// conditional test (which could discard pixels). Elements outside the
/// domain are written by no run.
pub(super) fn covers(exe: &Executable, job: &Job, n: u8) -> bool {
    if job.cond.is_some() || exe.info.uncached() {
        return false;
    }
    let Ok(insts) = crate::isa::decode_program(&exe.code)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    let Some(from) = all_active_from(&insts) else {
        return false;
    };
    let mut written = 0u8;
    for (k, i) in insts.iter().enumerate() {
        if i.cmn.last && k + 1 != insts.len() {
            return false;
        }
        match &i.body {
            Body::Tex(t) if t.inst.op == TexOp::Kill => return false,
            Body::Alu(a) if i.cmn.ty == InstType::Out && k >= from => {
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

/// The first instruction from which every lane of every group runs every
/// instruction to the end, active (`docs/isa.md` §6): 0 for a program
/// without flow control; for a program that is one loop, the instruction
/// after its end. Such a loop has no flow control before its LOOP/REP and
/// none after its ENDLOOP/ENDREP, which read the same integer constant;
/// inside it, only BREAKs of its kind that leave past its end; the LOOP
/// lands past the end when it skips the loop, the end jumps back to the
/// first instruction after the LOOP; none of them swaps levels
/// (B_ELSE), touches the address stack or increments branch counters
/// (which switches lanes off). Every lane
/// that breaks is held until the loop's frame is popped — at its end, or
/// by the break that holds the last lane — and is active again then. Any
/// other program: `None`. (`ctm_jit::strip` asks the same of the IR for a
/// loop's strip, and more: independent lanes, a LOOP that never jumps. The
/// two read different forms of the program; a change to one rule is a
/// change to both.)
fn all_active_from(insts: &[Inst]) -> Option<usize> {
    let fcs: Vec<(usize, &Fc)> = insts
        .iter()
        .enumerate()
        .filter_map(|(k, i)| match &i.body {
            Body::Fc(f) => Some((k, f)),
            _ => None,
        })
        .collect();
    let Some((&(a, start), rest)) = fcs.split_first() else {
        return Some(0);
    };
    let (&(e, end), inside) = rest.split_last()?;
    let (brk, fin) = match start.inst.op {
        FcOp::Loop => (FcOp::BreakLoop, FcOp::EndLoop),
        FcOp::Rep => (FcOp::BreakRep, FcOp::EndRep),
        _ => return None,
    };
    // Decrementing branch counters wakes only lanes that are inactive
    // outside a loop's hold, and without an increment there are none.
    let plain = |f: &Fc| {
        !f.inst.b_else
            && f.inst.a_op == AOp::None
            && f.inst.b_op0 != BOp::Incr
            && f.inst.b_op1 != BOp::Incr
    };
    let to = |f: &Fc| usize::from(f.addr.jump_addr);
    let shaped = end.inst.op == fin
        && end.addr.int_addr == start.addr.int_addr
        && plain(start)
        && plain(end)
        && (to(start) == e || to(start) == e + 1)
        && to(end) == a + 1
        && inside
            .iter()
            .all(|&(_, f)| f.inst.op == brk && plain(f) && to(f) == e + 1);
    shaped.then_some(e + 1)
}

/// Puts an output's starting contents back into its device span: `init`,
/// or zeros. A large span is split in bands over up to `threads` threads
/// (`docs/threads.md`, "Many cores": on one thread, clearing `divergent`'s
/// 1 MiB output took 57–91 µs of each 1.1–1.4 ms re-run at 16 threads).
fn restore(span: &mut [u8], init: Option<&[u8]>, threads: usize) {
    /// Spans smaller than this are restored on the calling thread, and no
    /// band is smaller than a quarter of it.
    const SPLIT: usize = 256 << 10;
    let threads = if span.len() >= SPLIT { threads } else { 1 };
    let band = span.len().div_ceil(threads.max(1)).max(SPLIT / 4);
    let fill = |(k, part): (usize, &mut [u8])| {
        match init {
            Some(bytes) => part.copy_from_slice(&bytes[k * band..k * band + part.len()]),
            None => part.fill(0),
        }
        Ok(())
    };
    // Nothing in a band can fail.
    let _ = in_bands(span.chunks_mut(band).enumerate(), threads, fill);
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
            let threads = self.staged.threads;
            let arena = self.staged.dev.arena_mut(ArenaKind::SystemCached);
            for (base, len, init) in &self.starts {
                let at = (base - arena_base) as usize;
                restore(&mut arena[at..at + len], init.as_deref(), threads);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mc::Format;

    fn covered(src: &str) -> bool {
        let exe = Executable::from_code(crate::isa::asm::assemble(src).unwrap());
        covers(&exe, &Job::new(4, 4).output(0, Format::Float32_4), 0)
    }

    #[test]
    fn a_loop_with_breaks_and_its_output_after_it_covers_the_output() {
        // Re-runs of Mandelbrot need not restore its output.
        assert!(covered(include_str!("../../../examples/mandelbrot.s")));
        // Its output moved into the loop, after the break, does not cover.
        let (head, tail) = (
            "LOOP i0 -> done\nbody:\nalu _ = mad(s0.rrr, s0.111, s1.rrr) | _ = max.off(s0, s0) src0=r0 src1=c0 res=r>=0\nBREAKLOOP alu_result != 0 -> done",
            "ENDLOOP i0 -> body\ndone:",
        );
        let out = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c1";
        let last = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c1 wait last";
        assert!(covered(&format!("{head}\n{tail}\n{out}\n{last}")));
        assert!(!covered(&format!("{head}\n{out}\n{tail}\n{last}")));
    }
}
