//! The text form of command streams (`docs/commands.md`): one packet per
//! line, its name and its parameter dwords, so that streams can be written
//! by hand, read in listings and replayed with `ctm exec`.
//!
//! ```text
//! # comment
//! set_inst_fmt  0x70000000 fmt:float32_4:0
//! set_out_fmt   0 0x70001000 fmt:float32_4:8 2   # output, base, format, height
//! set_cond_val  f:3.0
//! set_domain    0 0 7 1
//! start_program
//! flush_out_cache
//! .word 0x80000000                                # any raw dword
//! ```
//!
//! A parameter is a number (`0x…` or decimal), `f:X` (the bits of the f32
//! X) or `fmt:FORMAT:PITCH[:tiled][:gather]` (a format dword). Commands
//! whose one parameter is reserved may leave it out. The listing
//! [`disassemble_stream`] writes assembles back to the same words.

use super::command::{OPCODES, OpInfo, ParamKind, decode_packet};
use crate::mc::{Format, SurfaceFormat};
use std::fmt::Write;

/// A line of a text stream that does not assemble.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct StreamTextError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Each parameter dword's kind (a command without parameters: one
/// reserved dword).
fn kinds(info: &OpInfo) -> Vec<ParamKind> {
    let k: Vec<ParamKind> = info.fields.iter().flat_map(|f| f.kinds).copied().collect();
    if k.is_empty() {
        vec![ParamKind::Reserved]
    } else {
        k
    }
}

/// The parameters' names, as listings and errors show them.
fn names(info: &OpInfo) -> String {
    let n: Vec<&str> = info.fields.iter().map(|f| f.name).collect();
    n.join(", ")
}

fn number(t: &str) -> Option<u32> {
    let t = t.replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t
            .parse::<u32>()
            .ok()
            .or_else(|| t.parse::<i32>().ok().map(|v| v as u32)),
    }
}

fn parameter(t: &str) -> Result<u32, String> {
    if let Some(f) = t.strip_prefix("f:") {
        return f
            .parse::<f32>()
            .map(f32::to_bits)
            .map_err(|_| format!("`{t}`: expected f:FLOAT, e.g. f:1.5"));
    }
    if let Some(rest) = t.strip_prefix("fmt:") {
        let mut parts = rest.split(':');
        let bad = || format!("`{t}`: expected fmt:FORMAT:PITCH[:tiled][:gather]");
        let format = parts.next().and_then(Format::parse).ok_or_else(bad)?;
        let pitch = parts.next().and_then(number).ok_or_else(bad)?;
        if pitch > 0x1FFC || !pitch.is_multiple_of(4) {
            return Err(format!("`{t}`: the pitch is a multiple of 4, at most 8188"));
        }
        let mut f = SurfaceFormat::linear(format, pitch);
        for flag in parts {
            match flag {
                "tiled" => f.tiled = true,
                "gather" => f.gather = true,
                _ => return Err(bad()),
            }
        }
        return Ok(f.encode());
    }
    number(t).ok_or_else(|| format!("`{t}` is not a number (0x…, decimal, f:X or fmt:…)"))
}

/// Assembles a text stream into dwords.
///
/// ```
/// use ctm::pe::{Command, assemble_stream};
/// let words = assemble_stream("start_program\nflush_out_cache 0").unwrap();
/// assert_eq!(words, [Command::StartProgram.encode(), Command::FlushOutCache.encode()].concat());
/// ```
pub fn assemble_stream(text: &str) -> Result<Vec<u32>, StreamTextError> {
    let mut words = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let err = |message: String| StreamTextError {
            line: k + 1,
            message,
        };
        let line = line.split('#').next().unwrap_or("").trim();
        let mut tokens = line.split_whitespace();
        let Some(name) = tokens.next() else { continue };
        let args: Vec<&str> = tokens.collect();
        if name == ".word" {
            for a in args {
                words.push(number(a).ok_or_else(|| err(format!("`{a}` is not a dword")))?);
            }
            continue;
        }
        let info: &OpInfo = OPCODES
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                err(format!(
                    "unknown command `{name}` (docs/machine.md §3.3 lists them)"
                ))
            })?;
        let mut values = args
            .iter()
            .map(|a| parameter(a))
            .collect::<Result<Vec<u32>, _>>()
            .map_err(err)?;
        if values.is_empty() && info.fields.is_empty() {
            values.push(0);
        }
        if values.len() != info.params {
            let names = match names(info) {
                n if n.is_empty() => "reserved".to_string(),
                n => n,
            };
            return Err(err(format!(
                "{} takes {} parameter(s) ({names}), found {}",
                info.name,
                info.params,
                values.len()
            )));
        }
        words.push(super::header(info.op));
        words.extend(values);
    }
    Ok(words)
}

/// A format dword as `fmt:…`, or in hex if it sets reserved bits.
fn format_text(word: u32) -> String {
    match SurfaceFormat::decode(word) {
        Ok(f) if f.encode() == word => {
            let mut s = format!("fmt:{}:{}", f.format, f.pitch);
            if f.tiled {
                s += ":tiled";
            }
            if f.gather {
                s += ":gather";
            }
            s
        }
        _ => format!("{word:#010x}"),
    }
}

/// Lists a stream in the text form, one packet per line with its offset
/// and parameter names as a comment; words that do not decode become
/// `.word` lines (the rest of the stream with them).
pub fn disassemble_stream(words: &[u32]) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at < words.len() {
        match decode_packet(words, at) {
            Ok((None, n)) => {
                let _ = writeln!(out, ".word {:#010x}   # @{:#x}: filler", words[at], at * 4);
                at += n;
            }
            Ok((Some(cmd), n)) if words[at] & 0xFF != 0 => {
                // Reserved header bits the text form cannot say: the
                // packet's words as they are.
                let raw: Vec<String> = words[at..at + n]
                    .iter()
                    .map(|w| format!("{w:#010x}"))
                    .collect();
                let _ = writeln!(
                    out,
                    ".word {}   # @{:#x}: {} with reserved header bits set",
                    raw.join(" "),
                    at * 4,
                    cmd.op().info().name
                );
                at += n;
            }
            Ok((Some(cmd), n)) => {
                let info = cmd.op().info();
                let mut line = info.name.to_string();
                let spec = kinds(info);
                for (k, &w) in words[at + 1..at + n].iter().enumerate() {
                    let kind = spec.get(k).copied().unwrap_or(ParamKind::Number);
                    line += " ";
                    line += &match kind {
                        ParamKind::Address => format!("{w:#010x}"),
                        ParamKind::Format => format_text(w),
                        ParamKind::Float if !f32::from_bits(w).is_nan() => {
                            format!("f:{:?}", f32::from_bits(w))
                        }
                        ParamKind::Float => format!("{w:#010x}"),
                        ParamKind::Reserved if w == 0 => continue,
                        _ if w > 0xFFFF => format!("{w:#x}"),
                        _ => w.to_string(),
                    };
                }
                let _ = write!(out, "{line:<48} # @{:#x}", at * 4);
                if !info.fields.is_empty() {
                    let _ = write!(out, ": {}", names(info));
                }
                out.push('\n');
                at += n;
            }
            Err(e) => {
                let _ = writeln!(out, "# {e}");
                for w in &words[at..] {
                    let _ = writeln!(out, ".word {w:#010x}");
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pe::{Command, CommandBuffer};
    use crate::runtime::Domain;

    #[test]
    fn listings_assemble_back() {
        let mut cb = CommandBuffer::new();
        cb.push(Command::SetCondVal(2.5f32.to_bits()))
            .push(Command::SetDomain(Domain::new(8, 2)))
            .push(Command::SetOutFmt {
                output: 1,
                base: 0x7000_1000,
                fmt: SurfaceFormat::linear(Format::Uint8_4, 8),
                height: 2,
            })
            .push(Command::StartProgram)
            .push(Command::SetOutMask(0b1011));
        let mut words = cb.words().to_vec();
        words.push(0x8000_0000);
        words.push(0x1234_5678);
        let text = disassemble_stream(&words);
        assert!(text.contains("set_cond_val f:2.5"), "{text}");
        assert!(text.contains("fmt:uint8_4:8"), "{text}");
        assert_eq!(assemble_stream(&text).unwrap(), words, "{text}");
    }

    #[test]
    fn errors_name_the_line() {
        let e = assemble_stream("start_program\nset_domain 0 0 1").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains(
            "takes 4 parameter(s) (i0, j0, i1, j1 (bits 12:0 each; inclusive)), found 3"
        ));
        assert!(
            assemble_stream("bogus 1")
                .unwrap_err()
                .message
                .contains("unknown command")
        );
        assert!(assemble_stream("set_inst_fmt 0 fmt:float32_4:6").is_err());
    }
}
