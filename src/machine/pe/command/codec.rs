//! How each kind of command parameter sits in its dwords
//! (`docs/machine.md` §3.2): the codecs the command table names.

use super::ParamError;
use crate::co::{CondLoc, CondTest};
use crate::mc::SurfaceFormat;
use crate::runtime::Domain;

/// How a parameter dword reads best in the text form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A count, an index or a code.
    Number,
    /// A base address.
    Address,
    /// A format dword.
    Format,
    /// The bits of an f32.
    Float,
    /// Reserved (written 0).
    Reserved,
}

/// How a parameter's value sits in its dwords (`docs/machine.md` §3.2):
/// reserved bits written 0 and ignored when read.
pub(super) trait Codec {
    /// The value in [`Command`].
    type Value;
    /// The dwords it spans, each with how it reads in the text form.
    const KINDS: &'static [ParamKind];
    /// The value from its dwords (exactly `KINDS.len()`).
    fn decode(p: &[u32]) -> Result<Self::Value, ParamError>;
    /// Appends its dwords.
    fn encode(v: &Self::Value, out: &mut Vec<u32>);
}

/// An f32 bit pattern, as it is.
pub(super) struct F32Bits;
impl Codec for F32Bits {
    type Value = u32;
    const KINDS: &'static [ParamKind] = &[ParamKind::Float];
    fn decode(p: &[u32]) -> Result<u32, ParamError> {
        Ok(p[0])
    }
    fn encode(v: &u32, out: &mut Vec<u32>) {
        out.push(*v);
    }
}

/// A base address: bits 10:0 ignored.
pub(super) struct Base;
impl Codec for Base {
    type Value = u32;
    const KINDS: &'static [ParamKind] = &[ParamKind::Address];
    fn decode(p: &[u32]) -> Result<u32, ParamError> {
        Ok(p[0] & !0x7FF)
    }
    fn encode(v: &u32, out: &mut Vec<u32>) {
        out.push(v & !0x7FF);
    }
}

/// A format dword (reserved element formats refused).
pub(super) struct Fmt;
impl Codec for Fmt {
    type Value = SurfaceFormat;
    const KINDS: &'static [ParamKind] = &[ParamKind::Format];
    fn decode(p: &[u32]) -> Result<SurfaceFormat, ParamError> {
        Ok(SurfaceFormat::decode(p[0])?)
    }
    fn encode(v: &SurfaceFormat, out: &mut Vec<u32>) {
        out.push(v.encode());
    }
}

/// A row count or a coordinate: bits 12:0.
pub(super) struct Bits13;
impl Codec for Bits13 {
    type Value = u32;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number];
    fn decode(p: &[u32]) -> Result<u32, ParamError> {
        Ok(p[0] & 0x1FFF)
    }
    fn encode(v: &u32, out: &mut Vec<u32>) {
        out.push(v & 0x1FFF);
    }
}

/// A small field: the bits of `MASK`.
pub(super) struct Field<const MASK: u8>;
impl<const MASK: u8> Codec for Field<MASK> {
    type Value = u8;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number];
    fn decode(p: &[u32]) -> Result<u8, ParamError> {
        Ok((p[0] & u32::from(MASK)) as u8)
    }
    fn encode(v: &u8, out: &mut Vec<u32>) {
        out.push(u32::from(v & MASK));
    }
}

/// A flag: bit 0.
pub(super) struct Flag;
impl Codec for Flag {
    type Value = bool;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number];
    fn decode(p: &[u32]) -> Result<bool, ParamError> {
        Ok(p[0] & 1 != 0)
    }
    fn encode(v: &bool, out: &mut Vec<u32>) {
        out.push(u32::from(*v));
    }
}

/// The conditional test: bits 2:0 (§6).
pub(super) struct Test;
impl Codec for Test {
    type Value = CondTest;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number];
    fn decode(p: &[u32]) -> Result<CondTest, ParamError> {
        Ok(CondTest::from_code(p[0]))
    }
    fn encode(v: &CondTest, out: &mut Vec<u32>) {
        out.push(v.code());
    }
}

/// Where the conditional test applies: bit 0.
pub(super) struct Loc;
impl Codec for Loc {
    type Value = CondLoc;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number];
    fn decode(p: &[u32]) -> Result<CondLoc, ParamError> {
        Ok(CondLoc::from_code(p[0]))
    }
    fn encode(v: &CondLoc, out: &mut Vec<u32>) {
        out.push(v.code());
    }
}

/// An inclusive domain: i0, j0, i1, j1, bits 12:0 each.
pub(super) struct Bounds;
impl Codec for Bounds {
    type Value = Domain;
    const KINDS: &'static [ParamKind] = &[ParamKind::Number; 4];
    fn decode(p: &[u32]) -> Result<Domain, ParamError> {
        let m = |v: u32| v & 0x1FFF;
        Ok(Domain {
            i0: m(p[0]),
            j0: m(p[1]),
            i1: m(p[2]),
            j1: m(p[3]),
        })
    }
    fn encode(d: &Domain, out: &mut Vec<u32>) {
        out.extend([d.i0, d.j0, d.i1, d.j1].map(|v| v & 0x1FFF));
    }
}
