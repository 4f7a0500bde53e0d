//! Measuring a kernel: interpreter against JIT on the same job, compile
//! time, thread scaling and the share of the exact MAD ceiling (and of the
//! F32X4 FMA peak). Used by `ctm bench` and by the benchmarks in
//! `benches/`; [`suite`] holds the bundled benchmark kernels.
//!
//! Every rate is in pixel-instructions per second (instructions executed ×
//! pairs running them) and is the best of `repeat` runs. Before timing, the
//! JIT's results are compared with the interpreter's; a difference is an
//! error, never a number.

use crate::check::{self, Observed};
use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, JobResult, Kernel, KernelError};
use ctm::{frontend, isa};
use ctm_jit::compile::{JitOptions, Tier, compile};
use ctm_jit::ir::{Binary, Op, Program, Unary};
use std::time::Instant;

pub mod suite;

/// How to measure.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Runs per measurement (the best counts).
    pub repeat: usize,
    /// Threads for the scaling measurement (1 → skipped).
    pub threads: usize,
    /// JIT options.
    pub jit: JitOptions,
    /// Loop trips of the FMA peak and MAD ceiling micro-benchmarks (0 →
    /// skipped).
    pub peak_iterations: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            repeat: 3,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            jit: JitOptions::default(),
            peak_iterations: 50_000_000,
        }
    }
}

/// What was measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchReport {
    /// Pixel-instructions of one run.
    pub pixel_instructions: u64,
    /// Interpreter, one thread: pixel-instructions per second.
    pub interp_pixinst_per_s: f64,
    /// JIT, one thread.
    pub jit_pixinst_per_s: f64,
    /// JIT, `threads` threads (whole runs).
    pub jit_threads_pixinst_per_s: f64,
    /// Threads of that measurement.
    pub threads: usize,
    /// JIT rates of whole runs at 1, 2, 4, … threads and at `threads`
    /// (pixel-instructions per second).
    pub scaling: Vec<(usize, f64)>,
    /// The same for a prepared job's re-runs: the run itself, without the
    /// device set-up and read-back a whole `Kernel::run` adds.
    pub rerun_scaling: Vec<(usize, f64)>,
    /// Pixels of the domain.
    pub pixels: u64,
    /// Compile time per DPP instruction (µs) of the code a run starts
    /// with (quick code where the options tier up): the program's, plus
    /// its strip where it runs in compiled strips; the best of
    /// [`COMPILE_TRIES`] (or `repeat`, if more) compilations after the
    /// process's first (other bodies compiled on first use, such as the
    /// general ones, are not included).
    pub compile_us_per_inst: f64,
    /// The same for optimised code ([`Tier::Optimised`]), which a tiered
    /// program compiles in the background once it proves hot.
    pub optimised_compile_us_per_inst: f64,
    /// The process's first compilation of the program (µs per
    /// instruction): also sets Cranelift's target up and warms its code.
    pub first_compile_us_per_inst: f64,
    /// DPP instructions compiled.
    pub instructions: u32,
    /// Clauses left to the interpreter.
    pub fallback_clauses: usize,
    /// Arithmetic per pixel-instruction, counted statically from the IR
    /// (MAD 2, DOT 2 per pair, other arithmetic 1): an estimate for
    /// programs with branches, exact for straight-line ones.
    pub flops_per_pixinst: f64,
    /// The F32X4 FMA peak of one core, GFLOP/s (0 if not measured).
    pub fma_peak_gflops: f64,
    /// A prepared job ([`Kernel::prepare`]) on one thread, ns per pixel:
    /// placing it and its first run.
    pub prepared_first_ns_per_pixel: f64,
    /// The same prepared job's runs 2..N (the best), ns per pixel.
    pub prepared_rerun_ns_per_pixel: f64,
    /// The exact MAD ceiling of one core (F32X4 multiply, then separately
    /// rounded add), GFLOP/s (0 if not measured).
    pub mad_ceiling_gflops: f64,
}

impl BenchReport {
    /// JIT over interpreter, one thread each.
    pub fn jit_over_interp(&self) -> f64 {
        self.jit_pixinst_per_s / self.interp_pixinst_per_s.max(1e-9)
    }

    /// Nanoseconds per pixel of a whole JIT run on one thread (set-up, run
    /// and read-back included): the per-pixel fixed cost on tiny kernels.
    pub fn ns_per_pixel(&self) -> f64 {
        1e9 * self.pixel_instructions as f64
            / self.jit_pixinst_per_s.max(1e-9)
            / self.pixels.max(1) as f64
    }

    /// N threads over one thread (JIT, whole runs).
    pub fn thread_speedup(&self) -> f64 {
        self.jit_threads_pixinst_per_s / self.jit_pixinst_per_s.max(1e-9)
    }

    /// N threads over one thread (JIT, a prepared job's re-runs).
    pub fn rerun_thread_speedup(&self) -> f64 {
        match (self.rerun_scaling.first(), self.rerun_scaling.last()) {
            (Some(one), Some(n)) => n.1 / one.1.max(1e-9),
            _ => 0.0,
        }
    }

    /// The JIT's estimated arithmetic rate as a fraction of the FMA peak.
    pub fn fraction_of_fma_peak(&self) -> f64 {
        if self.fma_peak_gflops <= 0.0 {
            return 0.0;
        }
        self.jit_pixinst_per_s * self.flops_per_pixinst / (self.fma_peak_gflops * 1e9)
    }

    /// The JIT's estimated arithmetic rate as a fraction of the exact MAD
    /// ceiling: for a kernel of MADs, the share of the most MAD
    /// pixel-instructions one core can retire with the DPP's rounding.
    pub fn fraction_of_ceiling(&self) -> f64 {
        if self.mad_ceiling_gflops <= 0.0 {
            return 0.0;
        }
        self.jit_pixinst_per_s * self.flops_per_pixinst / (self.mad_ceiling_gflops * 1e9)
    }

    /// One JSON object.
    pub fn to_json(&self) -> String {
        format!(
            concat!(
                "{{\"pixel_instructions\": {}, \"interp_pixinst_per_s\": {:.0}, ",
                "\"jit_pixinst_per_s\": {:.0}, \"jit_over_interp\": {:.2}, ",
                "\"compile_us_per_inst\": {:.2}, \"optimised_compile_us_per_inst\": {:.2}, ",
                "\"first_compile_us_per_inst\": {:.2}, ",
                "\"instructions\": {}, \"fallback_clauses\": {}, ",
                "\"threads\": {}, \"jit_threads_pixinst_per_s\": {:.0}, \"thread_speedup\": {:.2}, ",
                "\"flops_per_pixinst\": {:.2}, \"fma_peak_gflops\": {:.2}, \"fraction_of_fma_peak\": {:.3}, ",
                "\"mad_ceiling_gflops\": {:.2}, \"fraction_of_ceiling\": {:.3}, ",
                "\"ns_per_pixel\": {:.2}, \"prepared_first_ns_per_pixel\": {:.2}, ",
                "\"prepared_rerun_ns_per_pixel\": {:.2}, \"rerun_thread_speedup\": {:.2}, \"scaling\": [{}], \"rerun_scaling\": [{}]}}"
            ),
            self.pixel_instructions,
            self.interp_pixinst_per_s,
            self.jit_pixinst_per_s,
            self.jit_over_interp(),
            self.compile_us_per_inst,
            self.optimised_compile_us_per_inst,
            self.first_compile_us_per_inst,
            self.instructions,
            self.fallback_clauses,
            self.threads,
            self.jit_threads_pixinst_per_s,
            self.thread_speedup(),
            self.flops_per_pixinst,
            self.fma_peak_gflops,
            self.fraction_of_fma_peak(),
            self.mad_ceiling_gflops,
            self.fraction_of_ceiling(),
            self.ns_per_pixel(),
            self.prepared_first_ns_per_pixel,
            self.prepared_rerun_ns_per_pixel,
            self.rerun_thread_speedup(),
            self.scaling
                .iter()
                .map(|(t, r)| format!("{{\"threads\": {t}, \"jit_pixinst_per_s\": {r:.0}}}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.rerun_scaling
                .iter()
                .map(|(t, r)| format!("{{\"threads\": {t}, \"jit_pixinst_per_s\": {r:.0}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "pixel-instructions per run   {}",
            self.pixel_instructions
        )?;
        writeln!(
            f,
            "interpreter (1 thread)       {:>10.1} M/s",
            self.interp_pixinst_per_s / 1e6
        )?;
        writeln!(
            f,
            "JIT (1 thread)               {:>10.1} M/s   {:.1}× the interpreter",
            self.jit_pixinst_per_s / 1e6,
            self.jit_over_interp()
        )?;
        for &(t, rate) in self.scaling.iter().filter(|s| s.0 > 1) {
            writeln!(
                f,
                "JIT ({t:>2} threads)             {:>10.1} M/s   {:.2}× one thread",
                rate / 1e6,
                rate / self.jit_pixinst_per_s.max(1e-9)
            )?;
        }
        let one = self.rerun_scaling.first().map_or(0.0, |s| s.1);
        for &(t, rate) in &self.rerun_scaling {
            writeln!(
                f,
                "JIT ({t:>2} threads), re-runs  {:>10.1} M/s   {:.2}× one thread",
                rate / 1e6,
                rate / one.max(1e-9)
            )?;
        }
        writeln!(
            f,
            "JIT per pixel (1 thread)     {:>10.1} ns (a whole run: set-up, run, read-back)",
            self.ns_per_pixel()
        )?;
        writeln!(
            f,
            "JIT per pixel, prepared      {:>10.1} ns the first run (set-up included), {:.1} ns runs 2..N",
            self.prepared_first_ns_per_pixel, self.prepared_rerun_ns_per_pixel
        )?;
        writeln!(
            f,
            "compile                      {:>10.2} µs per instruction ({} instructions, {} fallback clauses; {:.2} the first time in the process; optimised code {:.2})",
            self.compile_us_per_inst,
            self.instructions,
            self.fallback_clauses,
            self.first_compile_us_per_inst,
            self.optimised_compile_us_per_inst
        )?;
        if self.mad_ceiling_gflops > 0.0 {
            writeln!(
                f,
                "exact MAD ceiling (1 core)   {:>10.1} GFLOP/s; JIT at ≈{:.1}% of it",
                self.mad_ceiling_gflops,
                100.0 * self.fraction_of_ceiling(),
            )?;
        }
        if self.fma_peak_gflops > 0.0 {
            writeln!(
                f,
                "F32X4 FMA peak (1 core)      {:>10.1} GFLOP/s; JIT at ≈{:.1}% of it ({:.1} flops per pixel-instruction)",
                self.fma_peak_gflops,
                100.0 * self.fraction_of_fma_peak(),
                self.flops_per_pixinst
            )?;
        }
        Ok(())
    }
}

/// Why a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A run failed.
    #[error(transparent)]
    Run(#[from] KernelError),
    /// The JIT could not compile.
    #[error(transparent)]
    Jit(#[from] ctm_jit::compile::JitError),
    /// The engines disagree.
    #[error("the JIT's results differ from the interpreter's; not measuring a wrong answer\n{0}")]
    Mismatch(String),
}

/// The clause IR `kernel` runs as.
pub fn program_of(kernel: &Kernel) -> Program {
    frontend::build(
        &isa::decode_program(&kernel.exe.code),
        frontend::Options::loaded(kernel.exe.info.uncached()),
    )
}

/// The clause IR `kernel` runs as on `job`: as the PE builds it, with the
/// forms of the job's inputs, which render targets are float32_1 and, for
/// an uncached program, whether output 0 is unorm, which its compiled code
/// assumes.
pub fn program_for(kernel: &Kernel, job: &Job) -> Program {
    let narrow = ctm::mc::narrow_targets([0, 1, 2, 3].map(|t| job.requested_output(t)));
    let mut program = frontend::build(
        &isa::decode_program(&kernel.exe.code),
        frontend::Options {
            narrow: Some(narrow),
            ..frontend::Options::loaded(kernel.exe.info.uncached())
        },
    );
    for (n, form) in program.forms.iter_mut().enumerate() {
        if let Some(s) = job.bound_input(n as u8) {
            *form = ctm::mc::input_form(s.format);
        }
    }
    if kernel.exe.info.uncached() {
        program.uncached_unorm = job
            .requested_output(0)
            .map(|f| ctm::mc::input_form(f).unorm);
    }
    program
}

/// Static arithmetic per instruction of `program` (see
/// [`BenchReport::flops_per_pixinst`]).
pub fn flops_per_instruction(program: &Program) -> f64 {
    let mut flops = 0u64;
    for c in &program.clauses {
        for n in &c.nodes {
            flops += match &n.op {
                Op::Mad { .. } => 2,
                Op::Dot { pairs, addend, .. } => {
                    2 * pairs.len() as u64 + u64::from(addend.is_some())
                }
                Op::Binary { op, .. } if !matches!(op, Binary::Min | Binary::Max) => 1,
                Op::Unary { op, .. }
                    if !matches!(
                        op,
                        Unary::Neg
                            | Unary::Abs
                            | Unary::Nab
                            | Unary::Canon
                            | Unary::Omod(_)
                            | Unary::Clamp
                    ) =>
                {
                    1
                }
                _ => 0,
            };
        }
    }
    let insts: u64 = program.clauses.iter().map(|c| u64::from(c.len)).sum();
    flops as f64 / insts.max(1) as f64
}

/// Least time the whole runs (or the back-to-back re-runs) of one
/// measurement take, when `repeat` runs are quicker: a short run's best of
/// three varies by half with what ran before it.
const MIN_TIMED: std::time::Duration = std::time::Duration::from_millis(100);

/// The best time of whole runs of `job`: `repeat` runs, more while they
/// have taken less than [`MIN_TIMED`] (at most 1000).
fn timed(kernel: &Kernel, job: &Job, repeat: usize) -> Result<(f64, JobResult), KernelError> {
    let (best, last) = best_of_runs(repeat.max(1), || kernel.run(job))?;
    Ok((best, last.expect("at least one run")))
}

/// `run` called `at_least` times, more while the calls have taken less than
/// [`MIN_TIMED`] (at most 1000 in all): the best call's time in seconds and
/// the last call's result.
fn best_of_runs<T, E>(
    at_least: usize,
    run: impl FnMut() -> Result<T, E>,
) -> Result<(f64, Option<T>), E> {
    best_within(at_least, MIN_TIMED, run)
}

/// [`best_of_runs`] for at least `window` (at most 1000 calls).
fn best_within<T, E>(
    at_least: usize,
    window: std::time::Duration,
    mut run: impl FnMut() -> Result<T, E>,
) -> Result<(f64, Option<T>), E> {
    let (mut best, mut last) = (f64::INFINITY, None);
    let begin = Instant::now();
    let mut runs = 0;
    while runs < at_least || (begin.elapsed() < window && runs < 1000) {
        let start = Instant::now();
        last = Some(run()?);
        best = best.min(start.elapsed().as_secs_f64());
        runs += 1;
    }
    Ok((best, last))
}

/// Most rounds in which the prepared jobs of every thread count take turns
/// at their back-to-back re-runs (fewer where a run is long: at least
/// three). On a shared machine the speed of one core changes by half
/// within seconds, so thread counts timed one after the other were
/// compared at different speeds; taking turns gives each count its best
/// moments from the same stretch of time.
const ROUNDS: f64 = 20.0;

/// The first run of a prepared job of `jobs[0]` (placing included) and
/// the best re-run of a prepared job of each of `jobs`, in seconds. Each
/// job's first `repeat` re-runs (at least three) are checked against
/// `want`; then the jobs take turns ([`ROUNDS`]) at re-runs that follow
/// one another, as a program running a kernel over and over runs them, for
/// at least [`MIN_TIMED`] each in all, and each job's last outputs are
/// checked.
fn reruns(
    kernel: &Kernel,
    jobs: &[Job],
    want: &JobResult,
    repeat: usize,
) -> Result<(f64, Vec<f64>), BenchError> {
    let check = |prepared: &ctm::kernel::Prepared| {
        let got = want.outputs.iter().map(|(k, _)| (*k, prepared.output(*k)));
        agree(want, got, "jit, prepared job")
    };
    let mut first = 0.0;
    let mut prepared = Vec::with_capacity(jobs.len());
    let mut best = vec![f64::INFINITY; jobs.len()];
    for (i, job) in jobs.iter().enumerate() {
        let start = Instant::now();
        let mut p = kernel.prepare(job)?;
        p.run()?;
        if i == 0 {
            first = start.elapsed().as_secs_f64();
        }
        for _ in 0..repeat.max(3) {
            let start = Instant::now();
            p.run()?;
            best[i] = best[i].min(start.elapsed().as_secs_f64());
            check(&p)?;
        }
        prepared.push(p);
    }
    let rounds = (MIN_TIMED.as_secs_f64() / best[0]).clamp(3.0, ROUNDS) as u32;
    for _ in 0..rounds {
        for (p, best) in prepared.iter_mut().zip(&mut best) {
            let (t, _) = best_within(1, MIN_TIMED / rounds, || p.run())?;
            *best = best.min(t);
        }
    }
    for p in &prepared {
        check(p)?;
    }
    Ok((first, best))
}

/// Checks outputs (`None`: not there) against the interpreter's, with the
/// comparator's report when they differ.
fn agree(
    want: &JobResult,
    got: impl Iterator<Item = (u8, Option<HostSurface>)>,
    what: &str,
) -> Result<(), BenchError> {
    let got: Vec<(u8, Option<HostSurface>)> = got.collect();
    // Equal bytes are equal bit patterns: the common case costs one
    // comparison, and the comparator's entries — a few hundred thousand
    // strings for a large output, enough to disturb the next timed run —
    // are built only to report a difference.
    let same = got.len() == want.outputs.len()
        && want
            .outputs
            .iter()
            .zip(&got)
            .all(|((k, s), (g, t))| k == g && t.as_ref() == Some(s));
    if same {
        return Ok(());
    }
    let (mut a, mut b) = (Observed::default(), Observed::default());
    for (k, s) in &want.outputs {
        a.surface(&format!("output {k}"), s);
    }
    for (k, s) in got {
        match s {
            Some(s) => b.surface(&format!("output {k}"), &s),
            None => b.text(&format!("output {k}"), (0, 0), "", "(missing)".into()),
        }
    }
    match check::report(&a, &b, "interp", what) {
        None => Ok(()),
        Some(r) => Err(BenchError::Mismatch(r)),
    }
}

/// Compilations a compile time is the best of, at least: a compile takes
/// a fraction of a millisecond, and on a shared machine the best of three
/// varied by a third between runs of the bench.
pub const COMPILE_TRIES: usize = 10;

/// `program` compiled with `jit`, and what a run of it compiles before its
/// rows run: the code compiled with the program, plus, for a program that
/// runs in compiled strips, the strip (compiled on first use; its clauses'
/// own bodies are then compiled only for rows a strip does not run).
fn run_compile(
    program: &Program,
    jit: JitOptions,
) -> Result<(ctm_jit::compile::Compiled, std::time::Duration), BenchError> {
    let code = compile(program, jit)?;
    let strip = code
        .strip(program, 0)
        .and_then(|(r, took)| r.ok().and(took))
        .unwrap_or_default();
    let took = code.compile_time + strip;
    Ok((code, took))
}

/// Measures `kernel` on `job` (whose engine and thread settings are
/// replaced).
pub fn measure(kernel: &Kernel, job: &Job, opts: BenchOptions) -> Result<BenchReport, BenchError> {
    measure_with_result(kernel, job, opts).map(|(r, _)| r)
}

/// [`measure`], also returning the job's result (the JIT's, checked equal
/// to the interpreter's).
pub fn measure_with_result(
    kernel: &Kernel,
    job: &Job,
    opts: BenchOptions,
) -> Result<(BenchReport, JobResult), BenchError> {
    let program = program_for(kernel, job);
    let (code, took) = run_compile(&program, opts.jit)?;
    let per_inst =
        |t: std::time::Duration| t.as_secs_f64() * 1e6 / f64::from(code.instructions.max(1));
    let first_compile = per_inst(took);
    let best_of = |jit: JitOptions| -> Result<f64, BenchError> {
        let mut best = f64::INFINITY;
        for _ in 0..opts.repeat.max(COMPILE_TRIES) {
            best = best.min(per_inst(run_compile(&program, jit)?.1));
        }
        Ok(best)
    };
    let best_compile = best_of(opts.jit)?;
    let optimised_compile = match opts.jit.tier {
        Tier::Optimised => best_compile,
        _ => best_of(JitOptions {
            tier: Tier::Optimised,
            ..opts.jit
        })?,
    };
    let mut job = job.clone();
    job.settings_mut().progress = None;
    job.settings_mut().jit = opts.jit;
    job.settings_mut().threads = 1;
    job.settings_mut().engine = EngineKind::Interp;
    let (ti, want) = timed(kernel, &job, opts.repeat)?;
    job.settings_mut().engine = EngineKind::Jit;
    // Check the answer of the code a run starts with, then time the code
    // runs settle on: a tiered program's optimised code (the same code
    // as `Tier::Optimised`), checked too.
    let first = kernel.run(&job)?;
    let (a, b) = (Observed::job(Ok(&want)), Observed::job(Ok(&first)));
    if let Some(r) = check::report(&a, &b, "interp", "jit") {
        return Err(BenchError::Mismatch(r));
    }
    if opts.jit.tier == Tier::Tiered {
        job.settings_mut().jit.tier = Tier::Optimised;
        let settled = kernel.run(&job)?;
        let (a, b) = (Observed::job(Ok(&want)), Observed::job(Ok(&settled)));
        if let Some(r) = check::report(&a, &b, "interp", "jit, optimised") {
            return Err(BenchError::Mismatch(r));
        }
    }
    let (tj, _) = timed(kernel, &job, opts.repeat)?;
    let (w, h) = job.size();
    let pixels = f64::from(w) * f64::from(h);
    let mut counts = vec![1];
    counts.extend(
        std::iter::successors(Some(2usize), |t| t.checked_mul(2)).take_while(|&t| t < opts.threads),
    );
    if opts.threads > 1 {
        counts.push(opts.threads);
    }
    let jobs: Vec<Job> = (counts.iter())
        .map(|&t| {
            let mut job = job.clone();
            job.settings_mut().threads = t;
            job
        })
        .collect();
    let (prepared_first, rerun) = reruns(kernel, &jobs, &want, opts.repeat)?;
    let n = want.report.pixel_instructions as f64;
    let mut report = BenchReport {
        pixel_instructions: want.report.pixel_instructions,
        interp_pixinst_per_s: n / ti.max(1e-9),
        jit_pixinst_per_s: n / tj.max(1e-9),
        threads: 1,
        compile_us_per_inst: best_compile,
        optimised_compile_us_per_inst: optimised_compile,
        first_compile_us_per_inst: first_compile,
        instructions: code.instructions,
        fallback_clauses: code.fallbacks(),
        flops_per_pixinst: flops_per_instruction(&program),
        prepared_first_ns_per_pixel: 1e9 * prepared_first / pixels.max(1.0),
        prepared_rerun_ns_per_pixel: 1e9 * rerun[0] / pixels.max(1.0),
        ..BenchReport::default()
    };
    report.pixels = u64::from(w) * u64::from(h);
    report.scaling.push((1, report.jit_pixinst_per_s));
    report.jit_threads_pixinst_per_s = report.jit_pixinst_per_s;
    for (&t, &tr) in counts.iter().zip(&rerun) {
        report.rerun_scaling.push((t, n / tr.max(1e-9)));
    }
    for (t, job) in counts.into_iter().zip(jobs).skip(1) {
        let (tn, r) = timed(kernel, &job, opts.repeat)?;
        let got = r.outputs.iter().map(|(k, s)| (*k, Some(s.clone())));
        agree(&want, got, &format!("jit, {t} threads"))?;
        report.scaling.push((t, n / tn.max(1e-9)));
        report.threads = t;
        report.jit_threads_pixinst_per_s = n / tn.max(1e-9);
    }
    if opts.peak_iterations > 0 {
        report.fma_peak_gflops = crate::peak::fma_peak_gflops(opts.peak_iterations)?;
        report.mad_ceiling_gflops = crate::peak::mad_peak_gflops(opts.peak_iterations)?;
    }
    Ok((report, first))
}
