//! Surface descriptions: the format dword, the five element formats and their
//! conversions (`docs/machine.md` §3.2, §5.1), and the address layouts (§5.2,
//! §5.3).
//!
//! Conversions (ctm, where the Guide is silent, all in this file):
//! * reading: UINT16_1 gives c0 = u16 / 65535, UINT8_4 gives ck = byte / 255
//!   (bytes stored B, G, R, A: c2, c1, c0, c3), float formats as stored;
//!   channels a format lacks read as c1 = 0, c2 = 0, c3 = 1.0;
//! * writing: floats to UINT8/UINT16 are clamped to [0, 1], scaled by
//!   255 / 65535 and rounded to nearest with ties away from zero; NaN gives 0;
//!   float formats store the 32-bit pattern unchanged; channels a format lacks
//!   are discarded.

use std::fmt;

/// An element format (format dword bits 26:24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One unsigned 16-bit normalized channel.
    Uint16_1,
    /// Four unsigned 8-bit normalized channels, stored B, G, R, A.
    Uint8_4,
    /// One f32.
    Float32_1,
    /// Two f32.
    Float32_2,
    /// Four f32.
    Float32_4,
}

impl Format {
    /// Every format, by code.
    pub const ALL: [Format; 5] = [
        Format::Uint16_1,
        Format::Uint8_4,
        Format::Float32_1,
        Format::Float32_2,
        Format::Float32_4,
    ];

    /// The format with code `code` (5–7 are reserved).
    pub fn from_code(code: u32) -> Option<Format> {
        Format::ALL.get(code as usize).copied()
    }

    /// The code in the format dword.
    pub fn code(self) -> u32 {
        Format::ALL.iter().position(|&f| f == self).unwrap_or(0) as u32
    }

    /// The lower-case name used on the command line (`float32_4`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Uint16_1 => "uint16_1",
            Format::Uint8_4 => "uint8_4",
            Format::Float32_1 => "float32_1",
            Format::Float32_2 => "float32_2",
            Format::Float32_4 => "float32_4",
        }
    }

    /// The format named `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Format::Uint16_1 => 2,
            Format::Uint8_4 | Format::Float32_1 => 4,
            Format::Float32_2 => 8,
            Format::Float32_4 => 16,
        }
    }

    /// Channels per element.
    pub fn channels(self) -> usize {
        match self {
            Format::Uint16_1 | Format::Float32_1 => 1,
            Format::Float32_2 => 2,
            Format::Uint8_4 | Format::Float32_4 => 4,
        }
    }

    /// Where channel 0 lies in an element: (byte offset, bytes).
    pub fn channel0(self) -> (usize, usize) {
        match self {
            Format::Uint8_4 => (2, 1),
            Format::Uint16_1 => (0, 2),
            _ => (0, 4),
        }
    }

    /// The channel bits a write must cover to replace a whole element.
    pub fn channel_mask(self) -> u8 {
        ((1u16 << self.channels()) - 1) as u8
    }

    /// Converts one element (`self.bytes()` bytes) to the shader's four
    /// channels (f32 patterns).
    ///
    /// ```
    /// use ctm::mc::Format;
    /// // UINT8_4 is stored B, G, R, A.
    /// let c = Format::Uint8_4.read(&[0, 255, 51, 255]);
    /// assert_eq!(c.map(f32::from_bits), [0.2, 1.0, 0.0, 1.0]);
    /// ```
    #[inline]
    pub fn read(self, e: &[u8]) -> [u32; 4] {
        // The common float32_4 element: four words as they are.
        if self == Format::Float32_4
            && let Some(w) = e.first_chunk::<16>()
        {
            return std::array::from_fn(|c| {
                u32::from_le_bytes([w[4 * c], w[4 * c + 1], w[4 * c + 2], w[4 * c + 3]])
            });
        }
        self.read_channels(e)
    }

    /// [`Format::read`] channel by channel.
    fn read_channels(self, e: &[u8]) -> [u32; 4] {
        let f32le = |k: usize| u32::from_le_bytes([e[k], e[k + 1], e[k + 2], e[k + 3]]);
        let unorm8 = |b: u8| (f32::from(b) / 255.0).to_bits();
        let (zero, one) = (0, 1.0f32.to_bits());
        match self {
            Format::Uint16_1 => {
                let u = u16::from_le_bytes([e[0], e[1]]);
                [(f32::from(u) / 65535.0).to_bits(), zero, zero, one]
            }
            Format::Uint8_4 => [unorm8(e[2]), unorm8(e[1]), unorm8(e[0]), unorm8(e[3])],
            Format::Float32_1 => [f32le(0), zero, zero, one],
            Format::Float32_2 => [f32le(0), f32le(4), zero, one],
            Format::Float32_4 => [f32le(0), f32le(4), f32le(8), f32le(12)],
        }
    }

    /// Stores the channels of `value` whose bit is set in `mask` into the
    /// element `e`, leaving the other bytes as they are.
    ///
    /// ```
    /// use ctm::mc::Format;
    /// let mut e = [0u8; 2];
    /// Format::Uint16_1.write(&mut e, [0.5f32.to_bits(), 0, 0, 0], 0b1);
    /// assert_eq!(u16::from_le_bytes(e), 32768); // 32767.5 rounds away from zero
    /// Format::Uint16_1.write(&mut e, [f32::NAN.to_bits(), 0, 0, 0], 0b1);
    /// assert_eq!(u16::from_le_bytes(e), 0);
    /// ```
    #[inline]
    pub fn write(self, e: &mut [u8], value: [u32; 4], mask: u8) {
        // The common whole float32_4 element: four words as they are.
        if self == Format::Float32_4 && mask & 0xF == 0xF && e.len() >= 16 {
            let mut w = [0u8; 16];
            for (c, v) in value.iter().enumerate() {
                w[4 * c..4 * c + 4].copy_from_slice(&v.to_le_bytes());
            }
            e[..16].copy_from_slice(&w);
            return;
        }
        self.write_channels(e, value, mask);
    }

    /// [`Format::write`] channel by channel.
    fn write_channels(self, e: &mut [u8], value: [u32; 4], mask: u8) {
        let on = |c: usize| mask & (1 << c) != 0;
        match self {
            Format::Uint16_1 => {
                if on(0) {
                    e[..2].copy_from_slice(&(unorm(value[0], 65535.0) as u16).to_le_bytes());
                }
            }
            Format::Uint8_4 => {
                for (c, at) in [(0, 2), (1, 1), (2, 0), (3, 3)] {
                    if on(c) {
                        e[at] = unorm(value[c], 255.0) as u8;
                    }
                }
            }
            _ => {
                for c in (0..self.channels()).filter(|&c| on(c)) {
                    e[4 * c..4 * c + 4].copy_from_slice(&value[c].to_le_bytes());
                }
            }
        }
    }
}

/// A float pattern as an unsigned normalized integer of maximum `max`.
fn unorm(bits: u32, max: f64) -> u32 {
    let f = f32::from_bits(bits);
    if f.is_nan() {
        return 0;
    }
    (f64::from(f.clamp(0.0, 1.0)) * max).round() as u32
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a surface's element (x, y) lies, relative to its base (§5.2–5.3).
pub trait Layout: Sync {
    /// Byte offset of element (x, y) for `pitch` elements per row and
    /// `bpe` bytes per element.
    fn offset(&self, x: u32, y: u32, pitch: u32, bpe: usize) -> u64;
}

/// Row-major: `(y · pitch + x) · bpe` (§5.2).
#[derive(Clone, Copy, Debug)]
pub struct Linear;

impl Layout for Linear {
    fn offset(&self, x: u32, y: u32, pitch: u32, bpe: usize) -> u64 {
        (u64::from(y) * u64::from(pitch) + u64::from(x)) * bpe as u64
    }
}

/// The tiled layout. The R5xx tiling is not recoverable from the Guide, so
/// ctm defines TILED ≡ LINEAR (§5.3, ctm); a faithful tiling replaces this
/// one implementation (and sets [`TILED_IS_LINEAR`] false).
#[derive(Clone, Copy, Debug)]
pub struct Tiled;

/// Whether [`Tiled`] lays elements out as [`Linear`] does: compiled code,
/// which computes linear addresses, then reads and writes tiled surfaces
/// too.
pub const TILED_IS_LINEAR: bool = true;

impl Layout for Tiled {
    fn offset(&self, x: u32, y: u32, pitch: u32, bpe: usize) -> u64 {
        Linear.offset(x, y, pitch, bpe)
    }
}

/// A decoded format dword (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SurfaceFormat {
    /// Elements per row (a multiple of 4, at most 8188).
    pub pitch: u32,
    /// Tiling bit 0: the tiled address layout.
    pub tiled: bool,
    /// Tiling bit 1: the 2×2 input gather (§5.4).
    pub gather: bool,
    /// Element format.
    pub format: Format,
}

/// A format dword naming a reserved element format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "format dword {word:#010x}: element format {code} is reserved; the DPP reads uint16_1 (0), uint8_4 (1), float32_1 (2), float32_2 (3) and float32_4 (4) — uint8_1, uint8_2, uint16_2 and uint16_4 are not DPP formats"
)]
pub struct ReservedFormat {
    /// The dword.
    pub word: u32,
    /// Its format field.
    pub code: u32,
}

impl SurfaceFormat {
    /// A linear surface of `format` with `pitch` elements per row (rounded
    /// up to a multiple of 4).
    pub fn linear(format: Format, pitch: u32) -> SurfaceFormat {
        SurfaceFormat {
            pitch: pitch.next_multiple_of(4).min(0x1FFC),
            tiled: false,
            gather: false,
            format,
        }
    }

    /// Decodes a format dword; reserved bits are ignored.
    ///
    /// ```
    /// use ctm::mc::{Format, SurfaceFormat};
    /// let f = SurfaceFormat::decode(0x0402_0100).unwrap();
    /// assert_eq!((f.pitch, f.tiled, f.gather, f.format), (256, false, true, Format::Float32_4));
    /// assert_eq!(f.encode(), 0x0402_0100);
    /// ```
    pub fn decode(word: u32) -> Result<SurfaceFormat, ReservedFormat> {
        let code = (word >> 24) & 7;
        let format = Format::from_code(code).ok_or(ReservedFormat { word, code })?;
        let tiling = (word >> 16) & 3;
        Ok(SurfaceFormat {
            pitch: word & 0x1FFC,
            tiled: tiling & 1 != 0,
            gather: tiling & 2 != 0,
            format,
        })
    }

    /// The format dword.
    pub fn encode(&self) -> u32 {
        (self.pitch & 0x1FFC)
            | (u32::from(self.tiled) << 16)
            | (u32::from(self.gather) << 17)
            | (self.format.code() << 24)
    }

    /// The address layout.
    pub fn layout(&self) -> &'static dyn Layout {
        if self.tiled { &Tiled } else { &Linear }
    }
}

/// A configured surface: base address, format dword, height.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Surface {
    /// 2 KiB-aligned base address.
    pub base: u32,
    /// Pitch, layout and element format.
    pub fmt: SurfaceFormat,
    /// Rows (0–8191).
    pub height: u32,
}

impl Surface {
    /// Address of element (x, y), or `None` outside pitch × height (§5.5).
    pub fn address(&self, x: u32, y: u32) -> Option<u64> {
        (x < self.fmt.pitch && y < self.height).then(|| {
            u64::from(self.base)
                + self
                    .fmt
                    .layout()
                    .offset(x, y, self.fmt.pitch, self.fmt.format.bytes())
        })
    }

    /// [`Surface::address`] for signed coordinates (negative = outside).
    pub fn address_at(&self, x: i64, y: i64) -> Option<u64> {
        self.address(u32::try_from(x).ok()?, u32::try_from(y).ok()?)
    }

    /// Bytes from the base to the end of the last element.
    pub fn span(&self) -> u64 {
        u64::from(self.fmt.pitch) * u64::from(self.height) * self.fmt.format.bytes() as u64
    }
}
