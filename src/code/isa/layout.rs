//! The machinery behind the declarative ISA table: the `layout!` and
//! `isa_enum!` macros and the traits they implement.
//!
//! A *layout* describes one 32-bit instruction word as a list of named fields
//! (bit range + value type) and reserved ranges. From that single description
//! the macro derives the Rust struct, `decode` (total: every word yields either
//! the struct or a [`FieldError`] naming the field), `encode`, the field
//! metadata used by the disassembler's verbose mode, and raw get/set by field
//! index used by the assembler and the random-program generator. A constant
//! assertion proves that fields and reserved ranges cover the word exactly once.

use std::fmt;

/// How the values of a field are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// A single bit.
    Flag,
    /// An unsigned number using the whole width of the field.
    Uint,
    /// An enumeration: only the listed `(value, name)` pairs are defined.
    Enum(&'static [(u32, &'static str)]),
}

/// Static description of one field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Field name as in `docs/isa.md` (unqualified within its word).
    pub name: &'static str,
    /// Highest bit (inclusive).
    pub hi: u8,
    /// Lowest bit.
    pub lo: u8,
    /// Value interpretation.
    pub domain: Domain,
}

impl FieldInfo {
    /// Width in bits.
    pub const fn width(&self) -> u32 {
        (self.hi - self.lo + 1) as u32
    }

    /// Mask of the field in place.
    pub const fn mask(&self) -> u32 {
        mask(self.hi, self.lo)
    }

    /// Whether `raw` (already shifted down) is a defined value of this field.
    pub fn is_defined(&self, raw: u32) -> bool {
        if raw > (self.mask() >> self.lo) {
            return false;
        }
        match self.domain {
            Domain::Flag | Domain::Uint => true,
            Domain::Enum(values) => values.iter().any(|&(v, _)| v == raw),
        }
    }

    /// Symbolic name of a value, for enumerations.
    pub fn value_name(&self, raw: u32) -> Option<&'static str> {
        match self.domain {
            Domain::Enum(values) => values.iter().find(|&&(v, _)| v == raw).map(|&(_, n)| n),
            _ => None,
        }
    }

    /// Parses a value written as a number (decimal, `0x` hex, `0b` binary) or,
    /// for enumerations, by name (case-insensitive).
    pub fn parse_value(&self, text: &str) -> Option<u32> {
        let raw = parse_number(text).or_else(|| match self.domain {
            Domain::Enum(values) => values
                .iter()
                .find(|&&(_, n)| n.eq_ignore_ascii_case(text))
                .map(|&(v, _)| v),
            _ => None,
        })?;
        self.is_defined(raw).then_some(raw)
    }
}

/// Parses an unsigned integer literal: decimal, `0x…`, `0b…`.
pub fn parse_number(text: &str) -> Option<u32> {
    let t = text.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(&h.replace('_', ""), 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u32::from_str_radix(&b.replace('_', ""), 2).ok()
    } else {
        t.parse().ok()
    }
}

/// Mask of bits `hi..=lo`.
pub const fn mask(hi: u8, lo: u8) -> u32 {
    let width = (hi - lo + 1) as u32;
    let ones = if width == 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    };
    ones << lo
}

/// Checks (at compile time, through `const` evaluation) that a layout's fields
/// and reserved ranges cover all 32 bits exactly once.
pub const fn covers_word_exactly(ranges: &[(u8, u8)]) -> bool {
    let mut seen = 0u32;
    let mut i = 0;
    while i < ranges.len() {
        let m = mask(ranges[i].0, ranges[i].1);
        if seen & m != 0 {
            return false;
        }
        seen |= m;
        i += 1;
    }
    seen == u32::MAX
}

/// What was wrong with a field of a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldProblem {
    /// Bits of a reserved range are set (the value shown is the range's bits).
    ReservedBitsSet,
    /// The field holds a value its table does not define.
    Undefined,
    /// An inline constant (`ADDRn[7]` = 1, `CONST` = 0) has `REL` set.
    InlineWithRel,
    /// The value does not fit in the field (encoding only).
    TooWide,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FieldProblem::ReservedBitsSet => "reserved bits set",
            FieldProblem::Undefined => "undefined encoding",
            FieldProblem::InlineWithRel => "inline constant with relative addressing",
            FieldProblem::TooWide => "value does not fit in the field",
        })
    }
}

/// A problem with one field of one word (the instruction index and word number
/// are added by the instruction decoder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Field name, or `reserved[hi:lo]` for reserved ranges.
    pub field: &'static str,
    /// Bit range of the field.
    pub hi: u8,
    /// Lowest bit of the field.
    pub lo: u8,
    /// The offending value (shifted down).
    pub value: u32,
    /// What is wrong.
    pub problem: FieldProblem,
}

/// A value that can live in a field.
pub trait FieldValue: Copy {
    /// How the raw values are interpreted (for metadata and generation).
    const DOMAIN: Domain;
    /// Converts raw bits (shifted down, already masked to the field width);
    /// `None` for an undefined encoding.
    fn from_raw(raw: u32) -> Option<Self>;
    /// The raw value of this field value.
    fn to_raw(self) -> u32;
}

impl FieldValue for bool {
    const DOMAIN: Domain = Domain::Flag;
    fn from_raw(raw: u32) -> Option<Self> {
        Some(raw != 0)
    }
    fn to_raw(self) -> u32 {
        self as u32
    }
}

impl FieldValue for u8 {
    const DOMAIN: Domain = Domain::Uint;
    fn from_raw(raw: u32) -> Option<Self> {
        u8::try_from(raw).ok()
    }
    fn to_raw(self) -> u32 {
        self as u32
    }
}

impl FieldValue for u16 {
    const DOMAIN: Domain = Domain::Uint;
    fn from_raw(raw: u32) -> Option<Self> {
        u16::try_from(raw).ok()
    }
    fn to_raw(self) -> u32 {
        self as u32
    }
}

/// Declares an enumerated field type: variants with their encoding and the
/// lower-case mnemonic used by the assembler and disassembler. Values not
/// listed are undefined encodings.
macro_rules! isa_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $mnemonic:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every defined value, in encoding order.
            pub const ALL: &'static [$name] = &[ $($name::$variant),+ ];
            const TABLE: &'static [(u32, &'static str)] = &[ $(($value, $mnemonic)),+ ];

            /// The assembler mnemonic of this value.
            pub const fn mnemonic(self) -> &'static str {
                match self { $($name::$variant => $mnemonic),+ }
            }

            /// Looks a value up by mnemonic (case-insensitive).
            pub fn from_mnemonic(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.mnemonic().eq_ignore_ascii_case(text))
            }
        }

        impl $crate::isa::layout::FieldValue for $name {
            const DOMAIN: $crate::isa::layout::Domain =
                $crate::isa::layout::Domain::Enum(Self::TABLE);
            fn from_raw(raw: u32) -> Option<Self> {
                match raw { $($value => Some($name::$variant),)+ _ => None }
            }
            fn to_raw(self) -> u32 {
                self as u32
            }
        }

        impl Default for $name {
            fn default() -> Self {
                // Every table defines value 0 (asserted below): the all-zero
                // word decodes to the default of every field.
                <Self as $crate::isa::layout::FieldValue>::from_raw(0)
                    .expect("value 0 is defined")
            }
        }

        const _: () = assert!(
            $name::TABLE[0].0 == 0,
            concat!(stringify!($name), ": the first value must be 0")
        );

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.mnemonic())
            }
        }
    };
}

/// Declares the layout of one 32-bit word. See the module docs.
macro_rules! layout {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = [$hi:literal : $lo:literal] $fname:literal, )*
        }
        reserved [ $( $rhi:literal : $rlo:literal ),* ]
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        #[allow(clippy::identity_op, reason = "generated shifts include << 0")]
        impl $name {
            /// Every field of this word, in table order.
            pub const FIELDS: &'static [$crate::isa::layout::FieldInfo] = &[
                $( $crate::isa::layout::FieldInfo {
                    name: $fname, hi: $hi, lo: $lo,
                    domain: <$ty as $crate::isa::layout::FieldValue>::DOMAIN,
                }, )*
            ];
            /// Reserved bit ranges `(hi, lo)`: written as 0, rejected when set.
            pub const RESERVED: &'static [(u8, u8)] = &[ $( ($rhi, $rlo) ),* ];

            /// Decodes a word. Reserved bits must be clear and every field
            /// must hold a defined value.
            #[allow(unused_imports, reason = "a layout may have no fields")]
            pub fn decode(word: u32) -> Result<Self, $crate::isa::layout::FieldError> {
                use $crate::isa::layout::{mask, FieldError, FieldProblem, FieldValue};
                for &(hi, lo) in Self::RESERVED {
                    let bits = (word & mask(hi, lo)) >> lo;
                    if bits != 0 {
                        return Err(FieldError {
                            field: "reserved", hi, lo, value: bits,
                            problem: FieldProblem::ReservedBitsSet,
                        });
                    }
                }
                Ok(Self { $(
                    $field: {
                        let raw = (word & mask($hi, $lo)) >> $lo;
                        <$ty as FieldValue>::from_raw(raw).ok_or(FieldError {
                            field: $fname, hi: $hi, lo: $lo, value: raw,
                            problem: FieldProblem::Undefined,
                        })?
                    },
                )* })
            }

            /// Encodes the word; fails if a value does not fit its field.
            pub fn encode(&self) -> Result<u32, $crate::isa::layout::FieldError> {
                let mut word = 0u32;
                for (index, info) in Self::FIELDS.iter().enumerate() {
                    let raw = self.get_raw(index);
                    if raw & !(info.mask() >> info.lo) != 0 {
                        return Err($crate::isa::layout::FieldError {
                            field: info.name, hi: info.hi, lo: info.lo, value: raw,
                            problem: $crate::isa::layout::FieldProblem::TooWide,
                        });
                    }
                    word |= raw << info.lo;
                }
                Ok(word)
            }

            /// Raw value of field `index` (an index into [`Self::FIELDS`]).
            #[allow(unused_mut, unused_imports, reason = "a layout may have no fields")]
            pub fn get_raw(&self, index: usize) -> u32 {
                use $crate::isa::layout::FieldValue;
                let mut i = 0usize;
                $(
                    if i == index { return self.$field.to_raw(); }
                    i += 1;
                )*
                let _ = i;
                panic!("field index {index} out of range for {}", stringify!($name))
            }

            /// Sets field `index` from a raw value; `None` (and no change) if
            /// the value is not defined for that field.
            #[allow(unused_mut, unused_imports, reason = "a layout may have no fields")]
            pub fn set_raw(&mut self, index: usize, raw: u32) -> Option<()> {
                use $crate::isa::layout::FieldValue;
                if !Self::FIELDS.get(index)?.is_defined(raw) {
                    return None;
                }
                let mut i = 0usize;
                $(
                    if i == index {
                        self.$field = <$ty as FieldValue>::from_raw(raw)?;
                        return Some(());
                    }
                    i += 1;
                )*
                let _ = i;
                None
            }
        }

        const _: () = assert!(
            $crate::isa::layout::covers_word_exactly(&[ $( ($hi, $lo), )* $( ($rhi, $rlo), )* ]),
            concat!(stringify!($name), ": fields and reserved ranges must cover 32 bits exactly once")
        );
    };
}

pub(crate) use {isa_enum, layout};
