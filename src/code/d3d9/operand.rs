//! Operands of the text form: numbers, registers, destinations with write
//! masks, sources with swizzles, modifiers and relative addressing
//! (`docs/d3d9.md` §2).

use super::text::{Parser, TextError};
use super::{Dst, IDENTITY, Reg, RegKind, Rel, Src, SrcMod};

impl Parser<'_> {
    pub(super) fn int(&self, at: usize, t: &str) -> Result<i64, TextError> {
        let bad = || self.err_at(at, format!("`{t}` is not an integer"));
        let (neg, body) = match t.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, t),
        };
        let v = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            Some(h) => i64::from_str_radix(h, 16).map_err(|_| bad())?,
            None => body.parse::<i64>().map_err(|_| bad())?,
        };
        if v > i64::from(u32::MAX) {
            return Err(self.err_at(at, format!("`{t}` does not fit 32 bits")));
        }
        Ok(if neg { -v } else { v })
    }

    /// A float value: decimal, or `0x…` for its bit pattern.
    pub(super) fn float(&self, at: usize, t: &str) -> Result<u32, TextError> {
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return u32::from_str_radix(h, 16)
                .map_err(|_| self.err_at(at, format!("`{t}` is not a 32-bit pattern")));
        }
        let f: f32 = t
            .parse()
            .map_err(|_| self.err_at(at, format!("`{t}` is not a number")))?;
        Ok(f.to_bits())
    }

    /// A register name (no modifiers).
    pub(super) fn reg(&self, at: usize, t: &str) -> Result<Reg, TextError> {
        let lower = t.to_ascii_lowercase();
        let named = match lower.as_str() {
            "odepth" => Some(Reg::new(RegKind::DepthOut, 0)),
            "al" => Some(Reg::new(RegKind::Loop, 0)),
            "vpos" => Some(Reg::new(RegKind::Misc, 0)),
            "vface" => Some(Reg::new(RegKind::Misc, 1)),
            _ => None,
        };
        if let Some(r) = named {
            return Ok(r);
        }
        let letters = lower.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = &lower[letters.len()..];
        let kind = match letters {
            "r" => RegKind::Temp,
            "v" => RegKind::Input,
            "c" => RegKind::Const,
            "t" => RegKind::Texture,
            "i" => RegKind::ConstInt,
            "b" => RegKind::ConstBool,
            "s" => RegKind::Sampler,
            "oc" => RegKind::ColorOut,
            "l" => RegKind::Label,
            "p" => RegKind::Predicate,
            _ => return Err(self.err_at(at, format!("`{t}` is not a register"))),
        };
        let num = digits
            .parse::<u16>()
            .ok()
            .filter(|&n| n < 2048)
            .ok_or_else(|| self.err_at(at, format!("`{t}`: expected a register number")))?;
        Ok(Reg::new(kind, num))
    }

    pub(super) fn dst(&self, at: usize, t: &str) -> Result<Dst, TextError> {
        let (name, mask) = match t.split_once('.') {
            Some((n, m)) => (n, Some(m)),
            None => (t, None),
        };
        let reg = self.reg(at, name.trim())?;
        let mask = match mask {
            None => 0xF,
            Some(m) => {
                let mut bits = 0u8;
                let mut last = -1i32;
                for c in m.chars() {
                    let k = channel(c).ok_or_else(|| {
                        self.err_at(at, format!("`{m}`: a write mask is x, y, z, w in order"))
                    })?;
                    if k as i32 <= last {
                        return Err(
                            self.err_at(at, format!("`{m}`: a write mask is x, y, z, w in order"))
                        );
                    }
                    last = k as i32;
                    bits |= 1 << k;
                }
                if bits == 0 {
                    return Err(self.err_at(at, "empty write mask"));
                }
                bits
            }
        };
        Ok(Dst {
            reg,
            mask,
            sat: false,
            pp: false,
            centroid: false,
            shift: 0,
        })
    }

    pub(super) fn swizzle(&self, at: usize, s: &str) -> Result<u8, TextError> {
        let chans: Vec<usize> = s
            .chars()
            .map(channel)
            .collect::<Option<_>>()
            .filter(|v: &Vec<usize>| (1..=4).contains(&v.len()))
            .ok_or_else(|| self.err_at(at, format!("`.{s}` is not a swizzle (1–4 of x y z w)")))?;
        let mut sw = 0u8;
        for c in 0..4 {
            let k = chans[c.min(chans.len() - 1)];
            sw |= (k as u8) << (2 * c);
        }
        Ok(sw)
    }

    /// Splits a source after its prefixes into its register's text (with
    /// a relative address's offset folded in: `c[aL+3]`, `c[3+aL]`,
    /// `c3[aL]`, `v[aL]`), the relative address and what follows.
    fn relative<'t>(
        &self,
        at: usize,
        body: &'t str,
    ) -> Result<(String, Option<Rel>, &'t str), TextError> {
        let Some(open) = body.find('[') else {
            return Ok(match body.find('.') {
                Some(dot) => (body[..dot].to_string(), None, &body[dot..]),
                None => (body.to_string(), None, ""),
            });
        };
        let close = body[open..]
            .find(']')
            .map(|c| open + c)
            .ok_or_else(|| self.err_at(at, "expected `]`"))?;
        let inside = &body[open + 1..close];
        let mut offset = 0u16;
        let mut al = None;
        for term in inside.split('+') {
            let term = term.trim();
            if term.to_ascii_lowercase().starts_with("al") {
                let sw = match term.split_once('.') {
                    Some((_, s)) => self.swizzle(at, s)?,
                    None => IDENTITY,
                };
                al = Some(sw);
            } else {
                offset += term
                    .parse::<u16>()
                    .ok()
                    .filter(|&n| n < 2048)
                    .ok_or_else(|| self.err_at(at, format!("`{term}`: expected aL or a number")))?;
            }
        }
        let sw = al.ok_or_else(|| self.err_at(at, "relative addressing needs aL"))?;
        let base = &body[..open];
        let letters = base.trim_end_matches(|c: char| c.is_ascii_digit());
        let n: u16 = base[letters.len()..].parse().unwrap_or(0);
        let rel = Rel {
            reg: Reg::new(RegKind::Loop, 0),
            swizzle: sw,
        };
        Ok((
            format!("{letters}{}", n + offset),
            Some(rel),
            &body[close + 1..],
        ))
    }

    pub(super) fn src(&self, at: usize, t: &str) -> Result<Src, TextError> {
        let mut body = t;
        // Prefixes: `-`, `!` (the predicate), `1-` (ps_1_x's complement).
        let (mut neg, mut not, mut comp) = (false, false, false);
        if let Some(b) = body.strip_prefix('-') {
            neg = true;
            body = b.trim_start();
        } else if let Some(b) = body.strip_prefix('!') {
            not = true;
            body = b.trim_start();
        } else if let Some(b) = body
            .strip_prefix('1')
            .and_then(|b| b.trim_start().strip_prefix('-'))
        {
            comp = true;
            body = b.trim_start();
        }
        let (base_text, rel, tail) = self.relative(at, body)?;
        // A modifier suffix after the register (`t0_bx2`, `c[aL]_abs`) or
        // after its swizzle (`r0.a_bias`).
        let mut suffix = None;
        let mut name = base_text.as_str();
        if let Some((n, m)) = split_suffix(name) {
            name = n;
            suffix = Some(m);
        }
        let mut tail = tail.trim();
        if let Some((m, rest)) = SUFFIXES
            .iter()
            .find_map(|m| tail.strip_prefix(m).map(|r| (*m, r)))
        {
            if suffix.is_some() {
                return Err(self.err_at(at, "two modifier suffixes"));
            }
            suffix = Some(m);
            tail = rest;
        }
        let mut swizzle_text = tail.strip_prefix('.');
        if let Some(sw) = swizzle_text
            && let Some((sw, m)) = split_suffix(sw)
        {
            if suffix.is_some() {
                return Err(self.err_at(at, "two modifier suffixes"));
            }
            suffix = Some(m);
            swizzle_text = Some(sw);
        }
        let modifier = match (suffix, neg, comp) {
            (Some(_), _, true) => {
                return Err(self.err_at(at, "`1-` does not combine with another modifier"));
            }
            (None, false, false) if not => SrcMod::Not,
            (None, false, false) => SrcMod::None,
            (None, true, _) => SrcMod::Neg,
            (None, false, true) => SrcMod::Comp,
            (Some("_abs"), n, _) => [SrcMod::Abs, SrcMod::AbsNeg][usize::from(n)],
            (Some("_bias"), n, _) => [SrcMod::Bias, SrcMod::BiasNeg][usize::from(n)],
            (Some("_bx2"), n, _) => [SrcMod::Bx2, SrcMod::Bx2Neg][usize::from(n)],
            (Some("_x2"), n, _) => [SrcMod::X2, SrcMod::X2Neg][usize::from(n)],
            (Some(m), true, _) => {
                return Err(self.err_at(at, format!("`-` does not combine with `{m}`")));
            }
            (Some("_dz" | "_db"), false, _) => SrcMod::Dz,
            (Some(_), false, _) => SrcMod::Dw,
        };
        if not && suffix.is_some() {
            return Err(self.err_at(at, "`!` takes no other modifier"));
        }
        if modifier == SrcMod::Not && !name.eq_ignore_ascii_case("p0") {
            return Err(self.err_at(at, "`!` applies only to the predicate register p0"));
        }
        let reg = self.reg(at, name.trim())?;
        let swizzle = match swizzle_text {
            Some(s) => self.swizzle(at, s)?,
            None if tail.is_empty() => IDENTITY,
            None => return Err(self.err_at(at, format!("unexpected `{tail}`"))),
        };
        Ok(Src {
            reg,
            rel,
            swizzle,
            modifier,
        })
    }
}

/// The source modifier suffixes of the text form (`_db` is `_dz`, `_da`
/// is `_dw`).
const SUFFIXES: [&str; 8] = ["_abs", "_bias", "_bx2", "_x2", "_dz", "_db", "_dw", "_da"];

/// `name` without a modifier suffix it ends with, and the suffix.
fn split_suffix(name: &str) -> Option<(&str, &'static str)> {
    let lower = name.to_ascii_lowercase();
    SUFFIXES
        .iter()
        .find(|m| lower.ends_with(*m))
        .map(|m| (&name[..name.len() - m.len()], *m))
}

pub(super) fn channel(c: char) -> Option<usize> {
    match c.to_ascii_lowercase() {
        'x' | 'r' => Some(0),
        'y' | 'g' => Some(1),
        'z' | 'b' => Some(2),
        'w' | 'a' => Some(3),
        _ => None,
    }
}
