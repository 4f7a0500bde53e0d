//! The text form of a shader, as [`super::assemble`] reads it back: one
//! statement per line, in the style of Microsoft's shader assembler
//! (`docs/d3d9.md` §2 lists the syntax).

use super::op::{Compare, Opcode, TEXLD_BIAS, TEXLD_PROJECT};
use super::{Dcl, DclKind, Def, Dst, IDENTITY, Inst, Item, Shader, Src, SrcMod, USAGES};
use std::fmt::Write;

const CHANNELS: [char; 4] = ['x', 'y', 'z', 'w'];

/// The shader as text, one statement per line.
pub fn disassemble(shader: &Shader) -> String {
    let mut out = String::new();
    out.push_str(shader.version.name());
    out.push('\n');
    for item in &shader.items {
        out.push_str(&item_text(item));
        out.push('\n');
    }
    out
}

/// One item as a line of text (no newline).
pub fn item_text(item: &Item) -> String {
    match item {
        Item::Comment(words) => {
            let mut s = String::from(".comment");
            for (k, w) in words.iter().enumerate() {
                let _ = write!(s, "{}{w:#010x}", if k == 0 { " " } else { ", " });
            }
            s
        }
        Item::Dcl(d) => dcl(d),
        Item::Def(d) => def(d),
        Item::Inst(i) => inst(i),
    }
}

/// A write mask: `.xy`; nothing for all four.
pub(super) fn mask(m: u8) -> String {
    if m & 0xF == 0xF {
        return String::new();
    }
    let mut s = String::from(".");
    for (c, ch) in CHANNELS.iter().enumerate() {
        if m & (1 << c) != 0 {
            s.push(*ch);
        }
    }
    s
}

/// A swizzle in its shortest form: nothing for `.xyzw`, `.x` for `.xxxx`,
/// trailing repeats left out (`.xyz` is `.xyzz`).
pub(super) fn swizzle(sw: u8) -> String {
    if sw == IDENTITY {
        return String::new();
    }
    let ch: Vec<usize> = (0..4).map(|c| super::swizzle_channel(sw, c)).collect();
    let mut n = 4;
    while n > 1 && ch[n - 1] == ch[n - 2] {
        n -= 1;
    }
    let mut s = String::from(".");
    for &c in &ch[..n] {
        s.push(CHANNELS[c]);
    }
    s
}

fn modifiers(d: &Dst) -> String {
    let mut s = String::new();
    if let Some(k) = [1, 2, 3, -1, -2, -3].iter().position(|&x| x == d.shift) {
        s.push('_');
        s.push_str(super::text::SHIFTS[k]);
    }
    if d.sat {
        s.push_str("_sat");
    }
    if d.pp {
        s.push_str("_pp");
    }
    if d.centroid {
        s.push_str("_centroid");
    }
    s
}

fn dst(d: &Dst) -> String {
    format!("{}{}", d.reg, mask(d.mask))
}

pub(super) fn src(s: &Src) -> String {
    let mut out = String::new();
    if s.modifier.negates() {
        out.push('-');
    }
    if s.modifier == SrcMod::Not {
        out.push('!');
    }
    if s.modifier == SrcMod::Comp {
        out.push_str("1-");
    }
    match s.rel {
        Some(rel) => {
            let base = s.reg.to_string();
            let letter = base.trim_end_matches(|c: char| c.is_ascii_digit());
            let _ = write!(out, "{letter}[{}{}", rel.reg, swizzle(rel.swizzle));
            if s.reg.num != 0 {
                let _ = write!(out, "+{}", s.reg.num);
            }
            out.push(']');
        }
        None => out.push_str(&s.reg.to_string()),
    }
    out.push_str(match s.modifier {
        SrcMod::Abs | SrcMod::AbsNeg => "_abs",
        SrcMod::Bias | SrcMod::BiasNeg => "_bias",
        SrcMod::Bx2 | SrcMod::Bx2Neg => "_bx2",
        SrcMod::X2 | SrcMod::X2Neg => "_x2",
        SrcMod::Dz => "_dz",
        SrcMod::Dw => "_dw",
        SrcMod::None | SrcMod::Neg | SrcMod::Comp | SrcMod::Not => "",
    });
    out.push_str(&swizzle(s.swizzle));
    out
}

fn dcl(d: &Dcl) -> String {
    let kind = match d.kind {
        DclKind::Plain => String::new(),
        DclKind::Usage { usage, index } => {
            format!("_{}{index}", USAGES[usize::from(usage)])
        }
        DclKind::Sampler(2) => "_2d".into(),
        DclKind::Sampler(3) => "_cube".into(),
        DclKind::Sampler(4) => "_volume".into(),
        DclKind::Sampler(t) => format!("_type{t}"),
    };
    format!("dcl{kind}{} {}", modifiers(&d.dst), dst(&d.dst))
}

/// A float for `def`: the shortest decimal that reads back to the same
/// bits; NaN and the infinities as their bit patterns.
pub(super) fn float(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if f.is_finite() {
        let s = format!("{f:?}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    } else {
        format!("{bits:#010x}")
    }
}

fn def(d: &Def) -> String {
    match *d {
        Def::Float(n, v) => format!(
            "def c{n}, {}, {}, {}, {}",
            float(v[0]),
            float(v[1]),
            float(v[2]),
            float(v[3])
        ),
        Def::Int(n, v) => format!("defi i{n}, {}, {}, {}, {}", v[0], v[1], v[2], v[3]),
        Def::Bool(n, b) => format!("defb b{n}, {b}"),
    }
}

/// The mnemonic with its comparison or lookup suffix.
pub(super) fn mnemonic(i: &Inst) -> String {
    match i.op {
        op if op.compares() => match Compare::from_code(i.control) {
            Some(c) => format!("{}_{}", op.name(), c.name()),
            None => op.name().into(),
        },
        Opcode::Tex if i.control == TEXLD_PROJECT => "texldp".into(),
        Opcode::Tex if i.control == TEXLD_BIAS => "texldb".into(),
        op => op.name_with(i.src.len()).into(),
    }
}

fn inst(i: &Inst) -> String {
    let mut s = String::new();
    if i.coissue {
        s.push('+');
    }
    if let Some(p) = &i.predicate {
        let _ = write!(s, "({}) ", src(p));
    }
    s.push_str(&mnemonic(i));
    if let Some(d) = &i.dst {
        s.push_str(&modifiers(d));
    }
    let mut ops: Vec<String> = i.dst.iter().map(dst).collect();
    ops.extend(i.src.iter().map(src));
    if !ops.is_empty() {
        s.push(' ');
        s.push_str(&ops.join(", "));
    }
    s
}
