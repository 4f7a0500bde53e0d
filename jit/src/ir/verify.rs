//! The IR verifier: the structural rules every engine relies on.

use super::op::Operands;
use super::*;
use smallvec::smallvec;

/// A structural fault in IR (a frontend bug or hand-built IR).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("IR clause {clause} (pc {pc}): {message}")]
pub struct VerifyError {
    /// Clause index.
    pub clause: usize,
    /// Program counter of the offending node.
    pub pc: u16,
    /// What is wrong.
    pub message: String,
}

impl Program {
    /// Checks the structural rules every engine relies on: values defined
    /// once before use and within the clause's count, channel/index ranges,
    /// dot products of one to four factor pairs, terminator targets inside
    /// the program, the entry table one entry per instruction naming only
    /// clauses that start there, and
    /// **canonical at every observation point**: no raw arithmetic result
    /// (nor a sign modifier or lane shuffle of one) reaches, without an
    /// `Omod`/`Canon` in between, a place where its bits are observed — a
    /// register or output store, the conditional value, an uncached write's
    /// value, or an operand of a raw-bit select (MIN/MAX/CND/CMP pass
    /// operand bits through). Engines may therefore standardise NaNs and
    /// flush denormals at those points only. (Fetch coordinates and an
    /// uncached write's column and row are not such points: the texture
    /// unit reads them as the ALU does, denormals as zeros and every NaN
    /// alike — projected lookups divide right before.)
    pub fn verify(&self) -> Result<(), VerifyError> {
        self.verify_entries()?;
        for (ci, clause) in self.clauses.iter().enumerate() {
            self.verify_clause(ci, clause)?;
        }
        Ok(())
    }

    /// The entry table: one entry per instruction, each naming a clause
    /// that starts there.
    fn verify_entries(&self) -> Result<(), VerifyError> {
        if self.entry.len() != usize::from(self.len) {
            return Err(VerifyError {
                clause: 0,
                pc: 0,
                message: format!(
                    "the entry table has {} entries for a program of {} instructions",
                    self.entry.len(),
                    self.len
                ),
            });
        }
        for (pc, e) in self.entry.iter().enumerate() {
            if let Some(c) = *e
                && self
                    .clauses
                    .get(c as usize)
                    .is_none_or(|cl| usize::from(cl.start) != pc)
            {
                return Err(VerifyError {
                    clause: c as usize,
                    pc: pc as u16,
                    message: format!("the entry table names clause {c}, which does not start here"),
                });
            }
        }
        Ok(())
    }

    /// One clause: values defined once before use, raw results observed
    /// only through Omod/Canon, operands in range, terminators in the
    /// program.
    fn verify_clause(&self, ci: usize, clause: &Clause) -> Result<(), VerifyError> {
        let fail = |pc: u16, message: String| VerifyError {
            clause: ci,
            pc,
            message,
        };
        if self.clause_at(clause.start) != Some(ci as u32) {
            return Err(fail(
                clause.start,
                "clause missing from the entry table".into(),
            ));
        }
        let n = clause.values as usize;
        let mut defined = vec![false; n];
        let mut raw = vec![false; n];
        for node in &clause.nodes {
            for u in node.op.uses() {
                if u.0 as usize >= n || !defined[u.0 as usize] {
                    return Err(fail(node.pc, format!("use of undefined value v{}", u.0)));
                }
            }
            let observed = observed(&node.op);
            if observed.iter().any(|v| raw[v.0 as usize]) {
                return Err(fail(
                    node.pc,
                    "raw arithmetic result observed without Omod/Canon".into(),
                ));
            }
            let (chan_ok, index_ok) = (chan_ok(&node.op), index_ok(&node.op));
            if !chan_ok || !index_ok {
                return Err(fail(
                    node.pc,
                    format!("operand out of range in {:?}", node.op),
                ));
            }
            let is_raw = node.op.raw_arith()
                || match &node.op {
                    Op::Unary {
                        op: Unary::Neg | Unary::Abs | Unary::Nab,
                        a,
                        ..
                    }
                    | Op::QuadLane { a, .. } => raw[a.0 as usize],
                    _ => false,
                };
            for d in node.op.defs() {
                let d = d.0 as usize;
                if d >= n || defined[d] {
                    return Err(fail(
                        node.pc,
                        format!("value v{d} defined twice or out of range"),
                    ));
                }
                defined[d] = true;
                raw[d] = is_raw;
            }
        }
        let in_range = |t: u16| t < self.len;
        match &clause.term {
            Term::Next(t) if !in_range(*t) || self.clause_at(*t).is_none() => {
                return Err(fail(*t, "fall-through to a pc with no clause".into()));
            }
            Term::Fc { pc, .. } | Term::Last { pc } if !in_range(*pc) => {
                return Err(fail(*pc, "terminator outside the program".into()));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The values whose bits `op` observes.
fn observed(op: &Op) -> Operands<V> {
    match op {
        Op::SetTemp {
            v, fetched: false, ..
        }
        | Op::SetOut { v, .. }
        | Op::SetDepth { v, .. } => smallvec![*v],
        Op::UmrtWrite { value, .. } => smallvec![*value],
        Op::Binary {
            op: Binary::Min | Binary::Max,
            a,
            b,
            ..
        }
        | Op::Select { a, b, .. } => smallvec![*a, *b],
        _ => smallvec![],
    }
}

/// Whether `op`'s channels, targets, lanes, pair counts, inputs and scales
/// are in range.
fn chan_ok(op: &Op) -> bool {
    match op {
        Op::Const { chan, .. }
        | Op::Temp { chan, .. }
        | Op::SetTemp { chan, .. }
        | Op::SetPred { chan, .. } => *chan < 4,
        Op::SetOut { target, chan, .. } => *chan < 4 && usize::from(*target) < TARGETS,
        Op::QuadLane { lane, .. } => *lane < 4,
        Op::Dot { pairs, .. } => (1..=4).contains(&pairs.len()),
        Op::Fetch { input, .. } => *input < 16,
        Op::Unary {
            op: Unary::Omod(k), ..
        } => (-3..=3).contains(k),
        _ => true,
    }
}

/// Whether `op`'s temporary index is in range.
fn index_ok(op: &Op) -> bool {
    match op {
        Op::Temp { index, .. } | Op::SetTemp { index, .. } => usize::from(index.base) < TEMPS,
        _ => true,
    }
}
