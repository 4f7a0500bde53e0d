//! The command-line tool's data: raw, PNG, .npy and text in and out,
//! standard input and output, outputs that start from given contents,
//! `ctm info`, and `ctm exec` on a raw command stream.

mod common;

use common::cli::*;
use common::jit_available;
use ctm::mc::{Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;

/// out = (i/4, j/4, 0.5, 1) with c0 = (0.25, 0.25, 1, 1): a gradient.
const GRAD: &str =
    "alu r1.rgb = mad(s0, s1, s2.00h) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=0.0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

/// out = input 0 at the pixel.
const COPY: &str = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

#[test]
fn npy_and_png_outputs_read_back_as_inputs() {
    let d = Dir::new("data");
    // A picture: the gradient over 4 × 2.
    let grad = d.file("grad.s", GRAD);
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
    let copy = d.file("copy.s", COPY);
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
}

#[test]
fn a_one_channel_output_is_a_grey_picture_with_a_value_range() {
    let d = Dir::new("grey");
    let (grad, copy) = (d.file("grad.s", GRAD), d.file("copy.s", COPY));
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
}

#[test]
fn programs_and_data_through_standard_input_and_output() {
    let d = Dir::new("stdio");
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
    // An address outside the arenas: what the user typed (status 2); the
    // arenas are listed.
    let (code, _, err) = ctm(&["exec", &cmd, "--mem", &format!("0x1234={init}")]);
    assert_eq!(code, 2);
    assert!(err.contains("cached system 0x70000000"), "{err}");
    // Arena sizes: --memory, with usage errors for bad values.
    let (code, _, err) = ctm(&["exec", &cmd, "--memory", "sys-cached=1G"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ctm(&["exec", &cmd, "--memory", "sys=3X"]);
    assert_eq!(code, 2, "{err}");
}

/// A PNG chunk with its CRC.
fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &b in kind.iter().chain(data) {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    let mut c = (data.len() as u32).to_be_bytes().to_vec();
    c.extend_from_slice(kind);
    c.extend_from_slice(data);
    c.extend_from_slice(&(!crc).to_be_bytes());
    c
}

#[test]
fn hostile_pictures_and_arrays_are_refused_before_allocating() {
    let d = Dir::new("hostile");
    let prog = d.file(
        "copy.s",
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    );
    let out = format!("0={}:float32_4", d.path("o.f32"));
    let small = format!("0={}:float32_4:4x4", d.file("small.f32", [0u8; 256]));
    // Memory above a small run's that an input may cost: far less than
    // what these files declare.
    let (_, _, base) = ctm_peak(&[
        "run", &prog, "--domain", "4x4", "--input", &small, "--output", &out,
    ]);
    let limit = base + (64 << 10);
    // `ctm run` of the copy program over 4 × 4 with `extra` flags.
    let run = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["run", &prog, "--domain", "4x4"].map(String::from).to_vec();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let refused = |args: Vec<String>, says: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let args = &args[..];
        let (code, err, peak) = ctm_peak(args);
        assert!(code == 1 || code == 2, "{args:?}: exit {code}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            peak <= limit,
            "{args:?}: {peak} KiB resident (limit {limit})"
        );
    };
    // 65 bytes declaring 100000 × 100000 RGBA, with an empty IDAT.
    let mut ihdr = 100_000u32.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for c in [
        chunk(b"IHDR", &ihdr),
        chunk(b"IDAT", &[]),
        chunk(b"IEND", &[]),
    ] {
        png.extend(c);
    }
    let huge = d.file("huge.png", &png);
    refused(
        run(&["--input", &format!("0={huge}"), "--output", &out]),
        "100000×100000",
    );
    // A decompression bomb: 8188 × 8188 one-bit grey, a few KiB.
    let mut bomb = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bomb, 8188, 8188);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::One);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&vec![0u8; 8188usize.div_ceil(8) * 8188])
            .unwrap();
    }
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let bomb = d.file("bomb.png", &bomb);
    refused(
        run(&["--input", &format!("0={bomb}"), "--output", &out]),
        "must fit one arena",
    );
    refused(
        run(&[
            "--input",
            &format!("0={bomb}:float32_4:4x4"),
            "--output",
            &out,
        ]),
        "not 4×4",
    );
    refused(
        run(&["--input", &small, "--output-init", &format!("0={bomb}")]),
        "not 4×4",
    );
    // Arrays whose shape overflows a size computation.
    for shape in ["(2147483648, 2147483648, 4)", "(1073741824, 4294967295, 4)"] {
        let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
        npy.extend_from_slice(header.as_bytes());
        let f = d.file("wide.npy", &npy);
        refused(
            run(&["--input", &format!("0={f}"), "--output", &out]),
            "a surface has at most 8188 columns",
        );
    }
    // The library's own check never wraps either.
    let e =
        ctm::kernel::HostSurface::new(Format::Float32_4, u32::MAX, u32::MAX, vec![]).unwrap_err();
    assert!(
        e.to_string().contains("(295147905041913872400 expected)"),
        "{e}"
    );
}

#[test]
fn every_command_caps_program_files_alike_before_reading() {
    let d = Dir::new("caps");
    let big = d.path("big.psh");
    // 17 MiB (sparse: the size alone must refuse it).
    std::fs::File::create(&big)
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    for args in [
        vec!["compile", &big],
        vec!["asm", &big],
        vec!["info", &big],
        vec!["disasm", &big],
        vec!["run", &big, "--domain", "4x4"],
    ] {
        let (code, _, err) = ctm(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains("larger than 16 MiB"), "{args:?}: {err}");
    }
}

#[test]
fn a_conditional_write_back_never_turns_a_picture_into_grey() {
    let d = Dir::new("cond-png");
    let prog = d.file(
        "z.s",
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    );
    let picture =
        std::fs::read(std::path::Path::new(common::cli::ROOT).join("examples/data/rings.png"))
            .unwrap();
    let png = d.file("depth.png", &picture);
    let (code, _, err) = ctm(&[
        "run",
        &prog,
        "--domain",
        "64x64",
        "--output",
        &format!("0={}:float32_4", d.path("o.f32")),
        "--cond-test",
        "always",
        "--cond-buffer",
        &format!("{png}:float32_1"),
        "--cond-write",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot hold the conditional values exactly"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&png).unwrap(),
        picture,
        "the picture is untouched"
    );
}
