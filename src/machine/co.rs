//! The conditional output unit (`docs/machine.md` §2.3, §3.4, §6): a
//! per-pair test of a value v against the conditional buffer, for the client
//! chosen by `set_cond_loc` — the PE (pairs failing are never executed) or the
//! DPP (pairs failing write no outputs). The other client always passes and
//! touches nothing.
//!
//! Buffer formats (§6, ctm): float formats compare c0 as f32 with IEEE
//! comparisons (every comparison with NaN is false except Not Equal); UINT16_1
//! and UINT8_4 quantize v to the buffer's unsigned-normalized integer (§5.1
//! write rule, channel c0) and compare integers. On a pass with the write
//! mask set, the quantized v is written to c0 of the element; other channels
//! keep their value.

use crate::mc::{CacheId, Format, Mc, Surface};
use std::fmt;

/// `set_cond_test` codes (the R5xx ZFUNC codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CondTest {
    /// Never passes.
    Never,
    /// v < b.
    Less,
    /// v ≤ b.
    LessEqual,
    /// v == b.
    Equal,
    /// v ≥ b.
    GreaterEqual,
    /// v > b.
    Greater,
    /// v ≠ b.
    NotEqual,
    /// Always passes (the buffer is not read).
    Always,
}

impl CondTest {
    /// All tests, by code.
    pub const ALL: [CondTest; 8] = [
        CondTest::Never,
        CondTest::Less,
        CondTest::LessEqual,
        CondTest::Equal,
        CondTest::GreaterEqual,
        CondTest::Greater,
        CondTest::NotEqual,
        CondTest::Always,
    ];

    /// The test for code bits 2:0 of `code`.
    pub fn from_code(code: u32) -> CondTest {
        CondTest::ALL[(code & 7) as usize]
    }

    /// The code.
    pub fn code(self) -> u32 {
        CondTest::ALL.iter().position(|&t| t == self).unwrap_or(7) as u32
    }

    /// Command-line name: `never less lequal equal gequal greater notequal always`.
    pub fn name(self) -> &'static str {
        [
            "never", "less", "lequal", "equal", "gequal", "greater", "notequal", "always",
        ][self.code() as usize]
    }

    /// The test named `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<CondTest> {
        CondTest::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Whether the test reads the buffer.
    pub fn reads_buffer(self) -> bool {
        !matches!(self, CondTest::Never | CondTest::Always)
    }

    fn holds<T: PartialOrd>(self, v: T, b: T) -> bool {
        match self {
            CondTest::Never => false,
            CondTest::Less => v < b,
            CondTest::LessEqual => v <= b,
            CondTest::Equal => v == b,
            CondTest::GreaterEqual => v >= b,
            CondTest::Greater => v > b,
            CondTest::NotEqual => v != b,
            CondTest::Always => true,
        }
    }
}

impl fmt::Display for CondTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `set_cond_loc`: which client the test applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CondLoc {
    /// Conditional output: a failing pair runs but writes nothing (code 0).
    #[default]
    Dpp,
    /// Conditional execution: a failing pair is never run (code 1).
    Pe,
}

impl CondLoc {
    /// The location for bit 0 of `code`.
    pub fn from_code(code: u32) -> CondLoc {
        if code & 1 == 0 {
            CondLoc::Dpp
        } else {
            CondLoc::Pe
        }
    }

    /// The code.
    pub fn code(self) -> u32 {
        match self {
            CondLoc::Dpp => 0,
            CondLoc::Pe => 1,
        }
    }
}

/// The CO's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Co {
    /// The test.
    pub test: CondTest,
    /// The client it applies to.
    pub loc: CondLoc,
    /// `set_cond_out_mask`: write v back on a pass.
    pub write: bool,
    /// The conditional buffer (`set_cond_out_fmt`).
    pub buffer: Option<Surface>,
}

impl Default for Co {
    /// The initial state (§8): Always, DPP, no write-back, no buffer.
    fn default() -> Self {
        Co {
            test: CondTest::Always,
            loc: CondLoc::Dpp,
            write: false,
            buffer: None,
        }
    }
}

/// A value in the buffer's precision.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Key {
    Float(f32),
    Unorm(u32),
}

/// The key of an element's bytes: c0 as f32, or c0's stored unorm integer.
fn key(format: Format, e: &[u8]) -> Key {
    match format {
        Format::Uint16_1 => Key::Unorm(u32::from(u16::from_le_bytes([e[0], e[1]]))),
        Format::Uint8_4 => Key::Unorm(u32::from(e[2])),
        _ => Key::Float(f32::from_le_bytes([e[0], e[1], e[2], e[3]])),
    }
}

impl Co {
    /// Whether the unit needs the buffer when it tests `client`.
    pub fn needs_buffer(&self, client: CondLoc) -> bool {
        client == self.loc
            && (self.test.reads_buffer() || (self.write && self.test != CondTest::Never))
    }

    /// The test for pair (i, j) with value `v` (f32 pattern) from `client`,
    /// including the write-back. The buffer must be configured when
    /// [`Co::needs_buffer`] says so (checked before a run).
    pub fn test(&self, mc: &mut Mc, client: CondLoc, i: u32, j: u32, v: u32) -> bool {
        let pass = self.passes(mc, client, i, j, v);
        if pass
            && self.write
            && client == self.loc
            && let Some(buf) = self.buffer
        {
            mc.write_element(CacheId::Cond, &buf, i, j, [v, 0, 0, 0], 0b0001);
        }
        pass
    }

    /// The test alone, without the write-back ([`Co::test`] = this, then
    /// the write-back on a pass).
    pub fn passes(&self, mc: &Mc, client: CondLoc, i: u32, j: u32, v: u32) -> bool {
        if client != self.loc {
            return true;
        }
        if self.test == CondTest::Never {
            return false;
        }
        let Some(buf) = self.buffer else {
            return self.test == CondTest::Always;
        };
        let format = buf.fmt.format;
        self.test == CondTest::Always || {
            // v is quantized by the write rule of the buffer's format.
            let mut q = [0u8; 16];
            format.write(&mut q, [v, 0, 0, 0], 0b0001);
            let b = mc.read_bytes(CacheId::Cond, &buf, i64::from(i), i64::from(j));
            match (key(format, &q), key(format, &b)) {
                (Key::Float(v), Key::Float(b)) => self.test.holds(v, b),
                (Key::Unorm(v), Key::Unorm(b)) => self.test.holds(v, b),
                _ => false,
            }
        }
    }

    /// Whether a run's test at `client` writes the buffer back.
    pub fn writes_back(&self, client: CondLoc) -> bool {
        client == self.loc && self.write && self.test != CondTest::Never && self.buffer.is_some()
    }
}
