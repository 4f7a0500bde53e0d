//! The IR's text form (`ctm ir`).

use super::*;
use std::fmt;

impl fmt::Display for V {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rel {
            write!(f, "[aL+{}]", self.base)
        } else {
            write!(f, "{}", self.base)
        }
    }
}

const CH: [char; 4] = ['r', 'g', 'b', 'a'];

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((c, inv)) = self.pred {
            write!(
                f,
                " if {}p.{}",
                if inv { "!" } else { "" },
                CH[usize::from(c & 3)]
            )?;
        }
        if self.inactive {
            write!(f, " +inactive")?;
        }
        Ok(())
    }
}

fn hex(bits: u32) -> String {
    format!("{:#010x} ({:?})", bits, f32::from_bits(bits))
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ch = |c: &u8| CH[usize::from(*c & 3)];
        match self {
            Op::Const { dst, index, chan } => write!(f, "{dst} = const c{index}.{}", ch(chan)),
            Op::Imm { dst, bits } => write!(f, "{dst} = imm {}", hex(*bits)),
            Op::Temp { dst, index, chan } => write!(f, "{dst} = temp r{index}.{}", ch(chan)),
            Op::Unary { dst, op, a } => {
                write!(f, "{dst} = {} {a}", format!("{op:?}").to_lowercase())
            }
            Op::Binary { dst, op, a, b } => {
                write!(f, "{dst} = {} {a}, {b}", format!("{op:?}").to_lowercase())
            }
            Op::Mad { dst, a, b, c } => write!(f, "{dst} = mad {a}, {b}, {c}"),
            Op::Dot { dst, pairs, addend } => {
                write!(f, "{dst} = dot")?;
                for (i, (a, b)) in pairs.iter().enumerate() {
                    write!(f, "{} {a}*{b}", if i == 0 { "" } else { " +" })?;
                }
                if let Some(c) = addend {
                    write!(f, " + {c}")?;
                }
                Ok(())
            }
            Op::Select { dst, op, c, a, b } => {
                let t = match op {
                    Select::Cnd => "> 0.5",
                    Select::Cmp => ">= 0",
                };
                write!(f, "{dst} = {c} {t} ? {a} : {b}")
            }
            Op::QuadLane { dst, a, lane } => write!(f, "{dst} = quad_lane {a}, {lane}"),
            Op::SetTemp {
                index,
                chan,
                v,
                gate,
                fetched,
            } => write!(
                f,
                "r{index}.{} = {v}{gate}{}",
                ch(chan),
                if *fetched { " (fetched)" } else { "" }
            ),
            Op::SetOut {
                target,
                chan,
                v,
                gate,
            } => write!(f, "rt{}.{} = {v}{gate}", (b'A' + target) as char, ch(chan)),
            Op::SetDepth { v, gate } => write!(f, "depth = {v}{gate}"),
            Op::SetPred {
                chan,
                test,
                v,
                gate,
            } => write!(f, "p.{} = {v} {test:?} 0{gate}", ch(chan)),
            Op::SetAluResult { test, v, gate } => write!(f, "alu_result = {v} {test:?} 0{gate}"),
            Op::Fetch {
                dst,
                kind,
                input,
                unscaled,
                coords,
                inactive,
            } => write!(
                f,
                "{}, {}, {}, {} = fetch {kind:?} in{input} ({}, {}, {}, {}){}{}",
                dst[0],
                dst[1],
                dst[2],
                dst[3],
                coords[0],
                coords[1],
                coords[2],
                coords[3],
                if *unscaled { " unscaled" } else { "" },
                if *inactive { " +inactive" } else { "" }
            ),
            Op::Kill { checks } => {
                write!(f, "kill if any <0:")?;
                for (v, g) in checks {
                    write!(f, " {v}{g}")?;
                }
                Ok(())
            }
            Op::UmrtWrite {
                value,
                x,
                y,
                index,
                gate,
            } => write!(f, "umrt[{x}, {y}] = {value} ({index:?}){gate}"),
            Op::SemWait => write!(f, "sem_wait"),
            Op::SemAcquire { wait } => {
                write!(f, "sem_acquire{}", if *wait { "" } else { " (no wait!)" })
            }
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Next(t) => write!(f, "next @{t}"),
            Term::Fc { pc, fc } => {
                write!(
                    f,
                    "@{pc}: fc {:?} func={:#04x} {} stay={:?} jump={:?} pop={} stack={:?} -> @{}",
                    fc.op,
                    fc.func,
                    if fc.any { "any" } else { "all" },
                    fc.stay,
                    fc.jump,
                    fc.pop,
                    fc.stack,
                    fc.target
                )?;
                if fc.b_else {
                    write!(f, " else")?;
                }
                match fc.pred {
                    (Some(c), inv) => write!(
                        f,
                        " pred={}p.{}",
                        if inv { "!" } else { "" },
                        CH[usize::from(c & 3)]
                    )?,
                    (None, true) => write!(f, " pred=false")?,
                    (None, false) => {}
                }
                if matches!(fc.op, FcOp::Loop | FcOp::EndLoop | FcOp::Rep | FcOp::EndRep) {
                    write!(f, " i{}", fc.int_addr)?;
                }
                if fc.func & 0x55 != (fc.func & 0xAA) >> 1 {
                    write!(f, " b{}", fc.bool_addr)?;
                }
                if fc.skip_target {
                    write!(f, " skip-target")?;
                }
                Ok(())
            }
            Term::Last { pc } => write!(f, "@{pc}: last"),
            Term::End => write!(f, "end"),
            Term::Undefined { pc, reason } => write!(f, "@{pc}: undefined: {reason}"),
        }
    }
}

impl fmt::Display for Program {
    /// The printed form `ctm ir` shows: one block per clause, each op with its pc.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clauses.iter().enumerate() {
            writeln!(
                f,
                "clause {i} @{}..@{} ({} values):",
                c.start,
                c.start + c.len,
                c.values
            )?;
            for n in &c.nodes {
                writeln!(f, "  @{:<3} {}", n.pc, n.op)?;
            }
            writeln!(f, "  => {}", c.term)?;
        }
        Ok(())
    }
}
