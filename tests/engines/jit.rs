//! The JIT engine's own contract: the code cache, statistics, option
//! checking, compile failures (the tool's side is the tools crate's
//! `engines` test).

use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;
use ctm_jit::compile::{JitError, JitOptions, OptLevel, Tier, compile};

use crate::common;
use common::jit_available;
use ctm_tools::check::{Observed, assert_agree};

#[test]
fn a_second_run_of_the_same_program_compiles_nothing() {
    if !jit_available() {
        return;
    }
    // A program no other test uses, so the first run must compile it.
    let k = Kernel::assemble(
        "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c7 src2=c6
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    // Its own code cache: what it compiles is counted below.
    let cache = ctm::CodeCache::new(4);
    let mut job = Job::new(9, 5)
        .constant(7, [0.5, 0.25, 2.0, 3.0])
        .constant(6, [1.0; 4])
        .output(0, Format::Float32_4)
        .code_cache(&cache);
    job.settings_mut().engine = EngineKind::Jit;
    let first = k.run(&job).unwrap();
    let second = k.run(&job).unwrap();
    assert_eq!(first.report.engine.compiled, 1, "{:?}", first.report.engine);
    assert_eq!(
        second.report.engine.compiled, 0,
        "{:?}",
        second.report.engine
    );
    assert!(second.report.engine.cache_hits >= 1);
    assert!(second.report.engine.native_runs > 0);
    assert_eq!(first.outputs, second.outputs);
    // Both tiers, both optimisation levels compile every clause.
    let program = ctm_tools::bench::program_of(&k);
    for (opt_level, tier) in [
        (OptLevel::None, Tier::Optimised),
        (OptLevel::Speed, Tier::Optimised),
        (OptLevel::Auto, Tier::Quick),
    ] {
        for quads_per_iter in [1, 2, 4] {
            let code = compile(
                &program,
                JitOptions {
                    opt_level,
                    quads_per_iter,
                    tier,
                },
            )
            .unwrap();
            assert_eq!(code.fallbacks(), 0);
            assert_eq!(code.len(), program.clauses.len());
        }
    }
}

#[test]
fn invalid_options_are_errors() {
    if !jit_available() {
        return;
    }
    let program = ctm_tools::bench::program_of(
        &Kernel::assemble(
            "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
        )
        .unwrap(),
    );
    let err = compile(
        &program,
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 3,
            ..JitOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, JitError::Options(_)), "{err}");
}

#[test]
fn if_else_outside_loops_runs_in_a_branch_region_compiled_with_the_program() {
    if !jit_available() {
        return;
    }
    // abs2 with its own registers (no other test compiles this program):
    // out = x >= 0 ? 2x : -x on the red channel of input 0.
    let k = Kernel::assemble(
        "    tex ld r11.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r11 res=r<0 wait
    IF alu_result != 0 -> negative jump=incr
    alu r12.rgb = max.x2(s0, s0) | r12.a = max.x2(s0, s0) src0=r11
    ELSE -> done
negative:
    alu r12.rgb = max(-s0, -s0) | r12.a = max(-s0, -s0) src0=r11
    ENDIF
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r12 wait last",
    )
    .unwrap();
    let (w, h) = (16, 8);
    // Its own code cache: what it compiles is counted below.
    let cache = ctm::CodeCache::new(4);
    let run = |sign: &dyn Fn(u32) -> f32| {
        let x: Vec<f32> = (0..w * h * 4)
            .map(|k| sign(k / 4) * (k as f32 + 0.5))
            .collect();
        let job = Job::new(w, h)
            .input(
                0,
                ctm::kernel::HostSurface::from_f32(Format::Float32_4, w, h, &x).unwrap(),
            )
            .output(0, Format::Float32_4)
            .code_cache(&cache);
        let mut interp = job.clone();
        interp.settings_mut().engine = EngineKind::Interp;
        let mut jit = job;
        jit.settings_mut().engine = EngineKind::Jit;
        jit.settings_mut().threads = 1;
        let (want, got) = (k.run(&interp), k.run(&jit));
        let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
        assert_agree(&a, &b, "interp", "jit");
        got.unwrap().report.engine
    };
    // The whole program is one branch region: its driver, holding every
    // clause's general body, runs each group from the lookup through the
    // output; the shim executes only the last terminator. Every pixel
    // taking the same side compiles nothing more than the program.
    let uniform = run(&|_| 1.0);
    assert_eq!(uniform.compiled, 1, "{uniform:?}");
    assert_eq!(uniform.loop_runs, (w * h / 32) as u64, "{uniform:?}");
    assert_eq!((uniform.native_runs, uniform.general_compiled), (0, 0));
    // Neither do pixels that diverge inside quads.
    let divergent = run(&|p| if p % 3 == 0 { -1.0 } else { 1.0 });
    assert_eq!(divergent.compiled, 0, "{divergent:?}");
    assert_eq!(divergent.general_compiled, 0, "{divergent:?}");
    assert_eq!(divergent.loop_runs, (w * h / 32) as u64, "{divergent:?}");
    assert_eq!(divergent.fallback_runs, 0, "{divergent:?}");
}

/// Runs `k` on both engines; the outputs must agree. Returns the JIT's
/// engine statistics.
fn agree_with_interp(k: &Kernel, job: &Job) -> ctm::runtime::EngineStats {
    let mut interp = job.clone();
    interp.settings_mut().engine = EngineKind::Interp;
    let mut jit = job.clone();
    jit.settings_mut().engine = EngineKind::Jit;
    let (want, got) = (k.run(&interp), k.run(&jit));
    let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
    assert_agree(&a, &b, "interp", "jit");
    got.unwrap().report.engine
}

#[test]
fn a_lowering_that_panics_leaves_its_clause_to_the_interpreter_and_says_where() {
    use ctm_jit::fault::{Site, arm};
    if !jit_available() {
        return;
    }
    // 352.0 is an inline constant no other program of these tests uses.
    arm(352.0f32.to_bits(), Site::Clause);
    let k = Kernel::assemble(
        "    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=r0
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=352.0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
    )
    .unwrap();
    let job = Job::new(8, 4).output(0, Format::Float32_4);
    let e = agree_with_interp(&k, &job);
    // The program runs in strips: its strip fails to compile the same way,
    // and its clause's own body, compiled for the rows then, too.
    assert!(e.fallback_runs > 0 && e.strip_runs == 0, "{e:?}");
    // The harness's engine check refuses a JIT that fell back, though the
    // results agree.
    let refused = ctm_tools::check::run_both(&k, &job).unwrap_err();
    assert!(refused.contains("fell back"), "{refused}");
    let why = &e.fallback_reasons;
    assert!(
        why.iter().any(|r| r
            .starts_with("clause 0 (own body): the lowering panicked at instruction 1")
            && r.contains("injected fault")),
        "{why:?}"
    );
    assert!(
        why.iter()
            .any(|r| r.starts_with("strip: the lowering panicked at instruction 1")),
        "{why:?}"
    );
}

/// A program that is one loop: r1 starts as `start`, then each iteration
/// makes it r1·`step` + `add` and leaves once `until` − r1 is ≥ 0 (red
/// channel); out r1.
fn one_loop([start, step, add, until]: [&str; 4]) -> Kernel {
    Kernel::assemble(&format!(
        "    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0={start}
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1={step} src2={add}
    alu p.r>=0 = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0={until} src1=r1 srcp=sub res=r>=0
    BREAKLOOP alu_result != 0 -> done
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last"
    ))
    .unwrap()
}

#[test]
fn a_loop_region_that_cannot_be_compiled_is_reported_and_runs_in_the_shim() {
    use ctm_jit::fault::{Site, arm};
    if !jit_available() {
        return;
    }
    // 416.0: as above, armed for lane-wise loop bodies only.
    arm(416.0f32.to_bits(), Site::Region);
    let k = one_loop(["0.0", "0.5", "416.0", "r0"]);
    let job = Job::new(16, 8)
        .int(0, 30, 0, 1)
        .output(0, Format::Float32_4);
    let e = agree_with_interp(&k, &job);
    // The clauses compiled; the region runs in lock step, and says why.
    assert_eq!((e.fallback_clauses, e.lanewise_runs), (0, 0), "{e:?}");
    assert!(e.loop_runs > 0, "{e:?}");
    let why = &e.fallback_reasons;
    assert!(
        why.iter().any(|r| r.starts_with(
            "loop region at instruction 2 (lane-wise body): the lowering panicked at instruction 2"
        )),
        "{why:?}"
    );
}

#[test]
fn code_caches_keep_what_they_hold_apart() {
    if !jit_available() {
        return;
    }
    let program = |c: u32| {
        Kernel::assemble(&format!(
            "alu r1.rgb = mad(s0, s1, s0) | r1.a = mad(s0, s1, s0) src0=r0 src1=c{c}
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last"
        ))
        .unwrap()
    };
    let compiled = |k: &Kernel, cache: &std::sync::Arc<ctm::CodeCache>| {
        let job = Job::new(4, 4)
            .output(0, Format::Float32_4)
            .engine(EngineKind::Jit)
            .code_cache(cache);
        k.run(&job).unwrap().report.engine.compiled
    };
    // Each run on a new kernel (a kernel run again keeps its own code,
    // below): the cache alone decides what is compiled again.
    let (a, b) = (|| program(41), || program(42));
    // A cache of one program: the second program pushes the first out.
    let one = ctm::CodeCache::new(1);
    assert_eq!(compiled(&a(), &one), 1);
    assert_eq!(compiled(&a(), &one), 0);
    assert_eq!(compiled(&b(), &one), 1);
    assert_eq!(compiled(&a(), &one), 1, "evicted by b");
    // Another cache holds nothing of the first's.
    let other = ctm::CodeCache::new(4);
    assert_eq!(compiled(&a(), &other), 1);
    assert_eq!(compiled(&a(), &other), 0);
    // A kernel run again keeps the code its last run used, even where the
    // cache has let it go.
    let kept = a();
    let one = ctm::CodeCache::new(1);
    assert_eq!(compiled(&kept, &one), 1);
    assert_eq!(compiled(&b(), &one), 1);
    assert_eq!(compiled(&kept, &one), 0, "kept by the kernel");
}

/// A texture unit with an 8 × 8 uint8_4 output 0 for uncached writes: it
/// hands out a log (or none) and records the writes made through it and
/// those made through the runtime.
struct UnormOut {
    log: Vec<ctm::state::UncachedWrite>,
    logged: usize,
    through_runtime: Vec<(u32, u32, u32)>,
    offer_log: bool,
}

impl ctm::runtime::TextureUnit for UnormOut {
    fn fetch(
        &mut self,
        _: ctm::runtime::FetchRequest,
        _: &[[u32; 4]],
        _: ctm::state::Mask,
        _: &[(u32, u32)],
        _: &mut [[u32; 4]],
    ) -> Result<(), ctm::runtime::TexFault> {
        Err(ctm::runtime::TexFault("no inputs".into()))
    }

    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), ctm::runtime::TexFault> {
        self.through_runtime.push((x, y, value));
        Ok(())
    }

    fn uncached_log(&mut self, n: usize) -> ctm::state::UmrtLog {
        if !self.offer_log {
            return ctm::state::UmrtLog::NONE;
        }
        self.log.reserve(n);
        ctm::state::UmrtLog {
            at: self.log.spare_capacity_mut().as_mut_ptr().cast(),
            base: 0x1000,
            pitch: 8,
            shift: 2,
            size: [8.0, 8.0],
            chan_off: 2,
            unorm: 255.0,
        }
    }

    unsafe fn uncached_logged(&mut self, n: usize) {
        // SAFETY: as the trait requires, the first `n` spare entries were
        // written and `n` is within what was reserved.
        unsafe { self.log.set_len(self.log.len() + n) };
        self.logged += n;
    }
}

/// An uncached program writing 0.5 to (i, j) of every pixel, and its
/// constants.
fn half_to_pixels() -> (Kernel, ctm::state::Uniforms) {
    let k = Kernel::assemble(
        ".uncached
    alu r1.rgb = mad(s0.r00, s1.111, s1.0rg) | r1.a = max.off(s0.0, s0.0) src0=c0 src1=r0
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    let mut uniforms = ctm::state::Uniforms::default();
    uniforms.consts[0] = [0.5f32.to_bits(), 0, 0, 0];
    (k, uniforms)
}

/// `k`'s program, compiled for output 0 unorm or not as `known` says.
fn compiled_for(k: &Kernel, known: Option<bool>) -> ctm::ir::Program {
    ctm::ir::Program {
        uncached_unorm: known,
        ..ctm_tools::bench::program_of(k)
    }
}

impl UnormOut {
    /// Checks that `n` writes were logged, each 0.5 quantised to a byte:
    /// 0.5 · 255 + 0.5, floored, 128.
    fn assert_logged_halves(&self, n: usize, what: &str) {
        assert_eq!(self.logged, n, "{what}");
        assert!(
            // Inside the surface, at channel 0 (byte 2) of its element.
            (self.log.iter()).all(|w| w.bytes[0] == 128 && w.addr % 4 == 2 && w.addr >= 0x1000),
            "{what}: {:?}",
            &self.log[..2]
        );
    }

    fn offering_a_log() -> UnormOut {
        UnormOut {
            log: Vec::new(),
            logged: 0,
            through_runtime: Vec::new(),
            offer_log: true,
        }
    }
}

#[test]
fn uncached_writes_compiled_for_another_output_format_go_through_the_runtime() {
    // Compiled code that knows output 0's format appends uncached writes
    // to the log only where the run's output has that format; for another
    // it hands them to the runtime, which quantises them.
    if !jit_available() {
        return;
    }
    let (k, uniforms) = half_to_pixels();
    for known in [None, Some(false), Some(true)] {
        let program = compiled_for(&k, known);
        let mut engine = ctm::jit::JitEngine::new(JitOptions::default());
        let mut out = UnormOut::offering_a_log();
        let mut sink = |_: u32, _: u32, _: &ctm::runtime::PixelOut| {};
        ctm::runtime::Runner::new(&program, &mut engine, &uniforms, Default::default())
            .run(ctm::runtime::Domain::new(8, 8), 0, &mut out, &mut sink)
            .unwrap();
        let what = format!("compiled for unorm {known:?}");
        if known == Some(false) {
            assert_eq!(out.logged, 0, "{what}");
            assert_eq!(out.through_runtime.len(), 64, "{what}");
            assert!(
                out.through_runtime.iter().all(|w| w.2 == 0.5f32.to_bits()),
                "{what}"
            );
        } else {
            assert!(out.through_runtime.is_empty(), "{what}");
            out.assert_logged_halves(64, &what);
        }
    }
}

#[test]
fn a_strip_runs_only_with_a_log_of_the_output_format_it_was_compiled_for() {
    // A compiled strip of an uncached program that knows output 0's
    // format makes its writes only that format's way: handed a log of
    // another format, it refuses rather than append what that format
    // would not store (the machine's rows then go through the shim).
    use ctm::runtime::Engine;
    if !jit_available() {
        return;
    }
    let (k, uniforms) = half_to_pixels();
    // The unit's log is of a unorm format (1.0 stores as 255).
    for known in [None, Some(false), Some(true)] {
        let program = compiled_for(&k, known);
        let mut engine = ctm::jit::JitEngine::new(JitOptions {
            tier: Tier::Optimised,
            ..JitOptions::default()
        });
        let plan = engine.strip(&program, 4).expect("the program has a strip");
        assert_eq!(plan.writes, 1);
        let mut out = UnormOut::offering_a_log();
        let strip = ctm::state::Strip {
            rows: [[std::ptr::null_mut(); 2]; 4],
            quads: 4,
            i0: 0,
            j: 0,
            v: 0,
            events: std::ptr::null_mut(),
            narrow: 0,
        };
        let ran = {
            let _daz = ctm_jit::host::DazGuard::new(true);
            engine.run_strip(&program, &uniforms, &mut out, &strip)
        };
        let what = format!("compiled for unorm {known:?}");
        if known == Some(false) {
            let e = ran.expect_err(&what).to_string();
            assert!(e.contains("another output format"), "{what}: {e}");
            assert_eq!(out.logged, 0, "{what}");
        } else {
            ran.expect(&what);
            out.assert_logged_halves(16, &what);
        }
        assert!(out.through_runtime.is_empty(), "{what}");
    }
}

#[test]
fn a_strip_runs_only_on_rows_of_the_target_formats_it_was_compiled_for() {
    // A compiled strip of a program that says which render targets are
    // float32_1 stores each target that one way: handed rows of other
    // formats it refuses, and with the formats it knows it writes them.
    use ctm::runtime::Engine;
    if !jit_available() {
        return;
    }
    let k = Kernel::assemble(
        "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=0.5 src2=c5
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
    )
    .unwrap();
    let mut uniforms = ctm::state::Uniforms::default();
    uniforms.consts[5] = [1.0f32, 2.0, 3.0, 4.0].map(f32::to_bits);
    for (known, narrow) in [(None, 1), (Some(1), 1), (Some(0), 1), (Some(1), 0)] {
        let program = ctm::ir::Program {
            narrow: known,
            ..ctm_tools::bench::program_of(&k)
        };
        let mut engine = ctm::jit::JitEngine::new(JitOptions {
            tier: Tier::Optimised,
            ..JitOptions::default()
        });
        engine.strip(&program, 4).expect("the program has a strip");
        // Rows for float32_4 elements hold float32_1 ones too.
        let mut rows = [[0u32; 32]; 2];
        let [top, bottom] = rows.each_mut().map(|r| r.as_mut_ptr().cast::<u8>());
        let strip = ctm::state::Strip {
            rows: [
                [top, bottom],
                [std::ptr::null_mut(); 2],
                [std::ptr::null_mut(); 2],
                [std::ptr::null_mut(); 2],
            ],
            quads: 4,
            i0: 0,
            j: 0,
            v: 0,
            events: std::ptr::null_mut(),
            narrow,
        };
        let ran = {
            let _daz = ctm_jit::host::DazGuard::new(true);
            engine.run_strip(&program, &uniforms, &mut ctm::runtime::NoTextures, &strip)
        };
        let what = format!("compiled for {known:?}, rows for {narrow}");
        if known.is_some_and(|n| u32::from(n) != narrow) {
            let e = ran.expect_err(&what).to_string();
            assert!(e.contains("other formats"), "{what}: {e}");
            assert_eq!(rows, [[0; 32]; 2], "{what}");
            continue;
        }
        ran.expect(&what);
        // Pixel (i, j): red i·0.5 + 1, the rest as their constants.
        for (j, row) in rows.iter().enumerate() {
            for i in 0..8 {
                let red = (i as f32 * 0.5 + 1.0).to_bits();
                match narrow {
                    1 => assert_eq!(row[i], red, "{what}: ({i}, {j})"),
                    _ => {
                        let y = j as f32 * 0.5 + 2.0;
                        let want = [red, y.to_bits(), 3.0f32.to_bits(), 4.5f32.to_bits()];
                        assert_eq!(row[4 * i..4 * i + 4], want, "{what}: ({i}, {j})");
                    }
                }
            }
        }
    }
}

#[test]
fn a_program_that_runs_in_strips_compiles_the_rest_only_for_rows_strips_do_not_run() {
    use ctm_jit::compile::{ClauseCode, OwnBody};
    if !jit_available() {
        return;
    }
    // A straight program and a one-loop one, with constants no other test
    // uses; each has a strip.
    let straight = Kernel::assemble(
        "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=0.625 src2=c5
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
    )
    .unwrap();
    let looped = one_loop(["r0", "0.375", "1.0", "c5"]);
    let cache = ctm::CodeCache::new(4);
    let job = |w: u32| {
        let mut job = Job::new(w, 8)
            .constant(5, [40.0, 3.0, -2.0, 60.0])
            .int(0, 9, 0, 1)
            .output(0, Format::Float32_4)
            .code_cache(&cache);
        job.settings_mut().threads = 1;
        job
    };
    for k in [&straight, &looped] {
        // Compiled with the program: nothing but what the shim may need
        // later, each part on first use.
        let program = ctm_tools::bench::program_for(k, &job(16));
        let code = compile(&program, JitOptions::default()).unwrap();
        let own = (0..code.len() as u32)
            .filter(|&i| matches!(code.clause(i), ClauseCode::Later))
            .collect::<Vec<_>>();
        assert!(!own.is_empty(), "{code:?}");
        for &i in &own {
            let (body, took) = code.own(i, &program);
            assert!(took.is_some() && body.is_ok(), "clause {i}: {body:?}");
            let (again, took) = code.own(i, &program);
            assert!(took.is_none() && matches!(again, Ok(OwnBody::Native(_) | OwnBody::Full(_))));
        }
        for r in 0..code.loop_count() {
            assert!(code.lanewise(r).is_some());
            let (f, took) = code.lanewise_fn(r, &program);
            assert!(f.is_ok() && took.is_some(), "{f:?}");
            assert!(code.lanewise_fn(r, &program).1.is_none());
        }
        // Whole rows run in the strip: nothing else is compiled.
        let whole = agree_with_interp(k, &job(16));
        assert!(whole.strip_runs > 0, "{whole:?}");
        assert_eq!(
            (whole.general_compiled, whole.native_runs),
            (0, 0),
            "{whole:?}"
        );
        assert_eq!(whole.lanewise_runs, 0, "{whole:?}");
        // Odd rows end in the shim (a loop's rows run there whole): what
        // it runs is compiled then, once.
        let odd = agree_with_interp(k, &job(15));
        assert!(odd.general_compiled >= 1 && odd.native_runs > 0, "{odd:?}");
        assert!(odd.fallback_reasons.is_empty(), "{odd:?}");
        let again = agree_with_interp(k, &job(15));
        assert_eq!(again.general_compiled, 0, "{again:?}");
    }
    // The loop's rows in the shim ran lane-wise, compiled on first use.
    let odd = agree_with_interp(&looped, &job(13));
    assert!(odd.lanewise_runs > 0, "{odd:?}");
}
