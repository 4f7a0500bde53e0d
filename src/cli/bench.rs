//! `ctm bench`: the arguments of `ctm run`, measured on both engines.

use super::run::{RunArgs, deliver, discard, prepare};
use super::{EXIT_OK, Error, Verbosity};
use clap::Args;

/// Arguments of `ctm bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The program and its inputs, exactly as for `ctm run` (outputs are
    /// written from the JIT's run, checked against the interpreter's).
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Runs per measurement; the best counts.
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeat: usize,
}

/// `ctm bench`.
pub fn bench(a: BenchArgs, v: Verbosity) -> Result<u8, Error> {
    let mut p = prepare(&a.run, v)?;
    ctm::engine::EngineKind::Jit.check()?;
    let opts = ctm::bench::BenchOptions {
        repeat: a.repeat,
        threads: p.job.settings.threads,
        jit: p.job.settings.jit,
        ..Default::default()
    };
    let (report, result) = match ctm::bench::measure_with_result(&p.kernel, &p.job, opts) {
        Ok(r) => r,
        Err(e) => {
            discard(&p);
            return Err(e.into());
        }
    };
    deliver(&mut p, &result)?;
    if a.json {
        super::print(&format!("{}\n", report.to_json()))?;
    } else {
        super::print(&report.to_string())?;
    }
    Ok(EXIT_OK)
}
