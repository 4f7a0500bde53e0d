//! DPP executables: ELF32 files with ATI notes (`docs/abi.md`).
//!
//! [`load`] checks the header (§3), takes the instructions from the single
//! `PT_LOAD` segment (§4) and the seven note types from every `PT_NOTE`
//! segment (§5–§6); malformed files give an [`AbiError`] with the byte offset
//! at fault. [`write()`] produces the layout of §8, which [`load`] reads back
//! identically. Files on disk are mapped with memmap2 ([`load_path`]).
//!
//! `[E]` choices (docs/abi.md leaves them to the emulator): the strictness
//! rules of §3, §5.4 and §7 as written there; input/output/constant indices
//! outside their register files are errors, not warnings.

use std::path::{Path, PathBuf};

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::Elf;
use goblin::elf::header::{ET_EXEC, Header};
use goblin::elf::program_header::{PT_LOAD, PT_NOTE, ProgramHeader};
use goblin::elf::section_header::SectionHeader;

use crate::isa::{self, Body, INST_BYTES, Inst, InstType, MAX_INSTS, SrcKind};

/// `EI_OSABI` of DPP executables.
pub const ELFOSABI_ATI: u8 = 98;
/// `EI_ABIVERSION` this loader understands.
pub const ABI_VERSION: u8 = 1;
/// `e_machine` of the ATI X1K encoding.
pub const EM_ATI_R5XX: u16 = 122;
/// Required `e_flags` bit.
pub const EF_ATI_DPP: u32 = 1;
/// The note name, `"ATI DPP"` + NUL.
pub const NOTE_NAME: &[u8; 8] = b"ATI DPP\0";

/// The seven note types (§5.3).
pub mod note {
    /// Program information (`dpp_proginfo`).
    pub const PROGINFO: u32 = 1;
    /// Inputs referenced.
    pub const INPUTS: u32 = 2;
    /// Outputs referenced.
    pub const OUTPUTS: u32 = 3;
    /// Whether the program writes a conditional output value.
    pub const CONDOUT: u32 = 4;
    /// Float constants referenced.
    pub const FLOAT32CONSTS: u32 = 5;
    /// Integer constants referenced.
    pub const INT32CONSTS: u32 = 6;
    /// Whether the program contains an early exit.
    pub const EARLYEXIT: u32 = 7;
    /// Human-readable name of a note type.
    pub fn name(ty: u32) -> &'static str {
        match ty {
            PROGINFO => "PROGINFO",
            INPUTS => "INPUTS",
            OUTPUTS => "OUTPUTS",
            CONDOUT => "CONDOUT",
            FLOAT32CONSTS => "FLOAT32CONSTS",
            INT32CONSTS => "INT32CONSTS",
            EARLYEXIT => "EARLYEXIT",
            _ => "unknown",
        }
    }
}

/// What the notes say about a program (§5–§6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramInfo {
    /// `dpp_proginfo` word 0 (reserved, 1 in every known file).
    pub proginfo_reserved: u32,
    /// `dpp_proginfo.FG_DEPTH_SRC`: bit 0 = the program supplies the conditional value.
    pub fg_depth_src: u32,
    /// Further `dpp_proginfo` words, kept opaque and written back unchanged.
    pub proginfo_extra: Vec<u32>,
    /// Input ids referenced (0–15).
    pub inputs: Vec<u32>,
    /// Output ids referenced (0–3).
    pub outputs: Vec<u32>,
    /// The program writes a conditional output value.
    pub cond_out: bool,
    /// Float constants referenced (0–255).
    pub f32_consts: Vec<u32>,
    /// Integer constants referenced (0–31).
    pub i32_consts: Vec<u32>,
    /// The program contains an early exit (`LAST`).
    pub early_exit: bool,
}

impl Default for ProgramInfo {
    fn default() -> Self {
        ProgramInfo {
            proginfo_reserved: 1,
            fg_depth_src: 0,
            proginfo_extra: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            cond_out: false,
            f32_consts: Vec::new(),
            i32_consts: Vec::new(),
            early_exit: false,
        }
    }
}

impl ProgramInfo {
    /// Whether the program writes uncached (UMRT) outputs. `[E]`: the
    /// Guide says the mode comes from the program file, on a lost page;
    /// ctm keeps it in bit 0 of `dpp_proginfo` word 2 (the first word after
    /// `FG_DEPTH_SRC`).
    pub fn uncached(&self) -> bool {
        self.proginfo_extra.first().is_some_and(|w| w & 1 != 0)
    }

    /// Sets the uncached (UMRT) mode bit (see [`ProgramInfo::uncached`]).
    pub fn set_uncached(&mut self, on: bool) {
        match self.proginfo_extra.first_mut() {
            Some(w) => *w = (*w & !1) | u32::from(on),
            None if on => self.proginfo_extra.push(1),
            None => {}
        }
    }

    /// The notes a program's code implies: inputs read by TEX lookups,
    /// render targets written by OUTPUT instructions, the conditional value
    /// (`W_OMASK`), constants addressed, loop integer constants, and `LAST`
    /// before the final instruction (an early exit).
    pub fn from_code(insts: &[Inst]) -> ProgramInfo {
        let mut info = ProgramInfo::default();
        for (index, inst) in insts.iter().enumerate() {
            // `LAST` on the final instruction is the normal end, not an early exit.
            info.early_exit |= inst.cmn.last && index + 1 < insts.len();
            match &inst.body {
                // KILL reads no memory; uncached lookups read output 0.
                Body::Tex(t)
                    if !matches!(
                        t.inst.op,
                        isa::TexOp::Nop | isa::TexOp::Kill | isa::TexOp::LdUncached
                    ) =>
                {
                    info.inputs.push(u32::from(t.inst.tex_id))
                }
                Body::Tex(_) => {}
                Body::Fc(f) => {
                    use isa::FcOp::*;
                    if matches!(f.inst.op, Loop | EndLoop | Rep | EndRep) {
                        info.i32_consts.push(u32::from(f.addr.int_addr));
                    }
                }
                Body::Alu(a) => {
                    for addr in [&a.rgb_addr, &a.alpha_addr] {
                        for k in 0..3 {
                            if let SrcKind::Const(n) = addr.src(k).kind {
                                info.f32_consts.push(u32::from(n));
                            }
                        }
                    }
                    if inst.cmn.ty == InstType::Out {
                        if inst.cmn.rgb_omask != 0 {
                            info.outputs.push(u32::from(a.rgb.target));
                        }
                        if inst.cmn.alpha_omask {
                            info.outputs.push(u32::from(a.alpha.target));
                        }
                        info.cond_out |= a.alpha.w_omask;
                    }
                }
            }
        }
        for list in [
            &mut info.inputs,
            &mut info.outputs,
            &mut info.f32_consts,
            &mut info.i32_consts,
        ] {
            list.sort_unstable();
            list.dedup();
        }
        info.fg_depth_src = u32::from(info.cond_out);
        info
    }
}

/// A loaded (or to-be-written) DPP executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable {
    /// The instruction words of `.text` (6 per instruction).
    pub code: Vec<u32>,
    /// The notes.
    pub info: ProgramInfo,
    /// Offset of `.text` in the file it was loaded from (0 if built in memory).
    pub text_offset: u64,
}

impl Executable {
    /// An executable for `code` with the notes the code implies. Slots that do
    /// not decode contribute nothing to the notes.
    pub fn from_code(code: Vec<u32>) -> Executable {
        let insts: Vec<Inst> = isa::decode_program(&code).into_iter().flatten().collect();
        Executable {
            info: ProgramInfo::from_code(&insts),
            code,
            text_offset: 0,
        }
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.code.len() / isa::WORDS_PER_INST
    }

    /// Whether the program has no instructions.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

/// A file that is not a valid DPP executable. Every variant names the byte
/// offset where the problem was found.
#[derive(Debug, thiserror::Error)]
pub enum AbiError {
    /// The file ends before a structure it must contain.
    #[error("offset {offset:#x}: file too short: {what} needs {needed} bytes, the file has {len}")]
    Truncated {
        /// Where the structure starts.
        offset: u64,
        /// Which structure.
        what: &'static str,
        /// Bytes needed from `offset`.
        needed: u64,
        /// File length.
        len: u64,
    },
    /// Not an ELF file.
    #[error("offset 0x0: bad magic {found:02x?}, expected 7f 45 4c 46 (\"\\x7fELF\")")]
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// A header field has the wrong value.
    #[error("offset {offset:#x}: {field} is {found}, expected {expected}")]
    BadHeader {
        /// Offset of the field.
        offset: u64,
        /// Field name (`EI_CLASS`, `e_machine`, …).
        field: &'static str,
        /// Value found.
        found: u64,
        /// What is required.
        expected: &'static str,
    },
    /// goblin could not parse a structure.
    #[error("offset {offset:#x}: malformed {what}: {message}")]
    Malformed {
        /// Where.
        offset: u64,
        /// Which structure.
        what: &'static str,
        /// goblin's message.
        message: String,
    },
    /// A segment's file image lies outside the file.
    #[error(
        "offset {offset:#x}: program header {index} describes bytes {start:#x}..{end:#x}, past the end of the file ({len:#x})"
    )]
    SegmentPastEnd {
        /// Offset of the program header.
        offset: u64,
        /// Program header index.
        index: usize,
        /// Segment start.
        start: u64,
        /// Segment end.
        end: u64,
        /// File length.
        len: u64,
    },
    /// No `PT_LOAD` segment: the file has no code.
    #[error("offset {offset:#x}: no PT_LOAD segment in the program header table (the code)")]
    NoCode {
        /// Offset of the program header table.
        offset: u64,
    },
    /// More than one `PT_LOAD` segment.
    #[error(
        "offset {offset:#x}: program header {index} is a second PT_LOAD segment; a DPP executable has exactly one"
    )]
    SecondCodeSegment {
        /// Offset of the program header.
        offset: u64,
        /// Program header index.
        index: usize,
    },
    /// `p_memsz` differs from `p_filesz` for the code.
    #[error("offset {offset:#x}: PT_LOAD has p_memsz {memsz} != p_filesz {filesz}")]
    MemSizeMismatch {
        /// Offset of the program header.
        offset: u64,
        /// `p_filesz`.
        filesz: u64,
        /// `p_memsz`.
        memsz: u64,
    },
    /// `.text` is not a whole number of instructions.
    #[error(
        "offset {offset:#x}: .text is {size} bytes, not a multiple of {INST_BYTES} (one instruction)"
    )]
    TextNotWholeInstructions {
        /// Offset of `.text`.
        offset: u64,
        /// Its size.
        size: u64,
    },
    /// `.text` holds more instructions than the instruction store.
    #[error(
        "offset {offset:#x}: .text holds {count} instructions; the instruction store holds {MAX_INSTS}"
    )]
    TooManyInstructions {
        /// Offset of `.text`.
        offset: u64,
        /// Instruction count.
        count: u64,
    },
    /// A note record runs past the end of its segment.
    #[error(
        "offset {offset:#x}: note record needs {needed} bytes but its PT_NOTE segment ends at {end:#x}"
    )]
    NotePastSegment {
        /// Offset of the note record.
        offset: u64,
        /// Bytes the record needs.
        needed: u64,
        /// End of the segment.
        end: u64,
    },
    /// A note payload is not a whole number of words, or has the wrong size.
    #[error("offset {offset:#x}: {note} note has descsz {descsz}; {expected}")]
    BadNoteSize {
        /// Offset of the note record.
        offset: u64,
        /// Note type name.
        note: &'static str,
        /// `descsz`.
        descsz: u32,
        /// What is required.
        expected: &'static str,
    },
    /// A note type appears twice.
    #[error("offset {offset:#x}: second {note} note (the first is at {first:#x})")]
    DuplicateNote {
        /// Offset of the second record.
        offset: u64,
        /// Offset of the first.
        first: u64,
        /// Note type name.
        note: &'static str,
    },
    /// The mandatory program-information note is missing.
    #[error(
        "offset {offset:#x}: no PROGINFO note (type 1) in any PT_NOTE segment; the file must fail to load"
    )]
    MissingProgInfo {
        /// Offset of the program header table.
        offset: u64,
    },
    /// An index in a note is outside its register file.
    #[error("offset {offset:#x}: {note} note lists index {index}, outside 0..{limit}")]
    IndexOutOfRange {
        /// Offset of the entry.
        offset: u64,
        /// Note type name.
        note: &'static str,
        /// The index.
        index: u32,
        /// Number of entries of that register file.
        limit: u32,
    },
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Something unusual that does not stop the file from loading (§3, §5, §6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbiWarning {
    /// Byte offset.
    pub offset: u64,
    /// What was noticed.
    pub message: String,
}

/// Result of [`load`]: the executable and any warnings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The executable.
    pub exe: Executable,
    /// Warnings, in file order.
    pub warnings: Vec<AbiWarning>,
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}

/// Whether `bytes` start like an ELF file (used to tell executables from
/// assembly sources).
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// Loads a DPP executable from memory.
pub fn load(bytes: &[u8]) -> Result<Loaded, AbiError> {
    let len = bytes.len() as u64;
    let mut warnings = Vec::new();
    if bytes.len() < 4 || !is_elf(bytes) {
        let mut found = [0u8; 4];
        let n = bytes.len().min(4);
        found[..n].copy_from_slice(&bytes[..n]);
        return Err(AbiError::BadMagic { found });
    }
    if bytes.len() < 52 {
        return Err(AbiError::Truncated {
            offset: 0,
            what: "the ELF header",
            needed: 52,
            len,
        });
    }
    let bad = |offset: u64, field: &'static str, found: u64, expected: &'static str| {
        Err(AbiError::BadHeader {
            offset,
            field,
            found,
            expected,
        })
    };
    let ident = [
        (4, "EI_CLASS", 1, "1 (ELFCLASS32)"),
        (5, "EI_DATA", 1, "1 (ELFDATA2LSB)"),
        (6, "EI_VERSION", 1, "1 (EV_CURRENT)"),
        (7, "EI_OSABI", ELFOSABI_ATI, "98 (ELFOSABI_ATI)"),
        (8, "EI_ABIVERSION", ABI_VERSION, "1"),
    ];
    for (offset, field, want, expected) in ident {
        if bytes[offset] != want {
            return bad(offset as u64, field, u64::from(bytes[offset]), expected);
        }
    }
    let header = Elf::parse_header(bytes).map_err(|e| AbiError::Malformed {
        offset: 0,
        what: "ELF header",
        message: e.to_string(),
    })?;
    if header.e_type != ET_EXEC {
        return bad(16, "e_type", header.e_type.into(), "2 (ET_EXEC)");
    }
    if header.e_machine != EM_ATI_R5XX {
        return bad(
            18,
            "e_machine",
            header.e_machine.into(),
            "122 (EM_ATI_R5XX)",
        );
    }
    if header.e_version != 1 {
        return bad(20, "e_version", header.e_version.into(), "1");
    }
    if header.e_entry != 0 {
        return bad(
            24,
            "e_entry",
            header.e_entry,
            "0 (execution starts at pc 0)",
        );
    }
    if header.e_flags & EF_ATI_DPP == 0 {
        return bad(
            36,
            "e_flags",
            header.e_flags.into(),
            "bit 0 (EF_ATI_DPP) set",
        );
    }
    if header.e_flags != EF_ATI_DPP {
        warnings.push(AbiWarning {
            offset: 36,
            message: format!("e_flags {:#x} has bits besides EF_ATI_DPP", header.e_flags),
        });
    }
    if header.e_phentsize != 32 {
        return bad(42, "e_phentsize", header.e_phentsize.into(), "32");
    }

    // Program headers.
    let phoff = header.e_phoff;
    let phnum = usize::from(header.e_phnum);
    let table = 32 * phnum as u64;
    if phoff.checked_add(table).is_none_or(|end| end > len) {
        return Err(AbiError::Truncated {
            offset: phoff,
            what: "the program header table",
            needed: table,
            len,
        });
    }
    let ctx = Ctx::new(Container::Little, Endian::Little);
    let phdrs = ProgramHeader::parse(bytes, phoff as usize, phnum, ctx).map_err(|e| {
        AbiError::Malformed {
            offset: phoff,
            what: "program header table",
            message: e.to_string(),
        }
    })?;
    let mut text = None;
    let mut notes = Vec::new();
    for (index, ph) in phdrs.iter().enumerate() {
        let at = phoff + 32 * index as u64;
        if ph.p_type != PT_LOAD && ph.p_type != PT_NOTE {
            continue;
        }
        let end = ph.p_offset.checked_add(ph.p_filesz);
        if end.is_none_or(|end| end > len) {
            return Err(AbiError::SegmentPastEnd {
                offset: at,
                index,
                start: ph.p_offset,
                end: end.unwrap_or(u64::MAX),
                len,
            });
        }
        if ph.p_type == PT_LOAD {
            if text.is_some() {
                return Err(AbiError::SecondCodeSegment { offset: at, index });
            }
            if ph.p_memsz != ph.p_filesz {
                return Err(AbiError::MemSizeMismatch {
                    offset: at,
                    filesz: ph.p_filesz,
                    memsz: ph.p_memsz,
                });
            }
            text = Some((ph.p_offset, ph.p_filesz));
        } else {
            notes.push((ph.p_offset, ph.p_filesz));
        }
    }
    let Some((text_offset, text_size)) = text else {
        return Err(AbiError::NoCode { offset: phoff });
    };
    if text_size % INST_BYTES as u64 != 0 {
        return Err(AbiError::TextNotWholeInstructions {
            offset: text_offset,
            size: text_size,
        });
    }
    let count = text_size / INST_BYTES as u64;
    if count > MAX_INSTS as u64 {
        return Err(AbiError::TooManyInstructions {
            offset: text_offset,
            count,
        });
    }
    let text_bytes = &bytes[text_offset as usize..(text_offset + text_size) as usize];
    let code: Vec<u32> = text_bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
        .collect();

    let info = parse_notes(bytes, &notes, phoff, &mut warnings)?;
    check_sections(bytes, &header, (text_offset, text_size), &mut warnings);
    Ok(Loaded {
        exe: Executable {
            code,
            info,
            text_offset,
        },
        warnings,
    })
}

/// Parses the records of every PT_NOTE segment (§5).
fn parse_notes(
    bytes: &[u8],
    segments: &[(u64, u64)],
    phoff: u64,
    warnings: &mut Vec<AbiWarning>,
) -> Result<ProgramInfo, AbiError> {
    let mut info = ProgramInfo::default();
    let mut seen: [Option<u64>; 8] = [None; 8];
    for &(start, size) in segments {
        let end = start + size;
        let mut at = start;
        while at < end {
            if end - at < 12 {
                return Err(AbiError::NotePastSegment {
                    offset: at,
                    needed: 12,
                    end,
                });
            }
            let o = at as usize;
            let (namesz, descsz, ty) =
                (u32_at(bytes, o), u32_at(bytes, o + 4), u32_at(bytes, o + 8));
            let name_pad = u64::from(namesz).div_ceil(4) * 4;
            let desc_pad = u64::from(descsz).div_ceil(4) * 4;
            let needed = 12 + name_pad + desc_pad;
            if needed > end - at {
                return Err(AbiError::NotePastSegment {
                    offset: at,
                    needed,
                    end,
                });
            }
            let name = &bytes[o + 12..o + 12 + namesz as usize];
            let desc_at = at + 12 + name_pad;
            let desc = &bytes[desc_at as usize..(desc_at + u64::from(descsz)) as usize];
            let record = at;
            at += needed;
            if name != NOTE_NAME {
                warnings.push(AbiWarning {
                    offset: record,
                    message: "note not named \"ATI DPP\" skipped".into(),
                });
                continue;
            }
            let kind = note::name(ty);
            if !(1..=7).contains(&ty) {
                warnings.push(AbiWarning {
                    offset: record,
                    message: format!("unknown ATI DPP note type {ty} ignored"),
                });
                continue;
            }
            if let Some(first) = seen[ty as usize] {
                return Err(AbiError::DuplicateNote {
                    offset: record,
                    first,
                    note: kind,
                });
            }
            seen[ty as usize] = Some(record);
            if descsz % 4 != 0 {
                return Err(AbiError::BadNoteSize {
                    offset: record,
                    note: kind,
                    descsz,
                    expected: "a multiple of 4",
                });
            }
            let words: Vec<u32> = desc
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect();
            let flag = |warnings: &mut Vec<AbiWarning>| -> Result<bool, AbiError> {
                match words.as_slice() {
                    [v] => {
                        if *v > 1 {
                            warnings.push(AbiWarning {
                                offset: desc_at,
                                message: format!("{kind} flag {v} treated as 1"),
                            });
                        }
                        Ok(*v != 0)
                    }
                    _ => Err(AbiError::BadNoteSize {
                        offset: record,
                        note: kind,
                        descsz,
                        expected: "exactly 4 (one flag word)",
                    }),
                }
            };
            let list = |limit: u32, warnings: &mut Vec<AbiWarning>| -> Result<Vec<u32>, AbiError> {
                let mut out: Vec<u32> = Vec::with_capacity(words.len());
                for (k, &index) in words.iter().enumerate() {
                    let offset = desc_at + 4 * k as u64;
                    if index >= limit {
                        return Err(AbiError::IndexOutOfRange {
                            offset,
                            note: kind,
                            index,
                            limit,
                        });
                    }
                    if out.contains(&index) {
                        warnings.push(AbiWarning {
                            offset,
                            message: format!("{kind} lists {index} twice"),
                        });
                    }
                    out.push(index);
                }
                Ok(out)
            };
            match ty {
                note::PROGINFO => {
                    if words.len() < 2 {
                        return Err(AbiError::BadNoteSize {
                            offset: record,
                            note: kind,
                            descsz,
                            expected: "at least 8 (reserved word and FG_DEPTH_SRC)",
                        });
                    }
                    if words[0] != 1 {
                        warnings.push(AbiWarning {
                            offset: desc_at,
                            message: format!("dpp_proginfo word 0 is {}, expected 1", words[0]),
                        });
                    }
                    info.proginfo_reserved = words[0];
                    info.fg_depth_src = words[1];
                    info.proginfo_extra = words[2..].to_vec();
                }
                note::INPUTS => info.inputs = list(16, warnings)?,
                note::OUTPUTS => info.outputs = list(4, warnings)?,
                note::CONDOUT => info.cond_out = flag(warnings)?,
                note::FLOAT32CONSTS => info.f32_consts = list(256, warnings)?,
                note::INT32CONSTS => info.i32_consts = list(32, warnings)?,
                note::EARLYEXIT => info.early_exit = flag(warnings)?,
                _ => unreachable!("types 1..=7 handled"),
            }
        }
    }
    let Some(proginfo_at) = seen[note::PROGINFO as usize] else {
        return Err(AbiError::MissingProgInfo { offset: phoff });
    };
    if (info.fg_depth_src & 1 != 0) != info.cond_out {
        warnings.push(AbiWarning {
            offset: proginfo_at,
            message: format!(
                "FG_DEPTH_SRC bit 0 is {} but CONDOUT says {}; CONDOUT wins",
                info.fg_depth_src & 1,
                u8::from(info.cond_out)
            ),
        });
    }
    Ok(info)
}

/// Optional cross-check of the section headers against the program headers
/// (§7 step 7); problems are warnings, the program headers are authoritative.
fn check_sections(bytes: &[u8], header: &Header, text: (u64, u64), warnings: &mut Vec<AbiWarning>) {
    let shnum = usize::from(header.e_shnum);
    if shnum == 0 || header.e_shoff == 0 {
        return;
    }
    let ctx = Ctx::new(Container::Little, Endian::Little);
    let in_file = header
        .e_shoff
        .checked_add(40 * shnum as u64)
        .is_some_and(|end| end <= bytes.len() as u64);
    let sections = if in_file && header.e_shentsize == 40 {
        SectionHeader::parse(bytes, header.e_shoff as usize, shnum, ctx).ok()
    } else {
        None
    };
    let Some(sections) = sections else {
        warnings.push(AbiWarning {
            offset: 32,
            message: "section header table unreadable; ignored".into(),
        });
        return;
    };
    let covers = sections
        .iter()
        .any(|s| s.sh_type == 1 && s.sh_flags == 6 && s.sh_offset == text.0 && s.sh_size == text.1);
    if !covers {
        warnings.push(AbiWarning {
            offset: header.e_shoff,
            message:
                "no SHT_PROGBITS section with flags ALLOC|EXECINSTR matches the PT_LOAD segment"
                    .into(),
        });
    }
}

/// Loads a DPP executable from a file, mapping it into memory.
pub fn load_path(path: &Path) -> Result<Loaded, AbiError> {
    let io = |source| AbiError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    if file.metadata().map_err(io)?.len() == 0 {
        return load(&[]);
    }
    // SAFETY: the mapping is read-only and private to this call; the bytes are
    // copied out by `load` before the map is dropped. A file truncated by
    // another process while mapped could fault, which is the documented
    // memmap2 caveat for any mapped read.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    load(&map)
}

fn note_record(out: &mut Vec<u8>, ty: u32, words: &[u32]) {
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&((words.len() * 4) as u32).to_le_bytes());
    out.extend_from_slice(&ty.to_le_bytes());
    out.extend_from_slice(NOTE_NAME);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Writes an executable in the layout of `docs/abi.md` §8: ELF header,
/// program headers (PT_NOTE, PT_LOAD), the seven notes in type order,
/// `.text`, `.shstrtab`, section headers.
pub fn write(exe: &Executable) -> Vec<u8> {
    let i = &exe.info;
    let mut notes = Vec::new();
    let mut proginfo = vec![i.proginfo_reserved, i.fg_depth_src];
    proginfo.extend_from_slice(&i.proginfo_extra);
    note_record(&mut notes, note::PROGINFO, &proginfo);
    note_record(&mut notes, note::INPUTS, &i.inputs);
    note_record(&mut notes, note::OUTPUTS, &i.outputs);
    note_record(&mut notes, note::CONDOUT, &[u32::from(i.cond_out)]);
    note_record(&mut notes, note::FLOAT32CONSTS, &i.f32_consts);
    note_record(&mut notes, note::INT32CONSTS, &i.i32_consts);
    note_record(&mut notes, note::EARLYEXIT, &[u32::from(i.early_exit)]);

    let shstrtab = b"\0.note\0.text\0.shstrtab\0";
    let notes_at = 52 + 2 * 32;
    let text_at = notes_at + notes.len();
    let text_len = exe.code.len() * 4;
    let strtab_at = text_at + text_len;
    let sh_at = (strtab_at + shstrtab.len()).div_ceil(4) * 4;

    let mut out = Vec::with_capacity(sh_at + 4 * 40);
    // ELF header.
    out.extend_from_slice(b"\x7fELF");
    out.extend_from_slice(&[1, 1, 1, ELFOSABI_ATI, ABI_VERSION, 0, 0, 0, 0, 0, 0, 0]);
    let h16 = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());
    let h32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    h16(&mut out, ET_EXEC);
    h16(&mut out, EM_ATI_R5XX);
    h32(&mut out, 1); // e_version
    h32(&mut out, 0); // e_entry
    h32(&mut out, 52); // e_phoff
    h32(&mut out, sh_at as u32); // e_shoff
    h32(&mut out, EF_ATI_DPP);
    for v in [52u16, 32, 2, 40, 4, 3] {
        h16(&mut out, v); // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
    }
    // Program headers: PT_NOTE (PF_R), PT_LOAD (PF_R | PF_X).
    for (ty, offset, size, flags) in [
        (PT_NOTE, notes_at, notes.len(), 4u32),
        (PT_LOAD, text_at, text_len, 5),
    ] {
        for v in [ty, offset as u32, 0, 0, size as u32, size as u32, flags, 4] {
            h32(&mut out, v);
        }
    }
    out.extend_from_slice(&notes);
    for w in &exe.code {
        h32(&mut out, *w);
    }
    out.extend_from_slice(shstrtab);
    out.resize(sh_at, 0);
    // Section headers: NULL, .note, .text, .shstrtab.
    let sections: [[u32; 10]; 4] = [
        [0; 10],
        [1, 7, 0, 0, notes_at as u32, notes.len() as u32, 0, 0, 4, 0],
        [7, 1, 6, 0, text_at as u32, text_len as u32, 0, 0, 4, 0],
        [
            13,
            3,
            0,
            0,
            strtab_at as u32,
            shstrtab.len() as u32,
            0,
            0,
            1,
            0,
        ],
    ];
    for s in sections {
        for v in s {
            h32(&mut out, v);
        }
    }
    out
}
