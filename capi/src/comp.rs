//! `amuComp.h` (`docs/c-api.md` §9): the CTM SDK's shader compiler. ctm
//! compiles ps_3_0 assembly (text or bytecode) in the ctm dialect by
//! default (`docs/d3d9.md` §5) into an executable image that clients copy
//! to program memory.

use crate::{Log, c_str, guard, log, malloced};
use ctm_rs::d3d9::{self, Dialect};
use std::ffi::{c_char, c_uint, c_void};

/// What an `AMUcompCompiler` names: the compiler keeps no state, so a
/// handle only has to be non-null and live.
pub struct CompilerHandle {
    _private: u8,
}

/// The C `AMUcompMacro`: a name and its definition; `{0, 0}` ends a list.
#[repr(C)]
pub struct Macro {
    name: *const c_char,
    definition: *const c_char,
}

/// An include handler (never called: assembly has no `#include`).
pub type IncludeHandler = Option<unsafe extern "C" fn()>;

/// `amuCompOpenCompiler`.
#[unsafe(no_mangle)]
pub extern "C" fn amuCompOpenCompiler() -> *mut CompilerHandle {
    Box::into_raw(Box::new(CompilerHandle { _private: 0 }))
}

/// `amuCompCloseCompiler`: 1, or 0 for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCompCloseCompiler(compiler: *mut CompilerHandle) -> c_uint {
    guard(0, || {
        if compiler.is_null() {
            return Err("the compiler is NULL".into());
        }
        // SAFETY: a handle from `amuCompOpenCompiler`, closed once.
        drop(unsafe { Box::from_raw(compiler) });
        Ok(1)
    })
}

/// The macros of a `{0, 0}`-terminated list, at most 4096.
///
/// # Safety
/// `macros` is null or such a list of C strings.
unsafe fn macros(macros: *const Macro) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    if macros.is_null() {
        return Ok(out);
    }
    for k in 0..4096 {
        // SAFETY: the list goes on until its `{0, 0}` entry.
        let m = unsafe { &*macros.add(k) };
        if m.name.is_null() {
            return Ok(out);
        }
        // SAFETY: C strings of the caller's list.
        let name = unsafe { c_str(m.name, "a macro's name") }?.to_string();
        let def = if m.definition.is_null() {
            String::new()
        } else {
            // SAFETY: as above.
            unsafe { c_str(m.definition, "a macro's definition") }?.to_string()
        };
        out.push((name, def));
    }
    Err("the macro list has no {0, 0} entry in its first 4096".into())
}

/// `source` with every macro that is not one of the compiler's own
/// replaced where it stands as a whole word.
fn expand(source: &str, defs: &[(String, String)]) -> String {
    let user: Vec<&(String, String)> = defs
        .iter()
        .filter(|(n, _)| !n.starts_with("AMU_LANG_") && n != "AMU_DIALECT")
        .collect();
    if user.is_empty() {
        return source.to_string();
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find(word) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let len = tail.find(|c: char| !word(c)).unwrap_or(tail.len());
        let token = &tail[..len];
        match user.iter().rev().find(|(n, _)| n == token) {
            Some((_, d)) => out.push_str(d),
            None => out.push_str(token),
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// `amuCompCompile`: compiles `length` bytes of `source` (0: up to its
/// NUL) into a `malloc`ed executable image at `*binary` of `*size` bytes.
/// Macros: `AMU_LANG_PS3` selects ps_3_0 assembly (the only language ctm
/// compiles); `AMU_DIALECT` `ctm` (the default) or `d3d9`; others are
/// replaced where they stand as whole words. `entry` names the entry
/// point (ps_3_0 assembly has one; any name is accepted). Errors go to
/// `log`. Non-zero on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCompCompile(
    compiler: *mut CompilerHandle,
    source: *const c_char,
    length: c_uint,
    macro_list: *const Macro,
    _include: IncludeHandler,
    _entry: *const c_char,
    size: *mut c_uint,
    binary: *mut *mut c_void,
    log_fn: Log,
) -> c_uint {
    guard(0, || {
        let fail = |message: String| {
            log(log_fn, &message);
            Err(message)
        };
        if compiler.is_null() {
            return fail("amuCompCompile: the compiler is NULL".into());
        }
        if size.is_null() || binary.is_null() {
            return fail("amuCompCompile: the size or binary pointer is NULL".into());
        }
        // SAFETY: the caller's list.
        let defs = unsafe { macros(macro_list) }?;
        if let Some((lang, _)) = defs
            .iter()
            .find(|(n, _)| n.starts_with("AMU_LANG_") && n != "AMU_LANG_PS3")
        {
            return fail(format!(
                "{lang}: ctm compiles ps_3_0 assembly (AMU_LANG_PS3) only"
            ));
        }
        let dialect = match defs.iter().rev().find(|(n, _)| n == "AMU_DIALECT") {
            None => Dialect::Ctm,
            Some((_, d)) => match Dialect::parse(d) {
                Some(d) => d,
                None => return fail(format!("AMU_DIALECT={d}: expected ctm or d3d9")),
            },
        };
        let bytes = if length == 0 {
            // SAFETY: a NUL-terminated source.
            unsafe { c_str(source, "the source") }?.as_bytes().to_vec()
        } else {
            if source.is_null() {
                return fail("the source is NULL".into());
            }
            // SAFETY: `length` bytes of source.
            unsafe { std::slice::from_raw_parts(source.cast::<u8>(), length as usize) }.to_vec()
        };
        let bytes = match String::from_utf8(bytes) {
            Ok(text) => expand(&text, &defs).into_bytes(),
            Err(e) => e.into_bytes(),
        };
        let shader = match ctm_rs::program::read_shader(&bytes) {
            Ok(s) => s,
            Err(e) => return fail(format!("shader:{e}")),
        };
        let compiled = match d3d9::compile_dialect(&shader, dialect) {
            Ok(c) => c,
            Err(e) => return fail(format!("shader: {e}")),
        };
        let image = ctm_rs::abi::write(&compiled.exe);
        let out = malloced(&image)?;
        // SAFETY: checked non-null above.
        unsafe {
            *binary = out;
            *size = image.len() as c_uint;
        }
        Ok(1)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn macros_replace_whole_words() {
        let d = |n: &str, v: &str| (n.to_string(), v.to_string());
        let out = super::expand(
            "mul r0, c0, SCALE\nmov oC0, SCALEX\n",
            &[d("AMU_LANG_PS3", "1"), d("SCALE", "c1")],
        );
        assert_eq!(out, "mul r0, c0, c1\nmov oC0, SCALEX\n");
    }
}
