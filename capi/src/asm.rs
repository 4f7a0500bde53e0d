//! `amuAsm.h` (`docs/c-api.md` §6): DPP assembly (`docs/asm.md`) to an
//! executable image that a client copies to program memory, and images back
//! to text. Images are ELF files (`docs/abi.md` §8), the same bytes
//! `ctm asm` writes; `start_program` finds them at the instruction base
//! (`docs/abi.md` §10).

use crate::{Log, c_str, guard, log, malloced};
use ctm_rs::abi::{self, ImageLen};
use ctm_rs::isa::{asm, disasm};
use std::ffi::{c_char, c_uint, c_void};

/// The bytes of the image at `binary`, read as far as its headers say.
///
/// # Safety
/// `binary` is null or points to an image as this library writes it (the
/// headers are checked for plausibility before any byte past them is read).
pub(crate) unsafe fn image<'a>(binary: *const c_void) -> Result<&'a [u8], String> {
    if binary.is_null() {
        return Err("the binary is NULL".into());
    }
    let p = binary.cast::<u8>();
    // SAFETY: an image has at least its 4-byte magic.
    let magic = unsafe { std::slice::from_raw_parts(p, 4) };
    if !abi::is_elf(magic) {
        return Err(format!(
            "the binary does not start with an executable image (bytes {magic:02x?}, not the ELF magic)"
        ));
    }
    let mut n = 52u64;
    loop {
        // SAFETY: an image with the magic is at least as long as its ELF
        // header, then its tables, then its extent, each checked by
        // `image_len` before it is asked for.
        let prefix = unsafe { std::slice::from_raw_parts(p, n as usize) };
        match abi::image_len(prefix).map_err(|e| format!("the binary: {e}"))? {
            ImageLen::Needs(m) if m > n => n = m,
            ImageLen::Needs(_) => {
                return Err("the binary's headers do not describe an image".into());
            }
            ImageLen::Len(len) => {
                // SAFETY: as above.
                return Ok(unsafe { std::slice::from_raw_parts(p, len.max(n) as usize) });
            }
        }
    }
}

/// `amuAsmAssemble`: assembles `length` bytes of `source` (or up to its
/// NUL when `length` is 0) into a `malloc`ed image at `*binary` of
/// `*size` bytes. Errors and the validator's warnings go to `log`. Non-zero
/// on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuAsmAssemble(
    source: *const c_char,
    length: c_uint,
    size: *mut c_uint,
    binary: *mut *mut c_void,
    log_fn: Log,
) -> c_uint {
    guard(0, || {
        if size.is_null() || binary.is_null() {
            return Err("amuAsmAssemble: the size or binary pointer is NULL".into());
        }
        let text = if length == 0 {
            // SAFETY: a NUL-terminated source.
            unsafe { c_str(source, "the source") }?.to_string()
        } else {
            if source.is_null() {
                return Err("the source is NULL".into());
            }
            // SAFETY: `length` bytes of source.
            let bytes = unsafe { std::slice::from_raw_parts(source.cast::<u8>(), length as usize) };
            String::from_utf8(bytes.to_vec()).map_err(|_| "the source is not UTF-8".to_string())?
        };
        let src = asm::assemble_source(&text).map_err(|e| {
            let message = format!("assembly:{e}");
            log(log_fn, &message);
            message
        })?;
        if src.words.is_empty() {
            return Err("assembly: no instructions".into());
        }
        for w in ctm_rs::program::validate(&src.words, src.uncached) {
            log(log_fn, &format!("warning: {w}"));
        }
        let mut exe = abi::Executable::from_code(src.words);
        exe.info.set_uncached(src.uncached);
        let bytes = abi::write(&exe);
        let out = malloced(&bytes)?;
        // SAFETY: checked non-null above.
        unsafe {
            *binary = out;
            *size = bytes.len() as c_uint;
        }
        Ok(1)
    })
}

/// `amuAsmDisassemble`: the image's instructions as text, one line per
/// instruction, to `log`. Non-zero on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuAsmDisassemble(binary: *const c_void, log_fn: Log) -> c_uint {
    guard(0, || {
        // SAFETY: the caller's image.
        let bytes = unsafe { image(binary) }?;
        let exe = abi::load(bytes)
            .map_err(|e| format!("the binary: {e}"))?
            .exe;
        log(
            log_fn,
            &disasm::disassemble_program(&exe.code, disasm::Options::default()),
        );
        Ok(1)
    })
}
