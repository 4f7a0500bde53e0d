//! Decoded instructions → the clause IR ([`ctm_jit::ir`]), `docs/isa.md` §4–§6.
//!
//! The program is cut into clauses at every flow-control instruction, every
//! jump target, every return point and after every `LAST` instruction. Each
//! ALU/OUTPUT/TEX instruction becomes explicit operations: source reads
//! (§4.3–4.4; only those some input uses), presubtract, swizzles and swizzle
//! constants, input modifiers (§4.5), the operation (§4.6) including the
//! cross-unit rules (DP4's fourth component, SOP, alpha DP), output modifier
//! and clamp (§4.7), then gated writes (§4.8, §4.9).
//!
//! Decisions where the record is silent (ctm; listed in README):
//! * `OMOD_DISABLED` on an operation other than MIN/MAX/CND/CMP: no scaling
//!   and no clamp, but NaN is standardised and denormals flushed ([`Unary::Canon`]),
//!   so results never depend on host NaN propagation.
//! * Presubtract results are standardised the same way (they may reach a
//!   bit-exact selection).
//! * `SOP` with a non-transcendental alpha op copies the alpha unit's result
//!   anyway; alpha `DP` with a non-dot RGB op copies the RGB unit's red
//!   result. `SOP` paired with `DP` is a cycle: executing it is an error.
//! * The ALU result is written under the gate of the channel it is taken
//!   from; `ALU_WMASK` on an OUTPUT instruction is honoured.
//! * `W_OMASK` (depth) is honoured on OUTPUT instructions only.
//! * FC predicate `RGBA` (not a replicate selection) reads bit R; `NONE`
//!   reads "true" (then `RGB_PRED_INV`).
//! * KILL_LT_0 follows the Guide (CTM p33), not R5xx: source swizzles are
//!   ignored and the channels examined are those of the write mask, each
//!   under its channel's predicate; only active lanes kill.
//! * In uncached (UMRT) mode an OUTPUT instruction whose output mask is
//!   neither all four channels nor none is an error when executed; the RGB
//!   `TARGET` chooses the mode, values 0–3 in the order of §5.4.

mod alu;

use crate::isa::{
    AOp, BOp, Body, DecodeError, FcOp as IsaFcOp, Inst, InstType, Mod, Omod, PredSel, Sel, SrcKind,
    SrcpOp, Swz, TexOp,
    inst::{Alu, Src, Tex, inline_value},
    table::{AlphaOp, RgbOp},
};
use ctm_jit::fp;
use ctm_jit::ir::{
    Binary, Clause, Counter, Fc, FcOp, FetchKind, Gate, Index, Node, Op, Program, Select, StackOp,
    Term, Test, UmrtIndex, Unary, V,
};

/// How to build a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Honour `LAST` as an early exit (`docs/isa.md` §1.1 policy).
    pub early_exit: bool,
    /// The program writes uncached (UMRT) outputs (§5.4).
    pub uncached: bool,
    /// Drop register writes nothing can observe
    /// ([`Program::drop_dead_writes`]); off where the hazard checker must
    /// see every write.
    pub drop_dead_writes: bool,
    /// One clause per instruction (an FC instruction alone, as the
    /// terminator of an empty clause), for observers between clauses.
    pub single_step: bool,
    /// Which render targets are float32_1, where the run's outputs say
    /// ([`Program::narrow`]): with [`Options::drop_dead_writes`], what
    /// only their unstored channels use is dropped too.
    pub narrow: Option<u8>,
}

impl Options {
    /// How the PE builds a loaded program: `LAST` ends processors early
    /// (§1.1 policy) and the uncached mode comes from the loader. Every
    /// path that runs an executable (the PE, measurements, the CLIF
    /// printer, random programs) builds with these options; the PE turns
    /// [`Options::drop_dead_writes`] off when it checks hazards.
    pub fn loaded(uncached: bool) -> Options {
        Options {
            early_exit: true,
            uncached,
            drop_dead_writes: true,
            single_step: false,
            narrow: None,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            early_exit: true,
            uncached: false,
            drop_dead_writes: false,
            single_step: false,
            narrow: None,
        }
    }
}

/// Builds the IR of a program given as decoded slots (see
/// [`crate::isa::decode_program`]). Undecodable slots become run-time errors
/// when reached.
///
/// ```
/// use ctm::{frontend, isa::{asm::assemble, decode_program}};
/// let words =
///     assemble("out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 last wait").unwrap();
/// let prog = frontend::build(&decode_program(&words), frontend::Options::default());
/// prog.verify().unwrap();
/// assert_eq!(prog.clauses.len(), 1);
/// ```
pub fn build(slots: &[Result<Inst, DecodeError>], opts: Options) -> Program {
    let len = slots.len().min(usize::from(u16::MAX)) as u16;
    let mut leader = vec![false; usize::from(len) + 1];
    leader[0] = true;
    for (pc, slot) in slots.iter().enumerate().take(usize::from(len)) {
        if opts.single_step {
            leader[pc] = true;
        }
        let Ok(inst) = slot else { continue };
        match &inst.body {
            Body::Fc(f) => {
                leader[pc + 1] = true;
                let t = usize::from(f.addr.jump_addr);
                if t < usize::from(len) {
                    leader[t] = true;
                }
            }
            _ if inst.cmn.last && opts.early_exit => leader[pc + 1] = true,
            _ => {}
        }
    }
    let mut prog = Program {
        clauses: Vec::new(),
        entry: vec![None; usize::from(len)],
        len,
        early_exit: opts.early_exit,
        forms: Default::default(),
        uncached_unorm: None,
        narrow: opts.narrow,
    };
    for start in 0..len {
        if !leader[usize::from(start)] {
            continue;
        }
        prog.entry[usize::from(start)] = Some(prog.clauses.len() as u32);
        let mut clause = build_clause(slots, start, &leader, opts);
        clause.prune();
        prog.clauses.push(clause);
    }
    if opts.drop_dead_writes {
        prog.drop_dead_writes();
    }
    prog
}

fn build_clause(
    slots: &[Result<Inst, DecodeError>],
    start: u16,
    leader: &[bool],
    opts: Options,
) -> Clause {
    let len = slots.len() as u16;
    let mut b = Builder {
        nodes: Vec::new(),
        values: 0,
        pc: start,
        imms: Vec::new(),
    };
    let mut pc = start;
    let term = loop {
        b.pc = pc;
        let inst = match &slots[usize::from(pc)] {
            Ok(inst) => inst,
            Err(e) => {
                break Term::Undefined {
                    pc,
                    reason: e.to_string(),
                };
            }
        };
        let lowered = match &inst.body {
            Body::Fc(_) => break lower_fc(inst, pc, slots),
            Body::Alu(alu) => b.alu(inst, alu, opts.uncached),
            Body::Tex(tex) => {
                b.tex(inst, tex);
                Ok(())
            }
        };
        if let Err(reason) = lowered {
            break Term::Undefined { pc, reason };
        }
        let next = pc + 1;
        if next == len {
            break Term::End;
        }
        if inst.cmn.last && opts.early_exit {
            break Term::Last { pc };
        }
        if leader[usize::from(next)] {
            break Term::Next(next);
        }
        pc = next;
    };
    let end = match term {
        Term::Fc { pc, .. } | Term::Undefined { pc, .. } => pc,
        _ => pc + 1,
    };
    Clause {
        start,
        len: end - start,
        nodes: b.nodes,
        values: b.values,
        term,
    }
}

fn lower_fc(inst: &Inst, pc: u16, slots: &[Result<Inst, DecodeError>]) -> Term {
    let Body::Fc(f) = &inst.body else {
        unreachable!("lower_fc on a non-FC instruction")
    };
    let op = match f.inst.op {
        IsaFcOp::Jump => FcOp::Jump,
        IsaFcOp::Loop => FcOp::Loop,
        IsaFcOp::EndLoop => FcOp::EndLoop,
        IsaFcOp::Rep => FcOp::Rep,
        IsaFcOp::EndRep => FcOp::EndRep,
        IsaFcOp::BreakLoop => FcOp::BreakLoop,
        IsaFcOp::BreakRep => FcOp::BreakRep,
        IsaFcOp::Continue => FcOp::Continue,
    };
    let counter = |b: BOp| match b {
        BOp::None => Counter::None,
        BOp::Decr => Counter::Decr,
        BOp::Incr => Counter::Incr,
    };
    let pred = match inst.cmn.rgb_pred_sel {
        PredSel::None => None,
        PredSel::Rgba | PredSel::Rrrr => Some(0),
        PredSel::Gggg => Some(1),
        PredSel::Bbbb => Some(2),
        PredSel::Aaaa => Some(3),
    };
    let target = f.addr.jump_addr;
    let closes = |want: IsaFcOp| matches!(slots.get(usize::from(target)), Some(Ok(Inst { body: Body::Fc(t), .. })) if t.inst.op == want);
    let skip_target = match op {
        FcOp::Loop => closes(IsaFcOp::EndLoop),
        FcOp::Rep => closes(IsaFcOp::EndRep),
        _ => false,
    };
    Term::Fc {
        pc,
        fc: Fc {
            op,
            func: f.inst.jump_func,
            any: f.inst.jump_any,
            b_else: f.inst.b_else,
            stack: match f.inst.a_op {
                AOp::None => StackOp::None,
                AOp::Pop => StackOp::Pop,
                AOp::Push => StackOp::Push,
            },
            stay: counter(f.inst.b_op0),
            jump: counter(f.inst.b_op1),
            pop: f.inst.b_pop_cnt,
            bool_addr: f.addr.bool_addr,
            int_addr: f.addr.int_addr,
            target,
            pred: (pred, inst.cmn.rgb_pred_inv),
            skip_target,
            wait: inst.cmn.tex_sem_wait,
        },
    }
}

/// Appends the operations of one instruction at a time.
struct Builder {
    nodes: Vec<Node>,
    values: u32,
    pc: u16,
    /// Constants already defined in this clause (uniform, so reusable).
    imms: Vec<(u32, V)>,
}

/// The lazily read operands of one ALU instruction.
#[derive(Default)]
struct Operands {
    /// src0..2 channels r, g, b, a.
    src: [[Option<V>; 4]; 3],
    /// srcp channels.
    srcp: [Option<V>; 4],
}

/// The zero test with comparison code `code` (`ALU_RESULT_OP`, or `TARGET`
/// when an ALU instruction sets predicate bits).
fn test_code(code: u8) -> Test {
    [Test::Eq, Test::Lt, Test::Ge, Test::Ne][usize::from(code & 3)]
}

/// The write gate of channel `chan` (0–3) under an instruction's word 0.
fn gate(inst: &Inst, chan: usize) -> Gate {
    let c = &inst.cmn;
    let (sel, inv) = if chan < 3 {
        (c.rgb_pred_sel, c.rgb_pred_inv)
    } else {
        (c.alpha_pred_sel, c.alpha_pred_inv)
    };
    let bit = match sel {
        PredSel::None => None,
        PredSel::Rgba => Some(chan as u8),
        PredSel::Rrrr => Some(0),
        PredSel::Gggg => Some(1),
        PredSel::Bbbb => Some(2),
        PredSel::Aaaa => Some(3),
    };
    Gate {
        pred: bit.map(|b| (b, inv)),
        inactive: c.write_inactive,
    }
}

fn omod_shift(o: Omod) -> Option<i8> {
    Some(match o {
        Omod::X1 => 0,
        Omod::X2 => 1,
        Omod::X4 => 2,
        Omod::X8 => 3,
        Omod::D2 => -1,
        Omod::D4 => -2,
        Omod::D8 => -3,
        Omod::Disabled => return None,
    })
}

impl Builder {
    fn emit(&mut self, op: Op) {
        self.nodes.push(Node { pc: self.pc, op });
    }

    fn fresh(&mut self) -> V {
        self.values += 1;
        V(self.values - 1)
    }

    fn def(&mut self, make: impl FnOnce(V) -> Op) -> V {
        let dst = self.fresh();
        self.emit(make(dst));
        dst
    }

    fn imm(&mut self, bits: u32) -> V {
        if let Some(&(_, v)) = self.imms.iter().find(|(b, _)| *b == bits) {
            return v;
        }
        let v = self.def(|dst| Op::Imm { dst, bits });
        self.imms.push((bits, v));
        v
    }

    fn unary(&mut self, op: Unary, a: V) -> V {
        // A sign modifier of an inline constant is another inline constant.
        if let Some(&(bits, _)) = self.imms.iter().find(|(_, v)| *v == a) {
            let folded = match op {
                Unary::Neg => Some(fp::neg(bits)),
                Unary::Abs => Some(fp::abs(bits)),
                Unary::Nab => Some(fp::nab(bits)),
                _ => None,
            };
            if let Some(bits) = folded {
                return self.imm(bits);
            }
        }
        self.def(|dst| Op::Unary { dst, op, a })
    }

    fn binary(&mut self, op: Binary, a: V, b: V) -> V {
        // MIN/MAX select one of their operands: of a value and itself, the
        // value, bit for bit (the assembler's MOV idiom `max(s0, s0)`).
        if a == b && matches!(op, Binary::Min | Binary::Max) {
            return a;
        }
        self.def(|dst| Op::Binary { dst, op, a, b })
    }

    fn tex(&mut self, inst: &Inst, tex: &Tex) {
        let c = &inst.cmn;
        if c.tex_sem_wait {
            self.emit(Op::SemWait);
        }
        let a = &tex.addr;
        let src = Index {
            base: a.src_addr,
            rel: a.src_addr_rel,
        };
        let wmask = |ch: usize| {
            if ch < 3 {
                c.rgb_wmask & (1 << ch) != 0
            } else {
                c.alpha_wmask
            }
        };
        let kind = match tex.inst.op {
            TexOp::Nop => None,
            TexOp::Kill => {
                let mut checks = Vec::new();
                for ch in (0..4).filter(|&ch| wmask(ch)) {
                    let v = self.def(|dst| Op::Temp {
                        dst,
                        index: src,
                        chan: ch as u8,
                    });
                    let g = Gate {
                        inactive: false,
                        ..gate(inst, ch)
                    };
                    checks.push((v, g));
                }
                if !checks.is_empty() {
                    self.emit(Op::Kill { checks });
                }
                None
            }
            TexOp::LdUncached => Some(FetchKind::Uncached),
            TexOp::Ld | TexOp::Proj | TexOp::LodBias | TexOp::Lod | TexOp::Dxdy => {
                Some(FetchKind::Lookup)
            }
        };
        if let Some(kind) = kind {
            let mut read = [None::<V>; 4];
            let swz = [a.src_s_swiz, a.src_t_swiz, a.src_r_swiz, a.src_q_swiz];
            let mut coords = swz.map(|s| {
                let ch = s as usize;
                *read[ch].get_or_insert_with(|| {
                    self.def(|dst| Op::Temp {
                        dst,
                        index: src,
                        chan: ch as u8,
                    })
                })
            });
            if tex.inst.op == TexOp::Proj {
                let q = coords[3];
                for v in coords.iter_mut().take(3) {
                    *v = self.binary(Binary::Div, *v, q);
                }
            }
            let dst = [self.fresh(), self.fresh(), self.fresh(), self.fresh()];
            self.emit(Op::Fetch {
                dst,
                kind,
                input: tex.inst.tex_id,
                unscaled: tex.inst.unscaled,
                coords,
                inactive: c.write_inactive,
            });
            let to = Index {
                base: a.dst_addr,
                rel: a.dst_addr_rel,
            };
            let dswz = [a.dst_r_swiz, a.dst_g_swiz, a.dst_b_swiz, a.dst_a_swiz];
            for ch in (0..4).filter(|&ch| wmask(ch)) {
                self.emit(Op::SetTemp {
                    index: to,
                    chan: ch as u8,
                    v: dst[dswz[ch] as usize],
                    gate: gate(inst, ch),
                    fetched: true,
                });
            }
        }
        if tex.inst.sem_acquire {
            self.emit(Op::SemAcquire {
                wait: c.tex_sem_wait,
            });
        }
    }
}
