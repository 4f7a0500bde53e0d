//! `amuCbufPack.h`: command buffers packed in place (`docs/c-api.md` §5,
//! packets as `docs/machine.md` §3). The C++ class `AMUcbufPack` is
//! header-only over these functions.
//!
//! An append writes one whole packet or nothing: an argument the packet
//! cannot carry (a misaligned address, a pitch that is no multiple of 4, an
//! index out of range) or a packet past the capacity fails the append,
//! marks the pack failed (later appends fail too) and keeps the reason for
//! `ctmGetLastError`. The size is always that of the whole packets written.

use crate::guard;
use ctm_rs::pe::{Op, header};
use std::ffi::c_uint;

/// The C `AMUcbufPackState`.
#[repr(C)]
pub struct PackState {
    buffer: *mut c_uint,
    capacity: c_uint,
    used: c_uint,
    failed: c_uint,
}

/// Appends a packet of `op` with `params`, or fails the pack.
///
/// # Safety
/// `s` is null or a state made by `amuCbufPackInit` whose buffer holds
/// `capacity` bytes.
unsafe fn append(s: *mut PackState, op: Op, params: Result<Vec<u32>, String>) -> c_uint {
    guard(0, || {
        // SAFETY: the caller's promise.
        let s = unsafe { s.as_mut() }.ok_or("the command-buffer pack is NULL")?;
        let name = op.info().name;
        if s.failed != 0 {
            return Err(format!(
                "{name}: an earlier append to this command buffer failed"
            ));
        }
        let fail = |s: &mut PackState, why: String| {
            s.failed = 1;
            Err(format!("{name}: {why}"))
        };
        let params = match params {
            Ok(p) => p,
            Err(why) => return fail(s, why),
        };
        if s.buffer.is_null() {
            return fail(s, "the pack's buffer is NULL".into());
        }
        let bytes = 4 * (params.len() as u64 + 1);
        if u64::from(s.used) + bytes > u64::from(s.capacity) {
            return fail(
                s,
                format!(
                    "the packet's {bytes} bytes do not fit: {} of {} bytes used",
                    s.used, s.capacity
                ),
            );
        }
        let at = (s.used / 4) as usize;
        for (k, w) in std::iter::once(header(op)).chain(params).enumerate() {
            // SAFETY: inside the caller's buffer of `capacity` bytes
            // (checked above); unaligned buffers are allowed.
            unsafe { s.buffer.add(at + k).write_unaligned(w) };
        }
        s.used += bytes as u32;
        Ok(1)
    })
}

/// A GPU base address as packets carry it: 2 KiB aligned.
fn base(addr: c_uint) -> Result<u32, String> {
    if addr.is_multiple_of(2048) {
        Ok(addr)
    } else {
        Err(format!(
            "address {addr:#010x} is not 2 KiB aligned (bits 10:0 of a base are dropped)"
        ))
    }
}

/// The format word of `AMU_CBUF_FLD_FORMAT_*`, a tiling and a pitch in
/// elements. The five DPP formats keep their codes (docs/machine.md §3.2);
/// the SDK's other four take the reserved codes 5–7, so a buffer using one
/// faults at that packet.
fn format_word(format: c_uint, tiling: c_uint, pitch: c_uint) -> Result<u32, String> {
    let code = match format {
        0..=7 => format,
        8 => 7,
        _ => {
            return Err(format!(
                "format {format} is not an AMU_CBUF_FLD_FORMAT value"
            ));
        }
    };
    if tiling > 1 {
        return Err(format!(
            "tiling {tiling} is not AMU_CBUF_FLD_TILING_LINEAR (0) or _TILED0 (1)"
        ));
    }
    if !pitch.is_multiple_of(4) || pitch > 8188 {
        return Err(format!(
            "width {pitch}: a surface's pitch is a multiple of 4 elements, at most 8188"
        ));
    }
    Ok(code << 24 | tiling << 16 | pitch)
}

fn height(h: c_uint) -> Result<u32, String> {
    if h <= 8191 {
        Ok(h)
    } else {
        Err(format!("height {h}: at most 8191 rows"))
    }
}

/// `amuCbufPackInit`: an empty pack writing into `capacityBytes` bytes at
/// `buffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackInit(s: *mut PackState, buffer: *mut c_uint, capacity: c_uint) {
    // SAFETY: the caller's state, if any.
    if let Some(s) = unsafe { s.as_mut() } {
        *s = PackState {
            buffer,
            capacity,
            used: 0,
            failed: 0,
        };
    }
}

/// `amuCbufPackGetCommandBufferSize`: bytes of whole packets written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackGetCommandBufferSize(s: *const PackState) -> c_uint {
    // SAFETY: the caller's state, if any.
    unsafe { s.as_ref() }.map_or(0, |s| s.used)
}

/// `amuCbufPackFailed`: non-zero once an append failed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackFailed(s: *const PackState) -> c_uint {
    // SAFETY: the caller's state, if any.
    unsafe { s.as_ref() }.map_or(1, |s| s.failed)
}

/// `amuCbufPackReset`: empty again, over the same buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackReset(s: *mut PackState) {
    // SAFETY: the caller's state, if any.
    if let Some(s) = unsafe { s.as_mut() } {
        s.used = 0;
        s.failed = 0;
    }
}

/// Appends without parameters beyond the reserved one.
macro_rules! plain {
    ($($fn:ident $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($fn), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $fn(s: *mut PackState) -> c_uint {
            // SAFETY: the caller's state.
            unsafe { append(s, Op::$op, Ok(vec![0])) }
        }
    )*};
}

plain! {
    amuCbufPackAppendStartProgram StartProgram;
    amuCbufPackAppendInitPerfCounters InitPerfCounters;
    amuCbufPackAppendStartPerfCounters StartPerfCounters;
    amuCbufPackAppendStopPerfCounters StopPerfCounters;
    amuCbufPackAppendInvInstCache InvInstCache;
    amuCbufPackAppendInvConstfCache InvConstfCache;
    amuCbufPackAppendInvConstiCache InvConstiCache;
    amuCbufPackAppendInvConstbCache InvConstbCache;
    amuCbufPackAppendInvInpCache InvInpCache;
    amuCbufPackAppendFlushOutCache FlushOutCache;
    amuCbufPackAppendInvCondOutCache InvCondOutCache;
    amuCbufPackAppendFlushCondOutCache FlushCondOutCache;
}

/// Appends of a base and a format word whose fields the PE keeps but does
/// not use.
macro_rules! memory {
    ($($fn:ident $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($fn), "(addr, format, tiling, pitch)`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $fn(
            s: *mut PackState,
            addr: c_uint,
            format: c_uint,
            tiling: c_uint,
            pitch: c_uint,
        ) -> c_uint {
            let p = base(addr).and_then(|b| Ok(vec![b, format_word(format, tiling, pitch)?]));
            // SAFETY: the caller's state.
            unsafe { append(s, Op::$op, p) }
        }
    )*};
}

memory! {
    amuCbufPackAppendSetInstFmt SetInstFmt;
    amuCbufPackAppendSetConstfFmt SetConstfFmt;
    amuCbufPackAppendSetConstiFmt SetConstiFmt;
    amuCbufPackAppendSetConstbFmt SetConstbFmt;
}

/// The parameters of a surface command: the index (when the command has
/// one: its value, how many there are, what they are), base, format word,
/// height.
fn surface(
    index: Option<(c_uint, c_uint, &str)>,
    addr: c_uint,
    format: c_uint,
    tiling: c_uint,
    width: c_uint,
    rows: c_uint,
) -> Result<Vec<u32>, String> {
    let mut p = Vec::new();
    if let Some((k, count, what)) = index {
        if k >= count {
            return Err(format!("{what} {k}: there are {count} (0–{})", count - 1));
        }
        p.push(k);
    }
    p.extend([
        base(addr)?,
        format_word(format, tiling, width)?,
        height(rows)?,
    ]);
    Ok(p)
}

/// `amuCbufPackAppendSetInpFmt(i, addr, format, tiling, width, height)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetInpFmt(
    s: *mut PackState,
    input: c_uint,
    addr: c_uint,
    format: c_uint,
    tiling: c_uint,
    width: c_uint,
    rows: c_uint,
) -> c_uint {
    let p = surface(
        Some((input, 16, "input")),
        addr,
        format,
        tiling,
        width,
        rows,
    );
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetInpFmt, p) }
}

/// `amuCbufPackAppendSetOutFmt(i, addr, format, tiling, width, height)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetOutFmt(
    s: *mut PackState,
    output: c_uint,
    addr: c_uint,
    format: c_uint,
    tiling: c_uint,
    width: c_uint,
    rows: c_uint,
) -> c_uint {
    let p = surface(
        Some((output, 4, "output")),
        addr,
        format,
        tiling,
        width,
        rows,
    );
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetOutFmt, p) }
}

/// `amuCbufPackAppendSetCondOutFmt(addr, format, tiling, width, height)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetCondOutFmt(
    s: *mut PackState,
    addr: c_uint,
    format: c_uint,
    tiling: c_uint,
    width: c_uint,
    rows: c_uint,
) -> c_uint {
    let p = surface(None, addr, format, tiling, width, rows);
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetCondOutFmt, p) }
}

/// `amuCbufPackAppendSetDomain(x0, y0, x1, y1)`, inclusive.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetDomain(
    s: *mut PackState,
    x0: c_uint,
    y0: c_uint,
    x1: c_uint,
    y1: c_uint,
) -> c_uint {
    let p = if [x0, y0, x1, y1].iter().all(|&v| v <= 8191) {
        Ok(vec![x0, y0, x1, y1])
    } else {
        Err(format!(
            "({x0}, {y0})–({x1}, {y1}): coordinates are at most 8191"
        ))
    };
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetDomain, p) }
}

/// `amuCbufPackAppendReadPerfCounters(addr)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendReadPerfCounters(
    s: *mut PackState,
    addr: c_uint,
) -> c_uint {
    // SAFETY: the caller's state.
    unsafe { append(s, Op::ReadPerfCounters, base(addr).map(|b| vec![b])) }
}

/// `amuCbufPackAppendSetCondVal(v)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetCondVal(s: *mut PackState, v: f32) -> c_uint {
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetCondVal, Ok(vec![v.to_bits()])) }
}

/// Appends of one small field.
macro_rules! field {
    ($($fn:ident $op:ident $arg:ident $max:literal $what:literal;)*) => {$(
        #[doc = concat!("`", stringify!($fn), "(", stringify!($arg), ")`: ", $what, ".")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $fn(s: *mut PackState, $arg: c_uint) -> c_uint {
            let p = if $arg <= $max {
                Ok(vec![$arg])
            } else {
                Err(format!("{} {}: {} is 0–{}", stringify!($arg), $arg, $what, $max))
            };
            // SAFETY: the caller's state.
            unsafe { append(s, Op::$op, p) }
        }
    )*};
}

field! {
    amuCbufPackAppendSetOutMask SetOutMask mask 15 "the channel write mask";
    amuCbufPackAppendSetCondOutMask SetCondOutMask write 1 "the write-back bit";
    amuCbufPackAppendSetCondTest SetCondTest test 7 "the conditional test";
    amuCbufPackAppendSetCondLoc SetCondLoc location 1 "the test's location (0 DPP, 1 PE)";
}

/// `amuCbufPackAppendSetParams(addr)`: where the interpolation parameters
/// are (three vertices of 32 floats, docs/machine.md §6.1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amuCbufPackAppendSetParams(s: *mut PackState, addr: c_uint) -> c_uint {
    // SAFETY: the caller's state.
    unsafe { append(s, Op::SetParams, base(addr).map(|b| vec![b])) }
}
