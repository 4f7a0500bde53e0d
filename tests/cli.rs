//! The command-line tool's contract: exit statuses (0 ok, 1 error, 2 usage,
//! 3 hazards), checks before the run, data in and out (raw, PNG, .npy,
//! text, standard input and output), manners on closed pipes and full
//! disks, and `ctm exec` on a raw command stream.

use ctm::mc::{Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// out0 = r0 = (i, j, v, 1).
const IDENTITY: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// Runs `ctm`; returns the exit status, standard output and standard error.
fn ctm(args: &[&str]) -> (i32, String, String) {
    ctm_in(args, b"")
}

/// [`ctm`] with `input` on standard input.
fn ctm_in(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let (code, out, err) = ctm_bytes(args, input);
    (code, String::from_utf8_lossy(&out).to_string(), err)
}

/// [`ctm_in`] with standard output as bytes.
fn ctm_bytes(args: &[&str], input: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.code().unwrap_or(-1), out.stdout, err)
}

/// A scratch directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("ctm-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, contents).unwrap();
        p.to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn jit_available() -> bool {
    ctm::engine::EngineKind::Jit.check().is_ok()
}

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
        "Exit status: 0 success, 1 error, 2 usage error",
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

#[test]
fn exit_statuses_and_checks_before_the_run() {
    let d = Dir::new("status");
    // A read of a fetch still in flight: reported, exit status 3.
    let racy = d.file(
        "racy.s",
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
    let input = d.file("in.f32", bytes(&[1.0, 2.0, 3.0, 4.0]));
    let out = d.path("out.u8");
    let inp = format!("0={input}:float32_1:2x2");
    let outp = format!("0={out}:uint8_4");
    let base = ["run", &racy, "--domain", "2x2"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ctm(&a)
    };
    let (code, _, err) = run(with(&[
        "--input",
        &inp,
        "--output",
        &outp,
        "--check-hazards",
    ]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("hazard"), "{err}");
    // uint8_4 output: R = 1.0 → byte 2 = 255; G = B = 0; A = 1 → 255.
    assert_eq!(std::fs::read(&out).unwrap()[..4], [0, 0, 255, 255]);
    // Both engines: the JIT reports hazards too (it interprets while checking).
    let (code, _, _) = run(with(&[
        "--input",
        &inp,
        "--output",
        &outp,
        "--check-hazards",
        "--engine",
        "interp",
    ]));
    assert_eq!(code, 3);
    // Wrong file size: an error, exit status 1.
    let (code, _, err) = run(with(&[
        "--input",
        &format!("0={input}:float32_4:2x2"),
        "--output",
        &outp,
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("16 bytes for 2×2 elements of float32_4 (64 expected)"),
        "{err}"
    );
    // Unbound input and output: usage errors naming the flag to add, on
    // either engine, before anything runs.
    for engine in ["interp", "auto"] {
        let (code, _, err) = run(with(&["--output", &outp, "--engine", engine]));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("add --input 0=FILE:FORMAT:WxH"), "{err}");
    }
    let (code, _, err) = run(with(&["--input", &inp]));
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
        let (code, _, err) = run(with(bad));
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
    let (code, _, err) = ctm(&[
        "run", &racy, "--domain", "9000x2", "--input", &inp, "--output", &outp,
    ]);
    assert_eq!(code, 1);
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
    // Empty programs and programs with no effect are errors.
    let empty = d.file("empty.s", "; nothing\n");
    let (code, _, err) = ctm(&["run", &empty, "--domain", "2x2"]);
    assert_eq!(code, 1);
    assert!(err.contains("no instructions"), "{err}");
    let (code, _, err) = ctm(&["asm", &empty, "-o", &d.path("e.elf")]);
    assert_eq!(code, 1);
    assert!(err.contains("no instructions"), "{err}");
    let idle = d.file(
        "idle.s",
        "alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r0 last",
    );
    let (code, _, err) = ctm(&["run", &idle, "--domain", "2x2"]);
    assert_eq!(code, 1);
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
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/dir/x.png"), "{err}");
    assert!(!Path::new(&fresh).exists());
}

#[test]
fn runaway_programs_stop_with_a_message_naming_the_budget() {
    let d = Dir::new("budget");
    let endless = d.file(
        "endless.s",
        "top:
    alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r0
    JUMP -> top
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctm"))
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
        let out = Command::new(env!("CARGO_BIN_EXE_ctm"))
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
fn data_in_and_out_png_npy_text_stdin_stdout() {
    let d = Dir::new("data");
    // A picture: out = (i/4, j/4, 0.5, 1) over 4 × 2.
    let grad = d.file(
        "grad.s",
        "alu r1.rgb = mad(s0, s1, s2.00h) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=0.0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
    let consts = d.file("c.txt", "# scale\nc0 = 0.25, 0.25, 1, 1\n");
    let png = d.path("g.png");
    let npy = d.path("g.npy");
    let (code, _, err) = ctm(&[
        "run",
        &grad,
        "--domain",
        "4x2",
        "--consts",
        &consts,
        "--output",
        &format!("0={npy}:float32_4"),
        "--png",
        &format!("0={png}"),
        "--print",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "-q: {err}");
    // The .npy array: header, shape (2, 4, 4), float32 values.
    let a = std::fs::read(&npy).unwrap();
    assert!(a.starts_with(b"\x93NUMPY\x01\x00"));
    let text = String::from_utf8_lossy(&a[10..128]);
    assert!(
        text.contains("'descr': '<f4'") && text.contains("'shape': (2, 4, 4)"),
        "{text}"
    );
    let header = 10 + u16::from_le_bytes([a[8], a[9]]) as usize;
    assert_eq!(header % 64, 0);
    let v = f32s(&a[header..]);
    assert_eq!(&v[(4 + 3) * 4..(4 + 3) * 4 + 4], &[0.75, 0.25, 0.5, 1.0]);
    // The picture reads back as an input: a copy program sees the bytes.
    let copy = d.file(
        "copy.s",
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
    let (code, px, err) = ctm_bytes(
        &[
            "run",
            &copy,
            "--domain",
            "4x2",
            "--input",
            &format!("0={png}:uint8_4"),
            "--output",
            "0=-:uint8_4",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(px.len(), 4 * 2 * 4);
    // (3, 1): r = 0.75 → 191, g = 0.25 → 64, b = 0.5 → 128 (stored B, G, R, A).
    assert_eq!(&px[(4 + 3) * 4..(4 + 3) * 4 + 4], &[128, 64, 191, 255]);
    // The array reads back too, with its format checked.
    let (code, out, err) = ctm(&[
        "run",
        &copy,
        "--domain",
        "4x2",
        "--input",
        &format!("0={npy}"),
        "--print",
    ]);
    assert_eq!(code, 2, "no output bound: {err}");
    assert!(out.is_empty());
    let (code, out, err) = ctm(&[
        "run",
        &copy,
        "--domain",
        "4x2",
        "--input",
        &format!("0={npy}"),
        "--output",
        &format!("0={}:float32_2", d.path("two.npy")),
        "--print",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("output 0 (4×2 float32_2):") && out.contains("(3, 1): 0.75, 0.25"),
        "{out}"
    );
    let (code, _, err) = ctm(&[
        "run",
        &copy,
        "--domain",
        "4x2",
        "--input",
        &format!("0={npy}:float32_1"),
        "--output",
        "0=-:float32_1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("holds float32_4"), "{err}");
    // A one-channel output as a grey picture with a value range.
    let grey = d.path("grey.png");
    let (code, _, err) = ctm(&[
        "run",
        &grad,
        "--domain",
        "4x2",
        "--const",
        "0=1,1,1,1",
        "--output",
        &format!("0={}:float32_1", d.path("one.f32")),
        "--png",
        &format!("0={grey}:0..3"),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = ctm(&[
        "run",
        &copy,
        "--domain",
        "4x2",
        "--input",
        &format!("0={grey}:float32_1"),
        "--print",
        "--output",
        &format!("0={}:float32_1", d.path("back.f32")),
    ]);
    assert_eq!(code, 0, "{err}");
    // (3, 0): i = 3 of 0..3 → white; (0, 0) → black.
    assert!(
        out.contains("(3, 0): 1\n") && out.contains("(0, 0): 0\n"),
        "{out}"
    );
    // The program from standard input.
    let (code, out, err) = ctm_in(
        &[
            "run",
            "-",
            "--domain",
            "2x1",
            "--print",
            "--output",
            &format!("0={}:float32_4", d.path("s.f32")),
        ],
        IDENTITY.as_bytes(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(1, 0): 1, 0, 0, 1"), "{out}");
    // assemble and disassemble through pipes
    let (code, elf, err) = ctm_bytes(&["asm", "-", "-o", "-", "-q"], IDENTITY.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(elf.starts_with(b"\x7fELF"));
    let (code, listing, err) = ctm_bytes(&["disasm", "-"], &elf);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8(listing).unwrap().contains("out rtA.rgb"));
}

#[test]
fn outputs_start_from_given_contents() {
    let d = Dir::new("init");
    let init = d.file("init.f32", bytes(&[7.0; 4 * 2]));
    let kill = d.file(
        "kill.s",
        "alu r1.rgb = mad(s0.rrr, s1, -s2) | r1.a = mad(s0.r, s1, -s2) src0=r0 src1=1.0 src2=1.0
    tex kill r1.r, in0.rgba, r1.rgba
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    );
    // i − 1 < 0 kills pixel 0: it keeps the initial 7.
    let (code, out, err) = ctm(&[
        "run",
        &kill,
        "--domain",
        "4x2",
        "--output-init",
        &format!("0={init}:float32_1:4x2"),
        "--output",
        &format!("0={}:float32_1", d.path("o.f32")),
        "--print",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(0, 0): 7\n") && out.contains("(1, 0): 1\n") && out.contains("(0, 1): 7\n"),
        "{out}"
    );
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
fn exec_runs_a_raw_stream_against_memory_images() {
    let d = Dir::new("exec");
    let prog = d.file("id.s", IDENTITY);
    let (pbase, obase) = (0x7000_0000u32, 0x7000_1000u32);
    let fmt = SurfaceFormat::linear(Format::Float32_4, 4);
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt { base: pbase, fmt })
        .push(Cmd::SetOutFmt {
            output: 0,
            base: obase,
            fmt,
            height: 2,
        })
        .push(Cmd::SetCondVal(3.0f32.to_bits()))
        .push(Cmd::SetDomain(Domain::new(4, 2)))
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    let cmd = d.file("cmd.bin", cb.to_bytes());
    let init = d.file("init.bin", [0x55u8; 256]);
    let dump = d.path("out.bin");
    let (code, _, err) = ctm(&[
        "exec",
        &cmd,
        "--mem",
        &format!("0x70001000={init}"),
        "--program",
        &format!("{pbase:#x}={prog}"),
        "--dump",
        &format!("{obase:#x}:256={dump}"),
        "-v",
    ]);
    assert_eq!(code, 0, "{err}");
    if jit_available() {
        assert!(
            err.contains("engine: jit"),
            "exec runs the JIT like run: {err}"
        );
    }
    let got = f32s(&std::fs::read(&dump).unwrap());
    assert_eq!(
        &got[(4 + 3) * 4..(4 + 3) * 4 + 4],
        &[3.0, 1.0, 3.0, 1.0],
        "pixel (3, 1)"
    );
    // A bad packet: error with its offset, exit status 1.
    let mut bad = cb.to_bytes();
    bad.extend(0x4000_0000u32.to_le_bytes());
    let cmd = d.file("bad.bin", &bad);
    let (code, _, err) = ctm(&["exec", &cmd, "--program", &format!("{pbase:#x}={prog}")]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("byte {:#x}", cb.to_bytes().len())),
        "{err}"
    );
    // An address outside the arenas: the arenas are listed.
    let (code, _, err) = ctm(&["exec", &cmd, "--mem", &format!("0x1234={init}")]);
    assert_eq!(code, 1);
    assert!(err.contains("cached system 0x70000000"), "{err}");
    // Arena sizes: --memory, with usage errors for bad values.
    let (code, _, err) = ctm(&["exec", &cmd, "--memory", "sys-cached=1G"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ctm(&["exec", &cmd, "--memory", "sys=3X"]);
    assert_eq!(code, 2, "{err}");
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
