//! `ctm run` and `ctm exec`: running kernels on files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use ctm::co::{CondLoc, CondTest};
use ctm::device::{Device, DeviceConfig};
use ctm::engine::EngineKind;
use ctm::kernel::{CondSetup, HostSurface, Job, Kernel};
use ctm::mc::{CacheMode, Format};
use ctm::pe::{RunReport, RunSettings};
use ctm::program;
use ctm_jit::compile::{JitOptions, OptLevel};

type Error = Box<dyn std::error::Error>;

const RUN_ABOUT: &str = "\
How a program learns its pair: at start, temporary r0 = (i, j, v, 1.0) as
floats — i the column (0..W), j the row (0..H), v the conditional value
(--cond-val). Every other temporary starts at 0. Pairs run in 2×2 quads;
quad lanes outside the domain run as helpers and write nothing.

Files are raw, little-endian, row-major and tightly packed, each element in
the memory layout of its FORMAT: uint16_1 (u16, read as u/65535), uint8_4
(bytes B,G,R,A, read as byte/255), float32_1, float32_2, float32_4 (f32 per
channel). Output elements the program does not write stay zero.

Exit status: 0 on success, 1 on any error, 2 when --check-hazards found a
hazard.";

/// Arguments of `ctm run`.
#[derive(Args, Debug)]
#[command(after_help = RUN_ABOUT)]
pub struct RunArgs {
    /// The program: ELF executable or assembly source.
    program: PathBuf,
    /// The domain: W×H pairs (i in 0..W, j in 0..H); `x` or `×` between.
    #[arg(long, value_name = "WxH", value_parser = parse_dims)]
    domain: (u32, u32),
    /// Bind input N (0–15) to a file of W×H elements of FORMAT.
    #[arg(long = "input", value_name = "N=PATH:FORMAT:WxH")]
    inputs: Vec<String>,
    /// Write output N (0–3) to a file of domain-sized FORMAT elements.
    #[arg(long = "output", value_name = "N=PATH:FORMAT")]
    outputs: Vec<String>,
    /// Float constant cN (0–255).
    #[arg(long = "const", value_name = "N=x,y,z,w")]
    consts: Vec<String>,
    /// Integer constant iN (0–31): loop count, initial aL, aL step.
    #[arg(long = "const-int", value_name = "N=count,init,step")]
    ints: Vec<String>,
    /// Boolean constant bN (0–31).
    #[arg(long = "const-bool", value_name = "N=0|1")]
    bools: Vec<String>,
    /// Conditional test: never less lequal equal gequal greater notequal always.
    #[arg(long, value_name = "NAME", requires = "cond_buffer")]
    cond_test: Option<String>,
    /// The conditional buffer (domain-sized); read before the run unless
    /// --cond-clear is given, written back after it.
    #[arg(long, value_name = "PATH:FORMAT", requires = "cond_test")]
    cond_buffer: Option<String>,
    /// Where the test applies: dpp (outputs of failing pairs are dropped) or
    /// pe (failing pairs do not run).
    #[arg(long, value_name = "dpp|pe", default_value = "dpp")]
    cond_loc: String,
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
    engine: String,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// JIT: Cranelift optimisation level.
    #[arg(long, value_name = "none|speed", default_value = "speed")]
    opt_level: String,
    /// JIT: quads per loop iteration of compiled clauses (0: chosen per clause).
    #[arg(long, value_name = "0|1|2|4", default_value_t = 0)]
    quads: u8,
    /// Print what the engine did: compilation, clauses run natively and
    /// interpreted (fallbacks).
    #[arg(long)]
    stats: bool,
    /// Report texture-semaphore hazards (reads of fetches in flight, …).
    #[arg(long)]
    check_hazards: bool,
    /// Write output N (uint8_4 or float32_4, clamped to 0..1) as a PNG.
    #[arg(long = "png", value_name = "N=PATH")]
    pngs: Vec<String>,
    /// Model the caches strictly (missing flushes/invalidates become visible).
    #[arg(long)]
    strict_caches: bool,
    /// Instructions one group of quads may execute before the run stops.
    #[arg(long, value_name = "N")]
    budget: Option<u64>,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

fn parse_dims(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| format!("`{s}`: expected WxH, e.g. 256x256"))?;
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{s}`: `{t}` is not a number"))
    };
    Ok((n(w)?, n(h)?))
}

fn split_id<'a>(s: &'a str, what: &str, max: usize) -> Result<(usize, &'a str), Error> {
    let (n, rest) = s
        .split_once('=')
        .ok_or_else(|| format!("{what} `{s}`: expected N=…"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("{what} `{s}`: `{n}` is not a number"))?;
    if n > max {
        return Err(format!("{what} `{s}`: {n} is out of range (0–{max})").into());
    }
    Ok((n, rest))
}

fn format_of(s: &str, spec: &str) -> Result<Format, Error> {
    Format::parse(s).ok_or_else(|| {
        format!("`{spec}`: unknown format `{s}` (uint16_1 uint8_4 float32_1 float32_2 float32_4)")
            .into()
    })
}

/// `PATH:FORMAT`, splitting at the last colon.
fn path_format(s: &str, spec: &str) -> Result<(PathBuf, Format), Error> {
    let (p, f) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("`{spec}`: expected PATH:FORMAT"))?;
    Ok((PathBuf::from(p), format_of(f, spec)?))
}

fn numbers<T: std::str::FromStr>(s: &str, n: usize, spec: &str) -> Result<Vec<T>, Error> {
    let v: Vec<T> = s
        .split(',')
        .map(|t| t.trim().parse::<T>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{spec}`: expected {n} comma-separated numbers"))?;
    if v.len() != n {
        return Err(format!("`{spec}`: expected {n} numbers, got {}", v.len()).into());
    }
    Ok(v)
}

fn read_surface(path: &Path, format: Format, w: u32, h: u32) -> Result<HostSurface, Error> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let want = w as usize * h as usize * format.bytes();
    if data.len() != want {
        return Err(format!(
            "{}: {} bytes, but {w}×{h} elements of {format} take {want}",
            path.display(),
            data.len()
        )
        .into());
    }
    Ok(HostSurface {
        format,
        width: w,
        height: h,
        data,
    })
}

fn write_file(path: &Path, data: &[u8]) -> Result<(), Error> {
    std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Writes a four-channel surface as an RGBA PNG (channels clamped to 0..1).
pub fn write_png(path: &Path, s: &HostSurface) -> Result<(), Error> {
    if s.format.channels() != 4 {
        return Err(format!(
            "{}: a picture needs a uint8_4 or float32_4 output, not {}",
            path.display(),
            s.format
        )
        .into());
    }
    let rgba: Vec<u8> = s
        .to_f32()
        .into_iter()
        .map(|c| {
            if c.is_nan() {
                0
            } else {
                (c.clamp(0.0, 1.0) * 255.0).round() as u8
            }
        })
        .collect();
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), s.width, s.height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc
        .write_header()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    w.write_image_data(&rgba)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    w.finish().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

fn settings(
    engine: &str,
    threads: Option<usize>,
    hazards: bool,
    budget: Option<u64>,
) -> Result<RunSettings, Error> {
    let engine = if engine == "auto" {
        if EngineKind::Jit.check().is_ok() {
            EngineKind::Jit
        } else {
            EngineKind::Interp
        }
    } else {
        EngineKind::parse(engine)
            .ok_or_else(|| format!("unknown engine `{engine}` (auto, interp, jit)"))?
    };
    engine.check()?;
    let mut s = RunSettings {
        engine,
        threads: threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1),
        ..RunSettings::default()
    };
    s.options.check_hazards = hazards;
    if let Some(b) = budget {
        s.options.budget = b;
    }
    Ok(s)
}

fn progress_bar(quiet: bool) -> Option<(indicatif::ProgressBar, ctm::pe::Progress)> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} quad rows",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let b = bar.clone();
    Some((
        bar,
        Arc::new(move |done, total| {
            b.set_length(total);
            b.set_position(done);
        }),
    ))
}

fn summary(report: &RunReport, seconds: f64) -> String {
    let mut s = format!(
        "{} pairs ran ({} killed, {} skipped, {} discarded by the conditional test), {} pixel-instructions in {:.3} s ({:.1} M/s), {} modelled clocks",
        report.pixels,
        report.killed,
        report.skipped,
        report.discarded,
        report.pixel_instructions,
        seconds,
        report.pixel_instructions as f64 / seconds.max(1e-9) / 1e6,
        report.clocks
    );
    let d = &report.diagnostics;
    for (n, what) in [
        (
            d.out_of_bounds_reads,
            "reads outside their surface (read as zero)",
        ),
        (
            d.out_of_bounds_writes,
            "writes outside their surface (dropped)",
        ),
        (d.gather_multichannel, "2×2 gathers on multi-channel inputs"),
        (
            d.unconfigured_outputs,
            "writes to outputs with no --output (dropped)",
        ),
    ] {
        if n > 0 {
            s += &format!("\nnote: {n} {what}");
        }
    }
    s
}

/// A `ctm run` job: the kernel, the job and where results go.
struct Prepared {
    kernel: Kernel,
    job: Job,
    files: Vec<(u8, PathBuf)>,
    pngs: Vec<(u8, PathBuf)>,
    cond_path: Option<PathBuf>,
}

fn jit_options(a: &RunArgs) -> Result<JitOptions, Error> {
    let opt_level = match a.opt_level.as_str() {
        "none" => OptLevel::None,
        "speed" => OptLevel::Speed,
        other => return Err(format!("--opt-level `{other}`: expected none or speed").into()),
    };
    if !matches!(a.quads, 0 | 1 | 2 | 4) {
        return Err(format!(
            "--quads {}: expected 1, 2 or 4 (0: chosen per clause)",
            a.quads
        )
        .into());
    }
    Ok(JitOptions {
        opt_level,
        quads_per_iter: a.quads,
    })
}

/// `ctm run`.
pub fn run(a: RunArgs) -> Result<u8, Error> {
    let Prepared {
        kernel,
        mut job,
        files,
        pngs,
        cond_path,
    } = prepare(&a)?;
    let bar = progress_bar(a.quiet);
    if let Some((_, p)) = &bar {
        job.settings.progress = Some(p.clone());
    }
    let start = Instant::now();
    let result = kernel.run(&job);
    if let Some((b, _)) = &bar {
        b.finish_and_clear();
    }
    let result = result?;
    let seconds = start.elapsed().as_secs_f64();
    for (n, path) in &files {
        if let Some(s) = result.output(*n) {
            write_file(path, &s.data)?;
        }
    }
    for (n, path) in &pngs {
        if let Some(s) = result.output(*n) {
            write_png(path, s)?;
        }
    }
    if let (Some(path), Some(s)) = (&cond_path, &result.cond) {
        write_file(path, &s.data)?;
    }
    let report = &result.report;
    if !a.quiet {
        eprintln!("{}", summary(report, seconds));
    }
    if a.stats {
        eprintln!("{}", engine_stats(job.settings.engine, &report.engine));
    }
    for hz in &report.hazards {
        eprintln!("hazard: {hz}");
    }
    Ok(if report.hazards.is_empty() { 0 } else { 2 })
}

fn engine_stats(engine: EngineKind, e: &ctm::runtime::EngineStats) -> String {
    let mut s = format!("engine: {engine}");
    if engine == EngineKind::Jit {
        s += &format!(
            "\n  compiled: {} program(s), {} instructions in {:.2} ms ({:.1} µs per instruction, {} general bod(ies) on first use); {} code-cache hit(s)\n  clauses: {} executed natively (plus {} compiled loop-region calls), {} interpreted as fallbacks ({} fallback clause(s)), {} interpreted for hazard checks",
            e.compiled,
            e.compiled_instructions,
            e.compile_time.as_secs_f64() * 1e3,
            e.compile_time.as_secs_f64() * 1e6 / e.compiled_instructions.max(1) as f64,
            e.general_compiled,
            e.cache_hits,
            e.native_runs,
            e.loop_runs,
            e.fallback_runs,
            e.fallback_clauses,
            e.checked_runs
        );
        for r in &e.fallback_reasons {
            s += &format!("\n  fallback: {r}");
        }
    }
    s
}

fn prepare(a: &RunArgs) -> Result<Prepared, Error> {
    let loaded = program::load(&a.program, false)?;
    for w in &loaded.warnings {
        eprintln!(
            "warning: {}: offset {:#x}: {}",
            a.program.display(),
            w.offset,
            w.message
        );
    }
    let (w, h) = a.domain;
    let mut job = Job::new(w, h);
    job.settings = settings(&a.engine, a.threads, a.check_hazards, a.budget)?;
    job.settings.jit = jit_options(a)?;
    job.cache_mode = if a.strict_caches {
        CacheMode::Strict
    } else {
        CacheMode::Coherent
    };
    job.cond_val = a.cond_val;
    for spec in &a.inputs {
        let (n, rest) = split_id(spec, "--input", 15)?;
        let mut parts = rest.rsplitn(3, ':');
        let (dims, fmt, path) = (parts.next(), parts.next(), parts.next());
        let (Some(dims), Some(fmt), Some(path)) = (dims, fmt, path) else {
            return Err(format!("--input `{spec}`: expected N=PATH:FORMAT:WxH").into());
        };
        let (iw, ih) = parse_dims(dims)?;
        let s = read_surface(Path::new(path), format_of(fmt, spec)?, iw, ih)?;
        job = job.input(n as u8, s);
    }
    let mut files = Vec::new();
    for spec in &a.outputs {
        let (n, rest) = split_id(spec, "--output", 3)?;
        let (path, format) = path_format(rest, spec)?;
        job = job.output(n as u8, format);
        files.push((n as u8, path));
    }
    let mut pngs = Vec::new();
    for spec in &a.pngs {
        let (n, path) = split_id(spec, "--png", 3)?;
        if !job.outputs.iter().any(|&(k, _)| usize::from(k) == n) {
            job = job.output(n as u8, Format::Float32_4);
        }
        pngs.push((n as u8, PathBuf::from(path)));
    }
    for spec in &a.consts {
        let (n, rest) = split_id(spec, "--const", 255)?;
        let v = numbers::<f32>(rest, 4, spec)?;
        job = job.constant(n, [v[0], v[1], v[2], v[3]]);
    }
    for spec in &a.ints {
        let (n, rest) = split_id(spec, "--const-int", 31)?;
        let v = numbers::<i32>(rest, 3, spec)?;
        let (count, init, step) = (
            u8::try_from(v[0]).map_err(|_| format!("`{spec}`: count must be 0–255"))?,
            u8::try_from(v[1]).map_err(|_| format!("`{spec}`: init must be 0–255"))?,
            i8::try_from(v[2]).map_err(|_| format!("`{spec}`: step must be -128–127"))?,
        );
        job = job.int(n, count, init, step);
    }
    for spec in &a.bools {
        let (n, rest) = split_id(spec, "--const-bool", 31)?;
        let b = match rest.trim() {
            "0" => false,
            "1" => true,
            _ => return Err(format!("--const-bool `{spec}`: expected 0 or 1").into()),
        };
        job = job.boolean(n, b);
    }
    let mut cond_path = None;
    if let (Some(test), Some(buf)) = (&a.cond_test, &a.cond_buffer) {
        let test = CondTest::parse(test).ok_or_else(|| {
            format!("unknown conditional test `{test}` (never less lequal equal gequal greater notequal always)")
        })?;
        let loc = match a.cond_loc.as_str() {
            "dpp" => CondLoc::Dpp,
            "pe" => CondLoc::Pe,
            other => return Err(format!("--cond-loc `{other}`: expected dpp or pe").into()),
        };
        let (path, format) = path_format(buf, buf)?;
        let buffer = match a.cond_clear {
            Some(v) => {
                HostSurface::from_f32(format, w, h, &vec![v; (w * h) as usize * format.channels()])
            }
            None => read_surface(&path, format, w, h)?,
        };
        job.cond = Some(CondSetup {
            test,
            loc,
            write: a.cond_write,
            buffer,
        });
        cond_path = Some(path);
    }
    Ok(Prepared {
        kernel: Kernel::new(loaded.exe),
        job,
        files,
        pngs,
        cond_path,
    })
}

/// Arguments of `ctm bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The program and its inputs, exactly as for `ctm run` (output files
    /// are not written).
    #[command(flatten)]
    run: RunArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Runs per measurement; the best counts.
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeat: usize,
}

/// `ctm bench`.
pub fn bench(a: BenchArgs) -> Result<u8, Error> {
    let p = prepare(&a.run)?;
    EngineKind::Jit.check()?;
    let opts = ctm::bench::BenchOptions {
        repeat: a.repeat,
        threads: p.job.settings.threads,
        jit: p.job.settings.jit,
        ..Default::default()
    };
    let report = ctm::bench::measure(&p.kernel, &p.job, opts)?;
    if a.json {
        println!("{}", report.to_json());
    } else {
        print!("{report}");
    }
    Ok(0)
}

/// Arguments of `ctm clif`.
#[derive(Args, Debug)]
pub struct ClifArgs {
    /// The program: ELF executable or assembly source.
    program: PathBuf,
    /// Cranelift optimisation level the code is built for.
    #[arg(long, value_name = "none|speed", default_value = "speed")]
    opt_level: String,
    /// Quads per loop iteration (0: chosen per clause).
    #[arg(long, value_name = "0|1|2|4", default_value_t = 0)]
    quads: u8,
}

/// `ctm clif`: each clause's Cranelift IR, annotated with the source.
pub fn clif(a: ClifArgs) -> Result<u8, Error> {
    let loaded = program::load(&a.program, false)?;
    let kernel = Kernel::new(loaded.exe);
    let program = ctm::bench::program_of(&kernel);
    let slots = ctm::isa::decode_program(&kernel.exe.code);
    let describe = |pc: u16| match slots.get(usize::from(pc)) {
        Some(Ok(inst)) => ctm::isa::disasm::disassemble(inst),
        Some(Err(e)) => format!("(undecodable: {e})"),
        None => String::new(),
    };
    let opt_level = match a.opt_level.as_str() {
        "none" => OptLevel::None,
        "speed" => OptLevel::Speed,
        other => return Err(format!("--opt-level `{other}`: expected none or speed").into()),
    };
    let text = ctm_jit::compile::clif(
        &program,
        JitOptions {
            opt_level,
            quads_per_iter: a.quads,
        },
        &describe,
    )?;
    print!("{text}");
    Ok(0)
}

/// Arguments of `ctm exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// Command stream: raw little-endian dwords.
    cmdbuf: PathBuf,
    /// Load a memory image at BASE (hex 0x… or decimal) before running.
    #[arg(long = "mem", value_name = "BASE=PATH")]
    mems: Vec<String>,
    /// Load a program at BASE (2 KiB aligned) as the loader does: its words
    /// and its length/mode for start_program.
    #[arg(long = "program", value_name = "BASE=PATH")]
    programs: Vec<String>,
    /// Write LEN bytes of memory at BASE to PATH after the run (also after a
    /// fault).
    #[arg(long = "dump", value_name = "BASE:LEN=PATH")]
    dumps: Vec<String>,
    /// Where the command buffer itself is placed (default: the end of the
    /// cached system arena).
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    cmd_at: Option<u32>,
    /// Clause engine.
    #[arg(long, value_name = "interp|jit", default_value = "interp")]
    engine: String,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Report texture-semaphore hazards.
    #[arg(long)]
    check_hazards: bool,
    /// Model the caches strictly (missing flushes/invalidates become visible).
    #[arg(long)]
    strict_caches: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
}

fn parse_addr(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    r.map_err(|_| format!("`{s}` is not an address (0x… or decimal)"))
}

/// `ctm exec`.
pub fn exec(a: ExecArgs) -> Result<u8, Error> {
    let mut dev = Device::open(DeviceConfig {
        cache_mode: if a.strict_caches {
            CacheMode::Strict
        } else {
            CacheMode::Coherent
        },
        settings: settings(&a.engine, a.threads, a.check_hazards, None)?,
        ..DeviceConfig::default()
    });
    for spec in &a.mems {
        let (base, path) = spec
            .split_once('=')
            .ok_or_else(|| format!("--mem `{spec}`: expected BASE=PATH"))?;
        let base = parse_addr(base)?;
        let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        dev.write(base, &data)
            .map_err(|e| format!("--mem `{spec}`: {e}"))?;
    }
    for spec in &a.programs {
        let (base, path) = spec
            .split_once('=')
            .ok_or_else(|| format!("--program `{spec}`: expected BASE=PATH"))?;
        let loaded = program::load(Path::new(path), false)?;
        dev.load_program(&loaded.exe, parse_addr(base)?)
            .map_err(|e| format!("--program `{spec}`: {e}"))?;
    }
    let words = std::fs::read(&a.cmdbuf).map_err(|e| format!("{}: {e}", a.cmdbuf.display()))?;
    if words.len() % 4 != 0 {
        return Err(format!(
            "{}: {} bytes is not a whole number of dwords",
            a.cmdbuf.display(),
            words.len()
        )
        .into());
    }
    let info = dev.info();
    let at = a.cmd_at.unwrap_or_else(|| {
        let end = info.base_address_sys_c + info.arena_size_sys_c;
        (end - words.len() as u32) & !0x7FF
    });
    dev.write(at, &words)
        .map_err(|e| format!("command buffer at {at:#010x}: {e}"))?;
    let bar = progress_bar(a.quiet);
    if let Some((_, p)) = &bar {
        dev.settings_mut().progress = Some(p.clone());
    }
    let start = Instant::now();
    let id = dev.submit(at, words.len() as u32)?;
    if let Some((b, _)) = &bar {
        b.finish_and_clear();
    }
    let seconds = start.elapsed().as_secs_f64();
    let outcome = dev.wait(id).cloned();
    for spec in &a.dumps {
        let (range, path) = spec
            .split_once('=')
            .ok_or_else(|| format!("--dump `{spec}`: expected BASE:LEN=PATH"))?;
        let (base, len) = range
            .split_once(':')
            .ok_or_else(|| format!("--dump `{spec}`: expected BASE:LEN=PATH"))?;
        let (base, len) = (parse_addr(base)?, parse_addr(len)?);
        let mut buf = vec![0u8; len as usize];
        dev.read(base, &mut buf)
            .map_err(|e| format!("--dump `{spec}`: {e}"))?;
        write_file(Path::new(path), &buf)?;
    }
    let report = outcome?;
    let mut hazards = 0;
    if !a.quiet {
        eprintln!("{} commands, {} runs", report.commands, report.runs.len());
    }
    for r in &report.runs {
        if !a.quiet {
            eprintln!("{}", summary(r, seconds));
        }
        for hz in &r.hazards {
            eprintln!("hazard: {hz}");
            hazards += 1;
        }
    }
    Ok(if hazards == 0 { 0 } else { 2 })
}
