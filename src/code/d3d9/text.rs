//! Assembling the text form (`docs/d3d9.md` §2) into a [`Shader`]. Every
//! statement is checked by writing it and reading it back, so the rules of
//! the bytecode reader (registers per version, operand kinds, modifiers)
//! are the assembler's too, reported at the statement's line.

use super::op::{Compare, Opcode, TEXLD_BIAS, TEXLD_PROJECT};
use super::{Dcl, DclKind, Def, Inst, Item, RegKind, Shader, USAGES, Version, read, write};
use std::fmt;

/// Sources longer than this are refused before anything is read.
pub const MAX_SOURCE: usize = 16 << 20;

/// A text error with its position (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// Line, 1-based.
    pub line: usize,
    /// Column, 1-based (in characters).
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for TextError {}

/// Assembles shader text. The first statement is the version (`ps_1_1` …
/// `ps_1_4`, `ps_2_0`, `ps_2_x`, `ps_3_0`); comments start with `//` or `;`; an optional
/// trailing `end` is accepted.
pub fn assemble(source: &str) -> Result<Shader, TextError> {
    assemble_with_lines(source).map(|(s, _)| s)
}

/// [`assemble`], also giving the line and column of every item.
pub fn assemble_with_lines(source: &str) -> Result<(Shader, Vec<(usize, usize)>), TextError> {
    if source.len() > MAX_SOURCE {
        return Err(TextError {
            line: 1,
            col: 1,
            message: format!(
                "the source is {} bytes; at most {MAX_SOURCE} are accepted",
                source.len()
            ),
        });
    }
    let mut version = None;
    let mut items = Vec::new();
    let mut lines = Vec::new();
    let mut ended = false;
    for (n, raw) in source.lines().enumerate() {
        let line = n + 1;
        let text = strip_comment(raw);
        if text.trim().is_empty() {
            continue;
        }
        let col0 = text.len() - text.trim_start().len();
        let mut p = Parser {
            text,
            at: col0,
            line,
        };
        if ended {
            return Err(p.error("statements after `end`"));
        }
        match version {
            None => {
                let name = p.word();
                version = Some(version_named(name).ok_or_else(|| TextError {
                    line,
                    col: col0 + 1,
                    message: format!(
                        "expected the version (ps_1_1 … ps_1_4, ps_2_0, ps_2_x or ps_3_0), found `{name}`"
                    ),
                })?);
                p.end()?;
            }
            Some(v) => {
                if p.rest().trim().eq_ignore_ascii_case("end") {
                    ended = true;
                    continue;
                }
                items.push(p.item(v)?);
                lines.push((line, col0 + 1));
            }
        }
    }
    let Some(version) = version else {
        return Err(TextError {
            line: 1,
            col: 1,
            message:
                "empty source: expected the version (ps_1_1 … ps_1_4, ps_2_0, ps_2_x or ps_3_0)"
                    .into(),
        });
    };
    let shader = Shader { version, items };
    // The reader's checks, at the statement's line.
    let tokens = write(&shader);
    if let Err(e) = read(&tokens) {
        let mut at = 1;
        for (k, item) in shader.items.iter().enumerate() {
            let one = write(&Shader {
                version,
                items: vec![item.clone()],
            });
            let len = one.len() - 2;
            if e.offset < at + len {
                let (line, col) = lines[k];
                return Err(TextError {
                    line,
                    col,
                    message: e.kind.to_string(),
                });
            }
            at += len;
        }
        let (line, col) = lines.last().copied().unwrap_or((1, 1));
        return Err(TextError {
            line,
            col,
            message: e.kind.to_string(),
        });
    }
    Ok((shader, lines))
}

/// The version a shader's first statement names (Direct3D 8's `ps.1.1`
/// too; `ps_2_a`/`ps_2_b` are ps_2_x).
fn version_named(name: &str) -> Option<Version> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ps_1_1" | "ps.1.1" => Version::Ps11,
        "ps_1_2" | "ps.1.2" => Version::Ps12,
        "ps_1_3" | "ps.1.3" => Version::Ps13,
        "ps_1_4" | "ps.1.4" => Version::Ps14,
        "ps_2_0" => Version::Ps20,
        "ps_2_x" | "ps_2_a" | "ps_2_b" => Version::Ps2x,
        "ps_3_0" => Version::Ps30,
        _ => return None,
    })
}

fn strip_comment(line: &str) -> &str {
    let cut = [line.find("//"), line.find(';')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(line.len());
    &line[..cut]
}

/// ps_1_x's result shifts and their exponents.
pub(super) const SHIFTS: [&str; 6] = ["x2", "x4", "x8", "d2", "d4", "d8"];
const SHIFT_VALUES: [i8; 6] = [1, 2, 3, -1, -2, -3];

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
    pub(super) line: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, message: impl Into<String>) -> TextError {
        TextError {
            line: self.line,
            col: self.text[..self.at.min(self.text.len())].chars().count() + 1,
            message: message.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let r = self.rest();
        self.at += r.len() - r.trim_start().len();
    }

    /// A word of letters, digits, `_` and `.` (the mnemonic).
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let r = self.rest();
        let n = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(r.len());
        self.at += n;
        &r[..n]
    }

    fn end(&mut self) -> Result<(), TextError> {
        self.skip_space();
        if !self.rest().is_empty() {
            return Err(self.error(format!("unexpected `{}`", self.rest().trim_end())));
        }
        Ok(())
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.rest().starts_with(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// The operands after the mnemonic, each with its column.
    fn operands(&mut self) -> Vec<(usize, &'a str)> {
        let mut out = Vec::new();
        self.skip_space();
        if self.rest().is_empty() {
            return out;
        }
        let mut start = self.at;
        let mut depth = 0;
        for (k, c) in self.rest().char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    out.push((start, &self.text[start..self.at + k]));
                    start = self.at + k + 1;
                }
                _ => {}
            }
        }
        out.push((start, &self.text[start..]));
        self.at = self.text.len();
        out.into_iter()
            .map(|(s, t)| {
                let lead = t.len() - t.trim_start().len();
                (s + lead, t.trim())
            })
            .collect()
    }

    pub(super) fn err_at(&self, at: usize, message: impl Into<String>) -> TextError {
        TextError {
            line: self.line,
            col: self.text[..at].chars().count() + 1,
            message: message.into(),
        }
    }

    fn item(&mut self, v: Version) -> Result<Item, TextError> {
        // `+`: ps_1_x co-issue.
        let coissue = self.eat('+');
        // `(p0.x)` / `(!p0)` predication.
        let mut predicate = None;
        if self.eat('(') {
            let start = self.at;
            let close = self
                .rest()
                .find(')')
                .ok_or_else(|| self.error("expected `)` after the predicate"))?;
            let text = &self.text[start..start + close];
            predicate = Some(self.src(start, text.trim())?);
            self.at = start + close + 1;
        }
        let m_at = {
            self.skip_space();
            self.at
        };
        let mnemonic = self.word().to_ascii_lowercase();
        if mnemonic.is_empty() {
            return Err(self.error("expected an instruction"));
        }
        if mnemonic == ".comment" {
            let ops = self.operands();
            let mut words = Vec::with_capacity(ops.len());
            for (at, t) in ops {
                words.push(self.int(at, t)? as u32);
            }
            return Ok(Item::Comment(words));
        }
        let mut parts = mnemonic.split('_');
        let base = parts.next().unwrap_or_default();
        let suffixes: Vec<&str> = parts.collect();
        let ops = self.operands();
        if predicate.is_some() && matches!(base, "dcl" | "def" | "defi" | "defb") {
            return Err(self.err_at(m_at, format!("`{base}` cannot be predicated")));
        }
        if coissue && matches!(base, "dcl" | "def" | "defi" | "defb") {
            return Err(self.err_at(m_at, format!("`{base}` cannot be co-issued")));
        }
        match base {
            "dcl" => return self.dcl(v, m_at, &suffixes, &ops),
            "def" | "defi" | "defb" => {
                if !suffixes.is_empty() {
                    return Err(self.err_at(m_at, format!("`{mnemonic}`: unknown suffix")));
                }
                return self.def(m_at, base, &ops);
            }
            _ => {}
        }
        let (op, control, rest) = self.opcode(m_at, base, &suffixes)?;
        let (sat, pp, centroid, shift) = self.result_mods(m_at, &rest)?;
        let want = usize::from(op.has_dst()) + op.sources(v);
        if ops.len() != want {
            return Err(self.err_at(
                m_at,
                format!(
                    "`{mnemonic}` takes {want} operand(s) in {}, found {}",
                    v.name(),
                    ops.len()
                ),
            ));
        }
        let mut ops = ops.into_iter();
        let dst = if op.has_dst() {
            let (at, t) = ops.next().unwrap_or_default();
            let mut d = self.dst(at, t)?;
            (d.sat, d.pp, d.centroid, d.shift) = (sat, pp, centroid, shift);
            Some(d)
        } else {
            if sat || pp || centroid || shift != 0 {
                return Err(self.err_at(m_at, format!("`{base}` has no destination to modify")));
            }
            None
        };
        let mut src = Vec::new();
        for (at, t) in ops {
            src.push(self.src(at, t)?);
        }
        Ok(Item::Inst(Inst {
            op,
            control,
            predicate,
            dst,
            src,
            coissue,
        }))
    }

    /// The operation of `base` and its suffixes; the suffixes left over.
    fn opcode<'s>(
        &self,
        at: usize,
        base: &str,
        suffixes: &[&'s str],
    ) -> Result<(Opcode, u8, Vec<&'s str>), TextError> {
        let compare =
            |s: Option<&&str>| s.and_then(|s| Compare::ALL.into_iter().find(|c| c.name() == *s));
        let first = suffixes.first();
        let (op, control, used) = match base {
            "if" => match compare(first) {
                Some(c) => (Opcode::Ifc, c.code(), 1),
                None => (Opcode::If, 0, 0),
            },
            "break" => match compare(first) {
                Some(c) => (Opcode::Breakc, c.code(), 1),
                None => (Opcode::Break, 0, 0),
            },
            "setp" => match compare(first) {
                Some(c) => (Opcode::Setp, c.code(), 1),
                None => return Err(self.err_at(at, "setp needs a comparison: setp_gt, setp_lt …")),
            },
            "texld" => (Opcode::Tex, 0, 0),
            "texldp" => (Opcode::Tex, TEXLD_PROJECT, 0),
            "texldb" => (Opcode::Tex, TEXLD_BIAS, 0),
            "tex" => (Opcode::Tex, 0, 0),
            "texcrd" => (Opcode::Texcoord, 0, 0),
            _ => match Opcode::ALL
                .iter()
                .find(|o| o.name() == base && !o.compares() && **o != Opcode::Tex)
            {
                Some(&o) => (o, 0, 0),
                None => return Err(self.err_at(at, format!("unknown instruction `{base}`"))),
            },
        };
        Ok((op, control, suffixes[used..].to_vec()))
    }

    /// `_sat`, `_pp`, `_centroid` and ps_1_x's result shifts (`_x2` …).
    fn result_mods(&self, at: usize, rest: &[&str]) -> Result<(bool, bool, bool, i8), TextError> {
        let (mut sat, mut pp, mut centroid, mut shift) = (false, false, false, 0);
        for s in rest {
            let scale = SHIFTS.iter().position(|n| n == s);
            match *s {
                "sat" => sat = true,
                "pp" => pp = true,
                "centroid" => centroid = true,
                _ if scale.is_some() && shift == 0 => {
                    shift = scale.map_or(0, |k| SHIFT_VALUES[k]);
                }
                other => return Err(self.err_at(at, format!("unknown modifier `_{other}`"))),
            }
        }
        Ok((sat, pp, centroid, shift))
    }

    fn dcl(
        &self,
        v: Version,
        at: usize,
        suffixes: &[&str],
        ops: &[(usize, &str)],
    ) -> Result<Item, TextError> {
        let mut kind = DclKind::Plain;
        let mut rest = suffixes;
        if let Some(first) = suffixes.first() {
            let sampler = match *first {
                "2d" => Some(2),
                "cube" => Some(3),
                "volume" => Some(4),
                _ => None,
            };
            if let Some(t) = sampler {
                kind = DclKind::Sampler(t);
                rest = &suffixes[1..];
            } else if let Some(u) = first.strip_prefix("type").and_then(|t| t.parse().ok()) {
                kind = DclKind::Sampler(u);
                rest = &suffixes[1..];
            } else {
                let name = first.trim_end_matches(|c: char| c.is_ascii_digit());
                if let Some(usage) = USAGES.iter().position(|u| *u == name) {
                    let digits = &first[name.len()..];
                    let index = if digits.is_empty() {
                        0
                    } else {
                        digits
                            .parse::<u8>()
                            .ok()
                            .filter(|&i| i < 16)
                            .ok_or_else(|| {
                                self.err_at(at, format!("usage index `{digits}` is not 0–15"))
                            })?
                    };
                    kind = DclKind::Usage {
                        usage: usage as u8,
                        index,
                    };
                    rest = &suffixes[1..];
                }
            }
        }
        let (sat, pp, centroid, shift) = self.result_mods(at, rest)?;
        if shift != 0 {
            return Err(self.err_at(at, "dcl takes no result shift"));
        }
        let [(dat, d)] = ops else {
            return Err(self.err_at(at, format!("dcl takes one register, found {}", ops.len())));
        };
        let mut dst = self.dst(*dat, d)?;
        (dst.sat, dst.pp, dst.centroid) = (sat, pp, centroid);
        // In ps_3_0 the token of an input's declaration always holds a
        // usage, so one must be named.
        if v == Version::Ps30 && dst.reg.kind == RegKind::Input && kind == DclKind::Plain {
            return Err(self.err_at(
                at,
                format!(
                    "ps_3_0 declares inputs with a usage: dcl_texcoord0 {d}, dcl_color1 {d}, …"
                ),
            ));
        }
        Ok(Item::Dcl(Dcl { kind, dst }))
    }

    fn def(&self, at: usize, base: &str, ops: &[(usize, &str)]) -> Result<Item, TextError> {
        let n = if base == "defb" { 2 } else { 5 };
        if ops.len() != n {
            return Err(self.err_at(
                at,
                format!(
                    "`{base}` takes a register and {} value(s), found {} operand(s)",
                    n - 1,
                    ops.len()
                ),
            ));
        }
        let (rat, r) = ops[0];
        let reg = self.reg(rat, r)?;
        let kind = match base {
            "def" => RegKind::Const,
            "defi" => RegKind::ConstInt,
            _ => RegKind::ConstBool,
        };
        if reg.kind != kind {
            return Err(self.err_at(
                rat,
                format!(
                    "`{base}` defines {} registers, not {reg}",
                    match kind {
                        RegKind::Const => "c#",
                        RegKind::ConstInt => "i#",
                        _ => "b#",
                    }
                ),
            ));
        }
        Ok(Item::Def(match base {
            "def" => {
                let mut v = [0; 4];
                for (k, x) in v.iter_mut().enumerate() {
                    let (at, t) = ops[k + 1];
                    *x = self.float(at, t)?;
                }
                Def::Float(reg.num, v)
            }
            "defi" => {
                let mut v = [0; 4];
                for (k, x) in v.iter_mut().enumerate() {
                    let (at, t) = ops[k + 1];
                    let i = self.int(at, t)?;
                    *x = i32::try_from(i)
                        .map_err(|_| self.err_at(at, format!("`{t}` does not fit 32 bits")))?;
                }
                Def::Int(reg.num, v)
            }
            _ => {
                let (at, t) = ops[1];
                Def::Bool(
                    reg.num,
                    match t.to_ascii_lowercase().as_str() {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(self.err_at(at, format!("`{t}`: expected true or false"))),
                    },
                )
            }
        }))
    }
}
