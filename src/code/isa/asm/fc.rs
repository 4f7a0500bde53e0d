//! Flow-control statements: the constructs of `docs/isa.md` §6.9 by name.

use super::*;

// ----------------------------------------------------------------------------
// Flow-control constructs (docs/isa.md §6.9)

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

impl FcTemplate {
    /// A flow-control instruction with the construct's fields set (the
    /// target, condition and options still to come) and its body.
    pub(crate) fn instruction(&self) -> (Inst, Fc) {
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
        ) = (
            self.op,
            self.func,
            self.any,
            self.a_op,
            self.stay,
            self.jump,
            self.pop,
            self.b_else,
        );
        (inst, fc)
    }
}

/// The constructs of §6.9, in the order the disassembler prefers them.
#[rustfmt::skip]
pub(crate) const FC_TEMPLATES: [FcTemplate; 13] = {
    use AOp as A;
    use BOp as B;
    use FcOp as O;
    //  name            op            func  any    a_op     stay     jump     pop
    [
        FcTemplate { needs_cond: true, ..fc("IF", O::Jump, 0x0F, false, A::None, B::Incr, B::None, 0) },
        FcTemplate { b_else: true, ..fc("ELSE", O::Jump, 0x00, false, A::None, B::None, B::Decr, 1) },
        FcTemplate { target_optional: true, ..fc("ENDIF", O::Jump, 0x00, true, A::None, B::Decr, B::None, 1) },
        fc("LOOP",      O::Loop,      0x00, false, A::None, B::None, B::None, 0),
        fc("ENDLOOP",   O::EndLoop,   0xFF, true,  A::None, B::None, B::None, 0),
        fc("REP",       O::Rep,       0x00, false, A::None, B::None, B::None, 0),
        fc("ENDREP",    O::EndRep,    0xFF, true,  A::None, B::None, B::None, 0),
        fc("BREAKLOOP", O::BreakLoop, 0xFF, false, A::None, B::None, B::Decr, 0),
        fc("BREAKREP",  O::BreakRep,  0xFF, false, A::None, B::None, B::Decr, 0),
        fc("CONTINUE",  O::Continue,  0xFF, false, A::None, B::None, B::Decr, 0),
        fc("CALL",      O::Jump,      0xFF, true,  A::Push, B::None, B::None, 0),
        FcTemplate { target_optional: true, ..fc("RET", O::Jump, 0xFF, false, A::Pop, B::None, B::None, 0) },
        fc("JUMP",      O::Jump,      0xFF, false, A::None, B::None, B::None, 0),
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

impl Parser<'_> {
    // --- FC -----------------------------------------------------------------

    pub(super) fn fc(&mut self, t: &FcTemplate) -> R<Inst> {
        let (mut inst, mut fc) = t.instruction();
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
        let raw_items = self.fc_options(&mut inst, &mut fc, &mut had_cond)?;
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

    /// The options after a construct's target (flags, stack and counter
    /// operations, `pop=`, `func=`, `bool=`, common items); raw fields are
    /// returned by position, to apply once the body is complete. `func=`
    /// counts as a condition.
    fn fc_options(&mut self, inst: &mut Inst, fc: &mut Fc, had_cond: &mut bool) -> R<Vec<usize>> {
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
                    *had_cond = true;
                }
                "bool" => {
                    self.pos += 1;
                    self.expect("=", "after bool")?;
                    fc.addr.bool_addr = self.number("a boolean index", 31)? as u8;
                }
                _ if self.is_raw_field(inst, &name) => {
                    raw_items.push(self.pos);
                    self.pos += 3;
                }
                _ => {
                    if !self.common_item(inst)? {
                        return self.error(
                        "unexpected flow-control option",
                        Some("any all else noelse global aop=… stay=… jump=… pop=N func=N bool=N, flags, or WORD.FIELD=value"),
                    );
                    }
                }
            }
        }
        Ok(raw_items)
    }

    /// `alu_result ==|!= 0`, `[!]p.X ==|!= 0`, `bN ==|!= 0`, `always`, `never`.
    pub(super) fn condition(&mut self, inst: &mut Inst, fc: &mut Fc) -> R<bool> {
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
