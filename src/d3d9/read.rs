//! Reading bytecode: tokens → [`Shader`]. Total: any sequence of words
//! gives a shader or a [`ReadError`] naming the token offset (0 is the
//! version token) and what is wrong there.
//!
//! Token layouts (Microsoft, "Shader codes" of the Direct3D 9 driver
//! reference): instruction token — opcode [15:0], controls [23:16], length
//! in tokens [27:24], predicated [28], reserved [29], co-issue [30]
//! (ps_1_x only), 0 [31]; parameter tokens — register number [10:0], type
//! [30:28] and [12:11], relative addressing [13], reserved [15:14], 1 [31];
//! destination: write mask [19:16], result modifier [23:20], shift [27:24]
//! (ps_1_x only); source: swizzle [23:16], modifier [27:24]. A predicated
//! instruction's predicate token follows its destination; a relative
//! source's address token follows that source.

pub use super::error::{ReadError, ReadErrorKind};
use super::op::{Compare, Opcode, TEXLD_BIAS, TEXLD_PROJECT};
use super::{Dcl, DclKind, Def, Dst, Inst, Item, Reg, RegKind, Rel, Shader, Src, SrcMod, Version};

/// The `end` token.
pub(super) const END: u32 = 0x0000_FFFF;
/// The comment opcode.
pub(super) const COMMENT: u32 = 0xFFFE;
/// `dcl`, `def`, `defb`, `defi`.
pub(super) const DCL: u32 = 31;
pub(super) const DEF: u32 = 81;
pub(super) const DEFB: u32 = 47;
pub(super) const DEFI: u32 = 48;

/// Reads bytecode from little-endian bytes (a compiled shader file).
pub fn read_bytes(bytes: &[u8]) -> Result<Shader, ReadError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(ReadError {
            offset: bytes.len() / 4,
            kind: ReadErrorKind::Bytes(bytes.len()),
        });
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    read(&words)
}

/// Reads a token stream.
pub fn read(tokens: &[u32]) -> Result<Shader, ReadError> {
    let err = |offset, kind| Err(ReadError { offset, kind });
    let Some(&vt) = tokens.first() else {
        return err(0, ReadErrorKind::Empty);
    };
    if vt >> 16 != 0xFFFF {
        return err(0, ReadErrorKind::NotPixelShader(vt));
    }
    let version = match vt & 0xFFFF {
        0x0200 => Version::Ps20,
        0x0201 => Version::Ps2x,
        0x0300 => Version::Ps30,
        _ => return err(0, ReadErrorKind::Version(vt)),
    };
    let mut items = Vec::new();
    let mut at = 1;
    loop {
        let Some(&tok) = tokens.get(at) else {
            return err(at, ReadErrorKind::Truncated);
        };
        if tok == END {
            if at + 1 < tokens.len() {
                return err(at + 1, ReadErrorKind::AfterEnd(tokens.len() - at - 1));
            }
            return Ok(Shader { version, items });
        }
        if tok & 0xFFFF == COMMENT {
            if tok >> 31 != 0 {
                return err(
                    at,
                    ReadErrorKind::Reserved {
                        token: tok,
                        bits: 1 << 31,
                    },
                );
            }
            let n = ((tok >> 16) & 0x7FFF) as usize;
            let Some(body) = tokens.get(at + 1..at + 1 + n) else {
                return err(at, ReadErrorKind::Truncated);
            };
            items.push(Item::Comment(body.to_vec()));
            at += 1 + n;
            continue;
        }
        if tok >> 31 != 0 {
            return err(at, ReadErrorKind::NotAnInstruction(tok));
        }
        let reserved = tok & (3 << 29);
        if reserved != 0 {
            return err(
                at,
                ReadErrorKind::Reserved {
                    token: tok,
                    bits: reserved,
                },
            );
        }
        let len = ((tok >> 24) & 0xF) as usize;
        let Some(body) = tokens.get(at + 1..at + 1 + len) else {
            return err(at, ReadErrorKind::Truncated);
        };
        let mut r = Operands {
            version,
            tokens: body,
            base: at + 1,
            next: 0,
        };
        let item = r.item(tok, at)?;
        if r.next != len {
            return err(
                at,
                ReadErrorKind::Length {
                    declared: len,
                    used: r.next,
                },
            );
        }
        items.push(item);
        at += 1 + len;
    }
}

/// The operand tokens of one instruction.
struct Operands<'a> {
    version: Version,
    tokens: &'a [u32],
    /// Offset of `tokens[0]` in the stream.
    base: usize,
    next: usize,
}

/// What a source operand position accepts.
#[derive(Clone, Copy)]
enum Want {
    /// Arithmetic: r, v, c, t, vPos/vFace.
    Value,
    Sampler,
    Bool,
    Int,
    Label,
    Loop,
    Predicate,
    /// `callnz`'s condition: a bool constant or the predicate.
    BoolOrPred,
}

impl Want {
    fn allows(self, k: RegKind) -> bool {
        use RegKind::*;
        match self {
            Want::Value => matches!(k, Temp | Input | Const | Texture | Misc),
            Want::Sampler => k == Sampler,
            Want::Bool => k == ConstBool,
            Want::Int => k == ConstInt,
            Want::Label => k == Label,
            Want::Loop => k == Loop,
            Want::Predicate => k == Predicate,
            Want::BoolOrPred => matches!(k, ConstBool | Predicate),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Want::Value => "r#, v#, c#, t#, vPos or vFace",
            Want::Sampler => "a sampler s#",
            Want::Bool => "a bool constant b#",
            Want::Int => "an integer constant i#",
            Want::Label => "a label l#",
            Want::Loop => "aL",
            Want::Predicate => "p0",
            Want::BoolOrPred => "b# or p0",
        }
    }
}

impl Operands<'_> {
    fn err<T>(&self, kind: ReadErrorKind) -> Result<T, ReadError> {
        Err(ReadError {
            offset: self.base + self.next.saturating_sub(1),
            kind,
        })
    }

    /// The next operand token (bit 31 set).
    fn token(&mut self) -> Result<u32, ReadError> {
        let t = self.raw()?;
        if t >> 31 == 0 {
            return self.err(ReadErrorKind::NotAParameter(t));
        }
        Ok(t)
    }

    /// The next token as it is (a def's value); running past the declared
    /// length is a length error at the instruction.
    fn raw(&mut self) -> Result<u32, ReadError> {
        let Some(&t) = self.tokens.get(self.next) else {
            return Err(ReadError {
                offset: self.base - 1,
                kind: ReadErrorKind::Length {
                    declared: self.tokens.len(),
                    used: self.next + 1,
                },
            });
        };
        self.next += 1;
        Ok(t)
    }

    fn reserved(&self, token: u32, bits: u32) -> Result<(), ReadError> {
        if token & bits != 0 {
            return self.err(ReadErrorKind::Reserved {
                token,
                bits: token & bits,
            });
        }
        Ok(())
    }

    /// The register of a parameter token, checked against the version.
    fn reg(&self, t: u32) -> Result<Reg, ReadError> {
        let code = ((t >> 28) & 7) | ((t >> 8) & 0x18);
        let Some(kind) = RegKind::from_code(code) else {
            return self.err(ReadErrorKind::RegisterType(code));
        };
        let reg = Reg::new(kind, (t & 0x7FF) as u16);
        if reg.num >= self.version.count(kind) {
            return self.err(ReadErrorKind::NoSuchRegister(reg, self.version));
        }
        Ok(reg)
    }

    fn dst(
        &mut self,
        what: &str,
        allowed: &[RegKind],
        expected: &'static str,
    ) -> Result<Dst, ReadError> {
        let t = self.token()?;
        self.reserved(t, 0x0F00_0000 | 0x0000_C000)?;
        if t & (1 << 13) != 0 {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: relative addressing of a destination is not available in pixel shaders"
            )));
        }
        let reg = self.reg(t)?;
        if !allowed.contains(&reg.kind) {
            return self.err(ReadErrorKind::Operand {
                what: what.into(),
                found: reg,
                expected,
            });
        }
        if (t >> 16) & 0xF == 0 {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: the write mask is empty"
            )));
        }
        let m = (t >> 20) & 0xF;
        if m & 8 != 0 {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: result modifier {m:#x} is not one of _sat, _pp, _centroid"
            )));
        }
        Ok(Dst {
            reg,
            mask: ((t >> 16) & 0xF) as u8,
            sat: m & 1 != 0,
            pp: m & 2 != 0,
            centroid: m & 4 != 0,
        })
    }

    fn src(&mut self, what: &str, want: Want) -> Result<Src, ReadError> {
        let t = self.token()?;
        self.reserved(t, 0x0000_C000)?;
        let reg = self.reg(t)?;
        if !want.allows(reg.kind) {
            return self.err(ReadErrorKind::Operand {
                what: what.into(),
                found: reg,
                expected: want.describe(),
            });
        }
        let modifier = match (t >> 24) & 0xF {
            0 => SrcMod::None,
            1 => SrcMod::Neg,
            11 => SrcMod::Abs,
            12 => SrcMod::AbsNeg,
            13 if reg.kind == RegKind::Predicate => SrcMod::Not,
            13 => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: `!` applies only to the predicate register"
                )));
            }
            m => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: source modifier {m} exists only in ps_1_x (2.0 and later have -, _abs, !)"
                )));
            }
        };
        if modifier != SrcMod::None && modifier != SrcMod::Not && !matches!(want, Want::Value) {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: {reg} takes no source modifier"
            )));
        }
        let rel = if t & (1 << 13) != 0 {
            if !matches!(reg.kind, RegKind::Const | RegKind::Input) || self.version < Version::Ps30
            {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: relative addressing of {reg} is not available in {}",
                    self.version.name()
                )));
            }
            let a = self.token()?;
            self.reserved(a, 0x0F00_E000)?;
            let ar = self.reg(a)?;
            if ar.kind != RegKind::Loop {
                return self.err(ReadErrorKind::Operand {
                    what: format!("{what}'s relative address"),
                    found: ar,
                    expected: "aL",
                });
            }
            Some(Rel {
                reg: ar,
                swizzle: ((a >> 16) & 0xFF) as u8,
            })
        } else {
            None
        };
        Ok(Src {
            reg,
            rel,
            swizzle: ((t >> 16) & 0xFF) as u8,
            modifier,
        })
    }

    /// The item whose instruction token `tok` is at `at`.
    fn item(&mut self, tok: u32, at: usize) -> Result<Item, ReadError> {
        use RegKind::*;
        let code = tok & 0xFFFF;
        let control = ((tok >> 16) & 0xFF) as u8;
        let predicated = tok & (1 << 28) != 0;
        let at_err = |kind| Err(ReadError { offset: at, kind });
        if matches!(code, DCL | DEF | DEFB | DEFI) {
            if control != 0 || predicated {
                return at_err(ReadErrorKind::Reserved {
                    token: tok,
                    bits: tok & 0x10FF_0000,
                });
            }
            return match code {
                DCL => self.dcl(),
                DEF => {
                    let d = self.dst("def's register", &[Const], "c#")?;
                    self.full(&d, "def")?;
                    let mut v = [0; 4];
                    for x in &mut v {
                        *x = self.raw()?;
                    }
                    Ok(Item::Def(Def::Float(d.reg.num, v)))
                }
                DEFI => {
                    let d = self.dst("defi's register", &[ConstInt], "i#")?;
                    self.full(&d, "defi")?;
                    let mut v = [0; 4];
                    for x in &mut v {
                        *x = self.raw()? as i32;
                    }
                    Ok(Item::Def(Def::Int(d.reg.num, v)))
                }
                _ => {
                    let d = self.dst("defb's register", &[ConstBool], "b#")?;
                    self.full(&d, "defb")?;
                    match self.raw()? {
                        0 => Ok(Item::Def(Def::Bool(d.reg.num, false))),
                        1 => Ok(Item::Def(Def::Bool(d.reg.num, true))),
                        v => self.err(ReadErrorKind::Invalid(format!(
                            "defb's value {v:#x} is neither 0 nor 1"
                        ))),
                    }
                }
            };
        }
        let Some(op) = Opcode::from_code(code as u16) else {
            return at_err(ReadErrorKind::UnknownOpcode(code as u16));
        };
        if op.since() > self.version {
            return at_err(ReadErrorKind::NotInVersion(op.name(), self.version));
        }
        let control_ok = match op {
            _ if op.compares() => Compare::from_code(control).is_some(),
            Opcode::Tex => matches!(control, 0 | TEXLD_PROJECT | TEXLD_BIAS),
            _ => control == 0,
        };
        if !control_ok {
            return at_err(ReadErrorKind::Invalid(format!(
                "`{}` does not take control bits {control:#x}",
                op.name()
            )));
        }
        if predicated && (!op.predicable() || self.version == Version::Ps20) {
            return at_err(ReadErrorKind::Invalid(format!(
                "`{}` cannot be predicated in {}",
                op.name(),
                self.version.name()
            )));
        }
        let name = op.name();
        let dst = if op.has_dst() {
            let (allowed, expected): (&[RegKind], &str) = match op {
                Opcode::Setp => (&[Predicate], "p0"),
                Opcode::Texkill if self.version == Version::Ps30 => (&[Temp, Input], "r# or v#"),
                Opcode::Texkill => (&[Temp, Texture], "r# or t#"),
                Opcode::Tex | Opcode::Texldd | Opcode::Texldl => (&[Temp], "r#"),
                _ => (&[Temp, ColorOut, DepthOut], "r#, oC# or oDepth"),
            };
            Some(self.dst(&format!("{name}'s destination"), allowed, expected)?)
        } else {
            None
        };
        let predicate = if predicated {
            Some(self.src("the predicate", Want::Predicate)?)
        } else {
            None
        };
        let wants: Vec<Want> = match op {
            Opcode::Tex | Opcode::Texldl => vec![Want::Value, Want::Sampler],
            Opcode::Texldd => vec![Want::Value, Want::Sampler, Want::Value, Want::Value],
            Opcode::Call | Opcode::Label => vec![Want::Label],
            Opcode::Callnz => vec![Want::Label, Want::BoolOrPred],
            Opcode::Loop => vec![Want::Loop, Want::Int],
            Opcode::Rep => vec![Want::Int],
            Opcode::If => vec![Want::Bool],
            Opcode::Breakp => vec![Want::Predicate],
            _ => vec![Want::Value; op.sources(self.version)],
        };
        let mut src = Vec::with_capacity(wants.len());
        for (k, w) in wants.into_iter().enumerate() {
            src.push(self.src(&format!("{name}'s source {k}"), w)?);
        }
        if op == Opcode::Sincos && self.version < Version::Ps30 {
            for s in &src[1..] {
                if s.reg.kind != Const || s.rel.is_some() {
                    return self.err(ReadErrorKind::Invalid(
                        "sincos before ps_3_0 takes two constant registers after its source".into(),
                    ));
                }
            }
        }
        Ok(Item::Inst(Inst {
            op,
            control,
            predicate,
            dst,
            src,
        }))
    }

    /// A definition's register takes every channel and no modifier.
    fn full(&self, d: &Dst, what: &str) -> Result<(), ReadError> {
        if d.mask != 0xF || d.sat || d.pp || d.centroid {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: the register must be written whole, without modifiers"
            )));
        }
        Ok(())
    }

    fn dcl(&mut self) -> Result<Item, ReadError> {
        use RegKind::*;
        let t = self.raw()?;
        if t >> 31 == 0 {
            return self.err(ReadErrorKind::NotAParameter(t));
        }
        let dst = self.dst(
            "dcl's register",
            &[Input, Texture, Sampler, Misc],
            "v#, t#, s#, vPos or vFace",
        )?;
        let kind = if dst.reg.kind == Sampler {
            let tt = ((t >> 27) & 0xF) as u8;
            if t & 0x07FF_FFFF != 0 {
                return self.err(ReadErrorKind::Reserved {
                    token: t,
                    bits: t & 0x07FF_FFFF,
                });
            }
            if !(2..=4).contains(&tt) {
                return self.err(ReadErrorKind::Invalid(format!(
                    "sampler texture type {tt} is not 2d (2), cube (3) or volume (4)"
                )));
            }
            DclKind::Sampler(tt)
        } else if dst.reg.kind == Input && self.version == Version::Ps30 {
            self.reserved(t, 0x7FF0_FFE0)?;
            let usage = (t & 0x1F) as u8;
            if usize::from(usage) >= super::USAGES.len() {
                return self.err(ReadErrorKind::Invalid(format!(
                    "declaration usage {usage} is not a D3DDECLUSAGE"
                )));
            }
            DclKind::Usage {
                usage,
                index: ((t >> 16) & 0xF) as u8,
            }
        } else {
            self.reserved(t, 0x7FFF_FFFF)?;
            DclKind::Plain
        };
        if dst.sat {
            return self.err(ReadErrorKind::Invalid("dcl takes no _sat".into()));
        }
        Ok(Item::Dcl(Dcl { kind, dst }))
    }
}
