//! The ELF ABI: write → load round trips, and every malformed-file error
//! names the right byte offset.

use ctm::abi::{self, AbiError, Executable, ProgramInfo};
use ctm::isa::asm::assemble;
use proptest::prelude::*;

const SAXPY: &str = "
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    tex ld r2.rgba, in1.rgba, r0.rgba unscaled acquire wait
    alu r3.rgb = mad(s0, s1, s2) | r3.a = mad(s0, s1, s2) src0=c0 src1=r1 src2=r2
    out rtA.rgb = max.off(s0, s0) | rtA.a depth = max.off(s0, s0) src0=r3 wait last
";

fn exe() -> Executable {
    Executable::from_code(assemble(SAXPY).unwrap())
}

fn bytes() -> Vec<u8> {
    abi::write(&exe())
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

// Layout of the writer (docs/abi.md §8).
const PH_NOTE: usize = 52;
const PH_LOAD: usize = 84;
const NOTES: usize = 116;
const SECOND_NOTE: usize = NOTES + 12 + 8 + 8; // after PROGINFO with 2 words

fn load_err(b: &[u8]) -> AbiError {
    abi::load(b).expect_err("must not load")
}

#[test]
fn notes_are_derived_from_the_code() {
    let info = exe().info;
    assert_eq!(info.inputs, [0, 1]);
    assert_eq!(info.outputs, [0]);
    assert_eq!(info.f32_consts, [0]);
    assert!(info.cond_out);
    assert!(
        !info.early_exit,
        "LAST on the final instruction is not an early exit"
    );
    let mut code = assemble(SAXPY).unwrap();
    code[6] |= 1 << 8; // LAST on instruction 1 (word 0)
    assert!(Executable::from_code(code).info.early_exit);
    assert_eq!(info.fg_depth_src, 1);
}

#[test]
fn write_then_load_is_identity() {
    let e = exe();
    let loaded = abi::load(&abi::write(&e)).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.exe.code, e.code);
    assert_eq!(loaded.exe.info, e.info);
}

#[test]
fn load_path_reads_the_file_within_its_cap() {
    let dir = std::env::temp_dir().join(format!("ctm-elf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("saxpy.elf");
    std::fs::write(&path, bytes()).unwrap();
    assert_eq!(abi::load_path(&path).unwrap().exe.code, exe().code);
    let empty = dir.join("empty.elf");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        abi::load_path(&empty),
        Err(AbiError::BadMagic { .. })
    ));
    assert!(matches!(
        abi::load_path(&dir.join("missing.elf")),
        Err(AbiError::Io { .. })
    ));
    let big = dir.join("big.elf");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(abi::MAX_IMAGE + 1)
        .unwrap();
    let e = abi::load_path(&big).unwrap_err().to_string();
    assert!(e.contains("larger than 16 MiB"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_notes_round_trip(
        n in 0usize..40,
        inputs in prop::collection::vec(0u32..16, 0..16),
        outputs in prop::collection::vec(0u32..4, 0..4),
        f32_consts in prop::collection::vec(0u32..256, 0..20),
        i32_consts in prop::collection::vec(0u32..32, 0..20),
        extra in prop::collection::vec(any::<u32>(), 0..6),
        cond_out: bool, early_exit: bool, fg in 0u32..2,
    ) {
        let e = Executable {
            code: (0..n * 6).map(|k| k as u32).collect(),
            info: ProgramInfo { proginfo_reserved: 1, fg_depth_src: fg, proginfo_extra: extra,
                inputs, outputs, cond_out, f32_consts, i32_consts, early_exit,
                values: Default::default(), bindings: vec![] },
            text_offset: 0,
        };
        let loaded = abi::load(&abi::write(&e)).unwrap();
        prop_assert_eq!(&loaded.exe.code, &e.code);
        prop_assert_eq!(&loaded.exe.info, &e.info);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = abi::load(&b);
    }

    #[test]
    fn corrupted_files_never_panic(at in 0usize..400, v in any::<u8>()) {
        let mut b = bytes();
        let i = at % b.len();
        b[i] = v;
        let _ = abi::load(&b);
    }
}

#[test]
fn bad_magic() {
    let mut b = bytes();
    b[1] = b'X';
    assert!(matches!(load_err(&b), AbiError::BadMagic { found } if found == *b"\x7fXLF"));
    assert!(matches!(load_err(b"\x7fE"), AbiError::BadMagic { .. }));
}

#[test]
fn truncated_header_and_tables() {
    let b = bytes();
    assert!(matches!(
        load_err(&b[..40]),
        AbiError::Truncated {
            offset: 0,
            needed: 52,
            ..
        }
    ));
    let mut b = bytes();
    b[44] = 200; // e_phnum
    assert!(matches!(
        load_err(&b),
        AbiError::Truncated { offset: 52, .. }
    ));
}

#[test]
fn every_header_field_is_checked() {
    let cases: [(usize, u8, &str); 10] = [
        (4, 2, "EI_CLASS"),
        (5, 2, "EI_DATA"),
        (6, 0, "EI_VERSION"),
        (7, 100, "EI_OSABI"),
        (8, 2, "EI_ABIVERSION"),
        (16, 1, "e_type"),
        (18, 125, "e_machine"),
        (20, 2, "e_version"),
        (24, 1, "e_entry"),
        (42, 40, "e_phentsize"),
    ];
    for (offset, value, name) in cases {
        let mut b = bytes();
        b[offset] = value;
        match load_err(&b) {
            AbiError::BadHeader {
                offset: o, field, ..
            } => assert_eq!((o, field), (offset as u64, name)),
            e => panic!("{name}: {e}"),
        }
    }
    let mut b = bytes();
    put32(&mut b, 36, 0);
    assert!(matches!(
        load_err(&b),
        AbiError::BadHeader {
            offset: 36,
            field: "e_flags",
            ..
        }
    ));
    put32(&mut b, 36, 3);
    let w = abi::load(&b).unwrap().warnings;
    assert!(w.iter().any(|w| w.offset == 36), "{w:?}");
}

#[test]
fn segment_past_end_of_file() {
    let mut b = bytes();
    put32(&mut b, PH_LOAD + 16, 10_000);
    put32(&mut b, PH_LOAD + 20, 10_000);
    assert!(matches!(
        load_err(&b),
        AbiError::SegmentPastEnd {
            offset: 84,
            index: 1,
            ..
        }
    ));
}

#[test]
fn code_segment_count() {
    let mut b = bytes();
    put32(&mut b, PH_LOAD, 6); // PT_PHDR: no code left
    assert!(matches!(load_err(&b), AbiError::NoCode { offset: 52 }));
    let mut b = bytes();
    put32(&mut b, PH_NOTE, 1); // the note segment becomes a second PT_LOAD... first
    assert!(matches!(
        load_err(&b),
        AbiError::SecondCodeSegment {
            offset: 84,
            index: 1
        }
    ));
}

#[test]
fn code_memsz_must_equal_filesz() {
    let mut b = bytes();
    let memsz = get32(&b, PH_LOAD + 20) + 24;
    put32(&mut b, PH_LOAD + 20, memsz);
    assert!(matches!(
        load_err(&b),
        AbiError::MemSizeMismatch { offset: 84, .. }
    ));
}

#[test]
fn text_must_be_whole_instructions() {
    let mut b = bytes();
    let size = get32(&b, PH_LOAD + 16) - 4;
    put32(&mut b, PH_LOAD + 16, size);
    put32(&mut b, PH_LOAD + 20, size);
    let text = u64::from(get32(&b, PH_LOAD + 4));
    assert!(
        matches!(load_err(&b), AbiError::TextNotWholeInstructions { offset, size: 92 } if offset == text)
    );
}

#[test]
fn at_most_512_instructions() {
    let e = Executable {
        code: vec![0; 513 * 6],
        info: ProgramInfo::default(),
        text_offset: 0,
    };
    assert!(matches!(
        load_err(&abi::write(&e)),
        AbiError::TooManyInstructions { count: 513, .. }
    ));
    let e = Executable {
        code: vec![0; 512 * 6],
        ..e
    };
    assert_eq!(abi::load(&abi::write(&e)).unwrap().exe.len(), 512);
}

#[test]
fn note_past_its_segment() {
    let mut b = bytes();
    let filesz = get32(&b, PH_NOTE + 16) - 4;
    put32(&mut b, PH_NOTE + 16, filesz);
    assert!(matches!(load_err(&b), AbiError::NotePastSegment { .. }));
    let mut b = bytes();
    put32(&mut b, NOTES + 4, 4000); // PROGINFO descsz
    assert!(matches!(
        load_err(&b),
        AbiError::NotePastSegment { offset: 116, .. }
    ));
}

#[test]
fn note_sizes() {
    let mut b = bytes();
    put32(&mut b, NOTES + 4, 6);
    assert!(matches!(
        load_err(&b),
        AbiError::BadNoteSize {
            offset: 116,
            note: "PROGINFO",
            descsz: 6,
            ..
        }
    ));
    let mut b = bytes();
    put32(&mut b, NOTES + 4, 4); // PROGINFO with one word; the next word reads as a record
    assert!(matches!(
        load_err(&b),
        AbiError::BadNoteSize {
            note: "PROGINFO",
            descsz: 4,
            ..
        } | AbiError::NotePastSegment { .. }
    ));
}

#[test]
fn duplicate_and_missing_notes() {
    let mut b = bytes();
    put32(&mut b, SECOND_NOTE + 8, 1); // INPUTS retyped as PROGINFO
    assert!(matches!(
        load_err(&b),
        AbiError::DuplicateNote { offset, first: 116, note: "PROGINFO" } if offset == SECOND_NOTE as u64
    ));
    let mut b = bytes();
    put32(&mut b, NOTES + 8, 9); // PROGINFO retyped as an unknown note
    assert!(matches!(
        load_err(&b),
        AbiError::MissingProgInfo { offset: 52 }
    ));
}

#[test]
fn note_indices_out_of_range() {
    for (info, note) in [
        (
            ProgramInfo {
                inputs: vec![16],
                ..ProgramInfo::default()
            },
            "INPUTS",
        ),
        (
            ProgramInfo {
                outputs: vec![4],
                ..ProgramInfo::default()
            },
            "OUTPUTS",
        ),
        (
            ProgramInfo {
                f32_consts: vec![256],
                ..ProgramInfo::default()
            },
            "FLOAT32CONSTS",
        ),
        (
            ProgramInfo {
                i32_consts: vec![32],
                ..ProgramInfo::default()
            },
            "INT32CONSTS",
        ),
    ] {
        let e = Executable {
            code: vec![],
            info,
            text_offset: 0,
        };
        match load_err(&abi::write(&e)) {
            AbiError::IndexOutOfRange { note: n, .. } => assert_eq!(n, note),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn warnings_do_not_stop_loading() {
    let mut b = bytes();
    put32(&mut b, SECOND_NOTE + 8, 11); // INPUTS retyped as an unknown note type
    let loaded = abi::load(&b).unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.offset == SECOND_NOTE as u64 && w.message.contains("unknown"))
    );
    assert!(
        loaded.exe.info.inputs.is_empty(),
        "absent INPUTS note: empty list"
    );
    let e = Executable {
        info: ProgramInfo {
            cond_out: true,
            ..ProgramInfo::default()
        },
        ..exe()
    };
    let w = abi::load(&abi::write(&e)).unwrap().warnings;
    assert!(
        w.iter().any(|w| w.message.contains("CONDOUT wins")),
        "{w:?}"
    );
}

#[test]
fn errors_name_offsets_in_their_message() {
    let mut b = bytes();
    b[7] = 100;
    assert_eq!(
        load_err(&b).to_string(),
        "offset 0x7: EI_OSABI is 100, expected 98 (ELFOSABI_ATI)"
    );
}

#[test]
fn ctm_notes_carry_constant_values_and_bindings() {
    let info = ProgramInfo {
        f32_consts: vec![3],
        values: abi::ConstValues {
            floats: vec![
                (3, [0x3F80_0000, 0x7FC0_0001, 0, 0x8000_0000]),
                (255, [1, 2, 3, 4]),
            ],
            ints: vec![(0, [16, 2, 0xFF])],
            bools: vec![(5, true), (31, false)],
            defaults: vec![(7, [1, 2, 3, 4])],
        },
        bindings: vec![("v0".into(), "in0".into()), ("oC1".into(), "out1".into())],
        ..ProgramInfo::default()
    };
    let e = Executable { info, ..exe() };
    let bytes = abi::write(&e);
    let loaded = abi::load(&bytes).unwrap();
    assert_eq!(loaded.exe.info, e.info);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // Without them the layout is the one the Guide's notes alone give.
    let plain = Executable {
        info: ProgramInfo::default(),
        ..exe()
    };
    assert!(abi::write(&plain).len() < bytes.len());
    // An index outside its file is an error at its record.
    let bad = Executable {
        info: ProgramInfo {
            values: abi::ConstValues {
                bools: vec![(32, true)],
                ..Default::default()
            },
            ..ProgramInfo::default()
        },
        ..exe()
    };
    let err = abi::load(&abi::write(&bad)).unwrap_err().to_string();
    assert!(err.contains("ctm BOOLS") && err.contains("32"), "{err}");
}
