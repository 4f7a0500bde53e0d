//! The compiler's instructions as DPP instructions ([`crate::isa::Inst`]),
//! field by field, with labels resolved to instruction indices — the same
//! fields the assembler sets for the statements [`super::program_text`]
//! lists (`docs/asm.md`; a test holds the two to each other).
//!
//! What the compiler builds always encodes; an `Err` here is a bug in the
//! compiler, reported as such.

use super::{Alu, Cond, Dpp, Dst, Fc, Lookup, Operand, Pred, Test, Unit, Val};
use crate::isa::asm::{CONDITIONS, CondInput, FC_TEMPLATES};
use crate::isa::{
    self, AlphaInput, AlphaOp, BOp, Body, Chan, CmpOp, Inst, InstType, Mod, Omod, PredSel,
    ResultSel, RgbInput, RgbOp, Sel, Src, SrcKind, Swz,
};
use std::collections::HashMap;

/// The instruction words of `code`.
pub fn encode(code: &[Dpp]) -> Result<Vec<u32>, String> {
    let mut labels = HashMap::new();
    let mut n = 0;
    for d in code {
        match d {
            Dpp::Label(l) => {
                labels.insert(l.as_str(), n);
            }
            _ => n += 1,
        }
    }
    let mut words = Vec::with_capacity(n * isa::WORDS_PER_INST);
    for d in code {
        let inst = match d {
            Dpp::Label(_) => continue,
            Dpp::Alu(a) => alu(a)?,
            Dpp::Tex(t) => tex(t)?,
            Dpp::Fc(f) => fc(f, &labels)?,
        };
        let w = inst.encode().map_err(|e| e.to_string())?;
        words.extend_from_slice(&w);
    }
    Ok(words)
}

/// The comparison code of a test.
fn cmp(t: Test) -> CmpOp {
    match t {
        Test::Eq => CmpOp::Eq,
        Test::Lt => CmpOp::Lt,
        Test::Ge => CmpOp::Ge,
        Test::Ne => CmpOp::Ne,
    }
}

/// Predicate selection `bit` replicated (0–3: r, g, b, a).
fn replicated(bit: u8) -> PredSel {
    [PredSel::Rrrr, PredSel::Gggg, PredSel::Bbbb, PredSel::Aaaa][usize::from(bit & 3)]
}

/// The selection and inversion of a predicate.
fn pred_sel(p: &Pred) -> Result<(PredSel, bool), String> {
    let sel = match p.chans {
        [0, 1, 2, 3] => PredSel::Rgba,
        [c, d, e, f] if c == d && d == e && e == f && c < 4 => replicated(c),
        other => return Err(format!("no predicate selection reads bits {other:?}")),
    };
    Ok((sel, p.not))
}

/// A source address.
fn src(o: Operand) -> Result<Src, String> {
    let (kind, rel) = match o {
        Operand::Temp(n) | Operand::TempRel(n) if n < 128 => {
            (SrcKind::Temp(n as u8), matches!(o, Operand::TempRel(_)))
        }
        Operand::Const(n) | Operand::ConstRel(n) if n < 256 => {
            (SrcKind::Const(n as u8), matches!(o, Operand::ConstRel(_)))
        }
        Operand::Inline(v) => match isa::inline_code(v) {
            Some(code) => (SrcKind::Inline(code), false),
            None => return Err(format!("{v} is not an inline constant")),
        },
        other => return Err(format!("{other} is out of range")),
    };
    Ok(Src { kind, rel })
}

/// A swizzle code (0–3 a channel, then 0, ½, 1).
fn swz(code: u8) -> Result<Swz, String> {
    Swz::ALL
        .get(usize::from(code))
        .copied()
        .ok_or_else(|| format!("swizzle code {code}"))
}

/// The sign modifier of a value.
fn modifier(v: &Val) -> Mod {
    match (v.neg, v.abs) {
        (false, false) => Mod::Nop,
        (true, false) => Mod::Neg,
        (false, true) => Mod::Abs,
        (true, true) => Mod::Nab,
    }
}

/// The output scale 2^omod.
fn omod(scale: i8) -> Result<Omod, String> {
    Ok(match scale {
        0 => Omod::X1,
        1 => Omod::X2,
        2 => Omod::X4,
        3 => Omod::X8,
        -1 => Omod::D2,
        -2 => Omod::D4,
        -3 => Omod::D8,
        _ => return Err(format!("output scale 2^{scale} does not exist")),
    })
}

/// The RGB unit's opcode for an operation.
fn rgb_op(u: &Unit) -> Result<RgbOp, String> {
    RgbOp::from_mnemonic(u.op.name())
        .ok_or_else(|| format!("`{}` is not an RGB operation", u.op.name()))
}

/// The alpha unit's opcode for an operation.
fn alpha_op(u: &Unit) -> Result<AlphaOp, String> {
    AlphaOp::from_mnemonic(u.op.name())
        .ok_or_else(|| format!("`{}` is not an alpha operation", u.op.name()))
}

/// The unit that computes nothing useful: `max.off(s0, s0)`, source 0
/// in its natural order.
fn idle() -> Unit {
    let s0 = Val {
        opnd: None,
        swz: [0, 1, 2, 3],
        neg: false,
        abs: false,
    };
    Unit::exact(super::AluOp::Max, vec![s0.clone(), s0], false)
}

/// One unit's operation, modifiers, inputs and destinations.
fn unit(
    inst: &mut Inst,
    body: &mut isa::Alu,
    u: &Unit,
    dsts: &[Dst],
    slots: &[Operand],
    rgb: bool,
) -> Result<(), String> {
    // Operation and modifiers.
    let (clamp, scale) = if rgb {
        body.rgba.op = rgb_op(u)?;
        (&mut inst.cmn.rgb_clamp, &mut body.rgb.omod)
    } else {
        body.alpha.op = alpha_op(u)?;
        (&mut inst.cmn.alpha_clamp, &mut body.alpha.omod)
    };
    *scale = omod(u.omod)?;
    if u.off {
        *scale = Omod::Disabled;
    }
    *clamp = u.sat;
    // Inputs: A, B, C from the shared slots.
    if u.inputs.len() > 3 {
        return Err("at most three inputs (A, B, C)".into());
    }
    for (n, v) in u.inputs.iter().enumerate() {
        let slot = match v.opnd {
            Some(o) if !v.is_constant() => slots
                .iter()
                .position(|s| *s == o)
                .ok_or("an operand outside the slots")?,
            _ => 0,
        };
        let sel = [Sel::Src0, Sel::Src1, Sel::Src2][slot];
        if rgb {
            let s = [swz(v.swz[0])?, swz(v.swz[1])?, swz(v.swz[2])?];
            body.set_rgb_input(
                n,
                RgbInput {
                    sel,
                    swz: s,
                    modifier: modifier(v),
                },
            );
        } else {
            let a = AlphaInput {
                sel,
                swz: swz(v.swz[3])?,
                modifier: modifier(v),
            };
            body.set_alpha_input(n, a);
        }
    }
    // Destinations.
    for d in dsts {
        match (*d, rgb) {
            (Dst::Temp(n, m), true) if n < 128 => {
                inst.cmn.rgb_wmask = m & 7;
                (body.rgba.addrd, body.rgba.addrd_rel) = (n as u8, false);
            }
            (Dst::Temp(n, _), false) if n < 128 => {
                inst.cmn.alpha_wmask = true;
                (body.alpha.addrd, body.alpha.addrd_rel) = (n as u8, false);
            }
            (Dst::Target(k, m), true) => (inst.cmn.rgb_omask, body.rgb.target) = (m & 7, k & 3),
            (Dst::Target(k, _), false) => (inst.cmn.alpha_omask, body.alpha.target) = (true, k & 3),
            (Dst::Depth, false) => body.alpha.w_omask = true,
            (Dst::Pred(m, t), true) => {
                (inst.cmn.rgb_omask, body.rgb.target) = (m & 7, cmp(t) as u8)
            }
            (Dst::Pred(_, t), false) => {
                (inst.cmn.alpha_omask, body.alpha.target) = (true, cmp(t) as u8)
            }
            (d, _) => {
                let unit = if rgb { "RGB" } else { "alpha" };
                return Err(format!("the {unit} unit cannot write {d}"));
            }
        }
        let wants = match d {
            Dst::Temp(..) => inst.cmn.ty,
            Dst::Target(..) | Dst::Depth => InstType::Out,
            Dst::Pred(..) => InstType::Alu,
        };
        if wants != inst.cmn.ty {
            return Err(format!("{d} in an instruction of type {:?}", inst.cmn.ty));
        }
    }
    Ok(())
}

/// An ALU or OUTPUT instruction.
fn alu(a: &Alu) -> Result<Inst, String> {
    let mut inst = Inst::zeroed(if a.out { InstType::Out } else { InstType::Alu });
    let mut body = isa::Alu::default();
    let slots = a.slots()?;
    let (rgb, alpha) = (
        a.rgb.clone().unwrap_or_else(idle),
        a.alpha.clone().unwrap_or_else(idle),
    );
    let none: &[Dst] = &[];
    let rgb_dst = if a.rgb.is_some() {
        &a.rgb_dst[..]
    } else {
        none
    };
    let alpha_dst = if a.alpha.is_some() {
        &a.alpha_dst[..]
    } else {
        none
    };
    unit(&mut inst, &mut body, &rgb, rgb_dst, &slots, true)?;
    unit(&mut inst, &mut body, &alpha, alpha_dst, &slots, false)?;
    for (k, o) in slots.iter().enumerate() {
        let s = src(*o)?;
        body.rgb_addr.set_src(k, s);
        body.alpha_addr.set_src(k, s);
    }
    if let Some(t) = a.res {
        inst.cmn.alu_result_sel = ResultSel::Alpha;
        inst.cmn.alu_result_op = cmp(t);
        body.rgb.alu_wmask = true;
    }
    if let Some(p) = &a.pred {
        (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv) = pred_sel(p)?;
    }
    if let Some(p) = &a.apred {
        (inst.cmn.alpha_pred_sel, inst.cmn.alpha_pred_inv) = pred_sel(p)?;
    }
    inst.cmn.tex_sem_wait = a.wait;
    inst.cmn.nop = a.nop;
    inst.cmn.last = a.last;
    inst.body = Body::Alu(body);
    Ok(inst)
}

/// A lookup or a kill.
fn tex(t: &Lookup) -> Result<Inst, String> {
    let mut inst = Inst::zeroed(InstType::Tex);
    let mut tex = isa::Tex::default();
    tex.inst.op = if t.kill {
        isa::TexOp::Kill
    } else {
        isa::TexOp::Ld
    };
    (inst.cmn.rgb_wmask, inst.cmn.alpha_wmask) = (t.mask & 7, t.mask & 8 != 0);
    (tex.addr.dst_addr, tex.addr.dst_addr_rel) = ((t.dst & 0x7F) as u8, false);
    tex.inst.tex_id = t.input & 15;
    let chan = |c: u8| Chan::ALL[usize::from(c & 3)];
    (
        tex.addr.dst_r_swiz,
        tex.addr.dst_g_swiz,
        tex.addr.dst_b_swiz,
        tex.addr.dst_a_swiz,
    ) = (
        chan(t.chan[0]),
        chan(t.chan[1]),
        chan(t.chan[2]),
        chan(t.chan[3]),
    );
    (tex.addr.src_addr, tex.addr.src_addr_rel) = ((t.coord & 0x7F) as u8, false);
    (
        tex.addr.src_s_swiz,
        tex.addr.src_t_swiz,
        tex.addr.src_r_swiz,
        tex.addr.src_q_swiz,
    ) = (Chan::R, Chan::G, Chan::B, Chan::A);
    tex.inst.unscaled = t.unscaled;
    tex.inst.sem_acquire = t.acquire;
    inst.cmn.tex_sem_wait = t.wait;
    if let Some(p) = &t.pred {
        (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv) = pred_sel(p)?;
    }
    if let Some(p) = &t.apred {
        (inst.cmn.alpha_pred_sel, inst.cmn.alpha_pred_inv) = pred_sel(p)?;
    }
    inst.body = Body::Tex(tex);
    Ok(inst)
}

/// A flow-control instruction, its target resolved.
fn fc(f: &Fc, labels: &HashMap<&str, usize>) -> Result<Inst, String> {
    let super::flow::Parts {
        name,
        int,
        cond,
        target,
        pop,
        jump_incr,
    } = f.flow.parts();
    let t = FC_TEMPLATES
        .iter()
        .find(|t| t.name == name)
        .expect("every construct has a template");
    let (mut inst, mut body) = t.instruction();
    if let Some(n) = int {
        if n > 31 {
            return Err(format!("integer constant i{n} out of range"));
        }
        body.addr.int_addr = n as u8;
    }
    if let Some(c) = cond {
        condition(c, &mut inst, &mut body);
    }
    if let Some(l) = target {
        let at = labels
            .get(l.as_str())
            .ok_or_else(|| format!("unknown label `{l}`"))?;
        body.addr.jump_addr = *at as u16;
    }
    if jump_incr {
        body.inst.b_op1 = BOp::Incr;
    }
    if let Some(p) = pop {
        body.inst.b_pop_cnt = u8::try_from(p)
            .ok()
            .filter(|&p| p <= 31)
            .ok_or("a pop count over 31")?;
    }
    inst.cmn.tex_sem_wait = f.wait;
    inst.cmn.nop = f.nop;
    inst.body = Body::Fc(body);
    Ok(inst)
}

/// Sets the jump function (and the boolean or predicate it reads) for
/// `cond`.
fn condition(cond: &Cond, inst: &mut Inst, body: &mut isa::Fc) {
    let (input, when_set) = match *cond {
        Cond::BoolFalse(n) => {
            body.addr.bool_addr = (n & 31) as u8;
            (CondInput::Bool, false)
        }
        Cond::ResultZero => (CondInput::Alu, false),
        Cond::ResultNonZero => (CondInput::Alu, true),
        Cond::PredZero { not, bit } | Cond::PredNonZero { not, bit } => {
            (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv) = (replicated(bit), not);
            (CondInput::Pred, matches!(cond, Cond::PredNonZero { .. }))
        }
    };
    body.inst.jump_func = CONDITIONS
        .iter()
        .find(|&&(_, i, s)| i == input && s == when_set)
        .map(|&(f, _, _)| f)
        .expect("every input has both senses");
}
