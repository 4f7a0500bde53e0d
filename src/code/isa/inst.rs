//! Decoded instructions: six words → [`Inst`] and back (`docs/isa.md` §2–§6).
//!
//! Decoding is total: any six words give either an instruction or a
//! [`DecodeError`] naming the word and field at fault. Encoding is the exact
//! inverse. The bit layout comes only from [`super::table`].

use std::fmt;

use super::layout::{FieldError, FieldInfo, FieldProblem};
use super::table::*;

mod operand;
pub use operand::*;

/// Words per instruction (§2.1).
pub const WORDS_PER_INST: usize = 6;
/// Bytes per instruction in `.text`.
pub const INST_BYTES: usize = WORDS_PER_INST * 4;
/// Size of the instruction store (§1.1).
pub const MAX_INSTS: usize = 512;

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// Word 0, common to every type.
    pub cmn: Cmn,
    /// Words 1–5, by type.
    pub body: Body,
}

/// Words 1–5 of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// ALU and OUTPUT instructions.
    Alu(Alu),
    /// Flow control.
    Fc(Fc),
    /// Texture.
    Tex(Tex),
}

/// Words 1–5 of an ALU or OUTPUT instruction (§4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Alu {
    /// Word 1: R,G,B source addresses and the RGB presubtract.
    pub rgb_addr: AddrWord,
    /// Word 2: A source addresses and the alpha presubtract.
    pub alpha_addr: AddrWord,
    /// Word 3.
    pub rgb: RgbInst,
    /// Word 4.
    pub alpha: AlphaInst,
    /// Word 5.
    pub rgba: RgbaInst,
}

/// Words 2–3 of a flow-control instruction (§6.1); words 1, 4, 5 are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Fc {
    /// Word 2.
    pub inst: FcInst,
    /// Word 3.
    pub addr: FcAddr,
}

/// Words 1–3 of a texture instruction (§5.1); words 4, 5 are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tex {
    /// Word 1.
    pub inst: TexInst,
    /// Word 2.
    pub addr: TexAddr,
    /// Word 3.
    pub dxdy: TexDxdy,
}

/// A field of an instruction that is not defined, or a reserved range that is
/// set, with the position of the instruction when known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Instruction index in the program, when decoding a program.
    pub index: Option<usize>,
    /// Word 0–5.
    pub word: usize,
    /// Register name of the word (`RGB_INST`, `FC_ADDR`, …).
    pub word_name: &'static str,
    /// The field and what is wrong with it.
    pub field: FieldError,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.index {
            write!(f, "instruction {i}: ")?;
        }
        let FieldError {
            field,
            hi,
            lo,
            value,
            problem,
        } = self.field;
        write!(
            f,
            "word {} ({}) field {}[{}:{}] = {:#x}: {}",
            self.word, self.word_name, field, hi, lo, value, problem
        )
    }
}

impl std::error::Error for DecodeError {}

impl Inst {
    /// The instruction type (word 0 `TYPE`).
    pub fn ty(&self) -> InstType {
        self.cmn.ty
    }

    /// An instruction of type `ty` with every other field zero.
    pub fn zeroed(ty: InstType) -> Inst {
        let cmn = Cmn {
            ty,
            ..Cmn::default()
        };
        let body = match ty {
            InstType::Alu | InstType::Out => Body::Alu(Alu::default()),
            InstType::Fc => Body::Fc(Fc::default()),
            InstType::Tex => Body::Tex(Tex::default()),
        };
        Inst { cmn, body }
    }

    /// The word slots of this instruction's type.
    pub fn slots(&self) -> &'static [WordSlot; 6] {
        slots_of(self.cmn.ty)
    }

    /// Decodes one instruction.
    pub fn decode(words: [u32; 6]) -> Result<Inst, DecodeError> {
        let at = |word: usize, ty: InstType| {
            move |field: FieldError| DecodeError {
                index: None,
                word,
                word_name: slots_of(ty).get(word).map_or("?", |s| s.name),
                field,
            }
        };
        let cmn = Cmn::decode(words[0]).map_err(at(0, InstType::Alu))?;
        let ty = cmn.ty;
        let body = match ty {
            InstType::Alu | InstType::Out => {
                let alu = Alu {
                    rgb_addr: AddrWord::decode(words[1]).map_err(at(1, ty))?,
                    alpha_addr: AddrWord::decode(words[2]).map_err(at(2, ty))?,
                    rgb: RgbInst::decode(words[3]).map_err(at(3, ty))?,
                    alpha: AlphaInst::decode(words[4]).map_err(at(4, ty))?,
                    rgba: RgbaInst::decode(words[5]).map_err(at(5, ty))?,
                };
                alu.rgb_addr.check().map_err(at(1, ty))?;
                alu.alpha_addr.check().map_err(at(2, ty))?;
                Body::Alu(alu)
            }
            InstType::Fc => {
                for w in [1, 4, 5] {
                    Unused::decode(words[w]).map_err(at(w, ty))?;
                }
                Body::Fc(Fc {
                    inst: FcInst::decode(words[2]).map_err(at(2, ty))?,
                    addr: FcAddr::decode(words[3]).map_err(at(3, ty))?,
                })
            }
            InstType::Tex => {
                for w in [4, 5] {
                    Unused::decode(words[w]).map_err(at(w, ty))?;
                }
                Body::Tex(Tex {
                    inst: TexInst::decode(words[1]).map_err(at(1, ty))?,
                    addr: TexAddr::decode(words[2]).map_err(at(2, ty))?,
                    dxdy: TexDxdy::decode(words[3]).map_err(at(3, ty))?,
                })
            }
        };
        Ok(Inst { cmn, body })
    }

    /// Encodes the instruction. Fails if a numeric field does not fit its
    /// width, if `TYPE` does not match the body, or on an inline constant
    /// with relative addressing.
    pub fn encode(&self) -> Result<[u32; 6], DecodeError> {
        let ty = self.cmn.ty;
        let at = |word: usize| {
            move |field: FieldError| DecodeError {
                index: None,
                word,
                word_name: slots_of(ty)[word].name,
                field,
            }
        };
        let mismatch = || DecodeError {
            index: None,
            word: 0,
            word_name: "CMN",
            field: FieldError {
                field: "TYPE",
                hi: 1,
                lo: 0,
                value: ty as u32,
                problem: FieldProblem::Undefined,
            },
        };
        let mut w = [0u32; 6];
        w[0] = self.cmn.encode().map_err(at(0))?;
        match (&self.body, ty) {
            (Body::Alu(a), InstType::Alu | InstType::Out) => {
                a.rgb_addr.check().map_err(at(1))?;
                a.alpha_addr.check().map_err(at(2))?;
                w[1] = a.rgb_addr.encode().map_err(at(1))?;
                w[2] = a.alpha_addr.encode().map_err(at(2))?;
                w[3] = a.rgb.encode().map_err(at(3))?;
                w[4] = a.alpha.encode().map_err(at(4))?;
                w[5] = a.rgba.encode().map_err(at(5))?;
            }
            (Body::Fc(f), InstType::Fc) => {
                w[2] = f.inst.encode().map_err(at(2))?;
                w[3] = f.addr.encode().map_err(at(3))?;
            }
            (Body::Tex(t), InstType::Tex) => {
                w[1] = t.inst.encode().map_err(at(1))?;
                w[2] = t.addr.encode().map_err(at(2))?;
                w[3] = t.dxdy.encode().map_err(at(3))?;
            }
            _ => return Err(mismatch()),
        }
        Ok(w)
    }

    /// Raw value of field `field` (index into the slot's field list) of word `word`.
    pub fn get_field(&self, word: usize, field: usize) -> u32 {
        match (word, &self.body) {
            (0, _) => self.cmn.get_raw(field),
            (1, Body::Alu(a)) => a.rgb_addr.get_raw(field),
            (2, Body::Alu(a)) => a.alpha_addr.get_raw(field),
            (3, Body::Alu(a)) => a.rgb.get_raw(field),
            (4, Body::Alu(a)) => a.alpha.get_raw(field),
            (5, Body::Alu(a)) => a.rgba.get_raw(field),
            (2, Body::Fc(f)) => f.inst.get_raw(field),
            (3, Body::Fc(f)) => f.addr.get_raw(field),
            (1, Body::Tex(t)) => t.inst.get_raw(field),
            (2, Body::Tex(t)) => t.addr.get_raw(field),
            (3, Body::Tex(t)) => t.dxdy.get_raw(field),
            _ => panic!("word {word} has no fields for this instruction type"),
        }
    }

    /// Sets a field from a raw value. Returns `None` (and changes nothing)
    /// if the value is undefined for the field. Changing `TYPE` to another
    /// class of body resets words 1–5 to zero.
    pub fn set_field(&mut self, word: usize, field: usize, raw: u32) -> Option<()> {
        if word == 0 && Cmn::FIELDS.get(field)?.name == "TYPE" {
            let mut cmn = self.cmn;
            cmn.set_raw(field, raw)?;
            let same_class = matches!(
                (self.cmn.ty, cmn.ty),
                (InstType::Alu | InstType::Out, InstType::Alu | InstType::Out)
            ) || self.cmn.ty == cmn.ty;
            if !same_class {
                self.body = Inst::zeroed(cmn.ty).body;
            }
            self.cmn = cmn;
            return Some(());
        }
        match (word, &mut self.body) {
            (0, _) => self.cmn.set_raw(field, raw),
            (1, Body::Alu(a)) => a.rgb_addr.set_raw(field, raw),
            (2, Body::Alu(a)) => a.alpha_addr.set_raw(field, raw),
            (3, Body::Alu(a)) => a.rgb.set_raw(field, raw),
            (4, Body::Alu(a)) => a.alpha.set_raw(field, raw),
            (5, Body::Alu(a)) => a.rgba.set_raw(field, raw),
            (2, Body::Fc(f)) => f.inst.set_raw(field, raw),
            (3, Body::Fc(f)) => f.addr.set_raw(field, raw),
            (1, Body::Tex(t)) => t.inst.set_raw(field, raw),
            (2, Body::Tex(t)) => t.addr.set_raw(field, raw),
            (3, Body::Tex(t)) => t.dxdy.set_raw(field, raw),
            _ => None,
        }
    }

    /// Every field of this instruction with its raw value, word by word.
    pub fn fields(
        &self,
    ) -> impl Iterator<Item = (&'static WordSlot, &'static FieldInfo, u32)> + '_ {
        self.slots().iter().flat_map(move |slot| {
            slot.fields
                .iter()
                .enumerate()
                .map(move |(i, info)| (slot, info, self.get_field(slot.index, i)))
        })
    }

    /// Finds a field by qualified name (`RGB_INST.OMOD`, case-insensitive);
    /// returns `(word, field index)`.
    pub fn find_field(&self, qualified: &str) -> Option<(usize, usize)> {
        let (word_name, field_name) = qualified.split_once('.')?;
        let slot = self
            .slots()
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(word_name))?;
        let index = slot
            .fields
            .iter()
            .position(|f| f.name.eq_ignore_ascii_case(field_name))?;
        Some((slot.index, index))
    }

    /// The ALU/OUTPUT body, if this is one.
    pub fn alu(&self) -> Option<&Alu> {
        match &self.body {
            Body::Alu(a) => Some(a),
            _ => None,
        }
    }

    /// The FC body, if this is one.
    pub fn fc(&self) -> Option<&Fc> {
        match &self.body {
            Body::Fc(f) => Some(f),
            _ => None,
        }
    }

    /// The TEX body, if this is one.
    pub fn tex(&self) -> Option<&Tex> {
        match &self.body {
            Body::Tex(t) => Some(t),
            _ => None,
        }
    }
}

/// The word slots of an instruction type.
pub fn slots_of(ty: InstType) -> &'static [WordSlot; 6] {
    match ty {
        InstType::Alu | InstType::Out => &ALU_WORDS,
        InstType::Fc => &FC_WORDS,
        InstType::Tex => &TEX_WORDS,
    }
}

/// Decodes a program given as words; `words.len()` must be a multiple of 6
/// (the ABI loader checks this). Each slot decodes independently, so one bad
/// instruction does not hide the others.
pub fn decode_program(words: &[u32]) -> Vec<Result<Inst, DecodeError>> {
    words
        .chunks_exact(WORDS_PER_INST)
        .enumerate()
        .map(|(index, w)| {
            let words: [u32; 6] = w.try_into().expect("chunks of 6");
            Inst::decode(words).map_err(|e| DecodeError {
                index: Some(index),
                ..e
            })
        })
        .collect()
}
