//! The CTM SDK's C interface over ctm (`docs/c-api.md`): `libctm.so` and
//! `libctm.a`, declared by the headers in `include/`.
//!
//! * `hal` — `amDeviceManaged.h` (open, submit, consumed, close) and
//!   `ctm.h` (engine, threads, buffer faults, last error, version).
//! * `cbuf` — `amuCbufPack.h`: command buffers packed in place.
//! * `asm` — `amuAsm.h`: DPP assembly to executable images and back.
//! * `comp` — `amuComp.h`: ps_3_0 in the SDK compiler's dialect.
//! * `abi` — `amuABI.h`: an image's user and literal constants.
//!
//! Nothing Rust crosses the boundary: handles are opaque pointers, strings
//! are NUL-terminated, binaries are `malloc`ed. Every entry point catches
//! panics ([`guard`]) and reports failure as the SDK's failure value with
//! the reason kept for `ctmGetLastError` (per thread).

// The entry points are `unsafe extern "C"` functions called from C; their
// contracts are the headers'.
#![allow(clippy::missing_safety_doc)]

mod abi;
mod asm;
mod cbuf;
mod comp;
mod hal;

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `message` as this thread's last error.
pub(crate) fn set_error(message: impl Into<String>) {
    let mut m = message.into().into_bytes();
    m.retain(|&b| b != 0);
    let text = CString::new(m).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs an entry point's body: its `Err` and any panic become `fail` with
/// the reason kept as the last error.
pub(crate) fn guard<T>(fail: T, body: impl FnOnce() -> Result<T, String>) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(message)) => {
            set_error(message);
            fail
        }
        Err(p) => {
            let text = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            set_error(format!("internal error in ctm (please report it): {text}"));
            fail
        }
    }
}

/// A C string argument, or an error naming it.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| format!("{what} is not UTF-8"))
}

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
}

/// `bytes` in memory from `malloc` (the client releases it with `free`).
pub(crate) fn malloced(bytes: &[u8]) -> Result<*mut c_void, String> {
    // SAFETY: malloc has no preconditions; the result is checked.
    let p = unsafe { malloc(bytes.len().max(1)) };
    if p.is_null() {
        return Err(format!("out of memory ({} bytes)", bytes.len()));
    }
    // SAFETY: `p` holds at least `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len()) };
    Ok(p)
}

/// A log callback as the SDK's tools take it.
pub(crate) type Log = Option<unsafe extern "C" fn(*const c_char)>;

/// Sends `text` to `log`, line by line, if there is one.
pub(crate) fn log(log: Log, text: &str) {
    if let Some(f) = log {
        for line in text.lines() {
            let line = CString::new(format!("{line}\n").replace('\0', " ")).unwrap_or_default();
            // SAFETY: a NUL-terminated string valid for the call.
            unsafe { f(line.as_ptr()) };
        }
    }
}

/// `ctmGetLastError`: why the last failing call on this thread failed ("" when
/// none has). Valid until the next failing call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn ctmGetLastError() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// `ctmClearLastError`.
#[unsafe(no_mangle)]
pub extern "C" fn ctmClearLastError() {
    set_error("");
}

/// `ctmGetVersion`: "ctm VERSION".
#[unsafe(no_mangle)]
pub extern "C" fn ctmGetVersion() -> *const c_char {
    static VERSION: &CStr = match CStr::from_bytes_with_nul(
        concat!("ctm ", env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(s) => s,
        Err(_) => c"ctm",
    };
    VERSION.as_ptr()
}
