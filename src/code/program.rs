//! Reading a DPP program from a file in any of its forms: an ELF
//! executable (`docs/abi.md`), assembly text (`docs/asm.md`), raw
//! little-endian instruction words, or a Direct3D 9 pixel shader (bytecode
//! or text, `docs/d3d9.md`) compiled on load.

use std::path::{Path, PathBuf};

use crate::abi::{self, AbiError, AbiWarning, Executable};
use crate::isa::{INST_BYTES, MAX_INSTS, asm};

/// Where a program came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An ELF executable.
    Elf,
    /// Assembly text, assembled on load.
    Assembly,
    /// Raw instruction words.
    Raw,
    /// A Direct3D 9 pixel shader, compiled on load.
    Shader,
}

/// A program read from a file.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The executable (code and notes; notes derived from the code unless ELF).
    pub exe: Executable,
    /// ABI warnings (ELF only).
    pub warnings: Vec<AbiWarning>,
    /// The form the file had.
    pub origin: Origin,
}

/// Why a program file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A malformed ELF file.
    #[error("{path}: {source}")]
    Abi {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: AbiError,
    },
    /// Assembly that does not assemble.
    #[error("{path}:{source}")]
    Asm {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        #[source]
        source: asm::AsmError,
    },
    /// A raw file that is not a whole number of instructions, or too long.
    #[error("{path}: {message}")]
    Raw {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A Direct3D 9 shader that does not read, assemble or compile.
    #[error("{path}: {message}")]
    Shader {
        /// The file.
        path: PathBuf,
        /// What is wrong (with the token offset, the line and column, or
        /// the instruction).
        message: String,
    },
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Largest program file read: 512 instructions of commented assembly or an
/// ELF file with generous notes fit many times over.
pub const MAX_FILE: u64 = 16 << 20;

/// Reads a program. With `raw`, the file is taken as little-endian words;
/// otherwise an ELF file is recognised by its magic and anything else must be
/// assembly text. The path `-` reads standard input.
pub fn load(path: &Path, raw: bool) -> Result<Loaded, LoadError> {
    let bytes = read_file(path, MAX_FILE).map_err(|e| match e {
        ReadError::Io(source) => LoadError::Io {
            path: path.to_path_buf(),
            source,
        },
        ReadError::TooLarge { .. } => LoadError::Raw {
            path: path.to_path_buf(),
            message: format!(
                "larger than {} MiB: no program of {MAX_INSTS} instructions is this big",
                MAX_FILE >> 20
            ),
        },
    })?;
    load_bytes(&bytes, path, raw)
}

/// Why [`read_file`] gave no bytes.
#[derive(Debug)]
pub enum ReadError {
    /// The system's error.
    Io(std::io::Error),
    /// More than the cap: said by the file's metadata before anything was
    /// read, or found while reading a pipe.
    TooLarge {
        /// The cap.
        cap: u64,
    },
}

/// Reads a whole file, or standard input for `-`, refusing anything over
/// `cap` bytes: a regular file's size is checked before it is read, and a
/// pipe is read no further than one byte past the cap. Every reader of
/// input files goes through it, so every command applies the same cap to
/// the same kind of file.
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(ReadError::Io)?;
        let meta = file.metadata().map_err(ReadError::Io)?;
        if meta.is_file() && meta.len() > cap {
            return Err(ReadError::TooLarge { cap });
        }
        Box::new(file)
    };
    reader
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Reads a program from the bytes of a file (`path` names it in errors),
/// as [`load`] does.
pub fn load_bytes(bytes: &[u8], path: &Path, raw: bool) -> Result<Loaded, LoadError> {
    if raw {
        let bad = |message: String| LoadError::Raw {
            path: path.to_path_buf(),
            message,
        };
        if !bytes.len().is_multiple_of(INST_BYTES) {
            return Err(bad(format!(
                "{} bytes is not a whole number of {INST_BYTES}-byte instructions (the last one starts at byte {:#x})",
                bytes.len(),
                bytes.len() / INST_BYTES * INST_BYTES
            )));
        }
        if bytes.len() / INST_BYTES > MAX_INSTS {
            return Err(bad(format!(
                "{} instructions; the instruction store holds {MAX_INSTS}",
                bytes.len() / INST_BYTES
            )));
        }
        let code = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        return Ok(Loaded {
            exe: Executable::from_code(code),
            warnings: Vec::new(),
            origin: Origin::Raw,
        });
    }
    if abi::is_elf(bytes) {
        let loaded = abi::load(bytes).map_err(|source| LoadError::Abi {
            path: path.to_path_buf(),
            source,
        })?;
        return Ok(Loaded {
            exe: loaded.exe,
            warnings: loaded.warnings,
            origin: Origin::Elf,
        });
    }
    let shader_error = |message: String| LoadError::Shader {
        path: path.to_path_buf(),
        message,
    };
    let shader = if is_shader_bytecode(bytes) || is_shader_text(bytes) {
        Some(read_shader(bytes).map_err(shader_error)?)
    } else {
        None
    };
    if let Some(shader) = shader {
        let compiled =
            crate::d3d9::compile(&shader).map_err(|e| shader_error(compile_error_at(bytes, &e)))?;
        return Ok(Loaded {
            exe: compiled.exe,
            warnings: Vec::new(),
            origin: Origin::Shader,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| LoadError::Raw {
        path: path.to_path_buf(),
        message: format!(
            "neither an ELF executable nor assembly text (byte {:#x} is not UTF-8); use --raw for raw instruction words",
            e.valid_up_to()
        ),
    })?;
    let src = asm::assemble_source(text).map_err(|source| LoadError::Asm {
        path: path.to_path_buf(),
        source,
    })?;
    let mut exe = Executable::from_code(src.words);
    exe.info.set_uncached(src.uncached);
    Ok(Loaded {
        exe,
        warnings: Vec::new(),
        origin: Origin::Assembly,
    })
}

/// Whether bytes start with a pixel shader's version token (`0xFFFFmmnn`).
pub fn is_shader_bytecode(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[2..4] == [0xFF, 0xFF]
}

/// A Direct3D 9 pixel shader from a file's bytes: bytecode when they start
/// with a version token, text otherwise (`docs/d3d9.md`).
pub fn read_shader(bytes: &[u8]) -> Result<crate::d3d9::Shader, String> {
    if is_shader_bytecode(bytes) {
        return crate::d3d9::read_bytes(bytes).map_err(|e| e.to_string());
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| "neither shader bytecode nor shader text (UTF-8)".to_string())?;
    crate::d3d9::assemble(text).map_err(|e| e.to_string())
}

/// A compile error of the shader read from `bytes`, prefixed with where its
/// instruction stands: `LINE:COL:` in text, `token T:` in bytecode.
pub fn compile_error_at(bytes: &[u8], e: &crate::d3d9::CompileError) -> String {
    let Some(k) = e.item else {
        return e.to_string();
    };
    let at = if is_shader_bytecode(bytes) {
        crate::d3d9::read_bytes(bytes)
            .ok()
            .map(|s| format!("token {}", crate::d3d9::item_offsets(&s)[k]))
    } else {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| crate::d3d9::assemble_with_lines(t).ok())
            .and_then(|(_, lines)| lines.get(k).map(|(l, c)| format!("{l}:{c}")))
    };
    match at {
        Some(at) => format!("{at}: {e}"),
        None => e.to_string(),
    }
}

/// Whether text starts (after blank lines and comments) with a pixel
/// shader version (`ps_1_1` … `ps_3_0`, or Direct3D 8's `ps.1.1`).
pub fn is_shader_text(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    text.lines()
        .map(|l| {
            let cut = [l.find("//"), l.find(';')]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(l.len());
            l[..cut].trim()
        })
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            let l = l.to_ascii_lowercase();
            l.starts_with("ps_") || l.starts_with("ps.")
        })
}

/// Every static finding about a program: the validator's rules
/// (`docs/isa.md` §8) and the texture-semaphore hazards it certainly has
/// ([`crate::runtime::hazard::provable`]), in instruction order.
pub fn validate(code: &[u32], uncached: bool) -> Vec<crate::isa::validate::Warning> {
    let slots = crate::isa::decode_program(code);
    let mut out = crate::isa::validate::validate(&slots);
    let program = crate::frontend::build(
        &slots,
        crate::frontend::Options {
            drop_dead_writes: false,
            ..crate::frontend::Options::loaded(uncached)
        },
    );
    out.extend(
        crate::runtime::hazard::provable(&program)
            .into_iter()
            .map(|(pc, message)| crate::isa::validate::Warning {
                index: usize::from(pc),
                message: format!("semaphore hazard: {message}"),
            }),
    );
    out.sort_by_key(|w| w.index);
    out
}
