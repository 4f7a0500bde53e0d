//! Preparing a `ctm run` job from its flags (also what `ctm bench` and
//! `ctm trace` run): the program loaded, each kind of binding read and
//! checked by a function of its own, the job checked against the
//! program's notes, every destination opened — all before anything runs.

use super::super::args::{
    int_const, numbers, parse_range, path_format, path_format_dims, split_named,
};
use super::super::data::{self, Form};
use super::super::{Error, Verbosity, settings, usage, warn};
use super::RunArgs;
use ctm::JitOptions;
use ctm::co::{CondLoc, CondTest};
use ctm::kernel::{
    CondSetup, HostSurface, Job, JobWarning, Kernel, KernelError, Resource, Unbound,
};
use ctm::mc::{CacheMode, Format};
use ctm::program;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Where an output goes.
pub(super) struct Sink {
    pub(super) n: u8,
    pub(super) path: PathBuf,
    pub(super) form: Form,
    pub(super) range: (f32, f32),
    /// Where the results are written, opened before the run (None:
    /// standard output).
    pub(super) file: Option<File>,
    /// The temporary file `file` is, renamed over `path` once written
    /// (None: `path` is not a regular file — a device, a pipe — and is
    /// written in place).
    pub(super) temp: Option<PathBuf>,
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
    pub(super) sinks: Vec<Sink>,
    pub(super) cond: Option<Sink>,
    pub(super) print: bool,
    pub(super) program: PathBuf,
}

fn jit_options(a: &RunArgs) -> Result<JitOptions, Error> {
    super::super::args::jit_options(a.opt_level, a.quads, a.tier)
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
    prepare_job(a, v, tracing).map_err(super::super::as_usage)
}

fn prepare_job(a: &RunArgs, v: Verbosity, tracing: bool) -> Result<Prepared, Error> {
    let path = a.program()?;
    let loaded = load(path, v)?;
    let Some((w, h)) = a.domain else {
        return usage("no --domain given");
    };
    let names = loaded.exe.info.bindings.clone();
    let job = bind_inputs(a, base_job(a, w, h)?, &names)?;
    let (job, sinks) = bind_outputs(a, job, &names)?;
    let (mut job, cond) = bind_cond(a, bind_constants(a, job, &names)?)?;
    let kernel = Kernel::new(loaded.exe);
    // A trace binds what the program writes and opens no file.
    let (sinks, cond) = if tracing {
        job = bind_written(&kernel, job);
        (Vec::new(), None)
    } else {
        (sinks, cond)
    };
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
    // Last, so that nothing is left behind when a check fails.
    open_sinks(&mut p)?;
    Ok(p)
}

/// The program, its loader's warnings and the validator's said.
fn load(path: &Path, v: Verbosity) -> Result<program::Loaded, Error> {
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
    Ok(loaded)
}

/// The job's domain, engine, threads, limits, caches and conditional
/// value.
fn base_job(a: &RunArgs, w: u32, h: u32) -> Result<Job, Error> {
    let mut settings = settings(
        a.engine,
        a.threads.map(|t| t as usize),
        a.check_hazards,
        &a.limits,
    )?;
    settings.jit = jit_options(a)?;
    let caches = if a.strict_caches {
        CacheMode::Strict
    } else {
        CacheMode::Coherent
    };
    Ok(Job::new(w, h)
        .with_settings(settings)
        .cache_mode(caches)
        .cond_val(a.cond_val))
}

/// `--input`, `--sampler`: each file read now.
fn bind_inputs(a: &RunArgs, mut job: Job, names: &[(String, String)]) -> Result<Job, Error> {
    for (flag, spec) in a
        .inputs
        .iter()
        .map(|s| ("--input", s))
        .chain(a.samplers.iter().map(|s| ("--sampler", s)))
    {
        let (n, rest) = split_named(spec, flag, 15, "in", names)?;
        job = job.input(n as u8, read_binding(rest, spec, None)?);
    }
    Ok(job)
}

/// Where outputs go, one of them at most to standard output.
#[derive(Default)]
struct Sinks {
    sinks: Vec<Sink>,
    stdout_used: bool,
}

impl Sinks {
    fn add(&mut self, n: u8, path: PathBuf, form: Form, range: (f32, f32)) -> Result<(), Error> {
        if path == Path::new("-") && std::mem::replace(&mut self.stdout_used, true) {
            return usage("only one output can go to standard output (`-`)");
        }
        if form == Form::Png && !cfg!(feature = "png") {
            return usage(super::super::picture::without(&path.display().to_string()));
        }
        self.sinks.push(Sink {
            n,
            path,
            form,
            range,
            file: None,
            temp: None,
        });
        Ok(())
    }
}

/// `--output`, `--output-init`, `--png` and `--print`.
fn bind_outputs(
    a: &RunArgs,
    mut job: Job,
    names: &[(String, String)],
) -> Result<(Job, Vec<Sink>), Error> {
    let (w, h) = job.size();
    let mut sinks = Sinks::default();
    for spec in &a.outputs {
        let (n, rest) = split_named(spec, "--output", 3, "out", names)?;
        let (path, format) = path_format(rest, spec)?;
        if job.requested_output(n as u8).is_some() {
            return usage(format!("--output `{spec}`: output {n} is already bound"));
        }
        job = job.output(n as u8, format);
        let form = Form::of_path(&path);
        sinks.add(n as u8, path, form, (0.0, 1.0))?;
    }
    for spec in &a.output_inits {
        let (n, rest) = split_named(spec, "--output-init", 3, "out", names)?;
        let bound = job.requested_output(n as u8);
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
        job = job.output_init(n as u8, s);
    }
    for spec in &a.pngs {
        let (n, rest) = split_named(spec, "--png", 3, "out", names)?;
        let (path, range) = match rest.rsplit_once(':') {
            Some((p, r)) if parse_range(r).is_some() => (p, parse_range(r)),
            _ => (rest, None),
        };
        if job.requested_output(n as u8).is_none() {
            job = job.output(n as u8, Format::Float32_4);
        }
        sinks.add(
            n as u8,
            PathBuf::from(path),
            Form::Png,
            range.unwrap_or((0.0, 1.0)),
        )?;
    }
    if a.print {
        let n = w as usize * h as usize;
        if n > data::MAX_PRINT {
            return usage(format!(
                "--print shows at most {} elements per output; the domain has {n} (write a file with --output)",
                data::MAX_PRINT
            ));
        }
        if sinks.stdout_used {
            return usage("--print and an output to standard output (`-`) cannot both use it");
        }
    }
    Ok((job, sinks.sinks))
}

/// Constants: the `--consts` file first, the flags after (a flag wins).
fn bind_constants(a: &RunArgs, mut job: Job, names: &[(String, String)]) -> Result<Job, Error> {
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
        let (n, rest) = split_named(spec, "--const", 255, "c", names)?;
        let v = numbers::<f32>(rest, 4, spec)?;
        job = job.constant(n as u8, [v[0], v[1], v[2], v[3]]);
    }
    for spec in &a.ints {
        let (n, rest) = split_named(spec, "--const-int", 31, "i", names)?;
        let (count, init, step) = int_const(rest, spec)?;
        job = job.int(n as u8, count, init, step);
    }
    for spec in &a.bools {
        let (n, rest) = split_named(spec, "--const-bool", 31, "b", names)?;
        let b = match rest.trim() {
            "0" => false,
            "1" => true,
            _ => return usage(format!("--const-bool `{spec}`: expected 0 or 1")),
        };
        job = job.boolean(n as u8, b);
    }
    Ok(job)
}

/// The conditional test and its buffer (read now, or cleared), and where
/// the buffer goes back.
fn bind_cond(a: &RunArgs, job: Job) -> Result<(Job, Option<Sink>), Error> {
    let (Some(test), Some(buf)) = (a.cond_test, &a.cond_buffer) else {
        return Ok((job, None));
    };
    let (w, h) = job.size();
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
    let job = job.cond(CondSetup {
        test,
        loc,
        write: a.cond_write,
        buffer,
    });
    let form = Form::of_path(&path);
    let sink = Sink {
        n: 0,
        file: None,
        path,
        form,
        range: (0.0, 1.0),
        temp: None,
    };
    Ok((job, Some(sink)))
}

/// For a trace: every output the program writes bound (float32_4 where the
/// flags do not bind it).
fn bind_written(kernel: &Kernel, mut job: Job) -> Job {
    let info = &kernel.exe.info;
    let writes = if info.uncached() {
        vec![0]
    } else {
        info.outputs.clone()
    };
    for n in writes {
        // An initial content binds its output too.
        if job.requested_output(n as u8).is_none() {
            job = job.output(n as u8, Format::Float32_4);
        }
    }
    job
}

/// Opens every destination now, before the run (a failure leaves no file
/// behind).
fn open_sinks(p: &mut Prepared) -> Result<(), Error> {
    for k in 0..p.sinks.len() + usize::from(p.cond.is_some()) {
        let s = p.sinks.get_mut(k).or(p.cond.as_mut()).expect("k < count");
        if s.path == Path::new("-") {
            continue;
        }
        match open_sink(&s.path) {
            Ok((f, temp)) => (s.file, s.temp) = (Some(f), temp),
            Err(e) => {
                discard(p);
                return Err(e);
            }
        }
    }
    Ok(())
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
pub(in crate::cli) fn discard(p: &Prepared) {
    for s in p.sinks.iter().chain(&p.cond) {
        if let Some(t) = &s.temp {
            let _ = std::fs::remove_file(t);
        }
    }
}
