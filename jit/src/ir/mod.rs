//! The clause IR: the contract between the frontend and the two engines
//! (`docs/design.md`, "The data path").
//!
//! A [`Program`] is a list of [`Clause`]s. A clause is a straight run of
//! ALU/OUTPUT/TEX instructions turned into explicit operations ([`Op`]), ended
//! by a [`Term`]inator that hands control to the flow-control shim (the
//! R700-style split of `seeds/002`). Every operation keeps the program counter
//! of the instruction it came from ([`Node::pc`]).
//!
//! Values ([`V`]) are numbered per clause and written once. A value is one
//! 32-bit channel for every lane of a group of quads — one F32X4 per quad in
//! compiled code. Values defined by [`Op::Const`] and [`Op::Imm`] are uniform
//! (the same in every lane); all others vary per lane. Everything the binary
//! encoding implies — swizzles, swizzle constants, modifiers, presubtract,
//! output modifier, clamp, the RGB/alpha cross-unit rules, write masks and
//! predication — has already been expanded by the frontend; an engine only
//! executes what it sees. Numeric semantics: [`crate::fp`].
//!
//! Writes are gated per lane by a [`Gate`]: a lane writes when it is still
//! running, is active (or the gate writes inactive lanes too) and the gate's
//! predicate bit is on. All reads of an instruction precede its writes.

mod op;
pub use op::Operands;
mod opt;
mod print;
mod verify;

pub(crate) use opt::Regs;
pub use verify::VerifyError;

/// A per-clause value number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct V(pub u32);

/// A register index, possibly relative to the loop register aL.
///
/// Relative indices wrap modulo the size of their file (128 temporaries, 256
/// constants): `docs/isa.md` §4.3 leaves out-of-range sums undefined; ctm
/// wraps (ctm) and the hazard checker reports nothing for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Index {
    /// The base index from the instruction.
    pub base: u8,
    /// Add aL (the innermost LOOP's register; 0 outside loops).
    pub rel: bool,
}

/// Number of temporaries.
pub const TEMPS: usize = 128;
/// Number of float constants.
pub const CONSTS: usize = 256;
/// Number of integer (loop) constants.
pub const INT_CONSTS: usize = 32;
/// Render targets A–D.
pub const TARGETS: usize = 4;

impl Index {
    /// A fixed index.
    pub const fn fixed(base: u8) -> Index {
        Index { base, rel: false }
    }

    /// The effective index for loop register `al` in a file of `size` entries.
    #[inline]
    pub fn resolve(self, al: i32, size: usize) -> usize {
        if self.rel {
            (i64::from(self.base) + i64::from(al)).rem_euclid(size as i64) as usize
        } else {
            usize::from(self.base) % size
        }
    }
}

/// Unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    /// Sign flip (input modifier NEG).
    Neg,
    /// Clear sign (ABS).
    Abs,
    /// Set sign (NAB).
    Nab,
    /// a − floor(a).
    Frc,
    /// 2^a.
    Ex2,
    /// log2(a).
    Ln2,
    /// 1/a.
    Rcp,
    /// 1/sqrt(a).
    Rsq,
    /// sin(2π·a).
    Sin,
    /// cos(2π·a).
    Cos,
    /// Enabled output modifier: scale by 2^k (k in −3..=3), NaN standardised,
    /// denormals flushed.
    Omod(i8),
    /// NaN standardised and denormals flushed, no scaling.
    Canon,
    /// Clamp to [0, 1].
    Clamp,
}

/// Binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binary {
    /// a + b.
    Add,
    /// a − b.
    Sub,
    /// a · b.
    Mul,
    /// a / b.
    Div,
    /// `a < b ? a : b`.
    Min,
    /// `a > b ? a : b`.
    Max,
}

/// Selections on a third value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Select {
    /// `c > 0.5 ? a : b`.
    Cnd,
    /// `c >= 0 ? a : b`.
    Cmp,
}

/// Comparison with zero (ALU result, predicate bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    /// == 0
    Eq,
    /// < 0
    Lt,
    /// >= 0
    Ge,
    /// != 0
    Ne,
}

impl Test {
    /// The comparison code shared with `ALU_RESULT_OP` (0–3).
    pub const fn code(self) -> u8 {
        self as u8
    }
}

/// Which predicate bit enables a write, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gate {
    /// Predicate channel (0 R … 3 A) and inversion; `None` = unpredicated.
    pub pred: Option<(u8, bool)>,
    /// Write in inactive lanes too (`WRITE_INACTIVE`).
    pub inactive: bool,
}

impl Gate {
    /// Active lanes only, unpredicated.
    pub const ACTIVE: Gate = Gate {
        pred: None,
        inactive: false,
    };
}

/// What a fetch does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FetchKind {
    /// A cached lookup of an input.
    Lookup,
    /// An uncached read (memory written by uncached writes).
    Uncached,
}

/// How an uncached (UMRT) write chooses its address (§5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UmrtIndex {
    /// One address per quad: that of its first writing lane.
    Shared,
    /// Each lane its own address.
    PerProcessor,
}

/// One operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Uniform: channel `chan` of float constant `index`.
    Const {
        /// Result.
        dst: V,
        /// Constant index.
        index: Index,
        /// Channel 0–3.
        chan: u8,
    },
    /// Uniform: a fixed pattern (inline constants, swizzle constants).
    Imm {
        /// Result.
        dst: V,
        /// The 32-bit pattern.
        bits: u32,
    },
    /// Per lane: channel `chan` of temporary `index`.
    Temp {
        /// Result.
        dst: V,
        /// Temporary index.
        index: Index,
        /// Channel 0–3.
        chan: u8,
    },
    /// A unary operation.
    Unary {
        /// Result.
        dst: V,
        /// Operation.
        op: Unary,
        /// Operand.
        a: V,
    },
    /// A binary operation.
    Binary {
        /// Result.
        dst: V,
        /// Operation.
        op: Binary,
        /// First operand.
        a: V,
        /// Second operand.
        b: V,
    },
    /// a · b + c, separately rounded.
    Mad {
        /// Result.
        dst: V,
        /// Multiplicand.
        a: V,
        /// Multiplier.
        b: V,
        /// Addend.
        c: V,
    },
    /// Sum of products plus an optional addend, rounded once ([`crate::fp::dot`]).
    Dot {
        /// Result.
        dst: V,
        /// The factor pairs (3 or 4; 2 for D2A).
        pairs: Vec<(V, V)>,
        /// The addend (D2A).
        addend: Option<V>,
    },
    /// A selection on `c`.
    Select {
        /// Result.
        dst: V,
        /// Which test.
        op: Select,
        /// Tested value.
        c: V,
        /// Chosen when the test holds.
        a: V,
        /// Chosen otherwise.
        b: V,
    },
    /// Every lane of a quad receives lane `lane` (0–3) of `a` in that quad
    /// (MDH/MDV neighbours).
    QuadLane {
        /// Result.
        dst: V,
        /// Source value.
        a: V,
        /// Lane within the quad.
        lane: u8,
    },
    /// Write channel `chan` of temporary `index`.
    SetTemp {
        /// Temporary.
        index: Index,
        /// Channel 0–3.
        chan: u8,
        /// Value.
        v: V,
        /// Which lanes write.
        gate: Gate,
        /// The value comes from a fetch (tracked by the hazard checker).
        fetched: bool,
    },
    /// Write channel `chan` of render target `target` (cached output).
    SetOut {
        /// Target 0–3 (A–D).
        target: u8,
        /// Channel 0–3.
        chan: u8,
        /// Value.
        v: V,
        /// Which lanes write.
        gate: Gate,
    },
    /// Write the conditional (depth) output value.
    SetDepth {
        /// Value.
        v: V,
        /// Which lanes write.
        gate: Gate,
    },
    /// Set predicate bit `chan` to `test(v)`.
    SetPred {
        /// Channel 0–3.
        chan: u8,
        /// Comparison with zero.
        test: Test,
        /// Value.
        v: V,
        /// Which lanes write.
        gate: Gate,
    },
    /// Set the ALU result to `test(v)`.
    SetAluResult {
        /// Comparison with zero.
        test: Test,
        /// Value.
        v: V,
        /// Which lanes write.
        gate: Gate,
    },
    /// Fetch from input `input` at coordinates (s, t, r, q); defines four
    /// values, the returned channels R, G, B, A. Lanes that are not running
    /// or not active (this op is not predicated) receive zeros.
    Fetch {
        /// The four returned channels.
        dst: [V; 4],
        /// Lookup or uncached read.
        kind: FetchKind,
        /// Input index 0–15.
        input: u8,
        /// Coordinates in texel units (`UNSCALED`) or scaled by the input size.
        unscaled: bool,
        /// S, T, R, Q (already divided by Q for a projected lookup).
        coords: [V; 4],
        /// Inactive lanes fetch too (`WRITE_INACTIVE`).
        inactive: bool,
    },
    /// Kill every active lane where one of the given values is < 0 (IEEE `<`).
    Kill {
        /// The examined channels with their gates.
        checks: Vec<(V, Gate)>,
    },
    /// An uncached write of `value` to (x, y) (UMRT, §5.4).
    UmrtWrite {
        /// The stored 32-bit pattern.
        value: V,
        /// Column (float, converted by the memory controller).
        x: V,
        /// Row.
        y: V,
        /// Address sharing.
        index: UmrtIndex,
        /// Which lanes write.
        gate: Gate,
    },
    /// `TEX_SEM_WAIT`: wait until no acquire is outstanding (a no-op for
    /// synchronous engines; the hazard checker's release point).
    SemWait,
    /// `TEX_SEM_ACQUIRE`: hold the semaphore until this and all earlier
    /// fetches have landed.
    SemAcquire {
        /// The instruction also waits (required by §5.3).
        wait: bool,
    },
}

/// An operation with the program counter of its instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// Source instruction index.
    pub pc: u16,
    /// The operation.
    pub op: Op,
}

/// Flow-control operations (`OP`, `docs/isa.md` §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FcOp {
    /// JUMP.
    Jump,
    /// LOOP.
    Loop,
    /// ENDLOOP.
    EndLoop,
    /// REP.
    Rep,
    /// ENDREP.
    EndRep,
    /// BREAKLOOP.
    BreakLoop,
    /// BREAKREP.
    BreakRep,
    /// CONTINUE.
    Continue,
}

/// Address-stack operation (`A_OP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackOp {
    /// None.
    None,
    /// Pop the return address when jumping.
    Pop,
    /// Push pc + 1 when jumping.
    Push,
}

/// Branch-counter operation (`B_OP0`, `B_OP1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// None.
    None,
    /// Decrement by `B_POP_CNT`.
    Decr,
    /// Increment.
    Incr,
}

/// A flow-control instruction, field by field (§6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fc {
    /// Operation.
    pub op: FcOp,
    /// `JUMP_FUNC` truth table.
    pub func: u8,
    /// `JUMP_ANY`.
    pub any: bool,
    /// `B_ELSE`.
    pub b_else: bool,
    /// `A_OP`.
    pub stack: StackOp,
    /// `B_OP0` (staying).
    pub stay: Counter,
    /// `B_OP1` (jumping).
    pub jump: Counter,
    /// `B_POP_CNT`.
    pub pop: u8,
    /// `BOOL_ADDR`.
    pub bool_addr: u8,
    /// `INT_ADDR`.
    pub int_addr: u8,
    /// `JUMP_ADDR` (absolute; programs are loaded at 0).
    pub target: u16,
    /// Predicate input: channel 0–3, or `None` for "true"; then inversion.
    pub pred: (Option<u8>, bool),
    /// A LOOP/REP whose target is an ENDLOOP/ENDREP resumes after it when it
    /// jumps (Mesa points LOOP at its ENDLOOP; §6.7).
    pub skip_target: bool,
    /// `TEX_SEM_WAIT` on the FC instruction.
    pub wait: bool,
}

/// How a clause ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Continue with the clause that starts at `next` (a jump target).
    Next(u16),
    /// A flow-control instruction at `pc`.
    Fc {
        /// Its index.
        pc: u16,
        /// Its fields.
        fc: Fc,
    },
    /// The instruction at `pc` has `LAST`: active lanes finish after it; the
    /// others continue at `pc + 1` (or finish too if it is the end).
    Last {
        /// Its index.
        pc: u16,
    },
    /// The end of `.text`: every lane finishes.
    End,
    /// The instruction at `pc` cannot be executed (undecodable or undefined
    /// encoding); reaching it is a run-time error.
    Undefined {
        /// Its index.
        pc: u16,
        /// Why.
        reason: String,
    },
}

/// A straight run of operations and its terminator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Clause {
    /// Index of the first instruction.
    pub start: u16,
    /// Number of instructions covered (excluding an FC terminator).
    pub len: u16,
    /// The operations.
    pub nodes: Vec<Node>,
    /// Number of values defined.
    pub values: u32,
    /// The terminator.
    pub term: Term,
}

impl Clause {
    /// Instructions one execution of the clause counts (for the runaway
    /// budget and the statistics): its own and a flow-control terminator.
    pub fn counted(&self) -> u32 {
        u32::from(self.len) + u32::from(matches!(self.term, Term::Fc { .. }))
    }
}

/// What compiled code may assume of an input's elements: their size and
/// whether their channels are unorm integers. Whoever builds a program for
/// a run whose input formats it knows sets them ([`Program::forms`]: the
/// PE does); compiled code then reads that input in that one way instead
/// of testing the element size and conversion at each lookup, and runs
/// only where the input's descriptor agrees
/// ([`crate::state::TexTable::covers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InputForm {
    /// log2 of the element's bytes (1–4); 0: not known (every size read).
    pub shift: u8,
    /// The channels are unorm integers, converted as they are read.
    pub unorm: bool,
}

impl InputForm {
    /// The channel masks and fills (`TexDesc::chan_mask`, `fill`) of an
    /// input of this form, if it is known: a plain read keeps the format's
    /// channels whole and reads the others as (0, 0, 1); a 2×2 `gather`
    /// keeps all four (channel 0 of four elements).
    /// [`crate::state::TexTable::covers`] checks them against the input's
    /// descriptor, so compiled code may use them as constants.
    pub fn channels(self, gather: bool) -> Option<([u32; 4], [u32; 4])> {
        let n = match (self.shift, self.unorm) {
            _ if self.shift == 0 => return None,
            _ if gather => 4,
            (1, true) | (2, false) => 1,
            (3, false) => 2,
            (2, true) | (4, false) => 4,
            _ => return None,
        };
        let mask = std::array::from_fn(|c| if c < n { u32::MAX } else { 0 });
        let fill = std::array::from_fn(|c| if c == 3 && n < 4 { 1f32.to_bits() } else { 0 });
        Some((mask, fill))
    }
}

/// A whole program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// Clauses in program order.
    pub clauses: Vec<Clause>,
    /// For each instruction index, the clause starting there (if one does).
    pub entry: Vec<Option<u32>>,
    /// Number of instructions.
    pub len: u16,
    /// Honour `LAST` (early exit); otherwise only the end of `.text` ends.
    pub early_exit: bool,
    /// What compiled code may assume of each input's elements (all unknown
    /// unless set).
    pub forms: [InputForm; 16],
    /// Whether output 0, which uncached writes address, has a unorm format
    /// (`None`: not known). Where it is known, a compiled clause quantises,
    /// or not, without a test at each write, and hands the writes to the
    /// runtime where the run's output says otherwise.
    pub uncached_unorm: Option<bool>,
    /// Which render targets hold float32_1 elements (bit `t` = target
    /// `t`; the others float32_4 or a format no compiled strip writes),
    /// where known: a compiled strip then stores each target one way
    /// instead of testing the strip's `narrow` bits, and is only run where
    /// they agree (`None`: not known, either way).
    pub narrow: Option<u8>,
}

impl Program {
    /// Whether code compiled for this program's render-target formats
    /// ([`Program::narrow`]) may write the targets `targets` of a strip
    /// whose float32_1 targets are `narrow` (bit `t` = target `t`).
    pub fn narrow_agrees(&self, narrow: u32, targets: u32) -> bool {
        self.narrow
            .is_none_or(|n| (u32::from(n) ^ narrow) & targets == 0)
    }

    /// Temporaries the program can touch: one past the highest fixed index,
    /// or all of them if any access is relative to aL.
    pub fn temps_used(&self) -> usize {
        let mut n = 1;
        for node in self.clauses.iter().flat_map(|c| &c.nodes) {
            if let Op::Temp { index, .. } | Op::SetTemp { index, .. } = &node.op {
                if index.rel {
                    return TEMPS;
                }
                n = n.max(usize::from(index.base) + 1);
            }
        }
        n.min(TEMPS)
    }

    /// The clause starting at instruction `pc`, if any.
    pub fn clause_at(&self, pc: u16) -> Option<u32> {
        self.entry.get(usize::from(pc)).copied().flatten()
    }
}
