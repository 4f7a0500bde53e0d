//! The disassembler: instructions → the text syntax of `docs/asm.md`.
//!
//! Each instruction is printed in its readable form (flow control as the
//! named constructs of `docs/isa.md` §6.9 where they match). The text is then
//! parsed back; every field the readable form did not reproduce is appended
//! as a raw `WORD.FIELD=value` item. So `assemble(disassemble(p)) == p` holds
//! for every program by construction, and the raw items point out whatever is
//! unusual about an instruction.

use std::fmt::Write as _;

use super::asm::{CONDITIONS, CondInput, FC_TEMPLATES, FcTemplate, parse_inst};
use super::inst::*;
use super::layout::Domain;
use super::table::*;

/// Disassembles one instruction to a single line.
///
/// ```
/// use ctm::isa::{Inst, disasm::disassemble};
/// let inst = Inst::decode([0x00000402, 0, 0x02000F00, 0x000A0000, 0, 0]).unwrap();
/// assert_eq!(disassemble(&inst), "IF alu_result == 0 -> @10");
/// ```
pub fn disassemble(inst: &Inst) -> String {
    let pretty = match &inst.body {
        Body::Alu(a) => alu_text(inst, a),
        Body::Fc(f) => fc_text(inst, f),
        Body::Tex(t) => tex_text(inst, t),
    };
    let mut text = pretty.clone();
    if let Ok(parsed) = parse_inst(&pretty)
        && parsed.slots() == inst.slots()
    {
        for (slot, info, value) in inst.fields() {
            let index = slot
                .fields
                .iter()
                .position(|f| f == info)
                .expect("field of its slot");
            if parsed.get_field(slot.index, index) != value {
                let shown = match info.domain {
                    Domain::Enum(_) => info
                        .value_name(value)
                        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                        .map_or_else(|| value.to_string(), str::to_string),
                    _ => value.to_string(),
                };
                write!(text, " {}.{}={}", slot.name, info.name, shown).expect("write to String");
            }
        }
    }
    // The readable form must never lose information: if it does not parse back
    // to the same instruction (a bug), fall back to the raw words.
    match parse_inst(&text) {
        Ok(back) if back == *inst => text,
        _ => {
            let w = inst.encode().expect("decoded instructions encode");
            words_text(&w)
        }
    }
}

/// Options for [`disassemble_program`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Print the hex words and every field of every instruction as comments.
    pub verbose: bool,
}

/// Disassembles a program (6 words per instruction), one line per
/// instruction, each prefixed with its index `@N:`. Slots that do not decode
/// are printed as `.words` with the decode error as a comment, so the output
/// always assembles back to the same words.
pub fn disassemble_program(words: &[u32], options: Options) -> String {
    let mut out = String::new();
    for (i, chunk) in words.chunks(WORDS_PER_INST).enumerate() {
        let mut w = [0u32; 6];
        w[..chunk.len()].copy_from_slice(chunk);
        let prefix = format!("@{i}:");
        match Inst::decode(w) {
            Ok(inst) => {
                writeln!(out, "{prefix:<5} {}", disassemble(&inst)).expect("write to String");
                if options.verbose {
                    verbose_fields(&mut out, &inst, &w);
                }
            }
            Err(e) => {
                let e = DecodeError {
                    index: Some(i),
                    ..e
                };
                writeln!(out, "{prefix:<5} {}  ; {e}", words_text(&w)).expect("write to String");
            }
        }
    }
    out
}

fn verbose_fields(out: &mut String, inst: &Inst, w: &[u32; 6]) {
    let hex: Vec<String> = w.iter().map(|x| format!("{x:08X}")).collect();
    writeln!(out, "      ;   words {}", hex.join(" ")).expect("write to String");
    for slot in inst.slots() {
        if slot.fields.is_empty() {
            continue;
        }
        let mut line = format!("      ;   {:<10}", slot.name);
        for (index, info) in slot.fields.iter().enumerate() {
            let v = inst.get_field(slot.index, index);
            match info.value_name(v) {
                Some(n) => write!(line, " {}={}({})", info.name, v, n),
                None => write!(line, " {}={}", info.name, v),
            }
            .expect("write to String");
        }
        writeln!(out, "{line}").expect("write to String");
    }
}

fn words_text(w: &[u32; 6]) -> String {
    let hex: Vec<String> = w.iter().map(|x| format!("0x{x:08X}")).collect();
    format!(".words {}", hex.join(" "))
}

// ----------------------------------------------------------------------------
// Shared pieces

fn reg(file: char, index: u8, rel: bool) -> String {
    if rel {
        format!("{file}[aL+{index}]")
    } else {
        format!("{file}{index}")
    }
}

fn mask_text(bits: u8, chans: &str) -> String {
    let s: String = chans
        .chars()
        .enumerate()
        .filter(|(i, _)| bits >> i & 1 != 0)
        .map(|(_, c)| c)
        .collect();
    if s.is_empty() { "_".into() } else { s }
}

fn src_text(src: Src) -> String {
    match src.kind {
        SrcKind::Temp(n) => reg('r', n, src.rel),
        SrcKind::Const(n) => reg('c', n, src.rel),
        SrcKind::Inline(code) => format!("{:?}", inline_value(code)),
    }
}

fn modified(text: String, m: Mod) -> String {
    match m {
        Mod::Nop => text,
        Mod::Neg => format!("-{text}"),
        Mod::Abs => format!("abs({text})"),
        Mod::Nab => format!("-abs({text})"),
    }
}

fn flags(inst: &Inst, out: &mut String, rgb_pred: bool, alu_wait: bool) {
    let c = &inst.cmn;
    for (on, name) in [
        (c.tex_sem_wait, "wait"),
        (c.last, "last"),
        (c.nop, "nop"),
        (c.write_inactive, "wi"),
    ] {
        if on {
            write!(out, " {name}").expect("write to String");
        }
    }
    if alu_wait && c.alu_wait {
        out.push_str(" alu_wait");
    }
    let pred =
        |sel: PredSel, inv: bool| format!("{}{}", if inv { "!" } else { "" }, sel.mnemonic());
    if rgb_pred && c.rgb_pred_sel != PredSel::None {
        write!(out, " pred={}", pred(c.rgb_pred_sel, c.rgb_pred_inv)).expect("write to String");
    }
    if c.alpha_pred_sel != PredSel::None {
        write!(out, " apred={}", pred(c.alpha_pred_sel, c.alpha_pred_inv))
            .expect("write to String");
    }
}

// ----------------------------------------------------------------------------
// ALU / OUTPUT

const CMP: [&str; 4] = ["==", "<", ">=", "!="];
const TARGETS: [&str; 4] = ["A", "B", "C", "D"];

fn alu_text(inst: &Inst, a: &Alu) -> String {
    let c = &inst.cmn;
    let out = c.ty == InstType::Out;
    let mut s = String::from(if out { "out " } else { "alu " });
    let mut read = rgb_unit(inst, a, &mut s);
    s.push_str(" | ");
    for sel in alpha_unit(inst, a, &mut s) {
        read[sel as usize] = true;
    }
    sources(a, read, &mut s);
    if a.rgb.alu_wmask {
        write!(
            s,
            " res={}{}0",
            c.alu_result_sel, CMP[c.alu_result_op as usize]
        )
        .expect("write to String");
    }
    flags(inst, &mut s, true, true);
    s
}

/// The RGB unit's destinations, operation and inputs; returns which
/// sources its printed inputs read.
fn rgb_unit(inst: &Inst, a: &Alu, s: &mut String) -> [bool; 4] {
    let c = &inst.cmn;
    let out = c.ty == InstType::Out;
    let mut dests = Vec::new();
    if c.rgb_wmask != 0 {
        dests.push(format!(
            "{}.{}",
            reg('r', a.rgba.addrd, a.rgba.addrd_rel),
            mask_text(c.rgb_wmask, "rgb")
        ));
    }
    if c.rgb_omask != 0 {
        let m = mask_text(c.rgb_omask, "rgb");
        let t = usize::from(a.rgb.target & 3);
        dests.push(if out {
            format!("rt{}.{m}", TARGETS[t])
        } else {
            format!("p.{m}{}0", CMP[t])
        });
    }
    let natural = [Swz::R, Swz::G, Swz::B];
    let inputs: Vec<RgbInput> = (0..3).map(|i| a.rgb_input(i)).collect();
    let n = arg_count(a.rgba.op.arity(), &inputs);
    let args: Vec<String> = inputs[..n]
        .iter()
        .map(|x| {
            let mut t = x.sel.mnemonic().to_string();
            if x.swz != natural {
                t.push('.');
                t.extend(x.swz.iter().map(|z| z.mnemonic()));
            }
            modified(t, x.modifier)
        })
        .collect();
    unit_text(
        s,
        &dests,
        a.rgba.op.mnemonic(),
        a.rgb.omod,
        c.rgb_clamp,
        &args,
    );
    let mut read = [false; 4];
    for x in &inputs[..n] {
        read[x.sel as usize] = true;
    }
    read
}

/// The alpha unit's destinations, operation and inputs; returns the
/// sources its printed inputs read.
fn alpha_unit(inst: &Inst, a: &Alu, s: &mut String) -> Vec<Sel> {
    let c = &inst.cmn;
    let out = c.ty == InstType::Out;
    let mut dests = Vec::new();
    if c.alpha_wmask {
        dests.push(format!("{}.a", reg('r', a.alpha.addrd, a.alpha.addrd_rel)));
    }
    if c.alpha_omask {
        let t = usize::from(a.alpha.target & 3);
        dests.push(if out {
            format!("rt{}.a", TARGETS[t])
        } else {
            format!("p.a{}0", CMP[t])
        });
    }
    if a.alpha.w_omask {
        dests.push("depth".into());
    }
    let inputs: Vec<AlphaInput> = (0..3).map(|i| a.alpha_input(i)).collect();
    let n = arg_count(a.alpha_arity(), &inputs);
    let args: Vec<String> = inputs[..n]
        .iter()
        .map(|x| {
            let mut t = x.sel.mnemonic().to_string();
            if x.swz != Swz::A {
                t.push('.');
                t.push_str(x.swz.mnemonic());
            }
            modified(t, x.modifier)
        })
        .collect();
    unit_text(
        s,
        &dests,
        a.alpha.op.mnemonic(),
        a.alpha.omod,
        c.alpha_clamp,
        &args,
    );
    inputs[..n].iter().map(|x| x.sel).collect()
}

/// The sources the printed inputs read (or that are not r0), and the
/// presubtract operation when it is read or not the default.
fn sources(a: &Alu, mut read: [bool; 4], s: &mut String) {
    let derivative = matches!(a.rgba.op, RgbOp::Mdh | RgbOp::Mdv)
        || matches!(a.alpha.op, AlphaOp::Mdh | AlphaOp::Mdv);
    read[0] |= read[3] || derivative;
    read[1] |= read[3];
    let r0 = Src {
        kind: SrcKind::Temp(0),
        rel: false,
    };
    for (k, &is_read) in read.iter().enumerate().take(3) {
        let (rgb, alpha) = (a.rgb_addr.src(k), a.alpha_addr.src(k));
        if is_read || rgb != r0 || alpha != r0 {
            write!(s, " src{k}={}", src_text(rgb)).expect("write to String");
            if alpha != rgb {
                write!(s, "/{}", src_text(alpha)).expect("write to String");
            }
        }
    }
    let (pr, pa) = (a.rgb_addr.srcp_op, a.alpha_addr.srcp_op);
    if read[3] || pr != SrcpOp::Bias || pa != SrcpOp::Bias {
        write!(s, " srcp={pr}").expect("write to String");
        if pa != pr {
            write!(s, "/{pa}").expect("write to String");
        }
    }
}

/// Inputs to print: the operation's arity, or more if later inputs are set.
fn arg_count<T: Default + PartialEq>(arity: usize, inputs: &[T]) -> usize {
    let used = inputs
        .iter()
        .rposition(|x| *x != T::default())
        .map_or(0, |i| i + 1);
    arity.max(used)
}

fn unit_text(s: &mut String, dests: &[String], op: &str, omod: Omod, clamp: bool, args: &[String]) {
    if dests.is_empty() {
        s.push('_');
    } else {
        s.push_str(&dests.join(" "));
    }
    write!(s, " = {op}").expect("write to String");
    if omod != Omod::X1 {
        write!(s, ".{omod}").expect("write to String");
    }
    if clamp {
        s.push_str(".sat");
    }
    write!(s, "({})", args.join(", ")).expect("write to String");
}

// ----------------------------------------------------------------------------
// TEX

fn chans(c: [Chan; 4]) -> String {
    c.iter().map(|x| x.mnemonic()).collect()
}

fn tex_text(inst: &Inst, t: &Tex) -> String {
    let c = &inst.cmn;
    let mut s = format!("tex {}", t.inst.op);
    let wmask = c.rgb_wmask | (u8::from(c.alpha_wmask) << 3);
    let operands =
        t.inst.op != TexOp::Nop || wmask != 0 || t.inst.tex_id != 0 || t.addr != TexAddr::default();
    if operands {
        let a = &t.addr;
        write!(
            s,
            " {}.{}, in{}.{}, {}.{}",
            reg('r', a.dst_addr, a.dst_addr_rel),
            mask_text(wmask, "rgba"),
            t.inst.tex_id,
            chans([a.dst_r_swiz, a.dst_g_swiz, a.dst_b_swiz, a.dst_a_swiz]),
            reg('r', a.src_addr, a.src_addr_rel),
            chans([a.src_s_swiz, a.src_t_swiz, a.src_r_swiz, a.src_q_swiz]),
        )
        .expect("write to String");
    }
    let d = &t.dxdy;
    if *d != TexDxdy::default() {
        write!(
            s,
            " dx={}.{} dy={}.{}",
            reg('r', d.dx_addr, d.dx_addr_rel),
            chans([d.dx_s_swiz, d.dx_t_swiz, d.dx_r_swiz, d.dx_q_swiz]),
            reg('r', d.dy_addr, d.dy_addr_rel),
            chans([d.dy_s_swiz, d.dy_t_swiz, d.dy_r_swiz, d.dy_q_swiz]),
        )
        .expect("write to String");
    }
    for (on, name) in [
        (t.inst.unscaled, "unscaled"),
        (t.inst.sem_acquire, "acquire"),
        (t.inst.ignore_uncovered, "ignore_uncovered"),
    ] {
        if on {
            write!(s, " {name}").expect("write to String");
        }
    }
    flags(inst, &mut s, true, true);
    s
}

// ----------------------------------------------------------------------------
// FC

/// The condition text for a jump function, and whether it consumed the FC
/// predicate selection (`RGB_PRED_SEL/INV`) or `BOOL_ADDR`.
fn condition(inst: &Inst, f: &Fc) -> Option<(String, CondInput)> {
    let func = f.inst.jump_func;
    match func {
        0xFF => return Some(("always".into(), CondInput::Alu)),
        0x00 => return Some(("never".into(), CondInput::Alu)),
        _ => {}
    }
    let &(_, input, when_set) = CONDITIONS.iter().find(|&&(v, _, _)| v == func)?;
    let rel = if when_set { "!= 0" } else { "== 0" };
    let subject = match input {
        CondInput::Alu => "alu_result".to_string(),
        CondInput::Bool => format!("b{}", f.addr.bool_addr),
        CondInput::Pred => {
            let ch = match inst.cmn.rgb_pred_sel {
                PredSel::Rrrr => 'r',
                PredSel::Gggg => 'g',
                PredSel::Bbbb => 'b',
                PredSel::Aaaa => 'a',
                _ => return None,
            };
            format!("{}p.{ch}", if inst.cmn.rgb_pred_inv { "!" } else { "" })
        }
    };
    Some((format!("{subject} {rel}"), input))
}

fn fc_text(inst: &Inst, f: &Fc) -> String {
    FC_TEMPLATES
        .iter()
        .filter(|t| t.op == f.inst.op)
        .map(|t| fc_with(inst, f, t))
        .min_by_key(|(_, deviations)| *deviations)
        .map(|(text, _)| text)
        .expect("every FC operation has a construct")
}

/// The instruction written as construct `t`, and how many options it needed.
fn fc_with(inst: &Inst, f: &Fc, t: &FcTemplate) -> (String, usize) {
    let i = &f.inst;
    let mut s = t.name.to_string();
    let mut deviations = 0;
    let loop_op = matches!(i.op, FcOp::Loop | FcOp::EndLoop | FcOp::Rep | FcOp::EndRep);
    if loop_op || f.addr.int_addr != 0 {
        write!(s, " i{}", f.addr.int_addr).expect("write to String");
    }
    let mut consumed = None;
    let mut raw_func = false;
    if t.needs_cond || i.jump_func != t.func {
        match condition(inst, f) {
            Some((text, input)) => {
                write!(s, " {text}").expect("write to String");
                consumed = Some(input);
            }
            None => raw_func = true,
        }
        deviations += usize::from(i.jump_func != t.func);
    }
    if !(t.target_optional && f.addr.jump_addr == 0) {
        write!(s, " -> @{}", f.addr.jump_addr).expect("write to String");
    }
    let mut opt = |on: bool, text: String| {
        if on {
            s.push(' ');
            s.push_str(&text);
            deviations += 1;
        }
    };
    opt(raw_func, format!("func={:#04x}", i.jump_func));
    opt(
        i.jump_any != t.any,
        (if i.jump_any { "any" } else { "all" }).into(),
    );
    opt(i.a_op != t.a_op, format!("aop={}", i.a_op));
    opt(i.b_op0 != t.stay, format!("stay={}", i.b_op0));
    opt(i.b_op1 != t.jump, format!("jump={}", i.b_op1));
    opt(i.b_pop_cnt != t.pop, format!("pop={}", i.b_pop_cnt));
    opt(
        i.b_else != t.b_else,
        (if i.b_else { "else" } else { "noelse" }).into(),
    );
    opt(f.addr.jump_global, "global".into());
    opt(i.ignore_uncovered, "ignore_uncovered".into());
    opt(
        f.addr.bool_addr != 0 && consumed != Some(CondInput::Bool),
        format!("bool={}", f.addr.bool_addr),
    );
    flags(inst, &mut s, consumed != Some(CondInput::Pred), false);
    (s, deviations)
}
