//! `ctm run`: a program over a domain on files (also the preparation
//! `ctm bench` and `ctm trace` share).

use super::args::{CondLocArg, CondTestArg, EngineArg, OptArg, TierArg, parse_dims};
use super::data::{self, Form};
use super::{EXIT_HAZARDS, EXIT_OK, Error, Verbosity, say, summary, usage};
use clap::Args;
use ctm::kernel::{HostSurface, JobResult};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod prepare;

use prepare::Sink;
pub(super) use prepare::discard;
pub use prepare::{Prepared, prepare, prepare_as};

const RUN_ABOUT: &str = "\
How a program learns its pair: at start, temporary r0 = (i, j, v, 1.0) as
floats — i the column (0..W), j the row (0..H), v the conditional value
(--cond-val). Every other temporary starts at 0. Pairs run in 2×2 quads;
quad lanes outside the domain run as helpers and write nothing.

Data files: raw files are little-endian, row-major and tightly packed, each
element in the memory layout of its FORMAT: uint16_1 (u16, read as u/65535),
uint8_4 (bytes B,G,R,A, read as byte/255), float32_1, float32_2, float32_4
(f32 per channel). Inputs may also be PNG pictures (to uint8_4, float32_4 or
grey float32_1/uint16_1) or NumPy .npy arrays (float32 (H,W[,1|2|4]), uint8
(H,W,4) RGBA, uint16 (H,W)), recognised by content; outputs named *.npy or
*.png are written in that form. `-` reads standard input or writes standard
output. Output elements the program does not write stay zero (or keep
--output-init). The reference: docs/machine.md (formats, the CO), docs/isa.md.

Before anything runs, the program's notes are checked against the flags:
every input it reads, output it writes and loop constant it uses must be
bound. The largest domain is 8188×8188, and all surfaces of a run share
one 512 MiB arena: with one float32_4 output the largest square domain is
5792×5792 (an error says what fits). A group of quads stops after
--budget instructions (2^24 by default); the whole run after --timeout
seconds or --max-instructions instructions in all.

Exit status: 0 success, 1 the run failed (a fault, a runaway, a stop;
results not delivered), 2 what was typed or pointed at is wrong (flags,
files, the program, a job the checks refuse: an unbound input, output or
loop constant, a domain out of range), 3 hazards found (--check-hazards).";

/// Arguments of `ctm run`.
#[derive(Args, Debug)]
#[command(after_help = RUN_ABOUT)]
pub struct RunArgs {
    /// The program: ELF executable, DPP assembly, or a Direct3D 9 pixel
    /// shader as text or bytecode (`-`: standard input).
    #[arg(required = true)]
    program: Option<PathBuf>,
    /// The domain: W×H pairs (i in 0..W, j in 0..H); `x` or `×` between.
    #[arg(long, value_name = "WxH", value_parser = parse_dims, required = true)]
    domain: Option<(u32, u32)>,
    /// Bind input N (0–15): a raw file of W×H elements of FORMAT, or a
    /// PNG / .npy file (FORMAT optional, size from the file). Shaders: N
    /// may be the register (`v0`, `t1`, `s2`).
    #[arg(long = "input", value_name = "N=PATH[:FORMAT][:WxH]")]
    inputs: Vec<String>,
    /// Shaders: bind sampler sN's texture (as --input sN=…).
    #[arg(long = "sampler", value_name = "sN=PATH[:FORMAT][:WxH]")]
    samplers: Vec<String>,
    /// Write output N (0–3): domain-sized FORMAT elements; *.npy and *.png
    /// paths are written in that form, `-` to standard output. Shaders: N
    /// may be `oC0`–`oC3`.
    #[arg(long = "output", value_name = "N=PATH:FORMAT")]
    outputs: Vec<String>,
    /// Start output N from this file (raw, PNG or .npy; the domain's size)
    /// instead of zeros; also binds it (in the file's format) if --output
    /// does not.
    #[arg(long = "output-init", value_name = "N=PATH[:FORMAT]")]
    output_inits: Vec<String>,
    /// Float constant cN (0–255); shaders also `c3=…`, `vFace=…`.
    #[arg(long = "const", value_name = "N=x,y,z,w")]
    consts: Vec<String>,
    /// Integer constant iN (0–31): loop count, initial aL, aL step
    /// (a shader's `i0=…` gives its x, y, z).
    #[arg(long = "const-int", value_name = "N=count,init,step")]
    ints: Vec<String>,
    /// Boolean constant bN (0–31); shaders also `b0=…`.
    #[arg(long = "const-bool", value_name = "N=0|1")]
    bools: Vec<String>,
    /// Constants from a file: one `c3 = 1, 2, 3, 4`, `i0 = 9, 0, 1` or
    /// `b1 = 1` per line, `#` comments (flags given as well win).
    #[arg(long = "consts", value_name = "FILE")]
    consts_file: Option<PathBuf>,
    /// Conditional test: never less lequal equal gequal greater notequal always.
    #[arg(long, value_name = "NAME", requires = "cond_buffer")]
    cond_test: Option<CondTestArg>,
    /// The conditional buffer (domain-sized; raw or .npy); read before the
    /// run unless --cond-clear is given, written back after it.
    #[arg(long, value_name = "PATH:FORMAT", requires = "cond_test")]
    cond_buffer: Option<String>,
    /// Where the test applies: dpp (outputs of failing pairs are dropped) or
    /// pe (failing pairs do not run).
    #[arg(long, value_name = "dpp|pe", default_value = "dpp")]
    cond_loc: CondLocArg,
    /// Write the conditional value back to the buffer where the test passes.
    #[arg(long)]
    cond_write: bool,
    /// Start from a buffer filled with this value instead of reading the file.
    #[arg(long, value_name = "VALUE")]
    cond_clear: Option<f32>,
    /// The conditional value v handed to every pair (r0.b; tested unless the
    /// program writes its own).
    #[arg(long, value_name = "VALUE", default_value_t = 0.0)]
    cond_val: f32,
    /// Clause engine: auto = the JIT where the host CPU supports it.
    #[arg(long, value_name = "auto|interp|jit", default_value = "auto")]
    engine: EngineArg,
    /// Worker threads (default: all cores; never more than rows of quads);
    /// results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    threads: Option<u32>,
    /// JIT: Cranelift optimisation level of optimised code (auto: chosen
    /// per program).
    #[arg(long, value_name = "auto|none|speed", default_value = "auto")]
    opt_level: OptArg,
    /// JIT: quick code first and optimised code once the program proves
    /// hot (tiered), or only one of them.
    #[arg(long, value_name = "tiered|quick|optimised", default_value = "tiered")]
    tier: TierArg,
    /// JIT: quads per loop iteration of compiled clauses (0: chosen per clause).
    #[arg(long, value_name = "0|1|2|4", default_value_t = 0)]
    quads: u8,
    /// Print what the engine did: compilation, clauses run natively and
    /// interpreted (fallbacks). Also with -v.
    #[arg(long)]
    stats: bool,
    /// Report texture-semaphore hazards (reads of fetches in flight, …);
    /// exit status 3 when there are any.
    #[arg(long)]
    check_hazards: bool,
    /// Write output N as a PNG: 4 channels RGBA, 2 as RGB (blue 0), 1 grey;
    /// values LO..HI (default 0..1) map to black..white. Binds output N as
    /// float32_4 if --output does not.
    #[arg(long = "png", value_name = "N=PATH[:LO..HI]")]
    pngs: Vec<String>,
    /// Print the outputs as text, one element per line (at most 4096
    /// elements each).
    #[arg(long)]
    print: bool,
    /// Model the caches strictly (missing flushes/invalidates become visible).
    #[arg(long)]
    strict_caches: bool,
    #[command(flatten)]
    limits: super::Limits,
    /// Also write the command stream and memory images this run builds
    /// into DIR, with the `ctm exec` line that replays it (replay.sh).
    #[arg(long, value_name = "DIR")]
    emit_cmdbuf: Option<PathBuf>,
}

impl RunArgs {
    /// The program's path (the flags require it; `ctm bench suite` takes
    /// none).
    pub(super) fn program(&self) -> Result<&Path, Error> {
        match &self.program {
            Some(p) => Ok(p),
            None => usage("no program given"),
        }
    }
}

fn write_sink(s: &mut Sink, surface: &HostSurface) -> Result<(), Error> {
    let bytes = match s.form {
        Form::Raw => surface.data.clone(),
        Form::Npy => data::npy_bytes(surface),
        Form::Png => super::picture::png_bytes(surface, s.range)?,
    };
    match &mut s.file {
        Some(f) => {
            f.write_all(&bytes)
                .and_then(|()| f.flush())
                .map_err(|e| format!("{}: {e}", s.path.display()))?;
            if let Some(t) = s.temp.take() {
                std::fs::rename(&t, &s.path).map_err(|e| {
                    let _ = std::fs::remove_file(&t);
                    format!("{}: {e}", s.path.display())
                })?;
            }
            Ok(())
        }
        None => data::write_to(Path::new("-"), &bytes),
    }
}

/// Writes a finished run's outputs where the flags said.
pub(super) fn deliver(p: &mut Prepared, result: &JobResult) -> Result<(), Error> {
    let delivered = deliver_all(p, result);
    // Temporary files not renamed (an output the run did not produce, or
    // a failed write) go.
    discard(p);
    delivered
}

fn deliver_all(p: &mut Prepared, result: &JobResult) -> Result<(), Error> {
    for s in &mut p.sinks {
        if let Some(surface) = result.output(s.n) {
            write_sink(s, surface)?;
        }
    }
    if let (Some(s), Some(surface)) = (&mut p.cond, &result.cond) {
        write_sink(s, surface)?;
    }
    if p.print {
        let mut text = String::new();
        for (n, s) in &result.outputs {
            text += &data::print_surface(*n, s);
        }
        super::print(&text)?;
    }
    Ok(())
}

/// `ctm run`.
pub fn run(a: RunArgs, v: Verbosity) -> Result<u8, Error> {
    let mut p = prepare(&a, v)?;
    let bar = super::progress_bar(v.quiet);
    if let Some((_, progress)) = &bar {
        p.job.settings_mut().progress = Some(progress.clone());
    }
    if v.verbose {
        say(format_args!(
            "{}: {} instructions on {} with {} thread(s), domain {}×{}",
            p.program.display(),
            p.kernel.exe.len(),
            p.job.settings().engine,
            p.job.settings().threads,
            p.job.size().0,
            p.job.size().1
        ));
    }
    let start = Instant::now();
    let result = match &a.emit_cmdbuf {
        Some(dir) => p
            .kernel
            .stage(&p.job)
            .map_err(Error::from)
            .and_then(|staged| {
                super::emit::emit(dir, &staged, &p.kernel.exe, &p.job)?;
                Ok(staged.run()?)
            }),
        None => p.kernel.run(&p.job).map_err(Error::from),
    };
    if let Some((b, _)) = &bar {
        b.finish_and_clear();
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            discard(&p);
            return Err(e);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    deliver(&mut p, &result)?;
    let report = &result.report;
    if !v.quiet {
        say(summary(report, seconds));
    }
    if a.stats || v.verbose {
        say(super::engine_stats(p.job.settings().engine, &report.engine));
    }
    for hz in &report.hazards {
        say(format_args!("hazard: {hz}"));
    }
    Ok(if report.hazards.is_empty() {
        EXIT_OK
    } else {
        EXIT_HAZARDS
    })
}
