//! The command-line tool's contract: exit statuses (0 ok, 1 the run
//! failed, 2 what was typed or pointed at is wrong, 3 hazards), checks
//! before the run, the runaway budget, manners on closed pipes and full
//! disks, outputs replaced whole, the validator's warnings. Data in and
//! out: `tests/cli_data.rs`.

mod common;

use common::cli::*;
use common::jit_available;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;

/// A program that never ends.
const ENDLESS: &str = "top:
    alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r0
    JUMP -> top
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

#[test]
fn run_help_and_version_say_what_users_need() {
    let (code, help, _) = ctm(&["run", "--help"]);
    assert_eq!(code, 0);
    for needle in [
        "r0 = (i, j, v, 1.0)",
        "--domain",
        "N=PATH[:FORMAT][:WxH]",
        "--output",
        "--output-init",
        "--const-int",
        "--const-bool",
        "--consts",
        "--cond-test",
        "--cond-buffer",
        "--engine",
        "--threads",
        "--check-hazards",
        "--png",
        "--print",
        "--budget",
        "uint8_4",
        ".npy",
        "8188×8188",
        "Exit status: 0 success, 1 the run failed",
        "docs/machine.md",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from\n{help}");
    }
    let (code, v, _) = ctm(&["--version"]);
    assert_eq!(code, 0);
    assert!(
        v.starts_with("ctm 0.") && v.contains("commit ") && v.contains("JIT: "),
        "{v}"
    );
    for sub in [
        "run", "exec", "bench", "asm", "disasm", "ir", "info", "clif",
    ] {
        let (code, help, _) = ctm(&[sub, "--help"]);
        assert_eq!(code, 0);
        assert!(
            help.contains("--quiet") && help.contains("--verbose"),
            "{sub}: {help}"
        );
    }
}

/// A program that reads a fetch still in flight (in `d`), with an input
/// and an output flag for it: (program, `--input` value, `--output` value,
/// the output's path).
fn racy(d: &Dir) -> (String, String, String, String) {
    let racy = d.file(
        "racy.s",
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
    let input = d.file("in.f32", bytes(&[1.0, 2.0, 3.0, 4.0]));
    let out = d.path("out.u8");
    let inp = format!("0={input}:float32_1:2x2");
    let outp = format!("0={out}:uint8_4");
    (racy, inp, outp, out)
}

/// `ctm run PROGRAM --domain 2x2` with `extra` flags.
fn run_2x2(program: &str, extra: &[&str]) -> (i32, String, String) {
    let mut a = vec!["run", program, "--domain", "2x2"];
    a.extend_from_slice(extra);
    ctm(&a)
}

#[test]
fn hazards_are_reported_with_exit_status_3_on_both_engines() {
    let d = Dir::new("status");
    // A read of a fetch still in flight: reported, exit status 3.
    let (racy, inp, outp, out) = racy(&d);
    let run = |extra: &[&str]| run_2x2(&racy, extra);
    let (code, _, err) = run(&["--input", &inp, "--output", &outp, "--check-hazards"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("hazard"), "{err}");
    // uint8_4 output: R = 1.0 → byte 2 = 255; G = B = 0; A = 1 → 255.
    assert_eq!(std::fs::read(&out).unwrap()[..4], [0, 0, 255, 255]);
    // Both engines: the JIT reports hazards too (it interprets while checking).
    let (code, _, _) = run(&[
        "--input",
        &inp,
        "--output",
        &outp,
        "--check-hazards",
        "--engine",
        "interp",
    ]);
    assert_eq!(code, 3);
}

#[test]
fn wrong_or_missing_bindings_are_usage_errors_before_the_run() {
    let d = Dir::new("usage");
    let (racy, inp, outp, _) = racy(&d);
    let input = d.path("in.f32");
    let run = |extra: &[&str]| run_2x2(&racy, extra);
    // Wrong file size: what the user pointed at is wrong, exit status 2.
    let (code, _, err) = run(&[
        "--input",
        &format!("0={input}:float32_4:2x2"),
        "--output",
        &outp,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("16 bytes for 2×2 elements of float32_4 (64 expected)"),
        "{err}"
    );
    // Unbound input and output: usage errors naming the flag to add, on
    // either engine, before anything runs.
    for engine in ["interp", "auto"] {
        let (code, _, err) = run(&["--output", &outp, "--engine", engine]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("add --input 0=FILE:FORMAT:WxH"), "{err}");
    }
    let (code, _, err) = run(&["--input", &inp]);
    assert_eq!(code, 2);
    assert!(err.contains("add --output 0=FILE:FORMAT"), "{err}");
    // Unknown engine, zero threads, a bad domain: usage errors.
    for bad in [
        &["--engine", "gpu"][..],
        &["--threads", "0"],
        &["--input", "0"],
        &["--input", &format!("0={input}")],
        &["--const", "300=1,2,3,4"],
        &["--const-int", "0=1,2"],
    ] {
        let (code, _, err) = run(bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    // Out of range is as much a usage error as malformed.
    let (code, _, err) = ctm(&[
        "run", &racy, "--domain", "9000x2", "--input", &inp, "--output", &outp,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("1–8188"), "{err}");
    // A loop constant the program needs: named with its flag.
    let (code, _, err) = ctm(&[
        "run",
        "examples/horner.s",
        "--domain",
        "4x4",
        "--input",
        &inp,
        "--output",
        &outp,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("add --const-int 0=count,init,step"), "{err}");
    // An unset float constant is a warning that names the flag.
    let c = d.file(
        "c.s",
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c4 wait last",
    );
    let (code, _, err) = ctm(&["run", &c, "--domain", "2x2", "--output", &outp]);
    assert_eq!(code, 0);
    assert!(
        err.contains("warning: the program reads float constant c4")
            && err.contains("add --const 4=x,y,z,w"),
        "{err}"
    );
}

#[test]
fn programs_that_do_nothing_and_unwritable_destinations_are_refused() {
    let d = Dir::new("refused");
    let c = d.file(
        "c.s",
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c4 wait last",
    );
    // Empty programs and programs with no effect are what the user
    // pointed at: status 2.
    let empty = d.file("empty.s", "; nothing\n");
    let (code, _, err) = ctm(&["run", &empty, "--domain", "2x2"]);
    assert_eq!(code, 2);
    assert!(err.contains("no instructions"), "{err}");
    let (code, _, err) = ctm(&["asm", &empty, "-o", &d.path("e.elf")]);
    assert_eq!(code, 2);
    assert!(err.contains("no instructions"), "{err}");
    let idle = d.file(
        "idle.s",
        "alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r0 last",
    );
    let (code, _, err) = ctm(&["run", &idle, "--domain", "2x2"]);
    assert_eq!(code, 2);
    assert!(err.contains("no effect"), "{err}");
    // A destination that cannot be written fails before the run and
    // leaves no files behind.
    let fresh = d.path("fresh.f32");
    let (code, _, err) = ctm(&[
        "run",
        &c,
        "--domain",
        "2x2",
        "--output",
        &format!("0={fresh}:float32_4"),
        "--png",
        "0=/nonexistent/dir/x.png",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/dir/x.png"), "{err}");
    assert!(!Path::new(&fresh).exists());
}

#[test]
fn runaway_programs_stop_with_a_message_naming_the_budget() {
    let d = Dir::new("budget");
    let endless = d.file("endless.s", ENDLESS);
    let out = format!("0={}:float32_4", d.path("o.f32"));
    for engine in ["interp", "jit"] {
        if engine == "jit" && !jit_available() {
            continue;
        }
        let (code, _, err) = ctm(&[
            "run", &endless, "--domain", "8x8", "--output", &out, "--engine", engine, "--budget",
            "100000",
        ]);
        assert_eq!(code, 1);
        assert!(
            err.contains("never ends") && err.contains("--budget N"),
            "{err}"
        );
    }
    if jit_available() {
        // The default budget stops it too.
        let (code, _, err) = ctm(&["run", &endless, "--domain", "4x4", "--output", &out]);
        assert_eq!(code, 1);
        assert!(err.contains("(budget 16777216)"), "{err}");
    }
}

#[test]
fn closed_pipes_end_quietly_and_full_disks_are_errors() {
    // A listing far larger than a pipe's buffer.
    let d = Dir::new("pipe");
    let mut src = String::new();
    for _ in 0..500 {
        src += "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c1 src2=c2\n";
    }
    src += IDENTITY;
    let prog = d.file("long.s", &src);
    for args in [
        &["disasm", "-v", &prog][..],
        &["ir", &prog],
        &["info", &prog],
    ] {
        let mut child = common::cli::tool()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then close the pipe.
        let mut one = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut one).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: quiet, not {err}");
    }
    if Path::new("/dev/full").exists() {
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = common::cli::tool()
            .args(["disasm", &prog])
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("standard output") && !err.contains("panicked"),
            "{err}"
        );
        let (code, _, err) = ctm(&[
            "run",
            &prog,
            "--domain",
            "4x4",
            "--output",
            "0=/dev/full:float32_4",
            "--const",
            "1=1,1,1,1",
            "--const",
            "2=1,1,1,1",
        ]);
        assert_eq!(code, 1);
        assert!(err.contains("/dev/full"), "{err}");
    }
}

#[test]
fn info_says_what_the_notes_mean() {
    let (code, out, _) = ctm(&["info", "examples/saxpy.s"]);
    assert_eq!(code, 0);
    for needle in [
        "reads inputs:    0 1",
        "writes outputs:  0",
        "float constants: c0",
        "loop constants:  none",
        "validation:        no warnings",
    ] {
        assert!(out.contains(needle), "`{needle}` missing from\n{out}");
    }
}

#[test]
fn asm_and_run_print_the_validators_warnings() {
    let d = Dir::new("warn");
    // The last instruction does not wait for the semaphore (rule 4).
    let nowait = d.file(
        "nowait.s",
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 last",
    );
    let (code, _, err) = ctm(&["asm", &nowait, "-o", &d.path("n.elf")]);
    assert_eq!(code, 0);
    assert!(
        err.contains("warning:") && err.contains("docs/isa.md §5.3"),
        "{err}"
    );
    let out = format!("0={}:float32_4", d.path("o.f32"));
    let (code, _, err) = ctm(&["run", &nowait, "--domain", "2x2", "--output", &out]);
    assert_eq!(code, 0);
    assert!(err.contains("TEX_SEM_WAIT"), "{err}");
    let (code, _, err) = ctm(&["run", &nowait, "--domain", "2x2", "--output", &out, "-q"]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
}

#[test]
fn small_manners_version_info_on_nothing_and_disasm_to_a_file() {
    let d = Dir::new("manners");
    // -V says what --version says.
    let (code, short, _) = ctm(&["-V"]);
    let (_, long, _) = ctm(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(short, long);
    assert!(short.contains("JIT:"), "{short}");
    // An empty program: one finding, and status 2 as for run/asm.
    let empty = d.file("empty.s", "; nothing\n");
    let (code, out, _) = ctm(&["info", &empty]);
    assert_eq!(code, 2);
    assert_eq!(out.matches("no instructions").count(), 1, "{out}");
    // disasm -o writes what it would print.
    let listing = d.path("l.txt");
    let (code, printed, err) = ctm(&["disasm", "examples/saxpy.s"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = ctm(&["disasm", "examples/saxpy.s", "-o", &listing]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&listing).unwrap(), printed);
}

#[test]
fn an_output_that_cannot_be_written_says_so() {
    let (code, _, err) = ctm(&[
        "run",
        "examples/mandelbrot.s",
        "--domain",
        "8x8",
        "--consts",
        "examples/data/mandelbrot.consts",
        "--output",
        "0=/nonexistent-dir/m.f32:float32_4",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot write the output /nonexistent-dir/m.f32: the folder /nonexistent-dir does not exist"),
        "{err}"
    );
    let (_, help, _) = ctm(&["run", "--help"]);
    assert!(help.contains("Direct3D 9 pixel"), "{help}");
}

/// One rule for exit statuses: what the user typed or pointed at is wrong
/// → 2 (found before anything runs); the run failed → 1; hazards → 3.
#[test]
fn one_rule_for_exit_statuses() {
    let d = Dir::new("exit-rule");
    let out = format!("0={}:float32_4", d.path("o.f32"));
    let consts = d.file("bad.consts", "c0 = 1, 2\n");
    let garbage = d.file("garbage.s", "alu r0 = frobnicate(s0)\n");
    let endless = d.file("endless.s", ENDLESS);
    let mandel = [
        "examples/mandelbrot.s",
        "--consts",
        "examples/data/mandelbrot.consts",
    ];
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // Typed.
        (
            vec!["run", mandel[0], "--domain", "4x"],
            2,
            "a malformed domain",
        ),
        (
            vec![
                "run",
                mandel[0],
                "--domain",
                "9000x9000",
                mandel[1],
                mandel[2],
            ],
            2,
            "a domain out of range",
        ),
        (
            vec!["run", mandel[0], "--domain", "4x4", "--engine", "gpu"],
            2,
            "an unknown engine",
        ),
        (
            vec!["run", mandel[0], "--domain", "4x4", "--const", "0=1,2"],
            2,
            "a bad --const",
        ),
        // Pointed at.
        (
            vec!["run", mandel[0], "--domain", "4x4", "--consts", &consts],
            2,
            "a bad constants file",
        ),
        (
            vec!["run", "missing.s", "--domain", "4x4"],
            2,
            "a missing program",
        ),
        (
            vec!["run", &garbage, "--domain", "4x4"],
            2,
            "a program that does not assemble",
        ),
        (vec!["asm", &garbage], 2, "assembling it"),
        (vec!["disasm", "missing.elf"], 2, "disassembling nothing"),
        (
            vec!["run", mandel[0], "--domain", "4x4", mandel[1], mandel[2]],
            2,
            "an unbound output",
        ),
        // The run failed.
        (
            vec![
                "run", &endless, "--domain", "4x4", "--output", &out, "--budget", "1000",
            ],
            1,
            "a runaway",
        ),
        (
            vec![
                "run",
                &endless,
                "--domain",
                "4x4",
                "--output",
                &out,
                "--max-instructions",
                "5000",
            ],
            1,
            "a stop",
        ),
    ];
    for (args, want, what) in cases {
        let (code, _, err) = ctm(&args);
        assert_eq!(code, want, "{what}: {args:?}: {err}");
    }
    // The table is in --help.
    let (_, help, _) = ctm(&["--help"]);
    assert!(
        help.contains("1 the run failed")
            && help.contains("2 what was typed or pointed at is wrong"),
        "{help}"
    );
}

#[test]
fn a_failed_run_never_touches_an_output_and_a_good_one_replaces_it_whole() {
    let d = Dir::new("atomic-outputs");
    let endless = d.file("endless.s", ENDLESS);
    let ident = d.file(
        "ident.s",
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    );
    let kept = d.file("kept.f32", b"precious contents");
    let out = format!("0={kept}:float32_4");
    let (code, _, err) = ctm(&[
        "run", &endless, "--domain", "4x4", "--output", &out, "--budget", "1000",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read(&kept).unwrap(), b"precious contents");
    let (code, _, err) = ctm(&["run", &ident, "--domain", "4x4", "--output", &out]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&kept).unwrap().len(), 4 * 4 * 16);
    // A write that fails half-way (the file-size limit of the process)
    // leaves the old file whole.
    let before = std::fs::read(&kept).unwrap();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1; trap '' XFSZ; exec {} run {ident} --domain 32x32 --output 0={kept}:float32_4",
            env!("CARGO_BIN_EXE_ctm")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(std::fs::read(&kept).unwrap(), before, "{err}");
    // The same for what asm, compile and disasm write (-o).
    let listing = d.file("listing.txt", b"old listing");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1; trap '' XFSZ; exec {} disasm examples/mandelbrot.s -o {listing}",
            env!("CARGO_BIN_EXE_ctm")
        ))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&listing).unwrap(), b"old listing");
    // Nothing but the files this test made is left in the folder.
    let mut names: Vec<String> = std::fs::read_dir(&d.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["endless.s", "ident.s", "kept.f32", "listing.txt"]);
}
