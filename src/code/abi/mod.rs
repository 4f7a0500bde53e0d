//! DPP executables: ELF32 files with ATI notes (`docs/abi.md`).
//!
//! [`load`] checks the header (§3), takes the instructions from the single
//! `PT_LOAD` segment (§4) and the seven note types from every `PT_NOTE`
//! segment (§5–§6); malformed files give an [`AbiError`] with the byte offset
//! at fault. [`write()`] produces the layout of §8, which [`load`] reads back
//! identically. Files on disk are read whole, within a size cap ([`load_path`]).
//!
//! (ctm) choices (docs/abi.md leaves them to the emulator): the strictness
//! rules of §3, §5.4 and §7 as written there; input/output/constant indices
//! outside their register files are errors, not warnings.

mod image;
mod info;
mod notes;
mod write;

pub use image::{ImageLen, MAX_IMAGE, image_len};
pub use info::{ConstValues, LoopConst, ProgramInfo, reachable_consts};
use notes::{check_sections, parse_notes};
pub use write::write;

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

/// The name of ctm's own notes (§5.5), `"ctm"` + NUL.
pub const CTM_NOTE_NAME: &[u8; 4] = b"ctm\0";

/// ctm's note types (§5.5), under [`CTM_NOTE_NAME`].
pub mod ctm_note {
    /// Float constant values: records of index and four words.
    pub const FLOATS: u32 = 1;
    /// Integer constant values: records of index and a packed word
    /// (count, initial aL, step in bytes 0–2).
    pub const INTS: u32 = 2;
    /// Boolean constant values: records of index and 0 or 1.
    pub const BOOLS: u32 = 3;
    /// Bindings: UTF-8 lines `NAME=RESOURCE`, padded with NULs.
    pub const BINDINGS: u32 = 4;
    /// Float constant defaults (the host may override them): records as
    /// [`FLOATS`].
    pub const DEFAULTS: u32 = 5;
}

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
    let header = check_header(bytes, &mut warnings)?;
    let (text, notes) = segments(bytes, &header)?;
    let phoff = header.e_phoff;
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

/// The ELF header, checked field by field against §3 (a file of at least
/// 52 bytes that starts like ELF).
fn check_header(
    bytes: &[u8],
    warnings: &mut Vec<AbiWarning>,
) -> Result<goblin::elf::header::Header, AbiError> {
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

    Ok(header)
}

/// A segment's file offset and size.
type Span = (u64, u64);

/// The code segment (offset, size) and the note segments of the program
/// header table (§4).
fn segments(
    bytes: &[u8],
    header: &goblin::elf::header::Header,
) -> Result<(Option<Span>, Vec<Span>), AbiError> {
    let len = bytes.len() as u64;
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
    Ok((text, notes))
}

/// Loads a DPP executable from a file (at most [`MAX_IMAGE`] bytes, refused
/// by its size before it is read).
pub fn load_path(path: &Path) -> Result<Loaded, AbiError> {
    let bytes = crate::program::read_file(path, MAX_IMAGE).map_err(|e| match e {
        crate::program::ReadError::Io(source) => AbiError::Io {
            path: path.to_path_buf(),
            source,
        },
        crate::program::ReadError::TooLarge { cap } => AbiError::Malformed {
            offset: 0,
            what: "the file",
            message: format!(
                "larger than {} MiB, the most an executable may be",
                cap >> 20
            ),
        },
    })?;
    load(&bytes)
}
