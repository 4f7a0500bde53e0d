//! `ctm run`: a program over a domain on files (also the preparation
//! `ctm bench` and `ctm trace` share).

use super::args::{
    CondLocArg, CondTestArg, EngineArg, OptArg, int_const, numbers, parse_dims, parse_range,
    path_format, path_format_dims, split_named,
};
use super::data::{self, Form};
use super::{EXIT_HAZARDS, EXIT_OK, Error, Verbosity, say, settings, summary, usage, warn};
use clap::Args;
use ctm::JitOptions;
use ctm::co::{CondLoc, CondTest};
use ctm::kernel::{
    CondSetup, HostSurface, Job, JobResult, JobWarning, Kernel, KernelError, Resource, Unbound,
};
use ctm::mc::{CacheMode, Format};
use ctm::program;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
    /// JIT: Cranelift optimisation level (auto: chosen per program).
    #[arg(long, value_name = "auto|none|speed", default_value = "auto")]
    opt_level: OptArg,
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

/// Where an output goes.
struct Sink {
    n: u8,
    path: PathBuf,
    form: Form,
    range: (f32, f32),
    /// Where the results are written, opened before the run (None:
    /// standard output).
    file: Option<File>,
    /// The temporary file `file` is, renamed over `path` once written
    /// (None: `path` is not a regular file — a device, a pipe — and is
    /// written in place).
    temp: Option<PathBuf>,
}

/// Opens where the results for `path` go, before the run: a fresh
/// temporary file beside it that replaces it only once completely
/// written, so a failed run never truncates or half-writes a file; a
/// device or a pipe is opened as it is.
fn open_sink(path: &Path) -> Result<(File, Option<PathBuf>), Error> {
    let temp = data::temp_beside(path);
    let mut options = File::options();
    match &temp {
        Some(_) => options.write(true).create_new(true),
        None => options.write(true),
    };
    let file = options.open(temp.as_deref().unwrap_or(path)).map_err(|e| {
        // Say that it is an output that cannot be written, and why in
        // the user's terms, not only the system's.
        let why = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
                format!("the folder {} does not exist", dir.display())
            }
            _ => e.to_string(),
        };
        format!("cannot write the output {}: {why}", path.display())
    })?;
    Ok((file, temp))
}

/// A `ctm run` job: the kernel, the job and where results go.
pub struct Prepared {
    /// The kernel.
    pub kernel: Kernel,
    /// The job.
    pub job: Job,
    sinks: Vec<Sink>,
    cond: Option<Sink>,
    print: bool,
    program: PathBuf,
}

fn jit_options(a: &RunArgs) -> Result<JitOptions, Error> {
    super::args::jit_options(a.opt_level, a.quads)
}

/// An input-like binding `PATH[:FORMAT][:WxH]` read now.
fn read_binding(rest: &str, spec: &str, dims: Option<(u32, u32)>) -> Result<HostSurface, Error> {
    let (path, format, given) = path_format_dims(rest);
    if path.as_os_str().is_empty() {
        return usage(format!("`{spec}`: no file named"));
    }
    let bytes = data::read_all(&path)?;
    data::decode(&bytes, &path.display().to_string(), format, given.or(dims))
}

/// Reads every file, parses every flag and checks the job against the
/// program — all before anything runs.
pub fn prepare(a: &RunArgs, v: Verbosity) -> Result<Prepared, Error> {
    prepare_as(a, v, false)
}

/// [`prepare`]; for a trace (`tracing`), outputs the program writes but
/// the flags do not bind are bound as float32_4 and no file is opened.
pub fn prepare_as(a: &RunArgs, v: Verbosity, tracing: bool) -> Result<Prepared, Error> {
    prepare_job(a, v, tracing).map_err(super::as_usage)
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

fn prepare_job(a: &RunArgs, v: Verbosity, tracing: bool) -> Result<Prepared, Error> {
    let path = a.program()?;
    let loaded = program::load(path, false)?;
    let name = path.display();
    for w in &loaded.warnings {
        warn(
            v,
            format_args!("{name}: offset {:#x}: {}", w.offset, w.message),
        );
    }
    for w in program::validate(&loaded.exe.code, loaded.exe.info.uncached()) {
        warn(v, format_args!("{name}: {w}"));
    }
    let Some((w, h)) = a.domain else {
        return usage("no --domain given");
    };
    let mut job = Job::new(w, h);
    job.settings = settings(
        a.engine,
        a.threads.map(|t| t as usize),
        a.check_hazards,
        &a.limits,
    )?;
    job.settings.jit = jit_options(a)?;
    job.cache_mode = if a.strict_caches {
        CacheMode::Strict
    } else {
        CacheMode::Coherent
    };
    job.cond_val = a.cond_val;
    let names = loaded.exe.info.bindings.clone();
    for (flag, spec) in a
        .inputs
        .iter()
        .map(|s| ("--input", s))
        .chain(a.samplers.iter().map(|s| ("--sampler", s)))
    {
        let (n, rest) = split_named(spec, flag, 15, "in", &names)?;
        job = job.input(n as u8, read_binding(rest, spec, None)?);
    }
    let mut sinks = Vec::new();
    let mut stdout_used = false;
    let mut sink = |n: u8, path: PathBuf, form: Form, range| -> Result<Sink, Error> {
        if path == Path::new("-") && std::mem::replace(&mut stdout_used, true) {
            return usage("only one output can go to standard output (`-`)");
        }
        if form == Form::Png && !cfg!(feature = "png") {
            return usage(super::picture::without(&path.display().to_string()));
        }
        Ok(Sink {
            n,
            path,
            form,
            range,
            file: None,
            temp: None,
        })
    };
    for spec in &a.outputs {
        let (n, rest) = split_named(spec, "--output", 3, "out", &names)?;
        let (path, format) = path_format(rest, spec)?;
        if job.outputs.iter().any(|&(k, _)| usize::from(k) == n) {
            return usage(format!("--output `{spec}`: output {n} is already bound"));
        }
        job = job.output(n as u8, format);
        let form = Form::of_path(&path);
        sinks.push(sink(n as u8, path, form, (0.0, 1.0))?);
    }
    for spec in &a.output_inits {
        let (n, rest) = split_named(spec, "--output-init", 3, "out", &names)?;
        let bound = job
            .outputs
            .iter()
            .find(|&&(k, _)| usize::from(k) == n)
            .map(|o| o.1);
        let (path, format, _) = path_format_dims(rest);
        let s = data::decode(
            &data::read_all(&path)?,
            &path.display().to_string(),
            format.or(bound),
            Some((w, h)),
        )?;
        if let Some(f) = bound
            && f != s.format
        {
            return usage(format!(
                "--output-init `{spec}`: output {n} is {f}, the file {}",
                s.format
            ));
        }
        job.outputs.retain(|&(k, _)| usize::from(k) != n);
        job = job.output_init(n as u8, s);
    }
    for spec in &a.pngs {
        let (n, rest) = split_named(spec, "--png", 3, "out", &names)?;
        let (path, range) = match rest.rsplit_once(':') {
            Some((p, r)) if parse_range(r).is_some() => (p, parse_range(r)),
            _ => (rest, None),
        };
        if !job.outputs.iter().any(|&(k, _)| usize::from(k) == n) {
            job = job.output(n as u8, Format::Float32_4);
        }
        sinks.push(sink(
            n as u8,
            PathBuf::from(path),
            Form::Png,
            range.unwrap_or((0.0, 1.0)),
        )?);
    }
    if a.print {
        let n = w as usize * h as usize;
        if n > data::MAX_PRINT {
            return usage(format!(
                "--print shows at most {} elements per output; the domain has {n} (write a file with --output)",
                data::MAX_PRINT
            ));
        }
        if stdout_used {
            return usage("--print and an output to standard output (`-`) cannot both use it");
        }
    }
    // Constants: the file first, flags after (a flag wins).
    if let Some(path) = &a.consts_file {
        let f = data::read_consts(path)?;
        // (read_consts checks every number against its file: c0–c255,
        // i0–i31, b0–b31, so each fits a byte.)
        for (n, c) in f.floats {
            job = job.constant(n as u8, c);
        }
        for (n, (count, init, step)) in f.ints {
            job = job.int(n as u8, count, init, step);
        }
        for (n, b) in f.bools {
            job = job.boolean(n as u8, b);
        }
    }
    for spec in &a.consts {
        let (n, rest) = split_named(spec, "--const", 255, "c", &names)?;
        let v = numbers::<f32>(rest, 4, spec)?;
        job.consts.retain(|c| c.0 != n);
        job = job.constant(n as u8, [v[0], v[1], v[2], v[3]]);
    }
    for spec in &a.ints {
        let (n, rest) = split_named(spec, "--const-int", 31, "i", &names)?;
        let (count, init, step) = int_const(rest, spec)?;
        job.ints.retain(|c| c.0 != n);
        job = job.int(n as u8, count, init, step);
    }
    for spec in &a.bools {
        let (n, rest) = split_named(spec, "--const-bool", 31, "b", &names)?;
        let b = match rest.trim() {
            "0" => false,
            "1" => true,
            _ => return usage(format!("--const-bool `{spec}`: expected 0 or 1")),
        };
        job.bools.retain(|c| c.0 != n);
        job = job.boolean(n as u8, b);
    }
    let mut cond = None;
    if let (Some(test), Some(buf)) = (a.cond_test, &a.cond_buffer) {
        let (test, loc): (CondTest, CondLoc) = (test.into(), a.cond_loc.into());
        let (path, format) = path_format(buf, buf)?;
        // The values written back must survive the file's form.
        if a.cond_write && Form::of_path(&path) == Form::Png {
            return usage(format!(
                "--cond-buffer `{buf}` with --cond-write: a PNG cannot hold the conditional values exactly (it would be overwritten with 8-bit grey); write back to a raw or .npy file"
            ));
        }
        let buffer = match a.cond_clear {
            Some(v) => HostSurface::filled(format, w, h, v),
            None => {
                let s = data::decode(
                    &data::read_all(&path)?,
                    &path.display().to_string(),
                    Some(format),
                    Some((w, h)),
                )?;
                if s.format != format {
                    return usage(format!(
                        "--cond-buffer `{buf}`: the file holds {}",
                        s.format
                    ));
                }
                s
            }
        };
        job.cond = Some(CondSetup {
            test,
            loc,
            write: a.cond_write,
            buffer,
        });
        let form = Form::of_path(&path);
        cond = Some(Sink {
            n: 0,
            file: None,
            path,
            form,
            range: (0.0, 1.0),
            temp: None,
        });
    }
    let kernel = Kernel::new(loaded.exe);
    if tracing {
        let info = &kernel.exe.info;
        let writes = if info.uncached() {
            vec![0]
        } else {
            info.outputs.clone()
        };
        for n in writes {
            if !job.outputs.iter().any(|&(k, _)| u32::from(k) == n) {
                job = job.output(n as u8, Format::Float32_4);
            }
        }
        sinks.clear();
        cond = None;
    }
    match kernel.check(&job) {
        Ok(warnings) => {
            for w in warnings {
                warn(v, job_warning(w, &kernel.exe.info.bindings));
            }
        }
        Err(KernelError::Unbound(u)) => return usage(unbound(u, &kernel.exe.info.bindings)),
        Err(e) => return Err(e.into()),
    }
    let mut p = Prepared {
        kernel,
        job,
        sinks,
        cond,
        print: a.print,
        program: path.to_path_buf(),
    };
    // Last, so that nothing is left behind when a check fails: every
    // destination is opened now, before the run.
    for k in 0..p.sinks.len() + usize::from(p.cond.is_some()) {
        let s = p.sinks.get_mut(k).or(p.cond.as_mut()).expect("k < count");
        if s.path == Path::new("-") {
            continue;
        }
        match open_sink(&s.path) {
            Ok((f, temp)) => (s.file, s.temp) = (Some(f), temp),
            Err(e) => {
                discard(&p);
                return Err(e);
            }
        }
    }
    Ok(p)
}

/// What to add for something the program uses and the flags do not bind.
/// The shader register a compiled shader's binding gives `resource`
/// (`s0`, `v1`, `oC0`, `c3`, `i0`), so messages speak the shader's terms.
fn register(bindings: &[(String, String)], resource: Resource) -> Option<&str> {
    bindings
        .iter()
        .filter(|(name, _)| !name.contains('.'))
        .find(|(_, r)| Resource::parse(r) == Some(resource))
        .map(|(name, _)| name.as_str())
}

/// What to add for something the program uses and the flags do not bind.
fn unbound(u: Unbound, bindings: &[(String, String)]) -> String {
    match u {
        Unbound::Input(n) => match register(bindings, Resource::Input(n)) {
            Some(s) if s.starts_with('s') => format!(
                "the shader samples {s}: add --sampler {s}=FILE (a .png/.npy file, or FILE:FORMAT:WxH)"
            ),
            Some(r) => format!(
                "the shader reads {r}: add --input {r}=FILE (a .png/.npy file, or FILE:FORMAT:WxH)"
            ),
            None => format!(
                "the program reads input {n}: add --input {n}=FILE:FORMAT:WxH (or a .png/.npy file)"
            ),
        },
        Unbound::Output(n) => match register(bindings, Resource::Output(n)) {
            Some(r) => format!("the shader writes {r}: add --output {r}=FILE:FORMAT"),
            None => format!(
                "the program writes output {n}: add --output {n}=FILE:FORMAT (or --png {n}=FILE.png)"
            ),
        },
        Unbound::IntConst(n) => match register(bindings, Resource::Int(n)) {
            Some(r) => format!("the shader's loops use {r}: add --const-int {r}=count,init,step"),
            None => format!(
                "the program's loops use integer constant i{n}: add --const-int {n}=count,init,step"
            ),
        },
    }
}

fn job_warning(w: JobWarning, bindings: &[(String, String)]) -> String {
    match w {
        // A compiled shader (it has bindings) names constants as registers.
        JobWarning::UnsetConst(n) => match register(bindings, Resource::Float(n)) {
            Some(r) => format!("{w} (the shader's {r}): add --const {r}=x,y,z,w"),
            None if !bindings.is_empty() => format!("{w}: add --const c{n}=x,y,z,w"),
            None => format!("{w}: add --const {n}=x,y,z,w"),
        },
        other => other.to_string(),
    }
}

/// Removes the temporary files of a run that failed or is done (the
/// outputs themselves are only ever replaced whole).
pub(super) fn discard(p: &Prepared) {
    for s in p.sinks.iter().chain(&p.cond) {
        if let Some(t) = &s.temp {
            let _ = std::fs::remove_file(t);
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
        p.job.settings.progress = Some(progress.clone());
    }
    if v.verbose {
        say(format_args!(
            "{}: {} instructions on {} with {} thread(s), domain {}×{}",
            p.program.display(),
            p.kernel.exe.len(),
            p.job.settings.engine,
            p.job.settings.threads,
            p.job.width,
            p.job.height
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
        say(super::engine_stats(p.job.settings.engine, &report.engine));
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
