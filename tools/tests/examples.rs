//! The bundled assembly examples assemble, pass validation, round-trip
//! through the disassembler and the ELF writer, and the `ctm` commands work
//! on them.

mod common;

use std::path::{Path, PathBuf};

use ctm::abi::{self, Executable};
use ctm::isa::asm::assemble;
use ctm::isa::disasm::{Options, disassemble_program};
use ctm::isa::{decode_program, validate::validate};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(common::cli::ROOT).join("examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "s"))
        .collect();
    v.sort();
    assert!(v.len() >= 3, "at least three assembly examples");
    v
}

#[test]
fn examples_assemble_validate_and_round_trip() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let words = assemble(&text).unwrap_or_else(|e| panic!("{}:{e}", path.display()));
        let slots = decode_program(&words);
        let warnings = validate(&slots);
        assert!(warnings.is_empty(), "{}: {warnings:?}", path.display());
        let listing = disassemble_program(&words, Options::default());
        assert!(
            !listing.contains("CMN.") && !listing.contains(".words"),
            "{}: raw fields in\n{listing}",
            path.display()
        );
        assert_eq!(assemble(&listing).unwrap(), words, "{}", path.display());
        let exe = Executable::from_code(words.clone());
        assert_eq!(
            abi::load(&abi::write(&exe)).unwrap().exe,
            Executable {
                text_offset: 116 + notes_len(&exe),
                ..exe
            }
        );
    }
}

/// Size of the note segment the writer emits for `exe`.
fn notes_len(exe: &Executable) -> u64 {
    let i = &exe.info;
    let lists = i.inputs.len() + i.outputs.len() + i.f32_consts.len() + i.i32_consts.len();
    (7 * 20 + 4 * (2 + i.proginfo_extra.len() + 1 + 1 + lists)) as u64
}

fn ctm(args: &[&str]) -> (bool, String, String) {
    let out = common::cli::tool().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn cli_asm_disasm_info() {
    let dir = std::env::temp_dir().join(format!("ctm-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for path in examples() {
        let src = path.to_str().unwrap();
        let elf = dir.join(path.file_stem().unwrap()).with_extension("elf");
        let elf = elf.to_str().unwrap();
        let (ok, _, err) = ctm(&["asm", src, "-o", elf]);
        assert!(ok, "{err}");
        let (ok, listing, err) = ctm(&["disasm", elf]);
        assert!(ok, "{err}");
        assert_eq!(
            assemble(&listing).unwrap(),
            assemble(&std::fs::read_to_string(&path).unwrap()).unwrap()
        );
        let (ok, info, err) = ctm(&["info", elf]);
        assert!(ok, "{err}");
        assert!(
            info.contains("ELF32 LSB executable")
                && info.contains("validation:        no warnings"),
            "{info}"
        );
        // Raw words: assemble with --raw, read back with --raw.
        let bin = dir.join("raw.bin");
        let bin = bin.to_str().unwrap();
        assert!(ctm(&["asm", src, "--raw", "-o", bin]).0);
        let (ok, raw_listing, _) = ctm(&["disasm", "--raw", bin, "--verbose"]);
        assert!(ok && raw_listing.contains(";   words"), "{raw_listing}");
        assert_eq!(assemble(&raw_listing).unwrap(), assemble(&listing).unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_reports_errors_with_position() {
    let dir = std::env::temp_dir().join(format!("ctm-cli-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.s");
    std::fs::write(
        &bad,
        "tex ld r1.rgba, in0.rgba, r0.rgba\nalu r1.rgb = mad(s0, s1) | r1.a = mad(s0, s1, s2)\n",
    )
    .unwrap();
    let (ok, _, err) = ctm(&["asm", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("bad.s:2:") && err.contains("takes 3 input(s)"),
        "{err}"
    );
    let odd = dir.join("odd.bin");
    std::fs::write(&odd, [0u8; 30]).unwrap();
    let (ok, _, err) = ctm(&["disasm", "--raw", odd.to_str().unwrap()]);
    assert!(!ok && err.contains("not a whole number"), "{err}");
    let elf = dir.join("broken.elf");
    std::fs::write(&elf, b"\x7fELF\x02").unwrap();
    let (ok, _, err) = ctm(&["info", elf.to_str().unwrap()]);
    assert!(!ok && err.contains("offset 0x0"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_ir_prints_verified_clauses_for_every_example() {
    for ex in examples() {
        let path = ex.to_str().unwrap();
        let (ok, out, err) = ctm(&["ir", path]);
        assert!(ok, "{path}: {err}");
        assert!(out.starts_with("clause 0 @0.."), "{path}: {out}");
        assert!(
            out.contains("=> end"),
            "{path}: every example ends at the end of .text"
        );
    }
    let (ok, out, _) = ctm(&["ir", "examples/horner.s"]);
    assert!(ok);
    assert!(out.contains("const c[aL+0].r"), "{out}");
    assert!(out.contains("fc Loop"), "{out}");
}
