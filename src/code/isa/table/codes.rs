//! The values of the encoding's enumerated fields (instruction type,
//! opcodes, selectors, modifiers): part of the table of the parent module,
//! `docs/isa.md` §2–§6.

use crate::isa::layout::isa_enum;

isa_enum! {
    /// Instruction type, word 0 `TYPE` (§2.2).
    pub enum InstType {
        /// Math; may set predicate bits and the ALU result, not outputs.
        Alu = 0 => "alu",
        /// Math; may write output registers, not predicate bits.
        Out = 1 => "out",
        /// Flow control.
        Fc = 2 => "fc",
        /// Texture / input fetch and kill.
        Tex = 3 => "tex",
    }
}

isa_enum! {
    /// Predicate selection (`RGB_PRED_SEL`, `ALPHA_PRED_SEL`, §3, §4.9).
    pub enum PredSel {
        /// Not predicated.
        None = 0 => "none",
        /// Each channel by its own predicate bit.
        Rgba = 1 => "rgba",
        /// Every channel by predicate bit R.
        Rrrr = 2 => "rrrr",
        /// Every channel by predicate bit G.
        Gggg = 3 => "gggg",
        /// Every channel by predicate bit B.
        Bbbb = 4 => "bbbb",
        /// Every channel by predicate bit A.
        Aaaa = 5 => "aaaa",
    }
}

isa_enum! {
    /// Which channel feeds the ALU result (`ALU_RESULT_SEL`, §4.8.5).
    pub enum ResultSel {
        /// The red result.
        Red = 0 => "r",
        /// The alpha result.
        Alpha = 1 => "a",
    }
}

isa_enum! {
    /// Comparison with zero, used by `ALU_RESULT_OP` and by `TARGET` when an
    /// ALU instruction sets predicate bits (§4.8.3, §4.8.5).
    pub enum CmpOp {
        /// value == 0
        Eq = 0 => "==",
        /// value < 0
        Lt = 1 => "<",
        /// value >= 0
        Ge = 2 => ">=",
        /// value != 0
        Ne = 3 => "!=",
    }
}

isa_enum! {
    /// Presubtract operation (`SRCP_OP`, §4.1).
    pub enum SrcpOp {
        /// 1 − 2·s0
        Bias = 0 => "bias",
        /// s1 − s0
        Sub = 1 => "sub",
        /// s1 + s0
        Add = 2 => "add",
        /// 1 − s0
        Inv = 3 => "inv",
    }
}

isa_enum! {
    /// Input select (`*_SEL_A/B/C`, §4.2).
    pub enum Sel {
        /// Shared source 0.
        Src0 = 0 => "s0",
        /// Shared source 1.
        Src1 = 1 => "s1",
        /// Shared source 2.
        Src2 = 2 => "s2",
        /// The presubtracted source.
        SrcP = 3 => "sp",
    }
}

isa_enum! {
    /// ALU swizzle code (§4.2). Code 7 is undefined (ctm).
    pub enum Swz {
        /// Red component.
        R = 0 => "r",
        /// Green component.
        G = 1 => "g",
        /// Blue component.
        B = 2 => "b",
        /// Alpha component.
        A = 3 => "a",
        /// Constant 0.0.
        Zero = 4 => "0",
        /// Constant 0.5.
        Half = 5 => "h",
        /// Constant 1.0.
        One = 6 => "1",
    }
}

isa_enum! {
    /// Input modifier (`*_MOD_*`, §4.5).
    pub enum Mod {
        /// x
        Nop = 0 => "nop",
        /// −x
        Neg = 1 => "neg",
        /// |x|
        Abs = 2 => "abs",
        /// −|x|
        Nab = 3 => "nab",
    }
}

isa_enum! {
    /// Output modifier (`OMOD`, §4.7).
    pub enum Omod {
        /// ×1
        X1 = 0 => "x1",
        /// ×2
        X2 = 1 => "x2",
        /// ×4
        X4 = 2 => "x4",
        /// ×8
        X8 = 3 => "x8",
        /// ÷2
        D2 = 4 => "d2",
        /// ÷4
        D4 = 5 => "d4",
        /// ÷8
        D8 = 6 => "d8",
        /// No modifier: no scaling, no NaN standardisation, no flush, no clamp.
        Disabled = 7 => "off",
    }
}

isa_enum! {
    /// RGB opcode (`RGB_OP`, §4.6.1). 6 and 13–15 are undefined.
    pub enum RgbOp {
        /// A·B + C
        Mad = 0 => "mad",
        /// 3-component dot product, broadcast
        Dp3 = 1 => "dp3",
        /// 4-component dot product, broadcast
        Dp4 = 2 => "dp4",
        /// A.r·B.r + A.g·B.g + C.b, broadcast
        D2a = 3 => "d2a",
        /// A < B ? A : B
        Min = 4 => "min",
        /// A > B ? A : B
        Max = 5 => "max",
        /// C > 0.5 ? A : B
        Cnd = 7 => "cnd",
        /// C >= 0 ? A : B
        Cmp = 8 => "cmp",
        /// A − floor(A)
        Frc = 9 => "frc",
        /// The alpha unit's scalar, replicated
        Sop = 10 => "sop",
        /// Horizontal derivative multiply-add
        Mdh = 11 => "mdh",
        /// Vertical derivative multiply-add
        Mdv = 12 => "mdv",
    }
}

isa_enum! {
    /// Alpha opcode (`ALPHA_OP`, §4.6.2). 4 is undefined.
    pub enum AlphaOp {
        /// A·B + C
        Mad = 0 => "mad",
        /// The RGB unit's dot product
        Dp = 1 => "dp",
        /// A < B ? A : B
        Min = 2 => "min",
        /// A > B ? A : B
        Max = 3 => "max",
        /// C > 0.5 ? A : B
        Cnd = 5 => "cnd",
        /// C >= 0 ? A : B
        Cmp = 6 => "cmp",
        /// A − floor(A)
        Frc = 7 => "frc",
        /// 2^A
        Ex2 = 8 => "ex2",
        /// log2(A)
        Ln2 = 9 => "ln2",
        /// 1/A
        Rcp = 10 => "rcp",
        /// 1/sqrt(A), no absolute value
        Rsq = 11 => "rsq",
        /// sin(2πA)
        Sin = 12 => "sin",
        /// cos(2πA)
        Cos = 13 => "cos",
        /// Horizontal derivative multiply-add
        Mdh = 14 => "mdh",
        /// Vertical derivative multiply-add
        Mdv = 15 => "mdv",
    }
}

isa_enum! {
    /// Flow-control operation (`US_FC_INST.OP`, §6.1).
    pub enum FcOp {
        /// Jump (IF, ELSE, ENDIF, CALL, RET).
        Jump = 0 => "jump",
        /// Start a loop with aL.
        Loop = 1 => "loop",
        /// End a loop with aL.
        EndLoop = 2 => "endloop",
        /// Start a repeat.
        Rep = 3 => "rep",
        /// End a repeat.
        EndRep = 4 => "endrep",
        /// Leave the innermost LOOP.
        BreakLoop = 5 => "breakloop",
        /// Leave the innermost REP.
        BreakRep = 6 => "breakrep",
        /// Continue with the next iteration.
        Continue = 7 => "continue",
    }
}

isa_enum! {
    /// Address-stack operation (`A_OP`, §6.5). 3 is undefined.
    pub enum AOp {
        /// No stack change.
        None = 0 => "none",
        /// If jumping, pop and jump to the popped address.
        Pop = 1 => "pop",
        /// If jumping, push the return address.
        Push = 2 => "push",
    }
}

isa_enum! {
    /// Branch-counter operation (`B_OP0`, `B_OP1`, §6.4). 3 is undefined.
    pub enum BOp {
        /// No change.
        None = 0 => "none",
        /// Decrement by `B_POP_CNT`.
        Decr = 1 => "decr",
        /// Increment / switch off dissenting processors.
        Incr = 2 => "incr",
    }
}

isa_enum! {
    /// Texture operation (`US_TEX_INST.INST`, §5.2).
    pub enum TexOp {
        /// Nothing read or written (may still acquire the semaphore).
        Nop = 0 => "nop",
        /// Lookup at (S, T, R).
        Ld = 1 => "ld",
        /// Kill if any of S, T, R, Q < 0.
        Kill = 2 => "kill",
        /// Projected lookup at (S/Q, T/Q, R/Q).
        Proj = 3 => "proj",
        /// R5xx lookup with LOD bias (single-level inputs: a plain lookup).
        LodBias = 4 => "lodbias",
        /// R5xx lookup with explicit LOD (single-level inputs: a plain lookup).
        Lod = 5 => "lod",
        /// R5xx lookup with gradients from word 3 (single-level inputs: a plain lookup).
        Dxdy = 6 => "dxdy",
        /// Uncached read of memory written by uncached (UMRT) writes (ctm).
        LdUncached = 7 => "ld_uncached",
    }
}

isa_enum! {
    /// Texture channel selector (2-bit swizzles of §5.1).
    pub enum Chan {
        /// Red / S.
        R = 0 => "r",
        /// Green / T.
        G = 1 => "g",
        /// Blue / R.
        B = 2 => "b",
        /// Alpha / Q.
        A = 3 => "a",
    }
}
