//! The assembler: text in the syntax of `docs/asm.md` → instruction words.
//!
//! One statement per line. The readable forms cover the common fields; any
//! field of the encoding table can also be set by its qualified name
//! (`RGB_INST.OMOD=7`), which is how the disassembler expresses whatever the
//! readable form does not, so that every valid program round-trips.

use std::collections::HashMap;
use std::fmt;

mod alu;
mod fc;
mod tex;

pub(crate) use fc::{CONDITIONS, CondInput, FC_TEMPLATES, FcTemplate};

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

/// Largest source the assembler reads.
pub const MAX_SOURCE: usize = 16 << 20;
/// Longest line the assembler reads.
pub const MAX_LINE: usize = 64 << 10;

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
    assemble_source(text).map(|a| a.words)
}

/// A program assembled from a source file: its words and the directives that
/// describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    /// Instruction words.
    pub words: Vec<u32>,
    /// `.uncached` was given: the program writes uncached (UMRT) outputs.
    pub uncached: bool,
}

/// Assembles a source file. Besides statements it accepts the directive
/// `.uncached` on a line of its own (the program's OUTPUT instructions are
/// uncached writes, `docs/isa.md` §5.4).
///
/// ```
/// let a = ctm::isa::asm::assemble_source(".uncached\ntex nop acquire wait last").unwrap();
/// assert!(a.uncached);
/// assert_eq!(a.words.len(), 6);
/// ```
pub fn assemble_source(text: &str) -> Result<Assembled, AsmError> {
    if text.len() > MAX_SOURCE {
        return Err(err(
            1,
            1,
            format!(
                "{} bytes of source; at most {} MiB are read ({MAX_INSTS} instructions need far less)",
                text.len(),
                MAX_SOURCE >> 20
            ),
            None,
        ));
    }
    // Pass 1: tokenize, collect labels and count statements.
    let mut uncached = false;
    let mut lines = Vec::new();
    let mut labels = HashMap::new();
    let mut count = 0usize;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        if raw.len() > MAX_LINE {
            return Err(err(
                line,
                1,
                format!(
                    "a line of {} bytes; lines hold at most {MAX_LINE}",
                    raw.len()
                ),
                None,
            ));
        }
        let mut toks = tokenize(raw, line)?;
        let start = line_prefix(&toks, line, count, &mut labels)?;
        toks.drain(..start);
        if let [
            Token {
                tok: Tok::Ident(d), ..
            },
        ] = toks.as_slice()
            && d.eq_ignore_ascii_case(".uncached")
        {
            uncached = true;
            continue;
        }
        if !toks.is_empty() {
            // Stop at the first statement too many: a huge source is
            // rejected before it is all tokenised.
            if count == MAX_INSTS {
                return Err(err(
                    line,
                    1,
                    format!(
                        "instruction {} of more than {MAX_INSTS}: the instruction store holds {MAX_INSTS}",
                        count + 1
                    ),
                    None,
                ));
            }
            lines.push((line, toks, raw.chars().count()));
            count += 1;
        }
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
    Ok(Assembled { words, uncached })
}

/// The labels (`name:`, recorded at instruction `count`) and index
/// assertions (`@N:`) that start a line; returns how many tokens they take.
fn line_prefix(
    toks: &[Token],
    line: usize,
    count: usize,
    labels: &mut HashMap<String, usize>,
) -> Result<usize, AsmError> {
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
                        Some("remove the index prefix or fix the instructions before it".into()),
                    ));
                }
                start += 3;
            }
            _ => break,
        }
    }
    Ok(start)
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
