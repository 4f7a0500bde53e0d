//! `ctm exec`: a raw command stream against memory images
//! (`docs/commands.md` walks through one).

use super::args::{parse_addr, parse_size};
use super::{EXIT_HAZARDS, EXIT_OK, Error, Verbosity, say, settings, summary, usage};
use clap::Args;
use ctm::device::{Device, DeviceConfig};
use ctm::mc::{ArenaKind, CacheMode};
use ctm::program;
use std::path::{Path, PathBuf};
use std::time::Instant;

const EXEC_ABOUT: &str = "\
The arenas (GPU addresses): local 0x10000000, local b 0x30000000, system
(uncached) 0x50000000, cached system 0x70000000; sizes 256M, 256M, 64M and
256M unless --memory says otherwise (at most 512M each). Packets, opcodes
and the format dword: docs/machine.md; a worked example: docs/commands.md.

Exit status: 0 success, 1 the stream faulted as it ran, 2 what was typed
or pointed at is wrong (flags, files, programs), 3 hazards found.";

/// Arguments of `ctm exec`.
#[derive(Args, Debug)]
#[command(after_help = EXEC_ABOUT)]
pub struct ExecArgs {
    /// Command stream: raw little-endian dwords, or the text form of
    /// docs/commands.md (`-`: standard input).
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
    /// Size an arena: local, local-b, sys or sys-cached = bytes (K, M, G
    /// suffixes), e.g. `--memory sys-cached=512M`.
    #[arg(long = "memory", value_name = "ARENA=SIZE")]
    memory: Vec<String>,
    /// Clause engine: auto = the JIT where the host CPU supports it.
    #[arg(long, value_name = "auto|interp|jit", default_value = "auto")]
    engine: super::args::EngineArg,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    threads: Option<u32>,
    /// Report texture-semaphore hazards (exit status 3 when there are any).
    #[arg(long)]
    check_hazards: bool,
    /// Model the caches strictly (missing flushes/invalidates become visible).
    #[arg(long)]
    strict_caches: bool,
    #[command(flatten)]
    limits: super::Limits,
    /// Print the stream in the text form and stop (nothing runs).
    #[arg(long)]
    list: bool,
}

/// The stream's dwords: text (docs/commands.md) is assembled, anything
/// else taken as little-endian dwords.
fn stream_words(path: &Path, bytes: &[u8]) -> Result<Vec<u32>, Error> {
    let text = std::str::from_utf8(bytes).ok().filter(|t| {
        t.trim_start()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '#' || c == '.')
    });
    if let Some(text) = text {
        return ctm::pe::assemble_stream(text)
            .map_err(|e| format!("{}: {e}", path.display()).into());
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "{}: {} bytes is not a whole number of dwords (and not the text form)",
            path.display(),
            bytes.len()
        )
        .into());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The arena sizes `--memory` asks for.
fn arena_sizes(specs: &[String]) -> Result<[u32; 4], Error> {
    let mut sizes = DeviceConfig::default().arena_sizes;
    for spec in specs {
        let Some((name, size)) = spec.split_once('=') else {
            return usage(format!(
                "--memory `{spec}`: expected ARENA=SIZE, e.g. sys-cached=512M"
            ));
        };
        let k = match name.trim() {
            "local" => 0,
            "local-b" => 1,
            "sys" => 2,
            "sys-cached" => 3,
            other => {
                return usage(format!(
                    "--memory `{spec}`: unknown arena `{other}` (local, local-b, sys, sys-cached)"
                ));
            }
        };
        let bytes = parse_size(size).or_else(|e| usage(format!("--memory {e}")))?;
        if bytes > u64::from(ctm::kernel::MAX_ARENA) || !bytes.is_multiple_of(2048) {
            return usage(format!(
                "--memory `{spec}`: an arena is a multiple of 2 KiB, at most 512M"
            ));
        }
        sizes[k] = bytes as u32;
    }
    Ok(sizes)
}

/// The arenas as a user needs them in an error.
fn arenas(dev: &Device) -> String {
    let i = dev.info();
    let list = [
        ("local", i.base_address_gpu, i.arena_size_gpu),
        ("local b", i.base_address_gpu_b, i.arena_size_gpu_b),
        ("system", i.base_address_sys, i.arena_size_sys),
        ("cached system", i.base_address_sys_c, i.arena_size_sys_c),
    ];
    let parts: Vec<String> = list
        .iter()
        .map(|(n, b, s)| format!("{n} {b:#010x}..{:#010x}", u64::from(*b) + u64::from(*s)))
        .collect();
    format!("arenas: {}", parts.join(", "))
}

/// Adds the flag that helps to an out-of-memory error.
fn hint(e: impl std::fmt::Display, arena: Option<ArenaKind>) -> String {
    let flag = match arena {
        Some(ArenaKind::Local) => "local",
        Some(ArenaKind::LocalB) => "local-b",
        Some(ArenaKind::System) => "sys",
        _ => "sys-cached",
    };
    format!("{e} (enlarge the arena with --memory {flag}=SIZE, at most 512M)")
}

/// `ctm exec`.
pub fn exec(a: ExecArgs, v: Verbosity) -> Result<u8, Error> {
    if a.list {
        let words =
            stream_words(&a.cmdbuf, &super::data::read_all(&a.cmdbuf)?).map_err(super::as_usage)?;
        super::print(&ctm::pe::disassemble_stream(&words))?;
        return Ok(EXIT_OK);
    }
    // Everything before the stream runs is what the user gave (status 2);
    // a fault of the stream as it runs is the run failing (status 1).
    let ready = setup(&a).map_err(super::as_usage)?;
    run_stream(v, ready)
}

/// A device with memory, programs and the command buffer in place: the
/// device, the buffer's address and size, and the dumps to write after.
type Ready = (Device, u32, u32, Vec<(u32, u32, PathBuf)>);

fn setup(a: &ExecArgs) -> Result<Ready, Error> {
    let mut dev = Device::open(DeviceConfig {
        arena_sizes: arena_sizes(&a.memory)?,
        cache_mode: if a.strict_caches {
            CacheMode::Strict
        } else {
            CacheMode::Coherent
        },
        settings: settings(
            a.engine,
            a.threads.map(|t| t as usize),
            a.check_hazards,
            &a.limits,
        )?,
    })
    .map_err(|e| format!("opening the device: {e}"))?;
    let mut dumps = Vec::new();
    for spec in &a.dumps {
        let parsed = spec.split_once('=').and_then(|(range, path)| {
            let (base, len) = range.split_once(':')?;
            Some((
                parse_addr(base).ok()?,
                parse_addr(len).ok()?,
                PathBuf::from(path),
            ))
        });
        let Some(d) = parsed else {
            return usage(format!(
                "--dump `{spec}`: expected BASE:LEN=PATH (addresses 0x… or decimal)"
            ));
        };
        dumps.push(d);
    }
    for spec in &a.mems {
        let Some((base, path)) = spec.split_once('=') else {
            return usage(format!("--mem `{spec}`: expected BASE=PATH"));
        };
        let base = parse_addr(base).or_else(|e| usage(format!("--mem {e}")))?;
        let data = super::data::read_all(Path::new(path))?;
        dev.write(base, &data)
            .map_err(|e| format!("--mem `{spec}`: {e} ({})", arenas(&dev)))?;
    }
    for spec in &a.programs {
        let Some((base, path)) = spec.split_once('=') else {
            return usage(format!("--program `{spec}`: expected BASE=PATH"));
        };
        let base = parse_addr(base).or_else(|e| usage(format!("--program {e}")))?;
        let loaded = program::load(Path::new(path), false)?;
        dev.load_program(&loaded.exe, base)
            .map_err(|e| format!("--program `{spec}`: {e}"))?;
    }
    let words = stream_words(&a.cmdbuf, &super::data::read_all(&a.cmdbuf)?)?;
    let words: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let info = dev.info();
    let at = match a.cmd_at {
        Some(at) => at,
        None => {
            let end = u64::from(info.base_address_sys_c) + u64::from(info.arena_size_sys_c);
            let Some(at) = end.checked_sub(words.len() as u64) else {
                return Err(hint(
                    format!(
                        "{}: {} bytes do not fit the cached system arena",
                        a.cmdbuf.display(),
                        words.len()
                    ),
                    Some(ArenaKind::SystemCached),
                )
                .into());
            };
            (at & !0x7FF) as u32
        }
    };
    dev.write(at, &words)
        .map_err(|e| format!("command buffer at {at:#010x}: {e}"))?;
    Ok((dev, at, words.len() as u32, dumps))
}

fn run_stream(v: Verbosity, (mut dev, at, len, dumps): Ready) -> Result<u8, Error> {
    let bar = super::progress_bar(v.quiet);
    if let Some((_, p)) = &bar {
        dev.settings_mut().progress = Some(p.clone());
    }
    let start = Instant::now();
    let id = dev.submit(at, len)?;
    if let Some((b, _)) = &bar {
        b.finish_and_clear();
    }
    let seconds = start.elapsed().as_secs_f64();
    let outcome = dev.wait(id);
    for (base, len, path) in &dumps {
        let mut buf = vec![0u8; *len as usize];
        dev.read(*base, &mut buf)
            .map_err(|e| format!("--dump {base:#x}:{len:#x}: {e} ({})", arenas(&dev)))?;
        super::data::write_to(path, &buf)?;
    }
    let report = outcome?;
    let mut hazards = 0;
    if !v.quiet {
        say(format_args!(
            "{} commands, {} runs",
            report.commands,
            report.runs.len()
        ));
    }
    for r in &report.runs {
        if !v.quiet {
            say(summary(r, seconds));
        }
        if v.verbose {
            say(super::engine_stats(dev.settings_mut().engine, &r.engine));
        }
        for hz in &r.hazards {
            say(format_args!("hazard: {hz}"));
            hazards += 1;
        }
    }
    Ok(if hazards == 0 { EXIT_OK } else { EXIT_HAZARDS })
}
