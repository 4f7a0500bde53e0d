//! `ctm trace`: one pixel (or its quad), instruction by instruction.

use super::run::{RunArgs, prepare_as};
use super::{EXIT_OK, Error, Verbosity, print, usage};
use clap::Args;
use ctm::program;
use ctm::trace::{TraceOptions, trace};

const TRACE_ABOUT: &str = "\
For every instruction the pixel's group executes: its pc and disassembly,
the values the pixel wrote (temporaries, predicate bits, the ALU result,
render targets, the conditional value; NaN payloads, ±0 and denormals
shown), the texels its lookups fetched, its flow-control state (active or
not, branch counter, loop frames, aL, return addresses) and semaphore
hazards as they happen. The whole job runs on the interpreter, so the
pixel sees exactly what it sees in any run; outputs the program writes
need no --output here, and no file is written.";

/// Arguments of `ctm trace`.
#[derive(Args, Debug)]
#[command(after_help = TRACE_ABOUT)]
pub struct TraceArgs {
    /// The program, the domain and the bindings, exactly as for `ctm run`.
    #[command(flatten)]
    run: RunArgs,
    /// The pixel to trace.
    #[arg(long, value_name = "I,J")]
    pixel: String,
    /// Show the four lanes of its 2×2 quad side by side.
    #[arg(long)]
    quad: bool,
    /// Show instructions at or after this pc only.
    #[arg(long, value_name = "PC")]
    from: Option<u16>,
    /// Show instructions at or before this pc only.
    #[arg(long, value_name = "PC")]
    until: Option<u16>,
}

/// `ctm trace`.
pub fn run(a: TraceArgs, v: Verbosity) -> Result<u8, Error> {
    let parsed = a
        .pixel
        .split_once(',')
        .and_then(|(i, j)| Some((i.trim().parse().ok()?, j.trim().parse().ok()?)));
    let Some(pixel) = parsed else {
        return usage(format!("--pixel `{}`: expected I,J, e.g. 3,1", a.pixel));
    };
    let p = prepare_as(&a.run, v, true)?;
    let t = trace(
        &p.kernel,
        &p.job,
        &TraceOptions {
            pixel,
            quad: a.quad,
            from: a.from,
            until: a.until,
        },
    )?;
    let text = t.to_string();
    // A shader's statements above the DPP instructions they became.
    let path = a.run.program()?;
    let bytes = if path == std::path::Path::new("-") {
        Vec::new()
    } else {
        super::data::read_program(path)?
    };
    let shader = program::is_shader_bytecode(&bytes) || program::is_shader_text(&bytes);
    let text = match shader.then(|| super::tools::shader_statements(&bytes)) {
        Some(Ok((statements, _))) => super::tools::annotate(&text, &statements),
        _ => text,
    };
    print(&text)?;
    match t.error {
        Some(e) => Err(e.into()),
        None => Ok(EXIT_OK),
    }
}
