//! `start_program`: one run of the current program over the domain
//! (`spec/system.md` §6).
//!
//! 1. The loader's description of the program at the instruction base gives
//!    its length and mode; its words are read through the instruction cache
//!    and built into clause IR (cached by content).
//! 2. Constants are read through their caches: float constant c at
//!    base + 16c, integer constant c at base + 4c (byte 0 = count, byte 1 =
//!    initial aL, byte 2 = signed step), boolean c at base + 4c (true iff the
//!    word is non-zero). Constants the program references must be mapped; a
//!    file that was never set reads as zero if nothing references it.
//! 3. Every surface the run may touch must lie inside one arena.
//! 4. With the CO at the PE, every pair is tested first (row-major); failing
//!    pairs are not executed.
//! 5. Quad rows are executed, spread over threads in chunks; their results
//!    are delivered in row order — CO test at the DPP (value: the program's
//!    depth output, else v), then output writes under the output mask, then
//!    the row's uncached writes — so any thread count gives the same memory.

use super::{PROCESSORS, Pe, PeError, ProgramDesc};
use crate::co::CondLoc;
use crate::engine::EngineKind;
use crate::mc::{CacheId, DiagnosticCounts, Mc, RunView, Surface, UncachedWrite};
use crate::runtime::hazard::Hazard;
use crate::runtime::{Engine, EngineStats, PixelOut, RunError, RunOptions, RunStats, Runner};
use crate::{abi::ProgramInfo, frontend, isa};
use ctm_jit::compile::JitOptions;
use ctm_jit::ir::{CONSTS, INT_CONSTS, Program};
use ctm_jit::state::{IntConst, Uniforms};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Quad rows executed between two deliveries of results.
const CHUNK_ROWS: usize = 32;

/// Called with (quad rows done, quad rows in all) as a run proceeds.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How runs execute.
#[derive(Clone)]
pub struct RunSettings {
    /// The clause engine.
    pub engine: EngineKind,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Budget and hazard checking.
    pub options: RunOptions,
    /// How the JIT engine compiles.
    pub jit: JitOptions,
    /// Progress callback.
    pub progress: Option<Progress>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            engine: EngineKind::Interp,
            threads: 1,
            options: RunOptions::default(),
            jit: JitOptions::default(),
            progress: None,
        }
    }
}

impl std::fmt::Debug for RunSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSettings")
            .field("engine", &self.engine)
            .field("threads", &self.threads)
            .field("options", &self.options)
            .field("jit", &self.jit)
            .finish_non_exhaustive()
    }
}

/// What one `start_program` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Pairs that ran to the end.
    pub pixels: u64,
    /// Pairs killed.
    pub killed: u64,
    /// Pairs the CO skipped at the PE.
    pub skipped: u64,
    /// Pairs whose outputs the CO discarded at the DPP.
    pub discarded: u64,
    /// Instructions executed, per group of quads.
    pub group_instructions: u64,
    /// Instructions × running pairs.
    pub pixel_instructions: u64,
    /// Modelled clocks (§7).
    pub clocks: u64,
    /// Semaphore hazards (when checking).
    pub hazards: Vec<Hazard>,
    /// MC diagnostics raised during the run.
    pub diagnostics: DiagnosticCounts,
    /// What the engines did (compilation, native and interpreted clauses).
    pub engine: EngineStats,
}

struct RowResult {
    pixels: Vec<(u32, u32, PixelOut)>,
    writes: Vec<UncachedWrite>,
    stats: RunStats,
}

impl Pe {
    fn fail(offset: usize, message: impl Into<String>) -> PeError {
        PeError::Command {
            offset,
            name: "start_program",
            message: message.into(),
        }
    }

    fn program(
        &mut self,
        mc: &Mc,
        offset: usize,
    ) -> Result<(Arc<Program>, ProgramInfo, ProgramDesc), PeError> {
        let base = self
            .inst
            .ok_or_else(|| Self::fail(offset, "no instruction memory set (set_inst_fmt)"))?;
        let desc = *self.programs.get(&base).ok_or_else(|| {
            Self::fail(
                offset,
                format!("no program was loaded at {base:#010x} (the loader records each program it places)"),
            )
        })?;
        let n = usize::from(desc.len) * isa::INST_BYTES;
        mc.mem
            .check(u64::from(base), n as u64)
            .map_err(|e| Self::fail(offset, format!("instructions: {e}")))?;
        let mut bytes = vec![0u8; n];
        mc.read(CacheId::Inst, u64::from(base), &mut bytes);
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let slots = isa::decode_program(&words);
        let insts: Vec<isa::Inst> = slots
            .iter()
            .filter_map(|s| s.as_ref().ok().cloned())
            .collect();
        let info = ProgramInfo::from_code(&insts);
        let key = (words, desc.uncached);
        if let Some(p) = self.compiled.get(&key) {
            return Ok((p.clone(), info, desc));
        }
        let program = Arc::new(frontend::build(
            &slots,
            frontend::Options::loaded(desc.uncached),
        ));
        self.compiled.insert(key, program.clone());
        Ok((program, info, desc))
    }

    fn uniforms(&self, mc: &Mc, info: &ProgramInfo, offset: usize) -> Result<Uniforms, PeError> {
        let mut u = Uniforms::default();
        let file = |base: Option<u32>,
                    size: u64,
                    count: usize,
                    used: &[u32],
                    what: &str,
                    cache: CacheId,
                    put: &mut dyn FnMut(usize, &[u8])|
         -> Result<(), PeError> {
            for c in 0..count {
                let mapped = base
                    .map(|b| u64::from(b) + size * c as u64)
                    .filter(|&a| mc.mem.check(a, size).is_ok());
                match mapped {
                    Some(a) => {
                        let mut b = [0u8; 16];
                        mc.read(cache, a, &mut b[..size as usize]);
                        put(c, &b[..size as usize]);
                    }
                    None if used.contains(&(c as u32)) => {
                        return Err(Self::fail(
                            offset,
                            match base {
                                None => format!("{what} {c} is used but no {what} memory is set"),
                                Some(b) => format!(
                                    "{what} {c} at {:#010x} is not in mapped memory",
                                    u64::from(b) + size * c as u64
                                ),
                            },
                        ));
                    }
                    None => {}
                }
            }
            Ok(())
        };
        let word = |b: &[u8], k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
        file(
            self.constf,
            16,
            CONSTS,
            &info.f32_consts,
            "float constant",
            CacheId::ConstF,
            &mut |c, b| u.consts[c] = [word(b, 0), word(b, 4), word(b, 8), word(b, 12)],
        )?;
        file(
            self.consti,
            4,
            INT_CONSTS,
            &info.i32_consts,
            "integer constant",
            CacheId::ConstI,
            &mut |c, b| {
                u.ints[c] = IntConst {
                    count: b[0],
                    init: b[1],
                    step: b[2] as i8,
                }
            },
        )?;
        file(
            self.constb,
            4,
            32,
            &[],
            "boolean constant",
            CacheId::ConstB,
            &mut |c, b| {
                if word(b, 0) != 0 {
                    u.bools |= 1 << c;
                }
            },
        )?;
        Ok(u)
    }

    fn check_surfaces(
        &self,
        mc: &Mc,
        info: &ProgramInfo,
        uncached: bool,
        offset: usize,
    ) -> Result<(), PeError> {
        let check = |what: String, s: &Surface| {
            mc.mem.check(u64::from(s.base), s.span()).map_err(|_| {
                Self::fail(
                    offset,
                    format!(
                        "{what} at {:#010x} ({} × {} elements of {}, {} bytes) is not inside one mapped arena",
                        s.base,
                        s.fmt.pitch,
                        s.height,
                        s.fmt.format,
                        s.span()
                    ),
                )
            })
        };
        for &k in &info.inputs {
            if let Some(s) = &self.inputs[k as usize & 15] {
                check(format!("input {k}"), s)?;
            }
        }
        for (k, s) in self.outputs.iter().enumerate() {
            if let Some(s) = s
                && (info.outputs.contains(&(k as u32)) || (uncached && k == 0))
            {
                check(format!("output {k}"), s)?;
            }
        }
        if self.co.needs_buffer(self.co.loc) {
            match &self.co.buffer {
                Some(s) => check("the conditional buffer".into(), s)?,
                None => {
                    return Err(Self::fail(
                        offset,
                        format!(
                            "the conditional test `{}` needs the conditional buffer, which is not set (set_cond_out_fmt)",
                            self.co.test
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Runs the program over the domain.
    pub(super) fn start(
        &mut self,
        mc: &mut Mc,
        offset: usize,
    ) -> Result<super::RunReport, PeError> {
        let (program, info, desc) = self.program(mc, offset)?;
        let uncached = desc.uncached;
        let uniforms = self.uniforms(mc, &info, offset)?;
        self.check_surfaces(mc, &info, uncached, offset)?;
        // One engine per worker thread, for the whole run.
        let mut engines = (0..self.settings.threads.max(1))
            .map(|_| self.settings.engine.make(self.settings.jit))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Self::fail(offset, e.0))?;
        let before = mc.diagnostics.counts();
        let mut report = RunReport::default();
        let d = self.domain;
        let v = self.cond_val;
        let co = self.co;

        // §6: the PE-side test decides which pairs run at all.
        let width = if d.is_empty() {
            0
        } else {
            (d.i1 - d.i0 + 1) as usize
        };
        let skipped: Option<Vec<bool>> = (co.loc == CondLoc::Pe && !d.is_empty()).then(|| {
            let mut s = Vec::with_capacity(width * (d.j1 - d.j0 + 1) as usize);
            for j in d.j0..=d.j1 {
                for i in d.i0..=d.i1 {
                    s.push(!co.test(mc, CondLoc::Pe, i, j, v));
                }
            }
            s
        });
        report.skipped = skipped
            .as_ref()
            .map_or(0, |s| s.iter().filter(|&&b| b).count() as u64);
        let skip_fn = |i: u32, j: u32| {
            skipped
                .as_ref()
                .is_some_and(|s| s[(j - d.j0) as usize * width + (i - d.i0) as usize])
        };
        let skip: Option<&(dyn Fn(u32, u32) -> bool + Sync)> =
            skipped.is_some().then_some(&skip_fn as _);

        let rows: Vec<u32> = if d.is_empty() {
            Vec::new()
        } else {
            (d.j0 / 2..=d.j1 / 2).collect()
        };
        let total_rows = rows.len() as u64;
        let out0 = uncached.then_some(self.outputs[0]).flatten();
        let mut hazards: Vec<Hazard> = Vec::new();
        let mut done = 0u64;
        for chunk in rows.chunks(CHUNK_ROWS) {
            let results = {
                let mc: &Mc = mc;
                run_chunk(chunk, &mut engines, &|engine: &mut dyn Engine, row: u32| {
                    let mut view = RunView::new(mc, &self.inputs, out0);
                    let mut pixels = Vec::new();
                    let mut runner = Runner {
                        program: &program,
                        engine,
                        uniforms: &uniforms,
                        options: self.settings.options,
                    };
                    let stats = runner.run_rows(
                        d,
                        v,
                        row..row + 1,
                        skip,
                        &mut view,
                        &mut |i, j, out: &PixelOut| pixels.push((i, j, out.clone())),
                    )?;
                    Ok(RowResult {
                        pixels,
                        writes: view.writes,
                        stats,
                    })
                })
            };
            for result in results {
                let row = result.map_err(|source| PeError::Run { offset, source })?;
                self.deliver(mc, row, &mut report, &mut hazards);
            }
            done += chunk.len() as u64;
            if let Some(p) = &self.settings.progress {
                p(done, total_rows);
            }
        }
        report.hazards = hazards;
        for e in &engines {
            report.engine.merge(&e.stats());
        }
        report.clocks = report.pixel_instructions.div_ceil(PROCESSORS);
        if self.counters.counting {
            self.counters.total += report.clocks;
            self.counters.active += report.clocks;
        }
        report.diagnostics = mc.diagnostics.counts().since(&before);
        Ok(report)
    }

    /// Delivers one row's results: CO at the DPP, outputs, uncached writes.
    fn deliver(
        &self,
        mc: &mut Mc,
        row: RowResult,
        report: &mut RunReport,
        hazards: &mut Vec<Hazard>,
    ) {
        for (i, j, out) in row.pixels {
            let vd = out.depth.unwrap_or(self.cond_val);
            if !self.co.test(mc, CondLoc::Dpp, i, j, vd) {
                report.discarded += 1;
                continue;
            }
            for (k, target) in out.targets.iter().enumerate() {
                let mut mask = 0u8;
                for (c, ch) in target.iter().enumerate() {
                    if ch.is_some() {
                        mask |= 1 << c;
                    }
                }
                mask &= self.out_mask;
                if mask == 0 {
                    continue;
                }
                match &self.outputs[k] {
                    Some(s) => mc.write_element(
                        CacheId::Output,
                        s,
                        i,
                        j,
                        target.map(|c| c.unwrap_or(0)),
                        mask,
                    ),
                    None => mc.note_unconfigured_output(),
                }
            }
        }
        for w in row.writes {
            let _ = mc.mem.write(w.addr, &w.bytes[..usize::from(w.len)]);
        }
        report.pixels += row.stats.pixels;
        report.killed += row.stats.killed;
        report.group_instructions += row.stats.group_instructions;
        report.pixel_instructions += row.stats.pixel_instructions;
        for h in row.stats.hazards {
            match hazards
                .iter_mut()
                .find(|e| e.kind == h.kind && e.pc == h.pc)
            {
                Some(e) => e.count += h.count,
                None => hazards.push(h),
            }
        }
    }
}

/// Runs `rows` (each through `run_row`), one worker thread per engine (at
/// most one per row); results come back in row order, up to and including
/// the first error.
fn run_chunk(
    rows: &[u32],
    engines: &mut [Box<dyn Engine + Send>],
    run_row: &(dyn Fn(&mut dyn Engine, u32) -> Result<RowResult, RunError> + Sync),
) -> Vec<Result<RowResult, RunError>> {
    let mut slots: Vec<Option<Result<RowResult, RunError>>> = Vec::new();
    slots.resize_with(rows.len(), || None);
    let threads = engines.len().min(rows.len());
    if threads <= 1 {
        if let Some(engine) = engines.first_mut() {
            for (slot, &r) in slots.iter_mut().zip(rows) {
                let res = run_row(&mut **engine, r);
                let stop = res.is_err();
                *slot = Some(res);
                if stop {
                    break;
                }
            }
        }
    } else {
        let next = AtomicUsize::new(0);
        let parts: Vec<Vec<(usize, Result<RowResult, RunError>)>> = std::thread::scope(|s| {
            let workers: Vec<_> = engines[..threads]
                .iter_mut()
                .map(|engine| {
                    let next = &next;
                    s.spawn(move || {
                        let mut mine = Vec::new();
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&r) = rows.get(k) else { break };
                            mine.push((k, run_row(&mut **engine, r)));
                        }
                        mine
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for (k, r) in parts.into_iter().flatten() {
            slots[k] = Some(r);
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in slots.into_iter().map_while(|r| r) {
        let stop = r.is_err();
        out.push(r);
        if stop {
            break;
        }
    }
    out
}
