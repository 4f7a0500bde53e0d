//! Straight programs, and programs that are one loop, through compiled
//! strips: the whole quads of a quad row inside the domain run in one
//! compiled call that writes float32_4 or float32_1 results straight to
//! memory, the row's ends through the shim (a loop's strip runs only rows
//! it covers whole). The bytes and every counter must be the interpreter's,
//! for any domain, offset or thread count; programs and runs a strip cannot
//! serve (a channel left unwritten, another format, a disabled channel, the
//! CO testing at the DPP) take the shim.

use crate::Rig;
use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::{CacheMode, Format};
use ctm::pe::Command as Cmd;
use ctm::runtime::Domain;
use ctm::{JitOptions, OptLevel, Tier};

/// rtA = r0 · c0 + c1 (every channel), rtB = (r0.ggr, v) · 2, no other
/// target: two targets, all four channels each.
const TWO_TARGETS: &str = "
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1
    alu r2.rgb = max.x2(s0.ggr, s0.ggr) | r2.a = max.x2(s0.b, s0.b) src0=r0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r2 wait last
";

/// rtA.rgb = r0.rgb only: alpha keeps what memory held.
const RGB_ONLY: &str = "
    out rtA.rgb = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 wait last
";

fn job(w: u32, h: u32, format: Format) -> Job {
    Job::new(w, h)
        .output(0, format)
        .output(1, format)
        .constant(0, [0.5, -0.25, 3.0, 1.0])
        .constant(1, [1e-40, 2.0, -0.0, f32::NAN])
}

/// Runs `src` on both engines (the comparator checks bytes and counters),
/// then on the JIT alone; returns how many strips of quads the JIT ran.
fn strips(src: &str, job: &Job) -> u64 {
    let k = Kernel::assemble(src).unwrap();
    common::both(&k, job);
    if !common::jit_available() {
        return 0;
    }
    let r = k.run(&job.clone().engine(EngineKind::Jit)).unwrap();
    r.report.engine.strip_runs
}

#[test]
fn straight_programs_agree_with_the_interpreter_on_every_domain() {
    for (w, h) in [(1, 1), (2, 2), (3, 5), (4, 1), (37, 23), (64, 8), (9, 64)] {
        for threads in [1, 2, 3] {
            // Float32_1 targets take the red channel alone.
            let format = [Format::Float32_4, Format::Float32_1][threads % 2];
            let job = job(w, h, format).threads(threads);
            let n = strips(TWO_TARGETS, &job);
            // Rows with both pixel rows and a whole batch of quads inside
            // (at most four: eight pixels) take strips; the quads after the
            // last whole batch, and shorter rows, go through the shim.
            if common::jit_available() && w >= 8 && h >= 2 {
                assert!(n > 0, "{w}×{h}, {threads} thread(s): no strip ran");
            }
            assert_eq!(strips(RGB_ONLY, &job), 0, "a channel left unwritten");
        }
    }
}

/// Where ctm chooses a strip's form (optimised code, its options left to
/// ctm), the two forms take turns row by row until each has been timed
/// enough and one is kept. A run's workers keep the engine's plan for
/// their other rows only once it is settled, so the turns go on within
/// one run: 32 rows choose.
#[test]
fn a_strips_forms_take_turns_within_one_run_until_one_is_chosen() {
    if !common::jit_available() {
        return;
    }
    let k = Kernel::assemble(TWO_TARGETS).unwrap();
    let cache = ctm_jit::compile::CodeCache::new(2);
    let opts = JitOptions {
        tier: Tier::Optimised,
        ..JitOptions::default()
    };
    let mut job = job(64, 64, Format::Float32_4)
        .engine(EngineKind::Jit)
        .threads(1);
    job.settings_mut().jit = opts;
    job.settings_mut().code_cache = Some(cache.clone());
    let run = k.run(&job).unwrap();
    assert_eq!(run.report.engine.strip_runs, 32);
    let program = ctm_tools::bench::program_for(&k, &job);
    let (code, fresh) = cache.get(&program, opts).unwrap();
    assert!(!fresh, "the run's code is the cache's");
    assert!(
        !code.strip_form().1,
        "one run of 32 rows left the form unchosen"
    );
}

#[test]
fn other_formats_and_disabled_channels_take_the_shim() {
    let job = job(13, 7, Format::Float32_2);
    assert_eq!(strips(TWO_TARGETS, &job), 0, "float32_2 outputs");
    let job = self::job(13, 7, Format::Uint8_4);
    assert_eq!(strips(TWO_TARGETS, &job), 0, "uint8_4 outputs");
    let job = self::job(13, 7, Format::Float32_4).cache_mode(CacheMode::Strict);
    assert_eq!(
        strips(TWO_TARGETS, &job),
        0,
        "strict caches: ordered delivery"
    );
}

#[test]
fn offset_domains_and_output_masks_through_commands() {
    if !common::jit_available() {
        return;
    }
    for (domain, mask) in [
        // Odd first column and row: the row's ends and the first quad row
        // are partial.
        (
            Domain {
                i0: 3,
                j0: 1,
                i1: 12,
                j1: 8,
            },
            0xF,
        ),
        (
            Domain {
                i0: 0,
                j0: 2,
                i1: 7,
                j1: 5,
            },
            0xF,
        ),
        // A disabled channel: no strip, the shim keeps memory's alpha.
        (
            Domain {
                i0: 2,
                j0: 0,
                i1: 9,
                j1: 5,
            },
            0x7,
        ),
    ] {
        let mut got = Vec::new();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut rig = Rig::new(crate::IDENTITY, 16, 10, CacheMode::Coherent);
            rig.dev.settings_mut().engine = engine;
            let fill: Vec<u8> = (0..16 * 10 * 16).map(|k| k as u8).collect();
            rig.dev.write(rig.out, &fill).unwrap();
            let mut cb = rig.setup();
            cb.push(Cmd::SetCondVal(0.75f32.to_bits()))
                .push(Cmd::SetDomain(domain))
                .push(Cmd::SetOutMask(mask))
                .push(Cmd::StartProgram)
                .push(Cmd::FlushOutCache);
            let (strips, observed) = observe(&mut rig, &cb, fill.len());
            if engine == EngineKind::Jit {
                assert_eq!(strips > 0, mask == 0xF, "{domain:?}, mask {mask:#x}");
            }
            got.push(observed);
        }
        assert!(
            got[0] == got[1],
            "{domain:?}, mask {mask:#x}: the engines differ"
        );
    }
}

#[test]
fn programs_that_are_one_loop_agree_with_the_interpreter_through_strips() {
    let mandelbrot = include_str!("../../examples/mandelbrot.s");
    // REP instead of LOOP, and a second break on the iteration count.
    let rep = mandelbrot
        .replace("LOOP i0", "REP i0")
        .replace("BREAKLOOP", "BREAKREP")
        .replace("ENDLOOP i0", "ENDREP i0")
        .replace(
            "    alu r5.rgb",
            "    alu _ = mad(s0.bbb, s1.111, -s1.ggg) | _ = max.off(s0, s0) src0=r2 src1=c3 res=r>=0\n    BREAKREP alu_result != 0 -> done\n    alu r5.rgb",
        );
    // A break that leaves elsewhere than after the loop: no strip.
    let elsewhere = mandelbrot
        .replace(
            "BREAKLOOP alu_result != 0 -> done",
            "BREAKLOOP alu_result != 0 -> skip",
        )
        .replace("    out rtA", "skip:\n    out rtA");
    for (src, strip) in [(mandelbrot, true), (&rep, true), (&elsewhere, false)] {
        for (w, h) in [(2, 2), (8, 4), (37, 23), (64, 8), (16, 10)] {
            for (threads, count) in [(1, 255), (2, 7), (3, 1), (1, 0)] {
                let format = [Format::Float32_4, Format::Float32_1][usize::from(count % 2)];
                let job = Job::new(w, h)
                    .output(0, format)
                    .constant(0, [4.0 / w as f32, 3.0 / h as f32, 0.0, 0.0])
                    .constant(1, [-2.5, -1.5, 0.0, 0.0])
                    .constant(2, [0.031, 0.047, 0.071, 0.0])
                    .constant(3, [3.0; 4])
                    .int(0, count, 0, 0)
                    .threads(threads);
                let n = strips(src, &job);
                // Whole rows of whole batches (two quads) with iterations.
                let whole = strip && w % 4 == 0 && h >= 2 && count > 0;
                if common::jit_available() {
                    assert_eq!(n > 0, whole, "{w}×{h}, count {count}\n{src}");
                }
            }
        }
    }
}

#[test]
fn a_register_a_loop_keeps_raw_keeps_its_looked_up_bits_where_no_lane_wrote_it() {
    // r2 holds texels with NaN payloads before the loop; the loop writes it
    // through an output modifier (kept raw) after a break that, with c0.r
    // = 1, every lane takes at once: the output must be the texels' bits.
    let src = "tex ld r2.rgba, in0.rgba, r0.rgba unscaled acquire wait
    LOOP i0 -> done
body:
    alu _ = mad(s0, s1.111, s1.000) | _ = max.off(s0, s0) src0=c0 src1=r0 res=r>=0
    BREAKLOOP alu_result != 0 -> done
    alu r2.rgb = mad.x2(s0, s1, s0) | r2.a = mad.x2(s0, s1, s0) src0=r2 src1=c1
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last";
    let (w, h) = (8, 4);
    let nan: Vec<f32> = (0..w * h * 4)
        .map(|k| f32::from_bits(0x7f80_0001 + k))
        .collect();
    for c0 in [1.0, -1.0] {
        let job = Job::new(w, h)
            .input(
                0,
                HostSurface::from_f32(Format::Float32_4, w, h, &nan).unwrap(),
            )
            .output(0, Format::Float32_4)
            .constant(0, [c0; 4])
            .constant(1, [0.5; 4])
            .int(0, 3, 0, 0);
        let n = strips(src, &job);
        if common::jit_available() {
            assert!(n > 0, "c0 = {c0}: no strip ran");
        }
    }
}

#[test]
fn random_loop_programs_agree_with_the_interpreter_through_strips() {
    random_cases(ctm_tools::diff::Case::looped, |job, case, seed| {
        let k = case.uniforms.ints[0];
        (0..4)
            .fold(job, |job, t| job.output(t, element(seed, t)))
            .int(0, k.count, k.init, k.step)
    });
}

#[test]
fn random_straight_programs_agree_with_the_interpreter_through_strips() {
    random_cases(ctm_tools::diff::Case::straight, |job, _, seed| {
        (0..4).fold(job, |job, t| job.output(t, element(seed, t)))
    });
}

/// Target `t`'s format for case `seed`: float32_4 or float32_1 (the red
/// channel alone), both of which strips write.
fn element(seed: u64, t: u8) -> Format {
    if (seed >> t) & 1 == 1 {
        Format::Float32_1
    } else {
        Format::Float32_4
    }
}

/// Runs `CTM_STRIP_CASES` (300) random cases that `make` builds, their jobs
/// given outputs by `outputs`, on both engines with [`random_jit`]'s
/// options; at least a fifth must run strips (domains without a whole quad
/// inside, and run errors, take none).
fn random_cases(
    make: fn(u64) -> ctm_tools::diff::Case,
    outputs: impl Fn(Job, &ctm_tools::diff::Case, u64) -> Job,
) {
    let cases: u32 = std::env::var("CTM_STRIP_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let mut stripped = 0;
    for seed in 0..u64::from(cases) {
        let case = make(seed);
        let k = Kernel::assemble(&case.asm).unwrap_or_else(|e| panic!("{}: {e}", case.asm));
        let d = case.domain;
        let jit = random_jit(seed);
        let job = Job::new(d.i1 + 1, d.j1 + 1)
            .threads(1 + (seed % 3) as usize)
            .jit(jit);
        let job = with_case_data(outputs(job, &case, seed), &case, seed);
        let ran = strips_of(
            &k,
            &job,
            &format!("seed {seed}, {jit:?}, {d:?}\n{}", case.asm),
        );
        stripped += u32::from(ran > 0);
    }
    if common::jit_available() {
        assert!(
            stripped * 5 > cases,
            "{stripped} of {cases} programs ran strips"
        );
    }
}

/// An input of the random texels of `image`, in a format chosen by
/// `seed`: float32_4 as they are, or their bits as the elements of uint8_4,
/// uint16_1 and float32_1 (every bit pattern a unorm integer).
pub(crate) fn input(image: &ctm::runtime::texture::Image, seed: u64) -> HostSurface {
    let format = [
        Format::Float32_4,
        Format::Uint8_4,
        Format::Uint16_1,
        Format::Float32_1,
    ][(seed % 4) as usize];
    let (width, height) = (image.width, image.height);
    if format == Format::Float32_4 {
        let texels: Vec<f32> = image
            .texels
            .iter()
            .flatten()
            .map(|&b| f32::from_bits(b))
            .collect();
        return HostSurface::from_f32(format, width, height, &texels).unwrap();
    }
    let data = image
        .texels
        .iter()
        .flat_map(|t| t[0].to_le_bytes().into_iter().take(format.bytes()))
        .collect();
    HostSurface {
        format,
        width,
        height,
        data,
    }
}

/// [`strips`] for a kernel, naming the program when the engines differ.
fn strips_of(k: &Kernel, job: &Job, asm: &str) -> u64 {
    if let Err(report) = ctm_tools::check::run_both(k, job) {
        panic!("{asm}\n{report}");
    }
    if !common::jit_available() {
        return 0;
    }
    // A run error (the same on both engines) runs no strip.
    k.run(&job.clone().engine(EngineKind::Jit))
        .map_or(0, |r| r.report.engine.strip_runs)
}

#[test]
fn uncached_writes_of_offset_domains_keep_row_order_through_strips() {
    // Odd first columns: a row's first quad is partly outside the domain
    // and goes through the shim before the strip, quads after the strip's
    // last whole batch after it; every quad writes one element (value
    // i/2 + j at (0, its first pixel's j): the shared index), so the
    // order of the row's writes decides what memory keeps. The first
    // three domains' whole quads fill whole batches of any width (16, 16
    // and 8 quads), so a strip ends each of their rows.
    let src = "
.uncached
    alu r1.rgb = mad(s0.rrg, s1.r01, s0.g00) | r1.a = max.off(s0.0, s0.0) src0=r0 src1=0.5
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
";
    for domain in [
        Domain {
            i0: 3,
            j0: 1,
            i1: 35,
            j1: 8,
        },
        Domain {
            i0: 1,
            j0: 0,
            i1: 33,
            j1: 9,
        },
        Domain {
            i0: 5,
            j0: 0,
            i1: 21,
            j1: 9,
        },
        Domain {
            i0: 0,
            j0: 2,
            i1: 17,
            j1: 5,
        },
    ] {
        let mut got = Vec::new();
        for engine in engines_here() {
            let mut rig = Rig::new(src, 48, 10, CacheMode::Coherent);
            rig.dev.settings_mut().engine = engine;
            let fill: Vec<u8> = (0..48 * 10 * 16).map(|k| k as u8).collect();
            rig.dev.write(rig.out, &fill).unwrap();
            let mut cb = rig.setup();
            cb.push(Cmd::SetDomain(domain))
                .push(Cmd::StartProgram)
                .push(Cmd::FlushOutCache);
            let (strips, observed) = observe(&mut rig, &cb, fill.len());
            if engine == EngineKind::Jit {
                assert!(strips > 0, "{domain:?}: no strip ran");
            }
            got.push(observed);
        }
        assert!(
            got.windows(2).all(|p| p[0] == p[1]),
            "{domain:?}: the engines differ"
        );
    }
}

fn engines_here() -> Vec<EngineKind> {
    let mut e = vec![EngineKind::Interp];
    if common::jit_available() {
        e.push(EngineKind::Jit);
    }
    e
}

/// Submits `cb` on `rig`: the strips its run ran, and what the engines must
/// agree on — the run's report (engine statistics aside) and the first
/// `len` bytes of output 0.
fn observe(rig: &mut Rig, cb: &ctm::pe::CommandBuffer, len: usize) -> (u64, (String, Vec<u8>)) {
    let r = rig.submit(cb).unwrap();
    let run = ctm::pe::RunReport {
        engine: Default::default(),
        ..r.runs[0].clone()
    };
    let mut bytes = vec![0; len];
    rig.dev.read(rig.out, &mut bytes).unwrap();
    (r.runs[0].engine.strip_runs, (format!("{run:?}"), bytes))
}

#[test]
fn random_uncached_programs_of_one_write_agree_with_the_interpreter_through_strips() {
    // Random straight bodies ending in one uncached write: every format of
    // output 0; memory, counters and writes outside the surface must be the
    // interpreter's.
    random_cases(
        ctm_tools::diff::Case::straight_uncached,
        |job, case, seed| {
            let format = Format::ALL[(seed % 5) as usize];
            let (w, h) = (case.domain.i1 + 1, case.domain.j1 + 1);
            job.output_init(0, crate::uncached::memory(format, w, h))
        },
    );
}

/// The JIT options of random case `seed`: both optimisation levels and each
/// batch width chosen, or both left to ctm (then the strip's two forms take
/// turns row by row until one is chosen); quick code one case in five.
fn random_jit(seed: u64) -> JitOptions {
    let opt_level = [OptLevel::None, OptLevel::Speed, OptLevel::Auto][(seed % 3) as usize];
    let quads_per_iter = match opt_level {
        OptLevel::Auto => 0,
        _ => [0, 1, 2, 4][(seed / 3 % 4) as usize],
    };
    JitOptions {
        opt_level,
        quads_per_iter,
        tier: if seed % 5 == 4 {
            Tier::Quick
        } else {
            Tier::Optimised
        },
    }
}

/// `job` with random case `case`'s constants and its inputs 0 and 1 (in a
/// format `seed` chooses).
fn with_case_data(mut job: Job, case: &ctm_tools::diff::Case, seed: u64) -> Job {
    for (n, c) in case.uniforms.consts.iter().enumerate().take(8) {
        job = job.constant(n as u8, c.map(f32::from_bits));
    }
    for (n, image) in case.textures.inputs.iter().enumerate().take(2) {
        let Some(image) = image else { continue };
        job = job.input(n as u8, input(image, seed + n as u64));
    }
    job
}
