//! `amuABI.h` (`docs/c-api.md` §10): the constants of an executable image —
//! the user constants a host sets by name (the shader's constant table) and
//! the literal constants the shader defines (`def`, `defi`, `defb`), which
//! `amuABISetLiteralConstants` writes into the client's constant memory.

use crate::asm::image;
use crate::{guard, set_error};
use ctm_rs::kernel::Resource;
use std::ffi::{c_char, c_uint, c_void};

/// `AMUabiDataType`.
const FLOAT32: c_uint = 0;
const INT32: c_uint = 1;
const BOOL32: c_uint = 2;

/// Bytes of a user constant's name, NUL included.
const NAME: usize = 64;

/// The C `AMUabiUserConst`.
#[repr(C)]
pub struct UserConst {
    name: [c_char; NAME],
    ty: c_uint,
    addr: c_uint,
}

/// The C `AMUabiLitConst` (its value a union of four floats, four
/// unsigned ints or four booleans, all 16 bytes).
#[repr(C)]
pub struct LitConst {
    ty: c_uint,
    addr: c_uint,
    value: [u32; 4],
}

/// The C `AMUabiConstsInfo`, passed and returned by value.
#[repr(C)]
pub struct ConstsInfo {
    user_count: c_uint,
    user: *mut UserConst,
    lit_count: c_uint,
    lit: *mut LitConst,
}

const EMPTY: ConstsInfo = ConstsInfo {
    user_count: 0,
    user: std::ptr::null_mut(),
    lit_count: 0,
    lit: std::ptr::null_mut(),
};

unsafe extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// `items` in a `calloc`ed array (null when empty).
fn array<T>(items: Vec<T>) -> Result<*mut T, String> {
    if items.is_empty() {
        return Ok(std::ptr::null_mut());
    }
    // SAFETY: calloc has no preconditions; the result is checked.
    let p = unsafe { calloc(items.len(), std::mem::size_of::<T>()) }.cast::<T>();
    if p.is_null() {
        return Err("out of memory".into());
    }
    for (k, item) in items.into_iter().enumerate() {
        // SAFETY: inside the array of `len` elements.
        unsafe { p.add(k).write(item) };
    }
    Ok(p)
}

/// Whether a binding names a register or a compiler resource rather than a
/// name of the shader's constant table.
fn is_register(name: &str) -> bool {
    let numbered = |p: &str| {
        name.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    name.contains('.')
        || ["v", "t", "s", "oC", "c", "i", "b", "r"]
            .iter()
            .any(|p| numbered(p))
        || ["oDepth", "vFace", "vPos"].contains(&name)
}

/// `amuABIExtractConstants`: the constants of the image at `binary`. The
/// arrays are the library's until `amuABIFreeConstants`; an empty info
/// (counts 0) when the binary is not an image (the reason through
/// `ctmGetLastError`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuABIExtractConstants(binary: *const c_void) -> ConstsInfo {
    guard(EMPTY, || {
        // SAFETY: the caller's image.
        let bytes = unsafe { image(binary) }?;
        let exe = ctm_rs::abi::load(bytes)
            .map_err(|e| format!("the binary: {e}"))?
            .exe;
        let mut user = Vec::new();
        for (name, res) in &exe.info.bindings {
            if is_register(name) || name.len() >= NAME {
                continue;
            }
            let (ty, addr) = match Resource::parse(res) {
                Some(Resource::Float(n)) => (FLOAT32, c_uint::from(n)),
                Some(Resource::Int(n)) => (INT32, c_uint::from(n)),
                Some(Resource::Bool(n)) => (BOOL32, c_uint::from(n)),
                _ => continue,
            };
            let mut text = [0 as c_char; NAME];
            for (k, b) in name.bytes().enumerate() {
                text[k] = b as c_char;
            }
            user.push(UserConst {
                name: text,
                ty,
                addr,
            });
        }
        let v = &exe.info.values;
        let lit: Vec<LitConst> = v
            .floats
            .iter()
            .map(|&(n, bits)| LitConst {
                ty: FLOAT32,
                addr: n,
                value: bits,
            })
            .chain(v.ints.iter().map(|&(n, b)| LitConst {
                ty: INT32,
                addr: n,
                value: [b[0], b[1], b[2], 0].map(u32::from),
            }))
            .chain(v.bools.iter().map(|&(n, b)| LitConst {
                ty: BOOL32,
                addr: n,
                value: [u32::from(b), 0, 0, 0],
            }))
            .collect();
        Ok(ConstsInfo {
            user_count: user.len() as c_uint,
            lit_count: lit.len() as c_uint,
            user: array(user)?,
            lit: array(lit)?,
        })
    })
}

/// `amuABISetLiteralConstants`: writes the literal constants of `info`
/// into constant memory through CPU pointers: float constant N at
/// `fconst + 16·N`, integer constant N at `iconst + 4·N` (count, initial
/// aL, step, 0), boolean constant N at `bconst + 4·N` (0 or 1). A NULL
/// pointer skips its kind; a literal of a skipped kind is an error kept
/// for `ctmGetLastError`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuABISetLiteralConstants(
    info: ConstsInfo,
    fconst: *mut c_void,
    iconst: *mut c_void,
    bconst: *mut c_void,
) {
    guard((), || {
        if info.lit.is_null() || info.lit_count == 0 {
            return Ok(());
        }
        // SAFETY: an array of `lit_count` from `amuABIExtractConstants`.
        let lits = unsafe { std::slice::from_raw_parts(info.lit, info.lit_count as usize) };
        let mut skipped = 0;
        for l in lits {
            let (base, bytes): (*mut c_void, Vec<u8>) = match l.ty {
                FLOAT32 if l.addr < 256 => (
                    fconst,
                    l.value.iter().flat_map(|w| w.to_le_bytes()).collect(),
                ),
                INT32 if l.addr < 32 => (iconst, l.value.iter().map(|&w| w as u8).collect()),
                BOOL32 if l.addr < 32 => {
                    (bconst, u32::from(l.value[0] != 0).to_le_bytes().to_vec())
                }
                _ => continue,
            };
            if base.is_null() {
                skipped += 1;
                continue;
            }
            let offset = l.addr as usize * bytes.len();
            // SAFETY: the client's constant memory holds the constant
            // files the program uses (the SDK's contract).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    base.cast::<u8>().add(offset),
                    bytes.len(),
                )
            };
        }
        if skipped > 0 {
            set_error(format!(
                "{skipped} literal constants were not written: their constant memory pointer is NULL"
            ));
        }
        Ok(())
    })
}

/// `amuABIFreeConstants` (ctm): releases the arrays of `info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuABIFreeConstants(info: ConstsInfo) {
    // SAFETY: arrays from `calloc` in `amuABIExtractConstants` (or null).
    unsafe {
        free(info.user.cast());
        free(info.lit.cast());
    }
}
