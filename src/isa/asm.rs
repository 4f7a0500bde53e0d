//! The assembler: text in the syntax of `docs/asm.md` → instruction words.
//!
//! One statement per line. The readable forms cover the common fields; any
//! field of the encoding table can also be set by its qualified name
//! (`RGB_INST.OMOD=7`), which is how the disassembler expresses whatever the
//! readable form does not, so that every valid program round-trips.

use std::collections::HashMap;
use std::fmt;

use super::inst::*;
use super::layout::parse_number;
use super::table::*;

/// An assembly error with its position (1-based line and column) and a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    /// Line, 1-based.
    pub line: usize,
    /// Column, 1-based (in characters).
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AsmError {}

/// Assembles a whole program into instruction words (6 per instruction).
///
/// ```
/// let words = ctm::isa::asm::assemble(
///     "out rtA.rgb = max.off(s0, s0, s0.000) | rtA.a = max.off(s0, s0, s0.0) \
///      src0=r1 src1=0.0 src2=0.0 wait last",
/// ).unwrap();
/// assert_eq!(words, [0x00078105, 0x08020001, 0x08020001, 0x1C440220, 0x1C60C003, 0x20490005]);
/// ```
pub fn assemble(text: &str) -> Result<Vec<u32>, AsmError> {
    // Pass 1: tokenize, collect labels and count statements.
    let mut lines = Vec::new();
    let mut labels = HashMap::new();
    let mut count = 0usize;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let mut toks = tokenize(raw, line)?;
        let mut start = 0;
        loop {
            match (toks.get(start), toks.get(start + 1)) {
                (
                    Some(Token {
                        tok: Tok::Ident(name),
                        col,
                    }),
                    Some(Token {
                        tok: Tok::Punct(":"),
                        ..
                    }),
                ) if !name.starts_with('.') => {
                    if labels.insert(name.clone(), count).is_some() {
                        return Err(err(
                            line,
                            *col,
                            format!("label `{name}` defined twice"),
                            None,
                        ));
                    }
                    start += 2;
                }
                (
                    Some(Token {
                        tok: Tok::Punct("@"),
                        col,
                    }),
                    _,
                ) => {
                    // `@N:` asserts the index of the statement that follows.
                    let (
                        Some(Token {
                            tok: Tok::Num(num), ..
                        }),
                        Some(Token {
                            tok: Tok::Punct(":"),
                            ..
                        }),
                    ) = (toks.get(start + 1), toks.get(start + 2))
                    else {
                        break;
                    };
                    let want = parse_number(num);
                    if want != Some(count as u32) {
                        return Err(err(
                            line,
                            *col,
                            format!("`@{num}:` but this is instruction {count}"),
                            Some(
                                "remove the index prefix or fix the instructions before it".into(),
                            ),
                        ));
                    }
                    start += 3;
                }
                _ => break,
            }
        }
        toks.drain(..start);
        if !toks.is_empty() {
            lines.push((line, toks, raw.chars().count()));
            count += 1;
        }
    }
    if count > MAX_INSTS {
        return Err(err(
            lines[MAX_INSTS].0,
            1,
            format!("{count} instructions; the instruction store holds {MAX_INSTS}"),
            None,
        ));
    }
    // Pass 2: parse statements.
    let mut words = Vec::with_capacity(count * WORDS_PER_INST);
    for (line, toks, len) in lines {
        let mut p = Parser {
            toks,
            pos: 0,
            line,
            len,
            labels: &labels,
        };
        let w = p.statement()?;
        words.extend_from_slice(&w);
    }
    Ok(words)
}

/// Parses one statement (no labels; targets written `@N`) into an instruction.
pub fn parse_inst(text: &str) -> Result<Inst, AsmError> {
    let labels = HashMap::new();
    let toks = tokenize(text, 1)?;
    let len = text.chars().count();
    let mut p = Parser {
        toks,
        pos: 0,
        line: 1,
        len,
        labels: &labels,
    };
    let words = p.statement()?;
    Inst::decode(words).map_err(|e| err(1, 1, e.to_string(), None))
}

fn err(line: usize, col: usize, message: String, hint: Option<String>) -> AsmError {
    AsmError {
        line,
        col,
        message,
        hint,
    }
}

// ----------------------------------------------------------------------------
// Tokens

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Punct(&'static str),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    col: usize,
}

const PUNCTS: [&str; 21] = [
    "->", "==", "!=", ">=", "<=", "<", ">", "=", "(", ")", ",", "|", "[", "]", "+", "-", "!", "@",
    ":", "/", "→",
];

fn tokenize(text: &str, line: usize) -> Result<Vec<Token>, AsmError> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        if c == ';' || c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let word = |i: &mut usize| {
            let start = *i;
            while *i < chars.len()
                && (chars[*i].is_ascii_alphanumeric() || chars[*i] == '_' || chars[*i] == '.')
            {
                *i += 1;
            }
            chars[start..*i].iter().collect::<String>()
        };
        if c.is_ascii_alphabetic() || c == '_' || c == '.' {
            toks.push(Token {
                tok: Tok::Ident(word(&mut i)),
                col,
            });
        } else if c.is_ascii_digit() {
            toks.push(Token {
                tok: Tok::Num(word(&mut i)),
                col,
            });
        } else if let Some(p) = PUNCTS.iter().find(|p| {
            let pc: Vec<char> = p.chars().collect();
            chars[i..].starts_with(&pc)
        }) {
            i += p.chars().count();
            let p = if *p == "→" { "->" } else { p };
            toks.push(Token {
                tok: Tok::Punct(p),
                col,
            });
        } else {
            return Err(err(line, col, format!("unexpected character `{c}`"), None));
        }
    }
    Ok(toks)
}

// ----------------------------------------------------------------------------
// Flow-control constructs (spec/isa.md §6.9)

/// The field values a flow-control mnemonic stands for (a row of §6.9).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FcTemplate {
    pub name: &'static str,
    pub op: FcOp,
    pub func: u8,
    pub any: bool,
    pub a_op: AOp,
    pub stay: BOp,
    pub jump: BOp,
    pub pop: u8,
    pub b_else: bool,
    /// The construct is meaningless without a condition (IF).
    pub needs_cond: bool,
    /// The target is not used and 0 is not printed (ENDIF, RET).
    pub target_optional: bool,
}

#[expect(clippy::too_many_arguments, reason = "one row of the §6.9 table")]
const fn fc(
    name: &'static str,
    op: FcOp,
    func: u8,
    any: bool,
    a_op: AOp,
    stay: BOp,
    jump: BOp,
    pop: u8,
) -> FcTemplate {
    FcTemplate {
        name,
        op,
        func,
        any,
        a_op,
        stay,
        jump,
        pop,
        b_else: false,
        needs_cond: false,
        target_optional: false,
    }
}

/// The constructs of §6.9, in the order the disassembler prefers them.
pub(crate) const FC_TEMPLATES: [FcTemplate; 13] = {
    use AOp as A;
    use BOp as B;
    use FcOp as O;
    [
        FcTemplate {
            needs_cond: true,
            ..fc("IF", O::Jump, 0x0F, false, A::None, B::Incr, B::None, 0)
        },
        FcTemplate {
            b_else: true,
            ..fc("ELSE", O::Jump, 0x00, false, A::None, B::None, B::Decr, 1)
        },
        FcTemplate {
            target_optional: true,
            ..fc("ENDIF", O::Jump, 0x00, true, A::None, B::Decr, B::None, 1)
        },
        fc("LOOP", O::Loop, 0x00, false, A::None, B::None, B::None, 0),
        fc(
            "ENDLOOP",
            O::EndLoop,
            0xFF,
            true,
            A::None,
            B::None,
            B::None,
            0,
        ),
        fc("REP", O::Rep, 0x00, false, A::None, B::None, B::None, 0),
        fc(
            "ENDREP",
            O::EndRep,
            0xFF,
            true,
            A::None,
            B::None,
            B::None,
            0,
        ),
        fc(
            "BREAKLOOP",
            O::BreakLoop,
            0xFF,
            false,
            A::None,
            B::None,
            B::Decr,
            0,
        ),
        fc(
            "BREAKREP",
            O::BreakRep,
            0xFF,
            false,
            A::None,
            B::None,
            B::Decr,
            0,
        ),
        fc(
            "CONTINUE",
            O::Continue,
            0xFF,
            false,
            A::None,
            B::None,
            B::Decr,
            0,
        ),
        fc("CALL", O::Jump, 0xFF, true, A::Push, B::None, B::None, 0),
        FcTemplate {
            target_optional: true,
            ..fc("RET", O::Jump, 0xFF, false, A::Pop, B::None, B::None, 0)
        },
        fc("JUMP", O::Jump, 0xFF, false, A::None, B::None, B::None, 0),
    ]
};

/// Jump-function values that read as a condition on one input (§6.2).
/// `(function, input, jumps when the input is non-zero)`.
pub(crate) const CONDITIONS: [(u8, CondInput, bool); 6] = [
    (0x0F, CondInput::Alu, false),
    (0xF0, CondInput::Alu, true),
    (0x33, CondInput::Pred, false),
    (0xCC, CondInput::Pred, true),
    (0x55, CondInput::Bool, false),
    (0xAA, CondInput::Bool, true),
];

/// Which input of the jump function a condition reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CondInput {
    Alu,
    Pred,
    Bool,
}

// ----------------------------------------------------------------------------
// Statements

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    line: usize,
    len: usize,
    labels: &'a HashMap<String, usize>,
}

type R<T> = Result<T, AsmError>;

impl Parser<'_> {
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.len + 1, |t| t.col)
    }

    fn error<T>(&self, message: impl Into<String>, hint: Option<&str>) -> R<T> {
        Err(err(
            self.line,
            self.col(),
            message.into(),
            hint.map(str::to_string),
        ))
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Consumes punctuation `p` (or the placeholder identifier `_`).
    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
            || (p == "_" && matches!(self.peek(), Some(Tok::Ident(s)) if s == "_"))
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str, what: &str) -> R<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.error(format!("expected `{p}` {what}"), None)
        }
    }

    fn ident(&mut self, what: &str) -> R<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => self.error(format!("expected {what}"), None),
        }
    }

    fn number(&mut self, what: &str, max: u32) -> R<u32> {
        let col = self.col();
        match self.peek() {
            Some(Tok::Num(s)) => {
                let s = s.clone();
                self.pos += 1;
                match parse_number(&s) {
                    Some(v) if v <= max => Ok(v),
                    _ => Err(err(
                        self.line,
                        col,
                        format!("{what} `{s}` out of range"),
                        Some(format!("0..={max}")),
                    )),
                }
            }
            _ => self.error(
                format!("expected {what}"),
                Some(&format!("a number 0..={max}")),
            ),
        }
    }

    fn statement(&mut self) -> R<[u32; 6]> {
        let head = self.ident("a mnemonic")?;
        let lower = head.to_ascii_lowercase();
        let inst = match lower.as_str() {
            ".words" => return self.words(),
            "alu" => self.alu(InstType::Alu)?,
            "out" => self.alu(InstType::Out)?,
            "tex" => self.tex()?,
            _ => match FC_TEMPLATES
                .iter()
                .find(|t| t.name.eq_ignore_ascii_case(&head))
            {
                Some(t) => self.fc(t)?,
                None => {
                    self.pos -= 1;
                    return self.error(
                        format!("unknown mnemonic `{head}`"),
                        Some("alu, out, tex, .words, or a flow-control construct: IF ELSE ENDIF LOOP ENDLOOP REP ENDREP BREAKLOOP BREAKREP CONTINUE CALL RET JUMP"),
                    );
                }
            },
        };
        inst.encode()
            .map_err(|e| err(self.line, 1, e.to_string(), None))
    }

    fn words(&mut self) -> R<[u32; 6]> {
        let mut w = [0u32; 6];
        for (k, slot) in w.iter_mut().enumerate() {
            *slot = self.number(&format!("word {k}"), u32::MAX)?;
        }
        if !self.at_end() {
            return self.error("`.words` takes exactly six words", None);
        }
        Ok(w)
    }

    /// Items every instruction accepts: flags, predication and raw fields.
    /// Returns false if the current token is not one of them.
    fn common_item(&mut self, inst: &mut Inst) -> R<bool> {
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return Ok(false);
        };
        let lower = name.to_ascii_lowercase();
        let flag = match lower.as_str() {
            "wait" => Some(&mut inst.cmn.tex_sem_wait),
            "last" => Some(&mut inst.cmn.last),
            "nop" => Some(&mut inst.cmn.nop),
            "alu_wait" => Some(&mut inst.cmn.alu_wait),
            "wi" => Some(&mut inst.cmn.write_inactive),
            _ => None,
        };
        if let Some(flag) = flag {
            *flag = true;
            self.pos += 1;
            return Ok(true);
        }
        if lower == "pred" || lower == "apred" {
            self.pos += 1;
            self.expect("=", "after pred")?;
            let inv = self.eat("!");
            let sel_name = self.ident("a predicate selection")?;
            let Some(sel) = PredSel::from_mnemonic(&sel_name) else {
                self.pos -= 1;
                return self.error(
                    format!("unknown predicate selection `{sel_name}`"),
                    Some("rgba, rrrr, gggg, bbbb, aaaa"),
                );
            };
            if lower == "pred" {
                (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv) = (sel, inv);
            } else {
                (inst.cmn.alpha_pred_sel, inst.cmn.alpha_pred_inv) = (sel, inv);
            }
            return Ok(true);
        }
        if let Some((word, field)) = inst.find_field(&name) {
            self.pos += 1;
            self.expect("=", "after a field name")?;
            let col = self.col();
            let value = match self.peek().cloned() {
                Some(Tok::Ident(v) | Tok::Num(v)) => v,
                _ => return self.error("expected a field value", None),
            };
            self.pos += 1;
            let info = inst.slots()[word].fields[field];
            let raw = info.parse_value(&value).ok_or_else(|| {
                let hint = match info.domain {
                    super::layout::Domain::Enum(values) => values
                        .iter()
                        .map(|(v, n)| format!("{v}={n}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => format!("0..={}", info.mask() >> info.lo),
                };
                err(
                    self.line,
                    col,
                    format!("`{value}` is not a value of {name}"),
                    Some(hint),
                )
            })?;
            inst.set_field(word, field, raw)
                .expect("value checked against the field");
            return Ok(true);
        }
        Ok(false)
    }

    fn unknown_item<T>(&self) -> R<T> {
        self.error(
            "unexpected item",
            Some("flags: wait last nop alu_wait wi pred=… apred=…, or a field as WORD.FIELD=value (see `ctm disasm --verbose`)"),
        )
    }

    // --- ALU / OUTPUT -------------------------------------------------------

    fn alu(&mut self, ty: InstType) -> R<Inst> {
        let mut inst = Inst::zeroed(ty);
        let mut alu = Alu::default();
        self.unit(&mut inst, &mut alu, true)?;
        self.expect("|", "between the RGB and the alpha unit")?;
        self.unit(&mut inst, &mut alu, false)?;
        let mut raw_items = Vec::new();
        while !self.at_end() {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return self.unknown_item();
            };
            let lower = name.to_ascii_lowercase();
            if let Some(k) = ["src0", "src1", "src2"].iter().position(|s| *s == lower) {
                self.pos += 1;
                self.expect("=", "after a source")?;
                let rgb = self.src_value()?;
                let alpha = if self.eat("/") {
                    self.src_value()?
                } else {
                    rgb
                };
                alu.rgb_addr.set_src(k, rgb);
                alu.alpha_addr.set_src(k, alpha);
            } else if lower == "srcp" {
                self.pos += 1;
                self.expect("=", "after srcp")?;
                let rgb = self.enum_ident::<SrcpOp>(
                    "a presubtract operation",
                    SrcpOp::from_mnemonic,
                    "bias, sub, add, inv",
                )?;
                let alpha = if self.eat("/") {
                    self.enum_ident::<SrcpOp>(
                        "a presubtract operation",
                        SrcpOp::from_mnemonic,
                        "bias, sub, add, inv",
                    )?
                } else {
                    rgb
                };
                (alu.rgb_addr.srcp_op, alu.alpha_addr.srcp_op) = (rgb, alpha);
            } else if lower == "res" {
                self.pos += 1;
                self.expect("=", "after res")?;
                let ch = self.ident("`r` or `a`")?;
                inst.cmn.alu_result_sel = match ch.as_str() {
                    "r" => ResultSel::Red,
                    "a" => ResultSel::Alpha,
                    _ => {
                        self.pos -= 1;
                        return self.error("the ALU result comes from `r` or `a`", None);
                    }
                };
                inst.cmn.alu_result_op = self.compare_zero()?;
                alu.rgb.alu_wmask = true;
            } else if self.is_raw_field(&inst, &name) {
                // Raw fields of words 1-5 apply after the body is complete.
                raw_items.push(self.pos);
                self.pos += 3;
            } else if !self.common_item(&mut inst)? {
                return self.unknown_item();
            }
        }
        inst.body = Body::Alu(alu);
        self.apply_raw(&mut inst, raw_items)?;
        Ok(inst)
    }

    fn is_raw_field(&self, inst: &Inst, name: &str) -> bool {
        inst.find_field(name).is_some_and(|(word, _)| word != 0)
    }

    /// Applies raw `WORD.FIELD=value` items recorded at token positions.
    fn apply_raw(&mut self, inst: &mut Inst, positions: Vec<usize>) -> R<()> {
        let end = self.pos;
        for p in positions {
            self.pos = p;
            let applied = self.common_item(inst)?;
            debug_assert!(applied);
        }
        self.pos = end;
        Ok(())
    }

    fn enum_ident<T>(&mut self, what: &str, f: fn(&str) -> Option<T>, hint: &str) -> R<T> {
        let name = self.ident(what)?;
        match f(&name) {
            Some(v) => Ok(v),
            None => {
                self.pos -= 1;
                self.error(format!("unknown {what} `{name}`"), Some(hint))
            }
        }
    }

    /// `== 0`, `< 0`, `>= 0`, `!= 0`.
    fn compare_zero(&mut self) -> R<CmpOp> {
        let op = match self.peek() {
            Some(Tok::Punct("==")) => CmpOp::Eq,
            Some(Tok::Punct("<")) => CmpOp::Lt,
            Some(Tok::Punct(">=")) => CmpOp::Ge,
            Some(Tok::Punct("!=")) => CmpOp::Ne,
            _ => {
                return self.error(
                    "expected a comparison with zero",
                    Some("== 0, < 0, >= 0 or != 0"),
                );
            }
        };
        self.pos += 1;
        self.number("zero", 0)?;
        Ok(op)
    }

    /// A source value: `rN`, `cN`, `r[aL+N]`, `c[aL+N]` or an inline constant.
    fn src_value(&mut self) -> R<Src> {
        let col = self.col();
        match self.peek().cloned() {
            Some(Tok::Num(text)) => {
                self.pos += 1;
                let value: f32 = text
                    .parse()
                    .map_err(|_| err(self.line, col, format!("bad number `{text}`"), None))?;
                match inline_code(value) {
                    Some(code) => Ok(Src {
                        kind: SrcKind::Inline(code),
                        rel: false,
                    }),
                    None => Err(err(
                        self.line,
                        col,
                        format!("{text} is not an inline constant"),
                        Some(nearest_inline(value)),
                    )),
                }
            }
            Some(Tok::Ident(_)) => {
                let (file, index, rel) = self.register("r or c")?;
                match file {
                    'r' if index < 128 => Ok(Src {
                        kind: SrcKind::Temp(index as u8),
                        rel,
                    }),
                    'c' if index < 256 => Ok(Src {
                        kind: SrcKind::Const(index as u8),
                        rel,
                    }),
                    'r' => Err(err(
                        self.line,
                        col,
                        format!("temporary r{index} out of range"),
                        Some("r0..r127".into()),
                    )),
                    'c' => Err(err(
                        self.line,
                        col,
                        format!("constant c{index} out of range"),
                        Some("c0..c255".into()),
                    )),
                    _ => Err(err(
                        self.line,
                        col,
                        "a source is a temporary (rN), a constant (cN) or an inline number".into(),
                        None,
                    )),
                }
            }
            _ => self.error(
                "expected a source",
                Some("rN, cN, r[aL+N], c[aL+N] or an inline constant such as 0.5"),
            ),
        }
    }

    /// `rN` / `cN` / `r[aL+N]` / `c[aL+N]`, with an optional `.suffix` left
    /// for the caller: returns (file letter, index, relative) and leaves any
    /// suffix in `self.suffix`.
    fn register(&mut self, what: &str) -> R<(char, u32, bool)> {
        let (file, index, rel, _) = self.register_with_suffix(what)?;
        Ok((file, index, rel))
    }

    fn register_with_suffix(&mut self, what: &str) -> R<(char, u32, bool, Option<String>)> {
        let col = self.col();
        let name = self.ident(what)?;
        let (base, suffix) = match name.split_once('.') {
            Some((b, s)) => (b.to_string(), Some(s.to_string())),
            None => (name.clone(), None),
        };
        let mut chars = base.chars();
        let file = chars.next().unwrap_or(' ');
        let rest: String = chars.collect();
        if rest.is_empty() && suffix.is_none() && self.eat("[") {
            let al = self.ident("aL")?;
            if !al.eq_ignore_ascii_case("al") {
                self.pos -= 1;
                return self.error("relative addressing is written [aL+N]", None);
            }
            let index = if self.eat("+") {
                self.number("an index", 255)?
            } else {
                0
            };
            self.expect("]", "after a relative address")?;
            let suffix = match self.peek() {
                Some(Tok::Ident(s)) if s.starts_with('.') => {
                    let s = s[1..].to_string();
                    self.pos += 1;
                    Some(s)
                }
                _ => None,
            };
            return Ok((file, index, true, suffix));
        }
        match rest.parse::<u32>() {
            Ok(index) if !rest.starts_with('+') => Ok((file, index, false, suffix)),
            _ => Err(err(
                self.line,
                col,
                format!("expected {what}, found `{name}`"),
                None,
            )),
        }
    }

    /// One unit: `dests = op.mods(args)`.
    fn unit(&mut self, inst: &mut Inst, alu: &mut Alu, rgb: bool) -> R<()> {
        let unit = if rgb { "RGB" } else { "alpha" };
        // Destinations.
        if !self.eat("_") {
            loop {
                if matches!(self.peek(), Some(Tok::Punct("="))) {
                    break;
                }
                self.dest(inst, alu, rgb)?;
            }
        } else if !matches!(self.peek(), Some(Tok::Punct("="))) {
            return self.error("expected `=` after `_`", None);
        }
        self.expect("=", &format!("after the {unit} destinations"))?;
        // Operation and modifiers.
        let col = self.col();
        let name = self.ident("an operation")?;
        let mut parts = name.split('.');
        let op_name = parts.next().unwrap_or_default();
        let arity = if rgb {
            let Some(op) = RgbOp::from_mnemonic(op_name) else {
                return Err(err(
                    self.line,
                    col,
                    format!("unknown RGB operation `{op_name}`"),
                    Some(names(RgbOp::ALL)),
                ));
            };
            alu.rgba.op = op;
            op.arity()
        } else {
            let Some(op) = AlphaOp::from_mnemonic(op_name) else {
                return Err(err(
                    self.line,
                    col,
                    format!("unknown alpha operation `{op_name}`"),
                    Some(names(AlphaOp::ALL)),
                ));
            };
            alu.alpha.op = op;
            op.arity()
        };
        for m in parts {
            if m.eq_ignore_ascii_case("sat") {
                if rgb {
                    inst.cmn.rgb_clamp = true;
                } else {
                    inst.cmn.alpha_clamp = true;
                }
            } else if let Some(omod) = Omod::from_mnemonic(m) {
                if rgb {
                    alu.rgb.omod = omod;
                } else {
                    alu.alpha.omod = omod;
                }
            } else {
                return Err(err(
                    self.line,
                    col,
                    format!("unknown modifier `.{m}`"),
                    Some(".sat, .x2 .x4 .x8 .d2 .d4 .d8, .off".into()),
                ));
            }
        }
        // Inputs.
        self.expect("(", "after the operation")?;
        let mut n = 0;
        if !self.eat(")") {
            loop {
                if n == 3 {
                    return self.error("at most three inputs (A, B, C)", None);
                }
                self.input(alu, rgb, n)?;
                n += 1;
                if self.eat(")") {
                    break;
                }
                self.expect(",", "between inputs")?;
            }
        }
        if n < arity {
            return self.error(
                format!("`{op_name}` takes {arity} input(s), found {n}"),
                None,
            );
        }
        Ok(())
    }

    fn dest(&mut self, inst: &mut Inst, alu: &mut Alu, rgb: bool) -> R<()> {
        let col = self.col();
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return self.error(
                "expected a destination or `=`",
                Some("rN.mask, rtA.mask (out), p.mask<0 (alu), depth"),
            );
        };
        let lower = name.to_ascii_lowercase();
        let chans: &[char] = if rgb { &['r', 'g', 'b'] } else { &['a'] };
        let mask_of = |this: &Self, s: &str| -> R<u8> {
            if s == "_" {
                return Ok(0);
            }
            mask_bits(s, chans).ok_or_else(|| {
                err(
                    this.line,
                    col,
                    format!("bad write mask `.{s}`"),
                    Some(format!("channels {chans:?} in order")),
                )
            })
        };
        if lower == "depth" {
            if rgb {
                return self.error("`depth` is written by the alpha unit", None);
            }
            self.pos += 1;
            alu.alpha.w_omask = true;
        } else if let Some(rest) = lower.strip_prefix("rt") {
            let (t, m) = rest.split_once('.').unwrap_or((rest, ""));
            let target = match t {
                "a" => 0,
                "b" => 1,
                "c" => 2,
                "d" => 3,
                _ => {
                    return self.error(
                        format!("unknown render target `rt{t}`"),
                        Some("rtA, rtB, rtC, rtD"),
                    );
                }
            };
            if inst.cmn.ty != InstType::Out {
                return self.error(
                    "only `out` instructions write render targets",
                    Some("use `out` (§2.2)"),
                );
            }
            self.pos += 1;
            let m = mask_of(self, m)?;
            if rgb {
                (inst.cmn.rgb_omask, alu.rgb.target) = (m, target);
            } else {
                (inst.cmn.alpha_omask, alu.alpha.target) = (m != 0, target);
            }
        } else if let Some(m) = lower.strip_prefix("p.") {
            if inst.cmn.ty != InstType::Alu {
                return self.error(
                    "only `alu` instructions set predicate bits",
                    Some("use `alu` (§2.2)"),
                );
            }
            self.pos += 1;
            let m = mask_of(self, m)?;
            let cmp = self.compare_zero()? as u8;
            if rgb {
                (inst.cmn.rgb_omask, alu.rgb.target) = (m, cmp);
            } else {
                (inst.cmn.alpha_omask, alu.alpha.target) = (m != 0, cmp);
            }
        } else {
            let (file, index, rel, suffix) = self.register_with_suffix("a destination")?;
            if file != 'r' {
                return Err(err(
                    self.line,
                    col,
                    "only temporaries (rN) can be destinations".into(),
                    None,
                ));
            }
            if index > 127 {
                return Err(err(
                    self.line,
                    col,
                    format!("temporary r{index} out of range"),
                    Some("r0..r127".into()),
                ));
            }
            let m = mask_of(
                self,
                suffix.as_deref().unwrap_or(if rgb { "rgb" } else { "a" }),
            )?;
            if rgb {
                inst.cmn.rgb_wmask = m;
                (alu.rgba.addrd, alu.rgba.addrd_rel) = (index as u8, rel);
            } else {
                inst.cmn.alpha_wmask = m != 0;
                (alu.alpha.addrd, alu.alpha.addrd_rel) = (index as u8, rel);
            }
        }
        Ok(())
    }

    fn input(&mut self, alu: &mut Alu, rgb: bool, n: usize) -> R<()> {
        let neg = self.eat("-");
        let abs = matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case("abs"));
        if abs {
            self.pos += 1;
            self.expect("(", "after abs")?;
        }
        let col = self.col();
        let name = self.ident("an input (s0, s1, s2, sp)")?;
        if abs {
            self.expect(")", "after the abs input")?;
        }
        let modifier = match (neg, abs) {
            (false, false) => Mod::Nop,
            (true, false) => Mod::Neg,
            (false, true) => Mod::Abs,
            (true, true) => Mod::Nab,
        };
        let (sel_name, swz_text) = name
            .split_once('.')
            .unwrap_or((&name, if rgb { "rgb" } else { "a" }));
        let Some(sel) = Sel::from_mnemonic(sel_name) else {
            return Err(err(
                self.line,
                col,
                format!("unknown input `{sel_name}`"),
                Some("s0, s1, s2, sp".into()),
            ));
        };
        let swz: Vec<Swz> = swz_text
            .chars()
            .filter_map(|c| Swz::from_mnemonic(&c.to_string()))
            .collect();
        let want = if rgb { 3 } else { 1 };
        if swz.len() != want || swz_text.chars().count() != want {
            return Err(err(
                self.line,
                col,
                format!("bad swizzle `.{swz_text}`"),
                Some(format!("{want} of r g b a 0 h(0.5) 1")),
            ));
        }
        if rgb {
            alu.set_rgb_input(
                n,
                RgbInput {
                    sel,
                    swz: [swz[0], swz[1], swz[2]],
                    modifier,
                },
            );
        } else {
            alu.set_alpha_input(
                n,
                AlphaInput {
                    sel,
                    swz: swz[0],
                    modifier,
                },
            );
        }
        Ok(())
    }

    // --- TEX ----------------------------------------------------------------

    fn tex(&mut self) -> R<Inst> {
        let mut inst = Inst::zeroed(InstType::Tex);
        let mut tex = Tex::default();
        tex.inst.op = self.enum_ident(
            "a texture operation",
            TexOp::from_mnemonic,
            &names(TexOp::ALL),
        )?;
        // Operands: dst, inN.swz, src.strq (optional as a group).
        if matches!(self.peek(), Some(Tok::Ident(s)) if s.starts_with('r') || s == "_") {
            let col = self.col();
            if !self.eat("_") {
                let (file, index, rel, suffix) = self.register_with_suffix("a destination")?;
                if file != 'r' || index > 127 {
                    return Err(err(
                        self.line,
                        col,
                        "the destination is a temporary r0..r127".into(),
                        None,
                    ));
                }
                let m = match suffix.as_deref() {
                    None => 0xF,
                    Some("_") => 0,
                    Some(s) => mask_bits(s, &['r', 'g', 'b', 'a']).ok_or_else(|| {
                        err(
                            self.line,
                            col,
                            format!("bad write mask `.{s}`"),
                            Some("channels r g b a in order".into()),
                        )
                    })?,
                };
                (inst.cmn.rgb_wmask, inst.cmn.alpha_wmask) = (m & 7, m & 8 != 0);
                (tex.addr.dst_addr, tex.addr.dst_addr_rel) = (index as u8, rel);
            }
            self.expect(",", "after the destination")?;
            let col = self.col();
            let name = self.ident("an input (in0..in15)")?;
            let (id, swz) = name.split_once('.').unwrap_or((&name, "rgba"));
            let id = id
                .strip_prefix("in")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|&n| n < 16);
            let Some(id) = id else {
                return Err(err(
                    self.line,
                    col,
                    format!("expected an input in0..in15, found `{name}`"),
                    None,
                ));
            };
            tex.inst.tex_id = id;
            let [r, g, b, a] = self.chan_swizzle(swz, col)?;
            (
                tex.addr.dst_r_swiz,
                tex.addr.dst_g_swiz,
                tex.addr.dst_b_swiz,
                tex.addr.dst_a_swiz,
            ) = (r, g, b, a);
            self.expect(",", "after the input")?;
            let (index, rel, [s, t, r, q]) = self.tex_reg()?;
            (tex.addr.src_addr, tex.addr.src_addr_rel) = (index, rel);
            (
                tex.addr.src_s_swiz,
                tex.addr.src_t_swiz,
                tex.addr.src_r_swiz,
                tex.addr.src_q_swiz,
            ) = (s, t, r, q);
        }
        let mut raw_items = Vec::new();
        while !self.at_end() {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return self.unknown_item();
            };
            match name.to_ascii_lowercase().as_str() {
                "unscaled" => (tex.inst.unscaled, self.pos) = (true, self.pos + 1),
                "acquire" => (tex.inst.sem_acquire, self.pos) = (true, self.pos + 1),
                "ignore_uncovered" => (tex.inst.ignore_uncovered, self.pos) = (true, self.pos + 1),
                "dx" | "dy" => {
                    self.pos += 1;
                    self.expect("=", "after dx/dy")?;
                    let (index, rel, [s, t, r, q]) = self.tex_reg()?;
                    let d = &mut tex.dxdy;
                    if name.eq_ignore_ascii_case("dx") {
                        (
                            d.dx_addr,
                            d.dx_addr_rel,
                            d.dx_s_swiz,
                            d.dx_t_swiz,
                            d.dx_r_swiz,
                            d.dx_q_swiz,
                        ) = (index, rel, s, t, r, q);
                    } else {
                        (
                            d.dy_addr,
                            d.dy_addr_rel,
                            d.dy_s_swiz,
                            d.dy_t_swiz,
                            d.dy_r_swiz,
                            d.dy_q_swiz,
                        ) = (index, rel, s, t, r, q);
                    }
                }
                _ if self.is_raw_field(&inst, &name) => {
                    raw_items.push(self.pos);
                    self.pos += 3;
                }
                _ => {
                    if !self.common_item(&mut inst)? {
                        return self.unknown_item();
                    }
                }
            }
        }
        inst.body = Body::Tex(tex);
        self.apply_raw(&mut inst, raw_items)?;
        Ok(inst)
    }

    /// `rN.xxxx` with a 4-channel swizzle (default rgba).
    fn tex_reg(&mut self) -> R<(u8, bool, [Chan; 4])> {
        let col = self.col();
        let (file, index, rel, suffix) = self.register_with_suffix("a temporary")?;
        if file != 'r' || index > 127 {
            return Err(err(
                self.line,
                col,
                "texture coordinates come from a temporary r0..r127".into(),
                None,
            ));
        }
        let swz = self.chan_swizzle(suffix.as_deref().unwrap_or("rgba"), col)?;
        Ok((index as u8, rel, swz))
    }

    fn chan_swizzle(&self, text: &str, col: usize) -> R<[Chan; 4]> {
        let v: Vec<Chan> = text
            .chars()
            .filter_map(|c| Chan::from_mnemonic(&c.to_string()))
            .collect();
        match v.as_slice() {
            [a, b, c, d] if text.chars().count() == 4 => Ok([*a, *b, *c, *d]),
            _ => Err(err(
                self.line,
                col,
                format!("bad swizzle `.{text}`"),
                Some("four of r g b a".into()),
            )),
        }
    }

    // --- FC -----------------------------------------------------------------

    fn fc(&mut self, t: &FcTemplate) -> R<Inst> {
        let mut inst = Inst::zeroed(InstType::Fc);
        inst.cmn.alu_wait = true;
        let mut fc = Fc::default();
        let i = &mut fc.inst;
        (
            i.op,
            i.jump_func,
            i.jump_any,
            i.a_op,
            i.b_op0,
            i.b_op1,
            i.b_pop_cnt,
            i.b_else,
        ) = (t.op, t.func, t.any, t.a_op, t.stay, t.jump, t.pop, t.b_else);
        // Integer constant `iN`.
        if let Some(Tok::Ident(s)) = self.peek()
            && let Some(n) = s.strip_prefix('i').and_then(|n| n.parse::<u32>().ok())
        {
            if n > 31 {
                return self.error(
                    format!("integer constant i{n} out of range"),
                    Some("i0..i31"),
                );
            }
            fc.addr.int_addr = n as u8;
            self.pos += 1;
        }
        // Condition.
        let cond_col = self.col();
        let mut had_cond = self.condition(&mut inst, &mut fc)?;
        // Target.
        if self.eat("->") {
            let col = self.col();
            let target =
                if self.eat("@") {
                    self.number("a target", (MAX_INSTS - 1) as u32)?
                } else {
                    let name = self.ident("a target (@N or a label)")?;
                    *self.labels.get(&name).ok_or_else(|| {
                        err(self.line, col, format!("unknown label `{name}`"), None)
                    })? as u32
                };
            if target as usize >= MAX_INSTS {
                return Err(err(
                    self.line,
                    col,
                    format!("target {target} out of range"),
                    Some("0..=511".into()),
                ));
            }
            fc.addr.jump_addr = target as u16;
        } else if !t.target_optional {
            return self.error(
                format!("{} needs a target", t.name),
                Some("-> @N or -> label"),
            );
        }
        // Options.
        let mut raw_items = Vec::new();
        while !self.at_end() {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return self.unknown_item();
            };
            let lower = name.to_ascii_lowercase();
            let flag = match lower.as_str() {
                "any" | "all" => Some((&mut fc.inst.jump_any, lower == "any")),
                "else" | "noelse" => Some((&mut fc.inst.b_else, lower == "else")),
                "global" => Some((&mut fc.addr.jump_global, true)),
                "ignore_uncovered" => Some((&mut fc.inst.ignore_uncovered, true)),
                _ => None,
            };
            if let Some((field, value)) = flag {
                *field = value;
                self.pos += 1;
                continue;
            }
            match lower.as_str() {
                "aop" => {
                    self.pos += 1;
                    self.expect("=", "after aop")?;
                    fc.inst.a_op = self.enum_ident(
                        "an address-stack operation",
                        AOp::from_mnemonic,
                        "none, push, pop",
                    )?;
                }
                "stay" | "jump" => {
                    self.pos += 1;
                    self.expect("=", "after stay/jump")?;
                    let op = self.enum_ident(
                        "a branch-counter operation",
                        BOp::from_mnemonic,
                        "none, incr, decr",
                    )?;
                    if lower == "stay" {
                        fc.inst.b_op0 = op;
                    } else {
                        fc.inst.b_op1 = op;
                    }
                }
                "pop" => {
                    self.pos += 1;
                    self.expect("=", "after pop")?;
                    fc.inst.b_pop_cnt = self.number("a pop count", 31)? as u8;
                }
                "func" => {
                    self.pos += 1;
                    self.expect("=", "after func")?;
                    fc.inst.jump_func = self.number("a jump function", 255)? as u8;
                    had_cond = true;
                }
                "bool" => {
                    self.pos += 1;
                    self.expect("=", "after bool")?;
                    fc.addr.bool_addr = self.number("a boolean index", 31)? as u8;
                }
                _ if self.is_raw_field(&inst, &name) => {
                    raw_items.push(self.pos);
                    self.pos += 3;
                }
                _ => {
                    if !self.common_item(&mut inst)? {
                        return self.error(
                            "unexpected flow-control option",
                            Some("any all else noelse global aop=… stay=… jump=… pop=N func=N bool=N, flags, or WORD.FIELD=value"),
                        );
                    }
                }
            }
        }
        if t.needs_cond && !had_cond {
            return Err(err(
                self.line,
                cond_col,
                format!("{} needs a jump condition", t.name),
                Some(
                    "alu_result == 0, alu_result != 0, p.r == 0, !p.g != 0, b3 == 0, … or func=N"
                        .into(),
                ),
            ));
        }
        inst.body = Body::Fc(fc);
        self.apply_raw(&mut inst, raw_items)?;
        Ok(inst)
    }

    /// `alu_result ==|!= 0`, `[!]p.X ==|!= 0`, `bN ==|!= 0`, `always`, `never`.
    fn condition(&mut self, inst: &mut Inst, fc: &mut Fc) -> R<bool> {
        let inv = matches!(self.peek(), Some(Tok::Punct("!")));
        let Some(Tok::Ident(name)) = self
            .toks
            .get(self.pos + inv as usize)
            .map(|t| t.tok.clone())
        else {
            return Ok(false);
        };
        let lower = name.to_ascii_lowercase();
        let input = if lower == "alu_result" && !inv {
            CondInput::Alu
        } else if let Some(ch) = lower.strip_prefix("p.") {
            let sel = match ch {
                "r" => PredSel::Rrrr,
                "g" => PredSel::Gggg,
                "b" => PredSel::Bbbb,
                "a" => PredSel::Aaaa,
                _ => {
                    return self.error(
                        format!("unknown predicate `{name}`"),
                        Some("p.r, p.g, p.b, p.a"),
                    );
                }
            };
            (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv) = (sel, inv);
            CondInput::Pred
        } else if let Some(n) = lower
            .strip_prefix('b')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|_| !inv)
        {
            if n > 31 {
                return self.error(format!("boolean b{n} out of range"), Some("b0..b31"));
            }
            fc.addr.bool_addr = n;
            CondInput::Bool
        } else if (lower == "always" || lower == "never") && !inv {
            self.pos += 1;
            fc.inst.jump_func = if lower == "always" { 0xFF } else { 0x00 };
            return Ok(true);
        } else {
            return Ok(false);
        };
        self.pos += 1 + inv as usize;
        let when_set = match self.peek() {
            Some(Tok::Punct("==")) => false,
            Some(Tok::Punct("!=")) => true,
            _ => return self.error("expected `== 0` or `!= 0`", None),
        };
        self.pos += 1;
        self.number("zero", 0)?;
        fc.inst.jump_func = CONDITIONS
            .iter()
            .find(|&&(_, i, s)| i == input && s == when_set)
            .map(|&(f, _, _)| f)
            .expect("every input has both senses");
        Ok(true)
    }
}

fn mask_bits(s: &str, chans: &[char]) -> Option<u8> {
    let mut bits = 0u8;
    let mut last = None;
    for c in s.chars() {
        let i = chans.iter().position(|&x| x == c)?;
        if last.is_some_and(|l| i <= l) {
            return None;
        }
        last = Some(i);
        bits |= 1 << i;
    }
    (!s.is_empty()).then_some(bits)
}

fn names<T: Copy + fmt::Display>(all: &[T]) -> String {
    all.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn nearest_inline(value: f32) -> String {
    let mut codes: Vec<u8> = (0..128).collect();
    codes.sort_by(|&a, &b| {
        (inline_value(a) - value)
            .abs()
            .total_cmp(&(inline_value(b) - value).abs())
    });
    let near: Vec<String> = codes[..2]
        .iter()
        .map(|&c| format!("{:?}", inline_value(c)))
        .collect();
    format!(
        "inline constants are 0..480 with a 3-bit mantissa (nearest: {}); use a constant register cN for others",
        near.join(", ")
    )
}
