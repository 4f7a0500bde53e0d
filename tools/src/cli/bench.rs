//! `ctm bench`: the arguments of `ctm run`, measured on both engines; or,
//! `ctm bench suite`, the bundled benchmark kernels as one table.

use super::run::{RunArgs, deliver, discard, prepare};
use super::{EXIT_OK, Error, Verbosity, usage};
use clap::Args;
use ctm_tools::bench::{BenchOptions, BenchReport, suite};

/// Arguments of `ctm bench`.
#[derive(Args, Debug)]
#[command(subcommand_negates_reqs = true, args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// The program and its inputs, exactly as for `ctm run` (outputs are
    /// written from the JIT's run, checked against the interpreter's).
    #[command(flatten)]
    pub run: RunArgs,
    /// `ctm bench suite`: the bundled kernels.
    #[command(subcommand)]
    pub suite: Option<Suite>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Runs per measurement; the best counts.
    #[arg(long, value_name = "N", default_value_t = 3)]
    repeat: usize,
}

/// `ctm bench suite`.
#[derive(clap::Subcommand, Debug)]
pub enum Suite {
    /// Measure the bundled benchmark kernels (all of them, or the ones
    /// named: chains8 chains4 chains2 chains1 dotmix transcend mandelbrot
    /// tiny divergent texture saxpy matmul conv3x3 scatter) and print one
    /// table.
    Suite {
        /// Kernels to measure (all if none).
        names: Vec<String>,
        /// Print one JSON object per kernel instead of a table.
        #[arg(long)]
        json: bool,
        /// Runs per measurement; the best counts.
        #[arg(long, value_name = "N", default_value_t = 3)]
        repeat: usize,
    },
}

/// `ctm bench`.
pub fn bench(a: BenchArgs, v: Verbosity) -> Result<u8, Error> {
    if let Some(Suite::Suite {
        names,
        json,
        repeat,
    }) = &a.suite
    {
        return bench_suite(names, *json, *repeat, v);
    }
    let mut p = prepare(&a.run, v)?;
    ctm::engine::EngineKind::Jit.check()?;
    let opts = BenchOptions {
        repeat: a.repeat,
        threads: p.job.settings().threads,
        jit: p.job.settings().jit,
        ..Default::default()
    };
    let (report, result) = match ctm_tools::bench::measure_with_result(&p.kernel, &p.job, opts) {
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

fn bench_suite(names: &[String], json: bool, repeat: usize, v: Verbosity) -> Result<u8, Error> {
    let cases = if names.is_empty() {
        suite::suite()
    } else {
        let mut cases = Vec::new();
        for n in names {
            match suite::case(n) {
                Some(c) => cases.push(c),
                None => {
                    return usage(format!(
                        "ctm bench suite: no benchmark kernel `{n}` (there are {})",
                        suite::NAMES.join(", ")
                    ));
                }
            }
        }
        cases
    };
    ctm::engine::EngineKind::Jit.check()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = BenchOptions {
        repeat,
        threads,
        peak_iterations: 0,
        ..Default::default()
    };
    let fma = ctm_tools::peak::fma_peak_gflops(100_000_000)?;
    let ceiling = ctm_tools::peak::mad_peak_gflops(100_000_000)?;
    let mut rows: Vec<(suite::Case, BenchReport)> = Vec::new();
    for c in cases {
        if !v.quiet {
            eprintln!("{}: {}", c.name, c.what);
        }
        let mut r = ctm_tools::bench::measure(&c.kernel, &c.job, opts)?;
        r.fma_peak_gflops = fma;
        r.mad_ceiling_gflops = ceiling;
        rows.push((c, r));
    }
    if json {
        let mut out = String::new();
        for (c, r) in &rows {
            out += &format!(
                "{{\"kernel\": \"{}\", \"report\": {}}}\n",
                c.name,
                r.to_json()
            );
        }
        super::print(&out)?;
    } else {
        super::print(&suite_table(&rows, threads, ceiling, fma))?;
    }
    Ok(EXIT_OK)
}

/// The suite's Markdown table.
pub fn suite_table(
    rows: &[(suite::Case, BenchReport)],
    threads: usize,
    ceiling: f64,
    fma: f64,
) -> String {
    let best_alu = rows
        .iter()
        .filter(|(c, _)| c.alu_bound)
        .map(|(_, r)| r.jit_pixinst_per_s)
        .fold(0.0, f64::max);
    let mut t = format!(
        "| kernel | interp M/s | JIT M/s | JIT / interp | share of exact ceiling | of best ALU shape | ns / pixel | re-run ns / pixel | re-runs, {threads} threads / 1 | compile µs/inst | optimised compile µs/inst |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for (c, r) in rows {
        let of_best = if c.alu_bound && best_alu > 0.0 {
            format!("{:.0}%", 100.0 * r.jit_pixinst_per_s / best_alu)
        } else {
            "–".into()
        };
        t += &format!(
            "| {} | {:.1} | {:.1} | {:.1}× | {:.0}% | {} | {:.2} | {:.2} | {:.2}× | {:.1} | {:.1} |\n",
            c.name,
            r.interp_pixinst_per_s / 1e6,
            r.jit_pixinst_per_s / 1e6,
            r.jit_over_interp(),
            100.0 * r.fraction_of_ceiling(),
            of_best,
            r.ns_per_pixel(),
            r.prepared_rerun_ns_per_pixel,
            r.rerun_thread_speedup(),
            r.compile_us_per_inst,
            r.optimised_compile_us_per_inst,
        );
    }
    t += &format!(
        "\nOne core: exact MAD ceiling {ceiling:.1} GFLOP/s (multiply, then a separately rounded add: at most the FMA rate), F32X4 FMA peak {fma:.1} GFLOP/s.\n"
    );
    t
}
