//! The pieces of the `ctm` command-line tool: flag values ([`args`]), data
//! in and out ([`data`]), `run` ([`run`]), `bench` ([`bench`]), `compile`
//! ([`compile`]), `exec` ([`exec`]) and
//! the commands on program files ([`tools`]).
//!
//! Exit status: 0 success; 1 the run failed (the program faulted, ran
//! away or was stopped, or its results could not be delivered); 2 what the
//! user typed or pointed at is wrong (a flag, a file, a program, a job the
//! checks refuse — found before anything runs); 3 hazards found
//! (`--check-hazards`). A closed standard output
//! (a pipe into `head`) ends the tool quietly with status 0.

pub mod args;
pub mod bench;
pub mod compile;
pub mod data;
pub mod emit;
pub mod exec;
pub mod picture;
pub mod run;
pub mod tools;
pub mod trace;

use ctm::engine::EngineKind;
use ctm::pe::{RunReport, RunSettings};
use std::io::{IsTerminal, Write};
use std::sync::Arc;

/// Any error of a command.
pub type Error = Box<dyn std::error::Error>;

/// Success.
pub const EXIT_OK: u8 = 0;
/// The run failed: the program faulted, ran away or was stopped, or its
/// results could not be delivered.
pub const EXIT_ERROR: u8 = 1;
/// What the user typed or pointed at is wrong: a flag, a file, a program,
/// a job the checks refuse.
pub const EXIT_USAGE: u8 = 2;
/// The run finished but the hazard checker reported hazards.
pub const EXIT_HAZARDS: u8 = 3;

/// A usage error (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Fails with a usage error.
pub fn usage<T>(message: impl Into<String>) -> Result<T, Error> {
    Err(Box::new(Usage(message.into())))
}

/// Standard output could not be written (not a closed pipe): the command
/// failed, whatever it was given.
#[derive(Debug, thiserror::Error)]
#[error("writing standard output: {0}")]
pub struct Stdout(pub std::io::Error);

/// An error of a command's preparation — everything before it runs — as
/// a usage error: what the user typed or pointed at is wrong. A closed pipe
/// and a failing standard output keep their own meaning.
pub fn as_usage(e: Error) -> Error {
    let keep = e.downcast_ref::<Usage>().is_some()
        || e.downcast_ref::<Stdout>().is_some()
        || e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
    if keep {
        e
    } else {
        Box::new(Usage(e.to_string()))
    }
}

/// How much a command says on standard error.
#[derive(Clone, Copy, Debug, Default)]
pub struct Verbosity {
    /// Errors only.
    pub quiet: bool,
    /// Everything (details, statistics).
    pub verbose: bool,
}

/// A line on standard error (a closed standard error is ignored).
pub fn say(message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// A warning on standard error, unless quiet.
pub fn warn(v: Verbosity, message: impl std::fmt::Display) {
    if !v.quiet {
        say(format_args!("warning: {message}"));
    }
}

/// Text on standard output; a write error (a closed pipe, a full disk)
/// comes back as an `io::Error`.
pub fn print(text: &str) -> Result<(), Error> {
    write_stdout(text.as_bytes())
}

/// Bytes on standard output: a closed pipe comes back as the `io::Error`
/// (see [`exit_status`]), anything else as an error naming standard output.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| -> Error {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Box::new(e)
            } else {
                Box::new(Stdout(e))
            }
        })
}

/// The exit status for an error, and whether to report it: a closed pipe
/// on standard output is a quiet success.
pub fn exit_status(e: &(dyn std::error::Error + 'static)) -> (u8, bool) {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return (EXIT_OK, false);
        }
        cause = c.source();
    }
    if e.downcast_ref::<Usage>().is_some() {
        (EXIT_USAGE, true)
    } else {
        (EXIT_ERROR, true)
    }
}

/// Run settings from the common flags.
pub fn settings(
    engine: args::EngineArg,
    threads: Option<usize>,
    hazards: bool,
    limits: &Limits,
) -> Result<RunSettings, Error> {
    let engine = engine.kind();
    engine.check()?;
    let mut s = RunSettings {
        engine,
        ..RunSettings::default()
    };
    if let Some(t) = threads {
        s.threads = t;
    }
    s.options.check_hazards = hazards;
    if let Some(b) = limits.budget {
        s.options.budget = b;
    }
    if let Some(t) = limits.timeout {
        if !(t > 0.0 && t.is_finite()) {
            return usage(format!(
                "--timeout {t}: expected a positive number of seconds"
            ));
        }
        s.timeout = Some(std::time::Duration::from_secs_f64(t));
    }
    s.max_instructions = limits.max_instructions;
    Ok(s)
}

/// How long a run may go on: the flags every running command takes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Limits {
    /// Instructions one group of quads may execute before the run stops as
    /// a runaway (default 16777216).
    #[arg(long, value_name = "N")]
    pub budget: Option<u64>,
    /// Stop the run after this many seconds (wall clock).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Stop the run after this many instructions in all (counted per group
    /// of quads, like --budget).
    #[arg(long, value_name = "N")]
    pub max_instructions: Option<u64>,
}

/// A progress bar on a terminal's standard error.
pub fn progress_bar(quiet: bool) -> Option<(indicatif::ProgressBar, ctm::pe::Progress)> {
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

/// One run's summary line and its diagnostics.
pub fn summary(report: &RunReport, seconds: f64) -> String {
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
            "writes to outputs with no surface (dropped)",
        ),
    ] {
        if n > 0 {
            s += &format!("\nnote: {n} {what}");
        }
    }
    s
}

/// What the engine did, for `--stats` and `-v`.
pub fn engine_stats(engine: EngineKind, e: &ctm::runtime::EngineStats) -> String {
    let mut s = format!("engine: {engine}");
    if engine == EngineKind::Jit {
        s += &format!(
            "\n  compiled: {} program(s), {} instructions in {:.2} ms ({:.1} µs per instruction; {} bod(ies) and {} strip form(s) compiled on first use); {} code-cache hit(s)\n  clauses: {} executed natively (plus {} compiled region calls, {} of them lane-wise, and {} strips of quads in compiled strips; {} uncached writes made by compiled code), {} interpreted as fallbacks ({} fallback clause(s)), {} interpreted for hazard checks",
            e.compiled,
            e.compiled_instructions,
            e.compile_time.as_secs_f64() * 1e3,
            e.compile_time.as_secs_f64() * 1e6 / e.compiled_instructions.max(1) as f64,
            e.general_compiled,
            e.strips_compiled,
            e.cache_hits,
            e.native_runs,
            e.loop_runs,
            e.lanewise_runs,
            e.strip_runs,
            e.uncached_logged,
            e.fallback_runs,
            e.fallback_clauses,
            e.checked_runs
        );
        if e.tier_ups > 0 {
            s += &format!(
                "\n  tiered: {} switch(es) from quick to optimised code, compiled in the background",
                e.tier_ups
            );
        }
        for r in &e.fallback_reasons {
            s += &format!("\n  fallback: {r}");
        }
    }
    s
}
