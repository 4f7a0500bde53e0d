//! Uncached (UMRT) writes made by compiled code itself (`docs/isa.md` §5.4,
//! `docs/design.md`, "Uncached writes in compiled code"): instead of
//! calling the runtime for every batch, a clause appends one
//! [`UncachedWrite`] per writing lane to a log the runtime handed it
//! ([`UmrtLog`]), in the order the runtime would have made them; the runtime
//! takes the entries over when the clause returns and delivers them in row
//! order like every other uncached write.

use std::mem::offset_of;

/// One uncached write, to be delivered to memory: channel 0 of an element,
/// encoded in the surface's format. `len` 0 marks a write outside the
/// surface (counted, not delivered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct UncachedWrite {
    /// Address of the channel's first byte.
    pub addr: u64,
    /// The channel's bytes (the first `len`).
    pub bytes: [u8; 4],
    /// The channel's size in bytes: 4 (float formats), 2 (uint16_1), 1
    /// (uint8_4); 0 for a write outside the surface.
    pub len: u32,
}

/// Where compiled code appends uncached writes itself: a linear surface
/// that ends below 2^32 (`base` + its bytes ≤ 2^32). `at` null means "call
/// the runtime" ([`crate::state::Io::umrt`]).
///
/// Lane `l` of a batch writes to element `(x, y) = (floor(X), floor(Y))` of
/// its operands (the quad's first writing lane's operands in the shared
/// index modes): inside `0 ≤ x < size[0]`, `0 ≤ y < size[1]` it stores
/// `{addr: base + ((y · pitch + x) << shift) + chan_off, bytes: v, len:
/// chan_len}` at `at`, outside `{len: 0}`, and advances `at` by one entry;
/// lanes that do not write store an entry there too but do not advance.
/// `v` is the value's bits for float formats (`unorm` 0) and for unorm ones
/// the memory controller's quantisation: 0 for NaN, else
/// `round(clamp(value, 0, 1) · unorm)` (halves away from zero).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct UmrtLog {
    /// The next free entry; null: the runtime makes the writes.
    pub at: *mut UncachedWrite,
    /// Address of element (0, 0).
    pub base: u64,
    /// Elements per row.
    pub pitch: u32,
    /// log2 of the element's bytes.
    pub shift: u32,
    /// Pitch and height as f32.
    pub size: [f32; 2],
    /// Where channel 0 lies in the element, and its bytes.
    pub chan_off: u32,
    /// Bytes of channel 0 (4, 2 or 1).
    pub chan_len: u32,
    /// Unorm formats: the integer 1.0 stores as (255.0, 65535.0); 0 for
    /// float formats.
    pub unorm: f32,
}

impl UmrtLog {
    /// No log: every uncached write calls the runtime.
    pub const NONE: UmrtLog = UmrtLog {
        at: std::ptr::null_mut(),
        base: 0,
        pitch: 0,
        shift: 0,
        size: [0.0; 2],
        chan_off: 0,
        chan_len: 0,
        unorm: 0.0,
    };

    /// Whether code compiled for output 0's format as `unorm` says
    /// ([`crate::ir::Program::uncached_unorm`]; `None`: not known, so
    /// either) may append to this log: its format is float (`unorm` 0) or
    /// unorm as the code was compiled for.
    pub fn agrees(&self, unorm: Option<bool>) -> bool {
        unorm.is_none_or(|u| u == (self.unorm != 0.0))
    }
}

/// Byte offsets of [`UmrtLog`] and [`UncachedWrite`] compiled code relies
/// on.
pub mod umrt_offsets {
    use super::{UmrtLog, UncachedWrite, offset_of};
    /// `UmrtLog::at`.
    pub const AT: usize = offset_of!(UmrtLog, at);
    /// `UmrtLog::base`.
    pub const BASE: usize = offset_of!(UmrtLog, base);
    /// `UmrtLog::pitch`.
    pub const PITCH: usize = offset_of!(UmrtLog, pitch);
    /// `UmrtLog::shift`.
    pub const SHIFT: usize = offset_of!(UmrtLog, shift);
    /// `UmrtLog::size`.
    pub const SIZE: usize = offset_of!(UmrtLog, size);
    /// `UmrtLog::chan_off`.
    pub const CHAN_OFF: usize = offset_of!(UmrtLog, chan_off);
    /// `UmrtLog::chan_len`.
    pub const CHAN_LEN: usize = offset_of!(UmrtLog, chan_len);
    /// `UmrtLog::unorm`.
    pub const UNORM: usize = offset_of!(UmrtLog, unorm);
    /// `UncachedWrite::addr`.
    pub const ADDR: usize = offset_of!(UncachedWrite, addr);
    /// `UncachedWrite::bytes`.
    pub const BYTES: usize = offset_of!(UncachedWrite, bytes);
    /// `UncachedWrite::len`.
    pub const LEN: usize = offset_of!(UncachedWrite, len);
    /// Bytes of one entry.
    pub const ENTRY: usize = size_of::<UncachedWrite>();
}

const _: () = {
    assert!(umrt_offsets::ENTRY == 16);
    assert!(umrt_offsets::ADDR == 0 && umrt_offsets::BYTES == 8 && umrt_offsets::LEN == 12);
};
