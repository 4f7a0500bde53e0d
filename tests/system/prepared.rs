//! A prepared job run again and again (`Kernel::prepare`) gives what a
//! fresh `Kernel::run` gives, every time: outputs start from the job's
//! contents on each run (zeros, initial contents, the conditional buffer),
//! constants set between runs take effect, on both engines.

use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, JobResult, Kernel};
use ctm::mc::Format;
use ctm_tools::bench::suite;
use std::path::Path;

fn example(name: &str) -> Kernel {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    Kernel::new(ctm::program::load(&path, false).unwrap().exe)
}

fn engines() -> Vec<EngineKind> {
    let mut e = vec![EngineKind::Interp];
    if common::jit_available() {
        e.push(EngineKind::Jit);
    }
    e
}

/// Runs `job` prepared three times and checks each run against a fresh
/// `Kernel::run`.
fn check_reruns(k: &Kernel, job: &Job) {
    for engine in engines() {
        let job = job.clone().engine(engine);
        let want: JobResult = k.run(&job).unwrap();
        crate::assert_native(engine, &want.report, "a whole run");
        let mut p = k.prepare(&job).unwrap();
        for run in 0..3 {
            let report = p.run().unwrap();
            crate::assert_native(engine, &report, &format!("re-run {run}"));
            assert_eq!(report.pixels, want.report.pixels, "{engine:?} run {run}");
            for (n, s) in &want.outputs {
                assert_eq!(
                    p.output(*n).as_ref(),
                    Some(s),
                    "{engine:?} run {run}, output {n}"
                );
                let (bytes, fmt) = p.output_in_place(*n).unwrap();
                let row = s.width as usize * fmt.format.bytes();
                let pitch = fmt.pitch as usize * fmt.format.bytes();
                for y in 0..s.height as usize {
                    assert_eq!(
                        &bytes[y * pitch..y * pitch + row],
                        &s.data[y * row..(y + 1) * row]
                    );
                }
            }
            assert_eq!(p.cond(), want.cond, "{engine:?} run {run}");
        }
    }
}

#[test]
fn every_benchmark_case_reruns_alike() {
    for name in suite::NAMES {
        let mut c = suite::case(name).unwrap();
        let (w, h) = c.job.size();
        c.job = c.job.domain(w.min(20), h.min(12));
        check_reruns(&c.kernel, &c.job);
    }
}

#[test]
fn outputs_and_the_conditional_buffer_start_over_on_each_run() {
    let (w, h) = (8u32, 8u32);
    // The z-buffer writes its depth back where it passes: a second run on
    // the first run's buffer would pass nowhere.
    let job = common::zbuffer_job(w, h)
        .output_init(0, HostSurface::filled(Format::Float32_4, w, h, 0.25));
    check_reruns(&example("zbuffer.s"), &job);
}

#[test]
fn constants_set_between_runs_take_effect() {
    let c = suite::case("chains8").unwrap();
    let job = c.job.clone().domain(16, 8);
    let mut p = c.kernel.prepare(&job).unwrap();
    p.run().unwrap();
    let before = p.output(0).unwrap();
    p.set_constant(11, [0.5; 4]);
    p.run().unwrap();
    let want = c.kernel.run(&job.clone().constant(11, [0.5; 4])).unwrap();
    assert_ne!(p.output(0).as_ref(), Some(&before));
    assert_eq!(p.output(0).as_ref(), want.output(0));
}

#[test]
fn inputs_replaced_between_runs_take_effect() {
    let c = suite::case("saxpy").unwrap();
    let job = c.job.clone().domain(16, 8);
    let mut p = c.kernel.prepare(&job).unwrap();
    p.run().unwrap();
    let x = HostSurface::filled(Format::Float32_4, 512, 512, 2.0);
    p.set_input(0, &x).unwrap();
    p.run().unwrap();
    let want = c.kernel.run(&job.clone().input(0, x)).unwrap();
    assert_eq!(p.output(0).as_ref(), want.output(0));
    // Another size, format or an unbound input is refused.
    let small = HostSurface::filled(Format::Float32_4, 4, 4, 2.0);
    assert!(p.set_input(0, &small).is_err());
    assert!(p.set_input(7, &small).is_err());
}

#[test]
fn a_second_request_for_an_output_replaces_the_first() {
    let job = Job::new(2, 2)
        .output(0, Format::Float32_4)
        .output_init(0, HostSurface::filled(Format::Float32_1, 2, 2, 0.5));
    assert_eq!(job.requested_output(0), Some(Format::Float32_1));
    assert!(job.initial_output(0).is_some());
    let job = job.output(0, Format::Float32_2);
    assert_eq!(job.requested_output(0), Some(Format::Float32_2));
    assert!(job.initial_output(0).is_none());
}

#[test]
fn a_kernels_next_run_starts_on_zero_memory_whatever_the_last_one_left() {
    // rtA = r0 + 1: every element non-zero; rtB never written.
    let k = Kernel::assemble(
        "out rtA.rgb = mad(s0, s1, s1) | rtA.a = mad(s0, s1, s1) src0=r0 src1=1.0 wait last",
    )
    .unwrap();
    // A large job fills memory; a small one then places its never-written
    // output where the large one's results were (the memory is reused).
    let big = Job::new(64, 64).output(0, Format::Float32_4);
    let small = Job::new(8, 8)
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4);
    for round in 0..3 {
        let out = k.run(&big).unwrap();
        assert_eq!(
            out.output(0).unwrap().to_f32()[4 * 65],
            2.0,
            "round {round}"
        );
        let out = k.run(&small).unwrap();
        assert!(
            out.output(1)
                .unwrap()
                .to_f32()
                .iter()
                .all(|&x| x.to_bits() == 0),
            "round {round}: an output nothing wrote reads zero"
        );
        assert_eq!(out.output(0).unwrap().to_f32()[4 * 9], 2.0, "round {round}");
        // A prepared job leaves its memory behind when dropped.
        let mut p = k.prepare(&big).unwrap();
        p.run().unwrap();
        drop(p);
        let out = k.run(&small).unwrap();
        assert!(
            out.output(1)
                .unwrap()
                .to_f32()
                .iter()
                .all(|&x| x.to_bits() == 0)
        );
    }
}

#[test]
fn re_runs_restore_what_a_run_may_leave_unwritten_and_skip_what_it_overwrites() {
    let init = HostSurface::from_f32(Format::Float32_4, 2, 1, &[9.0; 8]).unwrap();
    // Writes every channel of rtA: nothing to restore between runs.
    let all = Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c1 wait last",
    )
    .unwrap();
    // Kills every pixel when c0 is negative: a run may write nothing, so
    // each run starts from the initial contents again.
    let kills = Kernel::assemble(
        "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c0
    tex kill r1.rgba, in0.rgba, r1.rgba
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c1 wait last",
    )
    .unwrap();
    for (k, second) in [(&all, [5.0; 4]), (&kills, [9.0; 4])] {
        let job = Job::new(2, 1)
            .constant(0, [1.0; 4])
            .constant(1, [1.0, 2.0, 3.0, 4.0])
            .output(0, Format::Float32_4)
            .output_init(0, init.clone());
        let mut p = k.prepare(&job).unwrap();
        p.run().unwrap();
        assert_eq!(p.output(0).unwrap().to_f32()[..4], [1.0, 2.0, 3.0, 4.0]);
        p.set_constant(0, [-1.0; 4]);
        p.set_constant(1, [5.0; 4]);
        p.run().unwrap();
        let out = p.output(0).unwrap().to_f32();
        assert_eq!(out[..4], second);
        let fresh = job.clone().constant(0, [-1.0; 4]).constant(1, [5.0; 4]);
        assert_eq!(out, k.run(&fresh).unwrap().output(0).unwrap().to_f32());
    }
}

#[test]
fn large_outputs_are_restored_in_bands_alike_on_any_number_of_threads() {
    // Kills every pixel when c0 is negative: the second run writes
    // nothing, so it shows what each run starts from. 300×300 float32_4
    // (1,440,000 bytes, a multiple of neither 4 KiB nor the thread counts)
    // is split in bands over the threads; each element's own value
    // catches a band put in the wrong place.
    let k = Kernel::assemble(
        "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c0
    tex kill r1.rgba, in0.rgba, r1.rgba
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c1 wait last",
    )
    .unwrap();
    let (w, h) = (300u32, 300u32);
    let values: Vec<f32> = (0..w * h * 4).map(|v| v as f32).collect();
    let init = HostSurface::from_f32(Format::Float32_4, w, h, &values).unwrap();
    let zeros = HostSurface::filled(Format::Float32_4, w, h, 0.0);
    for threads in [1, 2, 3, 7] {
        for (from, want) in [(Some(&init), &init), (None, &zeros)] {
            let mut job = Job::new(w, h)
                .constant(0, [1.0; 4])
                .constant(1, [5.0; 4])
                .output(0, Format::Float32_4)
                .threads(threads);
            if let Some(init) = from {
                job = job.output_init(0, init.clone());
            }
            let mut p = k.prepare(&job).unwrap();
            p.run().unwrap();
            assert_ne!(p.output(0).as_ref(), Some(want));
            p.set_constant(0, [-1.0; 4]);
            p.run().unwrap();
            let what = format!("{threads} threads, initial contents: {}", from.is_some());
            assert_eq!(p.output(0).as_ref(), Some(want), "{what}");
        }
    }
}

#[test]
fn re_runs_of_loops_restore_what_lanes_held_by_the_loop_may_leave_unwritten() {
    // Each program runs a loop whose lanes break where r0.r + c0.r >= 0
    // (none when c0.r = -10, pixel 1 of two when it is -0.5, both when it
    // is 1), and writes c1 only where the loop lets it: a second run that
    // breaks must show the initial contents there, not what the first run
    // wrote.
    let break_at =
        "alu _ = mad(s0.rrr, s0.111, s1.rrr) | _ = max.off(s0, s0) src0=r0 src1=c0 res=r>=0";
    let out = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c1";
    let end = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c1 wait last";
    let programs = [
        // The output inside the loop, after the break.
        (
            -0.5,
            format!(
                "LOOP i0 -> done\nbody:\n{break_at}\nBREAKLOOP alu_result != 0 -> done\n{out}\nENDLOOP i0 -> body\ndone:\n{end}"
            ),
        ),
        // The last lane's break jumps past the output after the loop.
        (
            1.0,
            format!(
                "LOOP i0 -> done\nbody:\n{break_at}\nBREAKLOOP alu_result != 0 -> skip\nENDLOOP i0 -> body\ndone:\n{out}\nskip:\n{end}"
            ),
        ),
        // The end reads a count of zero: it passes without popping the
        // loop, whose broken lanes stay held for the output.
        (
            -0.5,
            format!(
                "LOOP i0 -> done\nbody:\n{break_at}\nBREAKLOOP alu_result != 0 -> done\nENDLOOP i1 -> body\ndone:\n{out}\n{end}"
            ),
        ),
    ];
    let init = HostSurface::from_f32(Format::Float32_4, 2, 1, &[9.0; 8]).unwrap();
    for (n, (second, src)) in programs.iter().enumerate() {
        let k = Kernel::assemble(src).unwrap();
        let job = Job::new(2, 1)
            .int(0, 3, 0, 0)
            .int(1, 0, 0, 0)
            .constant(0, [-10.0; 4])
            .constant(1, [1.0, 2.0, 3.0, 4.0])
            .output(0, Format::Float32_4)
            .output_init(0, init.clone());
        for engine in engines() {
            let job = job.clone().engine(engine);
            let mut p = k.prepare(&job).unwrap();
            p.run().unwrap();
            let first = p.output(0).unwrap().to_f32();
            p.set_constant(0, [*second; 4]);
            p.run().unwrap();
            let fresh = job.clone().constant(0, [*second; 4]);
            let want = k.run(&fresh).unwrap().output(0).unwrap().to_f32();
            assert_ne!(
                first, want,
                "program {n}: the second run leaves pixels unwritten"
            );
            assert_eq!(
                p.output(0).unwrap().to_f32(),
                want,
                "program {n}, {engine:?}"
            );
        }
    }
}

#[test]
fn a_job_placed_on_reused_memory_sees_what_a_fresh_device_holds() {
    // The memory a run hands back is zeroed by the next job only where it
    // does not write: its padding, outputs, and everything past its
    // blocks must still read as on a fresh device.
    let src = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
         out rtA.rgb = mad(s0, s1, s1) | rtA.a = mad(s0, s1, s1) src0=r1 src1=1.0 wait last";
    let big = Job::new(96, 80)
        .input(0, HostSurface::filled(Format::Float32_4, 96, 80, 3.0))
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
        .constant(5, [7.0; 4]);
    // Width 5 pads every row; output 1 is never written.
    let small = Job::new(5, 3)
        .input(0, HostSurface::filled(Format::Float32_4, 5, 3, 1.0))
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_1);
    let used = Kernel::assemble(src).unwrap();
    used.run(&big).unwrap();
    drop(used.prepare(&big).unwrap());
    used.run(&big).unwrap();
    let reused = used.stage(&small).unwrap();
    let fresh = Kernel::assemble(src).unwrap().stage(&small).unwrap();
    let arena = ctm::mc::ArenaKind::SystemCached;
    let span = 96 * 80 * 16 * 4;
    assert_eq!(
        reused.dev.arena(arena)[..span],
        fresh.dev.arena(arena)[..span],
        "reused memory differs from a fresh device's"
    );
    // And the run itself agrees.
    let want = Kernel::assemble(src).unwrap().run(&small).unwrap();
    assert_eq!(used.run(&small).unwrap().outputs, want.outputs);
}

#[test]
fn large_padded_surfaces_go_in_and_out_alike_on_any_number_of_threads() {
    // Inputs and outputs of a megabyte or more are copied in bands of rows
    // on several threads; a width that pads every row checks that each
    // band lands on its own rows.
    let k = Kernel::assemble(crate::COPY).unwrap();
    let (w, h) = (509u32, 300u32);
    let texels: Vec<f32> = (0..w * h * 4).map(|k| k as f32 * 0.25 - 7.0).collect();
    let input = HostSurface::from_f32(Format::Float32_4, w, h, &texels).unwrap();
    for engine in engines() {
        for threads in [1, 2, 3, 7] {
            let job = Job::new(w, h)
                .input(0, input.clone())
                .output(0, Format::Float32_4)
                .engine(engine)
                .threads(threads);
            let got = k.run(&job).unwrap();
            assert_eq!(got.output(0), Some(&input), "{engine:?}, {threads} threads");
            let mut p = k.prepare(&job).unwrap();
            p.set_input(0, &input).unwrap();
            p.run().unwrap();
            assert_eq!(
                p.output(0).as_ref(),
                Some(&input),
                "{engine:?}, {threads} threads, prepared"
            );
        }
    }
}

#[test]
fn a_kernel_run_again_on_other_jobs_gives_what_a_fresh_kernel_gives() {
    // A kernel's runs keep the programs they built and their engines for
    // its next run; jobs that bind other formats, sizes, constants, thread
    // counts and tiers must still get exactly a fresh kernel's results.
    let src = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
         out rtA.rgb = mad(s0, s1, s2) | rtA.a = mad(s0, s1, s2) src0=r1 src1=c2 src2=r0 wait last";
    let k = Kernel::assemble(src).unwrap();
    let input = |format: Format, w: u32, h: u32| {
        let n = w * h * format.channels() as u32;
        let v: Vec<f32> = (0..n).map(|k| (k % 13) as f32 * 0.125 - 0.5).collect();
        HostSurface::from_f32(format, w, h, &v).unwrap()
    };
    let jobs = [
        (Format::Float32_4, 17, 9, 0.5, 1, ctm::Tier::Tiered),
        (Format::Float32_4, 17, 9, -2.0, 1, ctm::Tier::Tiered),
        (Format::Float32_1, 17, 9, -2.0, 3, ctm::Tier::Optimised),
        (Format::Uint8_4, 40, 22, 3.0, 2, ctm::Tier::Quick),
        (Format::Float32_4, 5, 3, 1.0, 1, ctm::Tier::Optimised),
    ];
    for engine in engines() {
        for (format, w, h, c, threads, tier) in jobs {
            let mut job = Job::new(w, h)
                .input(0, input(format, w, h))
                .constant(2, [c, c * 2.0, -c, 1.0])
                .output(0, Format::Float32_4)
                .engine(engine)
                .threads(threads);
            job.settings_mut().jit.tier = tier;
            let what =
                format!("{engine:?}, {format:?} {w}×{h}, c {c}, {threads} threads, {tier:?}");
            let want = Kernel::assemble(src).unwrap().run(&job).unwrap();
            let got = k.run(&job).unwrap();
            assert_eq!(got.outputs, want.outputs, "{what}");
            assert_eq!(got.report.pixels, want.report.pixels, "{what}");
            assert_eq!(
                got.report.pixel_instructions, want.report.pixel_instructions,
                "{what}"
            );
        }
    }
}

/// Compiled strips leave DAZ set from one row to the next; once a run
/// ends, whole or prepared, on any number of threads, the calling thread's
/// floating-point environment is the default again, and a progress
/// callback runs in the default too.
#[test]
fn runs_through_strips_leave_the_float_environment_as_it_was() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    if !common::jit_available() {
        return;
    }
    let k = Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    for threads in [1, 2, 3] {
        let mut job = Job::new(64, 64)
            .output(0, Format::Float32_4)
            .engine(EngineKind::Jit);
        job.settings_mut().threads = threads;
        let mut p = k.prepare(&job).unwrap();
        for run in 0..3 {
            let report = p.run().unwrap();
            assert!(
                report.engine.strip_runs > 0,
                "{threads} threads: {report:?}"
            );
            assert!(
                !ctm_jit::host::daz_is_set(),
                "{threads} threads, re-run {run}"
            );
        }
        let in_daz = Arc::new(AtomicBool::new(false));
        let seen = in_daz.clone();
        job.settings_mut().progress = Some(Arc::new(move |_, _| {
            seen.fetch_or(ctm_jit::host::daz_is_set(), Ordering::Relaxed);
        }));
        let report = k.run(&job).unwrap().report;
        assert!(report.engine.strip_runs > 0, "{report:?}");
        assert!(
            !ctm_jit::host::daz_is_set(),
            "{threads} threads, a whole run"
        );
        assert!(
            !in_daz.load(Ordering::Relaxed),
            "{threads} threads: a callback ran with DAZ set"
        );
    }
}
