//! Uncached (UMRT) writes made by compiled code itself (`docs/isa.md` §5.4,
//! `docs/design.md`, "Uncached writes in compiled code"): instead of
//! calling the runtime for every batch, a clause appends one
//! [`UncachedWrite`] per writing lane to a log the runtime handed it
//! ([`UmrtLog`]), in the order the runtime would have made them; the runtime
//! takes the entries over when the clause returns and delivers them in row
//! order like every other uncached write.

use std::mem::offset_of;

/// One uncached write, to be delivered to memory: channel 0 of an element,
/// encoded in the surface's format. Every uncached write of a run goes to
/// output 0, so the bytes taken are its format's channel 0 (4 for float
/// formats, 2 for uint16_1, 1 for uint8_4: whoever delivers the writes
/// knows it). An address of [`UncachedWrite::OUTSIDE`] marks a write
/// outside the surface (counted, not delivered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct UncachedWrite {
    /// Address of the channel's first byte (a surface lies below 2^32).
    pub addr: u32,
    /// The channel's bytes: the first 4, 2 or 1 of these, as many as the
    /// format's channel 0 has.
    pub bytes: [u8; 4],
}

impl UncachedWrite {
    /// The address of a write outside the surface. No channel 0 starts
    /// there: surfaces start 2 KiB-aligned, elements at multiples of their
    /// size, and channel 0 at byte 0 or 2 of its element, so every channel
    /// 0 starts at an even address.
    pub const OUTSIDE: u32 = u32::MAX;

    /// A write outside the surface.
    pub const fn outside() -> UncachedWrite {
        UncachedWrite {
            addr: Self::OUTSIDE,
            bytes: [0; 4],
        }
    }

    /// Whether this write fell outside the surface.
    pub const fn is_outside(&self) -> bool {
        self.addr == Self::OUTSIDE
    }
}

/// Where compiled code appends uncached writes itself: a linear surface
/// that ends below 2^32 (`base` + its bytes ≤ 2^32). `at` null means "call
/// the runtime" ([`crate::state::Io::umrt`]).
///
/// Lane `l` of a batch writes to element `(x, y) = (floor(X), floor(Y))` of
/// its operands (the quad's first writing lane's operands in the shared
/// index modes): inside `0 ≤ x < size[0]`, `0 ≤ y < size[1]` it stores
/// `{addr: base + ((y · pitch + x) << shift) + chan_off, bytes: v}` at
/// `at`, outside `{addr: OUTSIDE}`, and advances `at` by one entry;
/// lanes that do not write store an entry there too but do not advance.
/// `v` is the value's bits for float formats (`unorm` 0) and for unorm ones
/// the memory controller's quantisation: 0 for NaN, else
/// `round(clamp(value, 0, 1) · unorm)` (halves away from zero).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))] // what follows it in `Io` stays 16-byte aligned
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
    /// Where channel 0 lies in the element.
    pub chan_off: u32,
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
    /// `UmrtLog::unorm`.
    pub const UNORM: usize = offset_of!(UmrtLog, unorm);
    /// `UncachedWrite::addr`.
    pub const ADDR: usize = offset_of!(UncachedWrite, addr);
    /// `UncachedWrite::bytes`.
    pub const BYTES: usize = offset_of!(UncachedWrite, bytes);
    /// Bytes of one entry.
    pub const ENTRY: usize = size_of::<UncachedWrite>();
}

const _: () = {
    assert!(umrt_offsets::ENTRY == 8);
    assert!(umrt_offsets::ADDR == 0 && umrt_offsets::BYTES == 4);
};
