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
/// stand for, or text for counters and errors. Surfaces are kept as their
/// elements' bit patterns, and only the elements that differ are written
/// out as text, by [`report`]: a 768×512 output written out was 1.5
/// million strings, and the allocator's tidying after they were freed
/// took 0.5 s of the run that came next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    places: BTreeMap<Place, BTreeMap<String, String>>,
    surfaces: BTreeMap<String, Grid>,
}

/// A surface's elements, channel by channel, as bit patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Grid {
    width: u32,
    channels: usize,
    bits: Vec<u32>,
}

/// The channel names of a surface's elements.
const CHANNELS: [&str; 4] = ["r", "g", "b", "a"];

/// How a bit pattern is shown: in hex, with the float it stands for.
fn shown(bits: u32) -> String {
    format!("{bits:08x} {:e}", f32::from_bits(bits))
}

/// Adds `text` as lane `lane` of place `what` (i, j) to `places`.
fn put(
    places: &mut BTreeMap<Place, BTreeMap<String, String>>,
    what: &str,
    (i, j): (u32, u32),
    lane: &str,
    text: String,
) {
    let place = Place {
        what: what.to_string(),
        j,
        i,
    };
    places
        .entry(place)
        .or_default()
        .insert(lane.to_string(), text);
}

impl Grid {
    /// Adds elements `elements` of this surface, `what`, to `places`.
    fn put(
        &self,
        what: &str,
        elements: impl Iterator<Item = usize>,
        places: &mut BTreeMap<Place, BTreeMap<String, String>>,
    ) {
        let width = self.width.max(1) as usize;
        for n in elements {
            let at = ((n % width) as u32, (n / width) as u32);
            let element = &self.bits[n * self.channels..(n + 1) * self.channels];
            for (c, &bits) in element.iter().enumerate() {
                put(places, what, at, CHANNELS[c], shown(bits));
            }
        }
    }

    /// How many elements the surface has.
    fn elements(&self) -> usize {
        self.bits.len() / self.channels.max(1)
    }
}

impl Observed {
    /// Records the bit pattern `bits` as lane `lane` of place `what` (i, j).
    pub fn bits(&mut self, what: &str, at: (u32, u32), lane: &str, bits: u32) {
        self.text(what, at, lane, shown(bits));
    }

    /// Records `text` as lane `lane` of place `what` (i, j).
    pub fn text(&mut self, what: &str, at: (u32, u32), lane: &str, text: String) {
        put(&mut self.places, what, at, lane, text);
    }

    /// Every element of `s` as place `what` (x, y), channel by channel.
    pub fn surface(&mut self, what: &str, s: &HostSurface) {
        let size = s.format.bytes();
        let channels = s.format.channels().min(4);
        let mut bits = Vec::with_capacity(s.data.len() / size.max(1) * channels);
        for e in s.data.chunks_exact(size) {
            bits.extend_from_slice(&s.format.read(e)[..channels]);
        }
        let grid = Grid {
            width: s.width,
            channels,
            bits,
        };
        self.surfaces.insert(what.to_string(), grid);
    }

    /// The places of `self` and `other` as text, with the elements of
    /// their surfaces that differ: at most `most` of each surface where
    /// the two have it in the same shape (the report shows fewer), every
    /// element where they do not.
    fn differing(
        &self,
        other: &Observed,
        most: usize,
    ) -> [BTreeMap<Place, BTreeMap<String, String>>; 2] {
        let mut out = [self.places.clone(), other.places.clone()];
        let names: BTreeSet<&String> = self.surfaces.keys().chain(other.surfaces.keys()).collect();
        for name in names {
            let grids = [self.surfaces.get(name), other.surfaces.get(name)];
            if grids[0] == grids[1] {
                continue;
            }
            if let [Some(a), Some(b)] = grids
                && (a.width, a.channels, a.bits.len()) == (b.width, b.channels, b.bits.len())
            {
                let c = a.channels.max(1);
                let at: Vec<usize> = (0..a.elements())
                    .filter(|&n| a.bits[n * c..(n + 1) * c] != b.bits[n * c..(n + 1) * c])
                    .take(most)
                    .collect();
                a.put(name, at.iter().copied(), &mut out[0]);
                b.put(name, at.iter().copied(), &mut out[1]);
                continue;
            }
            for (g, places) in grids.iter().zip(&mut out) {
                if let Some(g) = g {
                    g.put(name, 0..g.elements(), places);
                }
            }
        }
        out
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
                                let lane = format!("rt{}.{}", ["A", "B", "C", "D"][t], CHANNELS[c]);
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
    /// the engine's own statistics, nor the workers the host gave the run
    /// and the rows whose writes they made while others ran: engines of
    /// different speeds may take different numbers of workers), or the
    /// error.
    pub fn job(result: Result<&JobResult, &KernelError>) -> Observed {
        match result {
            Ok(r) => {
                let mut o = Observed::results(r);
                let report = RunReport {
                    engine: Default::default(),
                    workers: 0,
                    overlapped_rows: 0,
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
    // Nine places of a surface are enough: the report shows eight.
    let [a, b] = a.differing(b, 9);
    let mut r = String::new();
    let _ = writeln!(r, "--- {an:<28} | {bn:<28} ---");
    let places: BTreeSet<&Place> = a.keys().chain(b.keys()).collect();
    let none = BTreeMap::new();
    let mut shown = 0;
    for p in places {
        let (x, y) = (a.get(p), b.get(p));
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
    fn surfaces_report_the_elements_that_differ() {
        use ctm::mc::Format;
        let data: Vec<f32> = (0..40).map(|k| k as f32).collect();
        let s = HostSurface::from_f32(Format::Float32_2, 5, 4, &data).unwrap();
        let (mut a, mut b) = (Observed::default(), Observed::default());
        a.surface("output 0", &s);
        b.surface("output 0", &s);
        assert_eq!(report(&a, &b, "x", "y"), None);
        // Element (3, 2), channel g: 2 · (2 · 5 + 3) + 1 = 27.
        let mut t = data.clone();
        t[27] = -0.0;
        b.surface(
            "output 0",
            &HostSurface::from_f32(Format::Float32_2, 5, 4, &t).unwrap(),
        );
        let r = report(&a, &b, "interp", "jit").unwrap();
        assert!(r.contains("* output 0 (3,2) g 41d80000 2.7e1"), "{r}");
        assert!(r.contains("| 80000000 -0e0"), "{r}");
        assert!(r.contains("  output 0 (3,2) r 41d00000 2.6e1"), "{r}");
        assert_eq!(r.lines().count(), 3, "one element, two lanes: {r}");
        // Every element differs: eight places shown, then a line saying
        // that more do.
        let u: Vec<f32> = data.iter().map(|v| v + 100.0).collect();
        b.surface(
            "output 0",
            &HostSurface::from_f32(Format::Float32_2, 5, 4, &u).unwrap(),
        );
        let r = report(&a, &b, "interp", "jit").unwrap();
        assert!(
            r.contains("output 0 (2,1)") && !r.contains("output 0 (3,1)"),
            "{r}"
        );
        assert!(r.ends_with("  … more places differ\n"), "{r}");
        // A surface only one side has, or of another shape.
        let mut c = Observed::default();
        c.text("output 0", (0, 0), "", "(missing)".into());
        let r = report(&a, &c, "interp", "jit").unwrap();
        assert!(r.contains("* output 0 r 00000000 0e0"), "{r}");
        assert!(r.contains("(missing)"), "{r}");
        let mut d = Observed::default();
        d.surface(
            "output 0",
            &HostSurface::from_f32(Format::Float32_2, 4, 5, &data).unwrap(),
        );
        assert!(report(&a, &d, "interp", "jit").is_some());
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
