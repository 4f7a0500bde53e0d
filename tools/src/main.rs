//! The `ctm` command-line tool: run DPP programs over domains, measure
//! them, execute raw command streams, and assemble, disassemble and
//! inspect programs. Exit statuses: see [`cli`].

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod cli;
use cli::Verbosity;

#[derive(Parser)]
#[command(
    name = "ctm",
    version,
    about = "An emulator of the ATI CTM data-parallel processor (DPP)",
    after_help = "Exit status: 0 success, 1 the run failed (a fault, a runaway, a stop; results not delivered),\n2 what was typed or pointed at is wrong (flags, files, programs, a job the checks refuse),\n3 hazards found (--check-hazards).\nThe reference: docs/ (README.md lists the files)."
)]
struct Cli {
    /// Print nothing but errors (and the command's own output).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Say more: settings, engine statistics; `disasm` prints every field.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program over a domain on files: inputs, constants and the
    /// conditional buffer in, outputs (raw, .npy, pictures, text) out.
    Run(cli::run::RunArgs),
    /// Execute a raw command stream against memory images.
    Exec(cli::exec::ExecArgs),
    /// Measure a program (same arguments as `run`): interpreter and JIT
    /// rates, their ratio, compile time, thread scaling, share of the FMA peak.
    Bench(cli::bench::BenchArgs),
    /// Compile a Direct3D 9 pixel shader (ps_2_0, ps_2_x, ps_3_0; text or
    /// bytecode) into a DPP executable.
    Compile(cli::compile::CompileArgs),
    /// Trace one pixel (or its quad) instruction by instruction on the
    /// interpreter: values written, texels fetched, flow state, hazards.
    Trace(cli::trace::TraceArgs),
    #[command(flatten)]
    Tool(cli::tools::Tool),
}

/// What `--version` says: the version, the build, and whether the JIT runs
/// on this CPU.
fn long_version() -> String {
    let jit = match ctm::engine::EngineKind::Jit.check() {
        Ok(()) => "JIT: runs on this CPU (the default engine)".to_string(),
        Err(e) => format!("JIT: not available here ({e}); runs use the interpreter"),
    };
    format!(
        "{} (commit {}, {} build, {})\n{jit}",
        env!("CARGO_PKG_VERSION"),
        env!("CTM_COMMIT"),
        env!("CTM_PROFILE"),
        env!("CTM_TARGET"),
    )
}

fn main() -> ExitCode {
    // Built once per process; clap keeps a static string.
    let version: &'static str = Box::leak(long_version().into_boxed_str());
    // `-V` says the same as `--version`.
    let matches = Cli::command()
        .version(version)
        .long_version(version)
        .get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let v = Verbosity {
        quiet: cli.quiet,
        verbose: cli.verbose,
    };
    let status = match cli.command {
        Command::Run(args) => cli::run::run(args, v),
        Command::Exec(args) => cli::exec::exec(args, v),
        Command::Bench(args) => cli::bench::bench(args, v),
        Command::Trace(args) => cli::trace::run(args, v),
        Command::Compile(args) => cli::compile::compile(args, v),
        Command::Tool(command) => cli::tools::run(command, v),
    };
    match status {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let (code, report) = cli::exit_status(e.as_ref());
            if report {
                cli::say(format_args!("error: {e}"));
            }
            ExitCode::from(code)
        }
    }
}
