//! The one engine comparator: what a run made observable, entry by entry,
//! compared bit for bit between engines, with a two-column report.
//!
//! Every engine-agreement check of the project goes through here: the
//! random programs of [`crate::diff`], the fuzz targets, `ctm bench`, the
//! library's tests and its conformance suite. A run becomes an
//! [`Observed`] — pixels or output elements, each channel as its bit
//! pattern (so NaNs compare by payload, ±0 apart), the conditional buffer,
//! uncached memory, the counters, or the error — and two of them agree
//! only if every entry does. [`report`] shows the places that differ, all
//! their lanes in two columns, `*` on the differing ones.
//!
//! [`run_both`] runs a kernel job on the interpreter and on the JIT and
//! also fails when the JIT did not really run: no native clause, or a
//! clause that fell back to the interpreter. Where the CPU lacks what the
//! JIT needs, [`jit_available`] says so on standard error and the check
//! runs the interpreter alone — unless `CTM_REQUIRE_JIT` is set (CI sets
//! it), which turns that into a failure.
//!
//! ```
//! use ctm::kernel::{Job, Kernel};
//! use ctm::mc::Format;
//! use ctm_tools::check::run_both;
//! let k = Kernel::assemble(
//!     "out rtA.rgb = mad(s0.rrr, s1, s0.ggg) | rtA.a = max.off(s0, s0) src0=r0 src1=1.0 wait last",
//! )
//! .unwrap();
//! let r = run_both(&k, &Job::new(4, 3).output(0, Format::Float32_1)).unwrap().unwrap();
//! assert_eq!(r.output(0).unwrap().to_f32()[2 * 4 + 3], 5.0);
//! ```

use ctm::Tier;
use ctm::engine::EngineKind;
use ctm::ir::Program;
use ctm::kernel::{HostSurface, Job, JobResult, Kernel, KernelError};
use ctm::pe::RunReport;
use ctm::runtime::texture::Images;
use ctm::runtime::{Domain, Engine, EngineStats, PixelOut, RunError, RunOptions, RunStats, Runner};
use ctm_jit::state::Uniforms;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Whether the JIT can run here. Where the CPU lacks what it needs, this
/// says so on standard error and answers `false` — unless `CTM_REQUIRE_JIT`
/// is set, which makes that a panic (CI sets it, so a JIT that silently
/// did not run fails there).
pub fn jit_available() -> bool {
    match EngineKind::Jit.check() {
        Ok(()) => true,
        Err(e) if std::env::var_os("CTM_REQUIRE_JIT").is_some() => {
            panic!("the JIT cannot run on this machine ({e}), and CTM_REQUIRE_JIT asks for it")
        }
        Err(e) => {
            eprintln!("note: skipping the JIT half of this check: {e}");
            false
        }
    }
}

/// What a run of a program on the flow-control shim produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Finished pixels.
    pub pixels: BTreeMap<(u32, u32), PixelOut>,
    /// Counters (hazards included).
    pub stats: RunStats,
    /// Uncached memory afterwards.
    pub uncached: BTreeMap<(u32, u32), u32>,
}

/// A run's result.
pub type Outcome = Result<Run, RunError>;

/// Runs `program` on `engine` over `domain` (with `v` as the constant of
/// r0.b) with these constants, options and textures (a copy: the caller's
/// stay as they were) and collects everything observable.
pub fn run_program(
    program: &Program,
    engine: &mut dyn Engine,
    uniforms: &Uniforms,
    options: RunOptions,
    (domain, v): (Domain, u32),
    textures: &Images,
) -> Outcome {
    let mut tex = textures.clone();
    let mut pixels = BTreeMap::new();
    let mut sink = |i, j, out: &PixelOut| {
        pixels.insert((i, j), out.clone());
    };
    let stats =
        Runner::new(program, engine, uniforms, options).run(domain, v, &mut tex, &mut sink)?;
    Ok(Run {
        pixels,
        stats,
        uncached: tex.uncached.into_iter().collect(),
    })
}

/// Where an observed value lives: what it belongs to ("pixel", "output 0",
/// "uncached", "counters" …) and its (i, j) there; places sort row by row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    what: String,
    j: u32,
    i: u32,
}

/// Everything a run made observable: for each place, its lanes (channel
/// names) and their values — bit patterns in hex with the float they
/// stand for, or text for counters and errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed(BTreeMap<Place, BTreeMap<String, String>>);

impl Observed {
    /// Records the bit pattern `bits` as lane `lane` of place `what` (i, j).
    pub fn bits(&mut self, what: &str, (i, j): (u32, u32), lane: &str, bits: u32) {
        self.text(
            what,
            (i, j),
            lane,
            format!("{bits:08x} {:e}", f32::from_bits(bits)),
        );
    }

    /// Records `text` as lane `lane` of place `what` (i, j).
    pub fn text(&mut self, what: &str, (i, j): (u32, u32), lane: &str, text: String) {
        let place = Place {
            what: what.to_string(),
            j,
            i,
        };
        self.0
            .entry(place)
            .or_default()
            .insert(lane.to_string(), text);
    }

    /// Every element of `s` as place `what` (x, y), channel by channel.
    pub fn surface(&mut self, what: &str, s: &HostSurface) {
        let size = s.format.bytes();
        for (n, e) in s.data.chunks_exact(size).enumerate() {
            let (x, y) = (n as u32 % s.width.max(1), n as u32 / s.width.max(1));
            let v = s.format.read(e);
            for (c, bits) in v.iter().enumerate().take(s.format.channels()) {
                self.bits(what, (x, y), ["r", "g", "b", "a"][c], *bits);
            }
        }
    }

    /// What a program's run made observable: every finished pixel's
    /// written channels and conditional value, uncached memory, the
    /// counters, or the error.
    pub fn run(outcome: &Outcome) -> Observed {
        let mut o = Observed::default();
        match outcome {
            Ok(r) => {
                for (&at, p) in &r.pixels {
                    for (t, target) in p.targets.iter().enumerate() {
                        for (c, v) in target.iter().enumerate() {
                            if let Some(bits) = v {
                                let lane = format!(
                                    "rt{}.{}",
                                    ["A", "B", "C", "D"][t],
                                    ["r", "g", "b", "a"][c]
                                );
                                o.bits("pixel", at, &lane, *bits);
                            }
                        }
                    }
                    match p.depth {
                        Some(bits) => o.bits("pixel", at, "depth", bits),
                        // A finished pixel that wrote nothing still counts.
                        None => o.text("pixel", at, "depth", "-".into()),
                    }
                }
                for (&at, &bits) in &r.uncached {
                    o.bits("uncached", at, "", bits);
                }
                o.text("counters", (0, 0), "", format!("{:?}", r.stats));
            }
            Err(e) => o.text("error", (0, 0), "", e.to_string()),
        }
        o
    }

    /// What a kernel job made observable: every requested output, the
    /// conditional buffer, the run's counters, hazards and diagnostics (not
    /// the engine's own statistics), or the error.
    pub fn job(result: Result<&JobResult, &KernelError>) -> Observed {
        match result {
            Ok(r) => {
                let mut o = Observed::results(r);
                let report = RunReport {
                    engine: Default::default(),
                    ..r.report.clone()
                };
                o.text("counters", (0, 0), "", format!("{report:?}"));
                o
            }
            Err(e) => {
                let mut o = Observed::default();
                o.text("error", (0, 0), "", e.to_string());
                o
            }
        }
    }

    /// A job's results alone: the requested outputs and the conditional
    /// buffer — for runs whose settings may change the counters (threads,
    /// cache modes) but never the results.
    pub fn results(r: &JobResult) -> Observed {
        let mut o = Observed::default();
        for (n, s) in &r.outputs {
            o.surface(&format!("output {n}"), s);
        }
        if let Some(c) = &r.cond {
            o.surface("conditional buffer", c);
        }
        o
    }
}

/// Panics with the comparator's [`report`] unless `a` and `b` agree.
#[track_caller]
pub fn assert_agree(a: &Observed, b: &Observed, an: &str, bn: &str) {
    if let Some(r) = report(a, b, an, bn) {
        panic!("{an} and {bn} disagree:\n{r}");
    }
}

/// `None` if `a` and `b` agree entry for entry; otherwise a report: a
/// header naming the two runs and, for each place that differs (the first
/// eight), all its lanes in two columns with `*` on the differing ones.
pub fn report(a: &Observed, b: &Observed, an: &str, bn: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let mut r = String::new();
    let _ = writeln!(r, "--- {an:<28} | {bn:<28} ---");
    let places: BTreeSet<&Place> = a.0.keys().chain(b.0.keys()).collect();
    let none = BTreeMap::new();
    let mut shown = 0;
    for p in places {
        let (x, y) = (a.0.get(p), b.0.get(p));
        if x == y {
            continue;
        }
        shown += 1;
        if shown > 8 {
            let _ = writeln!(r, "  … more places differ");
            break;
        }
        let (x, y) = (x.unwrap_or(&none), y.unwrap_or(&none));
        let lanes: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
        for lane in lanes {
            let cell = |m: &BTreeMap<String, String>| {
                m.get(lane).cloned().unwrap_or_else(|| "(absent)".into())
            };
            let (l, rr) = (cell(x), cell(y));
            let mark = if l != rr { "*" } else { " " };
            let at = if p.i == 0 && p.j == 0 && !p.what.starts_with("pixel") {
                p.what.clone()
            } else {
                format!("{} ({},{})", p.what, p.i, p.j)
            };
            let _ = writeln!(r, "{mark} {at} {lane} {l:<24} | {rr}");
        }
    }
    Some(r)
}

/// Whether the JIT ran natively: no clause or run fell back to the
/// interpreter, and — where the run executed something (`ran`) — some
/// clause ran compiled. The one rule every engine check applies.
pub fn ran_natively(e: &EngineStats, ran: bool) -> Result<(), String> {
    if e.fallback_runs > 0 || e.fallback_clauses > 0 || !e.fallback_reasons.is_empty() {
        return Err(format!(
            "the JIT fell back to the interpreter: {:?}",
            e.fallback_reasons
        ));
    }
    if ran && e.native_runs == 0 && e.strip_runs == 0 && e.loop_runs == 0 {
        return Err(format!("the JIT ran no clause natively: {e:?}"));
    }
    Ok(())
}

/// Runs `job` on the interpreter and, where it can run, on the JIT; the
/// whole observable results must agree ([`Observed::job`]) and the JIT
/// must have run natively (some clause compiled, none fallen back).
///
/// A job left to tiered compilation (the default) runs on the JIT twice,
/// with its quick code and with its optimised code (`Tier::Quick`,
/// `Tier::Optimised`): a test's runs are too small to tier up, and both
/// must agree.
///
/// The outer error is the disagreement (a [`report`]) or the JIT's
/// failure to run natively; the inner result is the run's own, the same
/// on both engines.
pub fn run_both(kernel: &Kernel, job: &Job) -> Result<Result<JobResult, KernelError>, String> {
    let on = |engine, tier: Option<Tier>| {
        let mut j = job.clone();
        j.settings_mut().engine = engine;
        if let Some(tier) = tier {
            j.settings_mut().jit.tier = tier;
        }
        kernel.run(&j)
    };
    let want = on(EngineKind::Interp, None);
    if !jit_available() {
        return Ok(want);
    }
    let tiers = match job.settings().jit.tier {
        Tier::Tiered => vec![Some(Tier::Quick), Some(Tier::Optimised)],
        _ => vec![None],
    };
    let mut last = None;
    for tier in tiers {
        let got = on(EngineKind::Jit, tier);
        if let Ok(r) = &got {
            ran_natively(&r.report.engine, r.report.pixels > 0)?;
        }
        let name = match tier {
            Some(Tier::Quick) => "jit, quick code",
            Some(_) => "jit, optimised code",
            None => "jit",
        };
        if let Some(r) = report(
            &Observed::job(want.as_ref()),
            &Observed::job(got.as_ref()),
            "interp",
            name,
        ) {
            return Err(format!("the engines disagree:\n{r}"));
        }
        last = Some(got);
    }
    Ok(last.expect("at least one JIT run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_marks_only_the_lanes_that_differ() {
        let mut a = Observed::default();
        a.bits("pixel", (3, 1), "rtA.r", 1.0f32.to_bits());
        a.bits("pixel", (3, 1), "rtA.g", 2.0f32.to_bits());
        a.bits("pixel", (0, 0), "rtA.r", 5.0f32.to_bits());
        let mut b = a.clone();
        assert_eq!(report(&a, &b, "x", "y"), None);
        // A NaN with another payload, in one lane of one pixel.
        b.bits("pixel", (3, 1), "rtA.g", 0x7fc0_0001);
        let r = report(&a, &b, "interp", "jit").unwrap();
        assert!(r.starts_with("--- interp"), "{r}");
        assert!(r.contains("* pixel (3,1) rtA.g 40000000 2e0"), "{r}");
        assert!(r.contains("  pixel (3,1) rtA.r 3f800000 1e0"), "{r}");
        assert!(r.contains("7fc00001"), "{r}");
        assert!(!r.contains("(0,0)"), "agreeing places stay out: {r}");
        // ±0 differ too, and a lane only one side has.
        let (mut z, mut m) = (Observed::default(), Observed::default());
        z.bits("uncached", (1, 2), "", 0);
        m.bits("uncached", (1, 2), "", 0x8000_0000);
        m.text("error", (0, 0), "", "stopped".into());
        let r = report(&z, &m, "a", "b").unwrap();
        assert!(r.contains("* uncached (1,2)  00000000 0e0"), "{r}");
        assert!(r.contains("* error  (absent)"), "{r}");
    }

    #[test]
    fn runs_are_observed_channel_by_channel() {
        let mut p = PixelOut::default();
        p.targets[1][2] = Some(7);
        let run = Run {
            pixels: [((2, 0), p)].into_iter().collect(),
            stats: RunStats::default(),
            uncached: BTreeMap::new(),
        };
        let o = Observed::run(&Ok(run.clone()));
        let mut other = run;
        other.pixels.get_mut(&(2, 0)).unwrap().targets[1][2] = Some(8);
        let r = report(&o, &Observed::run(&Ok(other)), "a", "b").unwrap();
        assert!(r.contains("* pixel (2,0) rtB.b 00000007"), "{r}");
        assert!(r.contains("  pixel (2,0) depth -"), "{r}");
    }
}
