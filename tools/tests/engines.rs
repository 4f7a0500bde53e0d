//! The engines through the tool: JIT options, `clif`, `bench` and
//! `run --stats`, the trace command, runaway limits, whole examples.

use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;
use std::path::{Path, PathBuf};

mod common;
use common::cli::ctm;
use common::jit_available;

#[test]
fn clif_prints_each_clause_with_its_source() {
    if !jit_available() {
        return;
    }
    let (code, out, err) = ctm(&["clif", "examples/mandelbrot.s"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("; clause 0"), "{out}");
    assert!(out.contains("function "), "{out}");
    // Source comments above the code, e.g. the loop body's MAD.
    assert!(out.contains("; @3 alu r3.rgb = mad("), "{out}");
    assert!(out.contains("fmul") && out.contains("fadd") && out.contains("bitselect"));
    // One function per clause, then the loop's lane-wise body.
    assert_eq!(
        out.matches("function ").count(),
        out.matches("; clause ").count() + 1
    );
    assert!(
        out.contains("; loop region at @3, clauses [1, 2], lane-wise"),
        "{out}"
    );
}

#[test]
fn run_stats_and_bench_json() {
    if !jit_available() {
        return;
    }
    let out = std::env::temp_dir().join(format!("ctm-jit-stats-{}.f32", std::process::id()));
    let out_spec = format!("0={}:float32_4", out.display());
    let args = [
        "examples/mandelbrot.s",
        "--output",
        &out_spec,
        "--domain",
        "64x32",
        "--const",
        "0=0.05,0.08,0,0",
        "--const",
        "1=-2.25,-1.25,0,0",
        "--const",
        "2=0.031,0.047,0.071,0",
        "--const-int",
        "0=30,0,0",
    ];
    let mut run = vec!["run", "--stats"];
    run.extend(args);
    let (code, _, err) = ctm(&run);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("engine: jit"), "{err}");
    assert!(
        err.contains("0 interpreted as fallbacks (0 fallback clause(s))"),
        "{err}"
    );
    let mut bench = vec!["bench", "--json", "--repeat", "1"];
    bench.extend(args);
    let (code, out, err) = ctm(&bench);
    assert_eq!(code, 0, "{err}");
    let line = out.trim();
    assert!(line.starts_with('{') && line.ends_with('}'), "{out}");
    for key in [
        "\"interp_pixinst_per_s\": ",
        "\"jit_pixinst_per_s\": ",
        "\"jit_over_interp\": ",
        "\"compile_us_per_inst\": ",
        "\"thread_speedup\": ",
        "\"fraction_of_fma_peak\": ",
        "\"fallback_clauses\": 0",
        "\"ns_per_pixel\": ",
        "\"scaling\": [{\"threads\": 1, \"jit_pixinst_per_s\": ",
    ] {
        assert!(line.contains(key), "{key} missing: {line}");
    }
    let value = |key: &str| -> f64 {
        let at = line.find(key).unwrap() + key.len() + 2;
        line[at..]
            .split([',', '}'])
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert!(value("\"jit_pixinst_per_s\"") > 0.0);
    // One thread: re-runs measured at that count alone.
    bench.extend(["--threads", "1"]);
    let (code, one, err) = ctm(&bench);
    assert_eq!(code, 0, "{err}");
    assert!(
        one.contains("\"rerun_scaling\": [{\"threads\": 1, "),
        "{one}"
    );
    assert!(!one.contains("{\"threads\": 2"), "{one}");
    assert!(value("\"interp_pixinst_per_s\"") > 0.0);
    assert!(value("\"ns_per_pixel\"") > 0.0);
    // The run stats count the compiled code Mandelbrot's loop runs in
    // (its strips, or its region where a strip cannot run).
    let (_, _, stats) = ctm(&run);
    assert!(
        !stats.contains("(plus 0 compiled region calls, 0 of them lane-wise, and 0 strips"),
        "Mandelbrot's loop runs compiled: {stats}"
    );
    // Both wrote the output: 64 × 32 float32_4 elements.
    let path = out_spec
        .trim_start_matches("0=")
        .trim_end_matches(":float32_4");
    assert_eq!(std::fs::metadata(path).unwrap().len(), 64 * 32 * 16);
    let _ = std::fs::remove_file(path);
}

#[test]
fn bench_suite_measures_the_bundled_kernels() {
    if !jit_available() {
        return;
    }
    let (code, out, err) = ctm(&[
        "bench", "suite", "tiny", "chains2", "--repeat", "1", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("{\"kernel\": \"tiny\""), "{out}");
    assert!(lines[1].contains("\"fraction_of_ceiling\": "), "{out}");
    assert!(lines[1].contains("\"fallback_clauses\": 0"), "{out}");
    let (code, out, err) = ctm(&["bench", "suite", "chains1", "--repeat", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("| chains1 |") && out.contains("exact MAD ceiling"),
        "{out}"
    );
    let (code, _, err) = ctm(&["bench", "suite", "madchain"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no benchmark kernel `madchain`"), "{err}");
}

#[test]
fn the_trace_command() {
    let ctm = |args: &[&str]| {
        let out = common::cli::tool()
            .args(args)
            .current_dir(common::cli::ROOT)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = ctm(&[
        "trace",
        "examples/mandelbrot.s",
        "--domain",
        "32x32",
        "--consts",
        "examples/data/mandelbrot.consts",
        "--pixel",
        "20,16",
        "--until",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("trace of (20, 16):"), "{out}");
    assert!(
        out.contains("@2    LOOP i0") && out.contains("loop 255 left"),
        "{out}"
    );
    let (code, _, err) = ctm(&[
        "trace",
        "examples/abs2.s",
        "--domain",
        "4x4",
        "--pixel",
        "x",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ctm(&[
        "trace",
        "examples/mandelbrot.s",
        "--domain",
        "4x4",
        "--consts",
        "examples/data/mandelbrot.consts",
        "--pixel",
        "9,9",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("outside the 4×4 domain"), "{err}");
}

#[test]
fn mandelbrot_through_the_cli_writes_raw_output_and_png() {
    let dir = std::env::temp_dir().join(format!("ctm-mandel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (raw, png) = (dir.join("m.f32"), dir.join("m.png"));
    let prog: PathBuf = Path::new(common::cli::ROOT).join("examples/mandelbrot.s");
    let out = common::cli::tool()
        .arg("run")
        .arg(&prog)
        .args(["--domain", "48x32"])
        .args(["--const", "0=0.0625,0.078125,0,0"])
        .args(["--const", "1=-2.25,-1.25,0,0"])
        .args(["--const", "2=0.031,0.047,0.071,0"])
        .args([
            "--const-int",
            "0=40,0,0",
            "--threads",
            "2",
            "--engine",
            "jit",
        ])
        .arg("--output")
        .arg(format!("0={}:float32_4", raw.display()))
        .arg("--png")
        .arg(format!("0={}", png.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&raw).unwrap();
    let got: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // What the library computes for the same job (the library's tests
    // hold that to a reference in plain Rust).
    let want = Kernel::from_path(&prog)
        .unwrap()
        .run(
            &Job::new(48, 32)
                .constant(0, [0.0625, 0.078125, 0.0, 0.0])
                .constant(1, [-2.25, -1.25, 0.0, 0.0])
                .constant(2, [0.031, 0.047, 0.071, 0.0])
                .int(0, 40, 0, 0)
                .output(0, Format::Float32_4)
                .engine(EngineKind::Interp),
        )
        .unwrap();
    assert_eq!(got, want.output(0).unwrap().to_f32());
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (48, 32));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_invalid_jit_option_is_a_usage_error() {
    let (code, _, err) = ctm(&["run", "examples/abs2.s", "--domain", "4x4", "--quads", "3"]);
    assert_eq!(code, 2, "a usage error");
    assert!(err.contains("--quads 3"), "{err}");
}

#[test]
fn the_cli_takes_time_and_instruction_limits() {
    let dir = std::env::temp_dir().join(format!("ctm-rel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("endless.s");
    std::fs::write(&prog, ENDLESS).unwrap();
    let out = format!("0={}:float32_4", dir.join("o.f32").display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            prog.to_str().unwrap(),
            "--domain",
            "16x16",
            "--output",
            &out,
        ];
        args.extend(extra);
        let o = common::cli::tool().args(&args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = run(&["--budget", "18446744073709551615", "--timeout", "0.2"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--timeout"), "{err}");
    let (code, err) = run(&["--max-instructions", "5000"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--max-instructions"), "{err}");
    let (code, _) = run(&["--timeout", "-1"]);
    assert_eq!(code, Some(2));
    // A width-0 input on the command line.
    let empty = dir.join("empty.f32");
    std::fs::write(&empty, b"").unwrap();
    let o = common::cli::tool()
        .args([
            "run",
            "examples/saxpy.s",
            "--domain",
            "4x4",
            "--input",
            &format!("0={}:float32_4:0x0", empty.display()),
            "--input",
            &format!("1={}:float32_4:0x0", empty.display()),
            "--output",
            &out,
        ])
        .current_dir(common::cli::ROOT)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("at least one element") && !err.contains("panicked"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that never ends.
const ENDLESS: &str = "top:
    JUMP -> top
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
