//! Reading bytecode: tokens → [`Shader`]. Total: any sequence of words
//! gives a shader or a [`ReadError`] naming the token offset (0 is the
//! version token) and what is wrong there.
//!
//! Token layouts (Microsoft, "Shader codes" of the Direct3D 9 driver
//! reference): instruction token — opcode [15:0], controls [23:16], length
//! in tokens [27:24], predicated [28], reserved [29], co-issue [30]
//! (ps_1_x only), 0 [31] — in ps_1_x the length field is reserved (0) and
//! the operation says how many tokens follow. Parameter tokens are read by
//! [`super::param`]. A predicated instruction's predicate token follows
//! its destination; a relative source's address token follows that
//! source.

pub use super::error::{ReadError, ReadErrorKind};
use super::op::{Compare, Opcode, TEXLD_BIAS, TEXLD_PROJECT};
use super::param::{Operands, Want};
use super::{Dcl, DclKind, Def, Dst, Inst, Item, Reg, RegKind, Shader, SrcMod, Version};

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
        0x0101 => Version::Ps11,
        0x0102 => Version::Ps12,
        0x0103 => Version::Ps13,
        0x0104 => Version::Ps14,
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
            let (item, n) = comment(tokens, at)?;
            items.push(item);
            at += n;
            continue;
        }
        if tok >> 31 != 0 {
            return err(at, ReadErrorKind::NotAnInstruction(tok));
        }
        // Bit 30 is ps_1_x's co-issue, reserved later.
        let reserved = tok & if version.is_1x() { 1 << 29 } else { 3 << 29 };
        if reserved != 0 {
            return err(
                at,
                ReadErrorKind::Reserved {
                    token: tok,
                    bits: reserved,
                },
            );
        }
        let mut len = ((tok >> 24) & 0xF) as usize;
        if version.is_1x() {
            if len != 0 {
                return err(
                    at,
                    ReadErrorKind::Reserved {
                        token: tok,
                        bits: tok & 0x0F00_0000,
                    },
                );
            }
            len = operands_1x(tok & 0xFFFF, version);
        }
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
        if !pairs(&items, &item) {
            return err(
                at,
                ReadErrorKind::Invalid(
                    "a co-issued instruction (+) is arithmetic and follows an arithmetic instruction that is not itself co-issued".into(),
                ),
            );
        }
        items.push(item);
        at += 1 + len;
    }
}

/// How many tokens follow a ps_1_x instruction token of operation `code`
/// (0 for one the version lacks: the item's reader says what is wrong).
fn operands_1x(code: u32, version: Version) -> usize {
    if code == DEF {
        return 5;
    }
    match Opcode::from_code(code as u16) {
        Some(op) if op.in_version(version) => usize::from(op.has_dst()) + op.sources(version),
        _ => 0,
    }
}

/// The comment block whose token is at `at`, and the tokens it spans.
fn comment(tokens: &[u32], at: usize) -> Result<(Item, usize), ReadError> {
    let tok = tokens[at];
    let err = |kind| Err(ReadError { offset: at, kind });
    if tok >> 31 != 0 {
        return err(ReadErrorKind::Reserved {
            token: tok,
            bits: 1 << 31,
        });
    }
    let n = ((tok >> 16) & 0x7FFF) as usize;
    let Some(body) = tokens.get(at + 1..at + 1 + n) else {
        return err(ReadErrorKind::Truncated);
    };
    Ok((Item::Comment(body.to_vec()), 1 + n))
}

/// Whether `item`, after `items`, is not co-issued or may be: both it and
/// the instruction before it (comments aside) arithmetic, that one not
/// co-issued itself.
fn pairs(items: &[Item], item: &Item) -> bool {
    let Item::Inst(i) = item else {
        return true;
    };
    if !i.coissue {
        return true;
    }
    let before = items.iter().rev().find(|i| !matches!(i, Item::Comment(_)));
    let after_arithmetic =
        matches!(before, Some(Item::Inst(p)) if !p.coissue && arithmetic_1x(p.op));
    arithmetic_1x(i.op) && after_arithmetic
}

/// Whether a ps_1_x operation is arithmetic (may be co-issued, takes a
/// result shift).
fn arithmetic_1x(op: Opcode) -> bool {
    op.has_dst() && !op.is_tex_1x()
}

impl Operands<'_> {
    /// The item whose instruction token `tok` is at `at`.
    fn item(&mut self, tok: u32, at: usize) -> Result<Item, ReadError> {
        use RegKind::*;
        let code = tok & 0xFFFF;
        let control = ((tok >> 16) & 0xFF) as u8;
        let predicated = tok & (1 << 28) != 0;
        let coissue = tok & (1 << 30) != 0;
        let at_err = |kind| Err(ReadError { offset: at, kind });
        if matches!(code, DCL | DEF | DEFB | DEFI) {
            return self.declaration(tok, at);
        }
        let Some(op) = Opcode::from_code(code as u16) else {
            return at_err(ReadErrorKind::UnknownOpcode(code as u16));
        };
        if !op.in_version(self.version) {
            return at_err(ReadErrorKind::NotInVersion(
                op.name_in(self.version),
                self.version,
            ));
        }
        let one_x = self.version.is_1x();
        let control_ok = match op {
            _ if op.compares() => Compare::from_code(control).is_some(),
            Opcode::Tex if !one_x => matches!(control, 0 | TEXLD_PROJECT | TEXLD_BIAS),
            _ => control == 0,
        };
        if !control_ok {
            return at_err(ReadErrorKind::Invalid(format!(
                "`{}` does not take control bits {control:#x}",
                op.name()
            )));
        }
        if predicated && (!op.predicable() || self.version <= Version::Ps20) {
            return at_err(ReadErrorKind::Invalid(format!(
                "`{}` cannot be predicated in {}",
                op.name(),
                self.version.name()
            )));
        }
        let name = op.name_in(self.version);
        let dst = if op.has_dst() {
            let (allowed, expected) = self.dst_kinds(op);
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
            Opcode::Tex | Opcode::Texcoord if one_x => {
                vec![Want::Coordinate; op.sources(self.version)]
            }
            Opcode::Texm3x3spec => vec![Want::Texture, Want::Const],
            _ if one_x && op.is_tex_1x() => vec![Want::Texture; op.sources(self.version)],
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
        let inst = Inst {
            op,
            control,
            predicate,
            dst,
            src,
            coissue,
        };
        if one_x {
            self.check_1x(&inst)?;
        }
        Ok(Item::Inst(inst))
    }

    /// The registers `op`'s destination may be in this version, and how to
    /// say so.
    fn dst_kinds(&self, op: Opcode) -> (&'static [RegKind], &'static str) {
        use RegKind::*;
        let (one_x, ps14) = (self.version.is_1x(), self.version == Version::Ps14);
        match op {
            Opcode::Texkill if ps14 => (&[Temp, Texture], "r# or t#"),
            Opcode::Tex | Opcode::Texcoord | Opcode::Texdepth | Opcode::Bem if ps14 => {
                (&[Temp], "r#")
            }
            _ if one_x && op.is_tex_1x() => (&[Texture], "t#"),
            _ if ps14 => (&[Temp], "r#"),
            _ if one_x => (&[Temp, Texture], "r# or t#"),
            Opcode::Setp => (&[Predicate], "p0"),
            Opcode::Texkill if self.version == Version::Ps30 => (&[Temp, Input], "r# or v#"),
            Opcode::Texkill => (&[Temp, Texture], "r# or t#"),
            Opcode::Tex | Opcode::Texldd | Opcode::Texldl => (&[Temp], "r#"),
            _ => (&[Temp, ColorOut, DepthOut], "r#, oC# or oDepth"),
        }
    }

    /// A `dcl`, `def`, `defi` or `defb` item whose token `tok` is at `at`.
    fn declaration(&mut self, tok: u32, at: usize) -> Result<Item, ReadError> {
        use RegKind::*;
        let code = tok & 0xFFFF;
        let control = ((tok >> 16) & 0xFF) as u8;
        let predicated = tok & (1 << 28) != 0;
        let coissue = tok & (1 << 30) != 0;
        let at_err = |kind| Err(ReadError { offset: at, kind });
        if self.version.is_1x() && matches!(code, DCL | DEFB | DEFI) {
            let name = match code {
                DCL => "dcl",
                DEFB => "defb",
                _ => "defi",
            };
            return at_err(ReadErrorKind::NotInVersion(name, self.version));
        }
        if coissue {
            return at_err(ReadErrorKind::Invalid("def cannot be co-issued".into()));
        }
        if control != 0 || predicated {
            return at_err(ReadErrorKind::Reserved {
                token: tok,
                bits: tok & 0x10FF_0000,
            });
        }
        match code {
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
        }
    }

    /// The rules of ps_1_x's operands beyond their kinds.
    fn check_1x(&self, i: &Inst) -> Result<(), ReadError> {
        let name = i.op.name_in(self.version);
        let invalid = |m: String| self.err(ReadErrorKind::Invalid(format!("{name}: {m}")));
        let coordinates = matches!(i.op, Opcode::Tex | Opcode::Texcoord);
        if let Some(d) = &i.dst
            && d.shift != 0
            && !arithmetic_1x(i.op)
        {
            return invalid("a texture instruction takes no result shift".into());
        }
        for s in &i.src {
            let allowed = match s.modifier {
                SrcMod::None => true,
                SrcMod::Dz | SrcMod::Dw => coordinates,
                SrcMod::Bx2 => !coordinates,
                _ => !i.op.is_tex_1x(),
            };
            if !allowed {
                return invalid(if coordinates {
                    "its source takes only _dz or _dw".into()
                } else if i.op.is_tex_1x() {
                    "a texture instruction's source takes only _bx2".into()
                } else {
                    "_dz and _dw apply only to the source of texld and texcrd".into()
                });
            }
        }
        match i.op {
            Opcode::Cnd if self.version < Version::Ps14 => {
                let s = &i.src[0];
                if s.reg != Reg::new(RegKind::Temp, 0)
                    || s.swizzle != 0xFF
                    || s.modifier != SrcMod::None
                {
                    return invalid(format!(
                        "the condition of cnd in {} is r0.a",
                        self.version.name()
                    ));
                }
            }
            Opcode::Texdepth if i.dst.is_some_and(|d| d.reg.num != 5) => {
                return invalid("texdepth writes r5".into());
            }
            _ => {}
        }
        Ok(())
    }

    /// A definition's register takes every channel and no modifier.
    fn full(&self, d: &Dst, what: &str) -> Result<(), ReadError> {
        if d.mask != 0xF || d.sat || d.pp || d.centroid || d.shift != 0 {
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
