//! The declarative table of the DPP instruction encoding: every field of every
//! word of the four instruction types and every opcode, `docs/isa.md` §2–§6.
//!
//! This module (the field values in `codes.rs`) is the only description of
//! the bit layout in ctm. Decode, encode, the verbose disassembly, the
//! assembler's raw field syntax and the random program generator are all
//! derived from it (see [`crate::isa::layout`]).
//!
//! Where the record is silent the choice is marked (ctm) and kept here:
//! * swizzle code 7 is treated as an undefined encoding (decode error), not as 0.0;
//! * the uncached lookup `LOOKUP_UNCACHED` is texture opcode 7, the one value
//!   R5xx leaves unused (§5.2);
//! * the R5xx lookups `LODBIAS`, `LOD` and `DXDY` (4–6) decode; CTM inputs have
//!   a single level, so they behave as plain lookups when executed.

use super::layout::layout;

mod codes;
pub use codes::*;

layout! {
    /// Word 0 of every instruction, `US_CMN_INST` (§3).
    pub struct Cmn {
        /// Instruction type.
        ty: InstType = [1:0] "TYPE",
        /// Wait for the texture semaphore before issuing.
        tex_sem_wait: bool = [2:2] "TEX_SEM_WAIT",
        /// Predication of the R,G,B channels (FC: jump predicate).
        rgb_pred_sel: PredSel = [5:3] "RGB_PRED_SEL",
        /// Invert the RGB predicate.
        rgb_pred_inv: bool = [6:6] "RGB_PRED_INV",
        /// Inactive processors write too.
        write_inactive: bool = [7:7] "WRITE_INACTIVE",
        /// Active processors may terminate after this instruction.
        last: bool = [8:8] "LAST",
        /// Idle cycle after this instruction (hazard avoidance).
        nop: bool = [9:9] "NOP",
        /// Wait for outstanding ALU work.
        alu_wait: bool = [10:10] "ALU_WAIT",
        /// Temporary write mask, bit 0 = R, 1 = G, 2 = B.
        rgb_wmask: u8 = [13:11] "RGB_WMASK",
        /// Temporary write of alpha.
        alpha_wmask: bool = [14:14] "ALPHA_WMASK",
        /// Output (OUT) or predicate (ALU) mask, bit 0 = R, 1 = G, 2 = B.
        rgb_omask: u8 = [17:15] "RGB_OMASK",
        /// Output (OUT) or predicate (ALU) write of alpha.
        alpha_omask: bool = [18:18] "ALPHA_OMASK",
        /// Clamp the RGB result to [0, 1].
        rgb_clamp: bool = [19:19] "RGB_CLAMP",
        /// Clamp the alpha result to [0, 1].
        alpha_clamp: bool = [20:20] "ALPHA_CLAMP",
        /// Channel feeding the ALU result.
        alu_result_sel: ResultSel = [21:21] "ALU_RESULT_SEL",
        /// Invert the alpha predicate.
        alpha_pred_inv: bool = [22:22] "ALPHA_PRED_INV",
        /// Comparison that sets the ALU result.
        alu_result_op: CmpOp = [24:23] "ALU_RESULT_OP",
        /// Predication of the alpha channel.
        alpha_pred_sel: PredSel = [27:25] "ALPHA_PRED_SEL",
        /// Statistics write enables (no architectural effect).
        stat_we: u8 = [31:28] "STAT_WE",
    }
    reserved []
}

layout! {
    /// Words 1 and 2 of ALU/OUTPUT instructions, `US_ALU_RGB_ADDR` and
    /// `US_ALU_ALPHA_ADDR` (§4.1, §4.3): three source addresses and the
    /// presubtract operation.
    pub struct AddrWord {
        /// Source 0 address.
        addr0: u8 = [7:0] "ADDR0",
        /// Source 0 reads the constant file.
        addr0_const: bool = [8:8] "ADDR0_CONST",
        /// Source 0 adds aL.
        addr0_rel: bool = [9:9] "ADDR0_REL",
        /// Source 1 address.
        addr1: u8 = [17:10] "ADDR1",
        /// Source 1 reads the constant file.
        addr1_const: bool = [18:18] "ADDR1_CONST",
        /// Source 1 adds aL.
        addr1_rel: bool = [19:19] "ADDR1_REL",
        /// Source 2 address.
        addr2: u8 = [27:20] "ADDR2",
        /// Source 2 reads the constant file.
        addr2_const: bool = [28:28] "ADDR2_CONST",
        /// Source 2 adds aL.
        addr2_rel: bool = [29:29] "ADDR2_REL",
        /// Presubtract operation.
        srcp_op: SrcpOp = [31:30] "SRCP_OP",
    }
    reserved []
}

layout! {
    /// Word 3 of ALU/OUTPUT instructions, `US_ALU_RGB_INST` (§4.2).
    pub struct RgbInst {
        /// Input A select.
        sel_a: Sel = [1:0] "RGB_SEL_A",
        /// Input A, red channel swizzle.
        red_swiz_a: Swz = [4:2] "RED_SWIZ_A",
        /// Input A, green channel swizzle.
        green_swiz_a: Swz = [7:5] "GREEN_SWIZ_A",
        /// Input A, blue channel swizzle.
        blue_swiz_a: Swz = [10:8] "BLUE_SWIZ_A",
        /// Input A modifier.
        mod_a: Mod = [12:11] "RGB_MOD_A",
        /// Input B select.
        sel_b: Sel = [14:13] "RGB_SEL_B",
        /// Input B, red channel swizzle.
        red_swiz_b: Swz = [17:15] "RED_SWIZ_B",
        /// Input B, green channel swizzle.
        green_swiz_b: Swz = [20:18] "GREEN_SWIZ_B",
        /// Input B, blue channel swizzle.
        blue_swiz_b: Swz = [23:21] "BLUE_SWIZ_B",
        /// Input B modifier.
        mod_b: Mod = [25:24] "RGB_MOD_B",
        /// RGB output modifier.
        omod: Omod = [28:26] "OMOD",
        /// OUT: render target; ALU: predicate comparison (a [`CmpOp`] value).
        target: u8 = [30:29] "TARGET",
        /// Update the ALU result.
        alu_wmask: bool = [31:31] "ALU_WMASK",
    }
    reserved []
}

layout! {
    /// Word 4 of ALU/OUTPUT instructions, `US_ALU_ALPHA_INST` (§4.2).
    pub struct AlphaInst {
        /// Alpha opcode.
        op: AlphaOp = [3:0] "ALPHA_OP",
        /// Alpha destination temporary.
        addrd: u8 = [10:4] "ALPHA_ADDRD",
        /// Add aL to the alpha destination.
        addrd_rel: bool = [11:11] "ALPHA_ADDRD_REL",
        /// Input A select.
        sel_a: Sel = [13:12] "ALPHA_SEL_A",
        /// Input A swizzle.
        swiz_a: Swz = [16:14] "ALPHA_SWIZ_A",
        /// Input A modifier.
        mod_a: Mod = [18:17] "ALPHA_MOD_A",
        /// Input B select.
        sel_b: Sel = [20:19] "ALPHA_SEL_B",
        /// Input B swizzle.
        swiz_b: Swz = [23:21] "ALPHA_SWIZ_B",
        /// Input B modifier.
        mod_b: Mod = [25:24] "ALPHA_MOD_B",
        /// Alpha output modifier.
        omod: Omod = [28:26] "OMOD",
        /// OUT: render target; ALU: predicate comparison (a [`CmpOp`] value).
        target: u8 = [30:29] "TARGET",
        /// Write the alpha result to the depth (conditional) output.
        w_omask: bool = [31:31] "W_OMASK",
    }
    reserved []
}

layout! {
    /// Word 5 of ALU/OUTPUT instructions, `US_ALU_RGBA_INST` (§4.2): the RGB
    /// opcode and destination and both C inputs.
    pub struct RgbaInst {
        /// RGB opcode.
        op: RgbOp = [3:0] "RGB_OP",
        /// RGB destination temporary.
        addrd: u8 = [10:4] "RGB_ADDRD",
        /// Add aL to the RGB destination.
        addrd_rel: bool = [11:11] "RGB_ADDRD_REL",
        /// RGB input C select.
        sel_c: Sel = [13:12] "RGB_SEL_C",
        /// RGB input C, red channel swizzle.
        red_swiz_c: Swz = [16:14] "RED_SWIZ_C",
        /// RGB input C, green channel swizzle.
        green_swiz_c: Swz = [19:17] "GREEN_SWIZ_C",
        /// RGB input C, blue channel swizzle.
        blue_swiz_c: Swz = [22:20] "BLUE_SWIZ_C",
        /// RGB input C modifier.
        mod_c: Mod = [24:23] "RGB_MOD_C",
        /// Alpha input C select.
        alpha_sel_c: Sel = [26:25] "ALPHA_SEL_C",
        /// Alpha input C swizzle.
        alpha_swiz_c: Swz = [29:27] "ALPHA_SWIZ_C",
        /// Alpha input C modifier.
        alpha_mod_c: Mod = [31:30] "ALPHA_MOD_C",
    }
    reserved []
}

layout! {
    /// Word 2 of FC instructions, `US_FC_INST` (§6.1).
    pub struct FcInst {
        /// Operation.
        op: FcOp = [2:0] "OP",
        /// Swap the innermost level before evaluating.
        b_else: bool = [4:4] "B_ELSE",
        /// Jump if any (1) or all (0) active processors want to.
        jump_any: bool = [5:5] "JUMP_ANY",
        /// Address-stack operation.
        a_op: AOp = [7:6] "A_OP",
        /// Jump-function truth table (§6.2).
        jump_func: u8 = [15:8] "JUMP_FUNC",
        /// Decrement amount for `DECR`.
        b_pop_cnt: u8 = [20:16] "B_POP_CNT",
        /// Branch-counter operation when staying.
        b_op0: BOp = [25:24] "B_OP0",
        /// Branch-counter operation when jumping.
        b_op1: BOp = [27:26] "B_OP1",
        /// R5xx: uncovered pixels do not vote (no effect in CTM).
        ignore_uncovered: bool = [28:28] "IGNORE_UNCOVERED",
    }
    reserved [3:3, 23:21, 31:29]
}

layout! {
    /// Word 3 of FC instructions, `US_FC_ADDR` (§6.1).
    pub struct FcAddr {
        /// Bit of the boolean constant register feeding the jump function.
        bool_addr: u8 = [4:0] "BOOL_ADDR",
        /// Integer constant used by loop operations.
        int_addr: u8 = [12:8] "INT_ADDR",
        /// Target instruction.
        jump_addr: u16 = [24:16] "JUMP_ADDR",
        /// Target is an absolute slot rather than relative to the load offset.
        jump_global: bool = [31:31] "JUMP_GLOBAL",
    }
    reserved [7:5, 15:13, 30:25]
}

layout! {
    /// Word 1 of TEX instructions, `US_TEX_INST` (§5.1).
    pub struct TexInst {
        /// Input (sampler) index.
        tex_id: u8 = [19:16] "TEX_ID",
        /// Operation.
        op: TexOp = [24:22] "INST",
        /// Hold the semaphore until this result is written.
        sem_acquire: bool = [25:25] "TEX_SEM_ACQUIRE",
        /// R5xx: no fetch for uncovered pixels (no effect in CTM).
        ignore_uncovered: bool = [26:26] "IGNORE_UNCOVERED",
        /// Coordinates are in texel units.
        unscaled: bool = [27:27] "UNSCALED",
    }
    reserved [15:0, 21:20, 31:28]
}

layout! {
    /// Word 2 of TEX instructions, `US_TEX_ADDR` (§5.1).
    pub struct TexAddr {
        /// Coordinate temporary.
        src_addr: u8 = [6:0] "SRC_ADDR",
        /// Add aL to the coordinate address.
        src_addr_rel: bool = [7:7] "SRC_ADDR_REL",
        /// Source channel used as S.
        src_s_swiz: Chan = [9:8] "SRC_S_SWIZ",
        /// Source channel used as T.
        src_t_swiz: Chan = [11:10] "SRC_T_SWIZ",
        /// Source channel used as R.
        src_r_swiz: Chan = [13:12] "SRC_R_SWIZ",
        /// Source channel used as Q.
        src_q_swiz: Chan = [15:14] "SRC_Q_SWIZ",
        /// Destination temporary.
        dst_addr: u8 = [22:16] "DST_ADDR",
        /// Add aL to the destination address.
        dst_addr_rel: bool = [23:23] "DST_ADDR_REL",
        /// Returned channel written to destination R.
        dst_r_swiz: Chan = [25:24] "DST_R_SWIZ",
        /// Returned channel written to destination G.
        dst_g_swiz: Chan = [27:26] "DST_G_SWIZ",
        /// Returned channel written to destination B.
        dst_b_swiz: Chan = [29:28] "DST_B_SWIZ",
        /// Returned channel written to destination A.
        dst_a_swiz: Chan = [31:30] "DST_A_SWIZ",
    }
    reserved []
}

layout! {
    /// Word 3 of TEX instructions, `US_TEX_ADDR_DXDY` (§5.1; `DY_ADDR_REL` at
    /// bit 23 per §10).
    pub struct TexDxdy {
        /// X-gradient temporary.
        dx_addr: u8 = [6:0] "DX_ADDR",
        /// Add aL to the X-gradient address.
        dx_addr_rel: bool = [7:7] "DX_ADDR_REL",
        /// Channel used as dS/dx.
        dx_s_swiz: Chan = [9:8] "DX_S_SWIZ",
        /// Channel used as dT/dx.
        dx_t_swiz: Chan = [11:10] "DX_T_SWIZ",
        /// Channel used as dR/dx.
        dx_r_swiz: Chan = [13:12] "DX_R_SWIZ",
        /// Channel used as dQ/dx.
        dx_q_swiz: Chan = [15:14] "DX_Q_SWIZ",
        /// Y-gradient temporary.
        dy_addr: u8 = [22:16] "DY_ADDR",
        /// Add aL to the Y-gradient address.
        dy_addr_rel: bool = [23:23] "DY_ADDR_REL",
        /// Channel used as dS/dy.
        dy_s_swiz: Chan = [25:24] "DY_S_SWIZ",
        /// Channel used as dT/dy.
        dy_t_swiz: Chan = [27:26] "DY_T_SWIZ",
        /// Channel used as dR/dy.
        dy_r_swiz: Chan = [29:28] "DY_R_SWIZ",
        /// Channel used as dQ/dy.
        dy_q_swiz: Chan = [31:30] "DY_Q_SWIZ",
    }
    reserved []
}

layout! {
    /// A word the instruction type does not use (FC words 1, 4, 5; TEX words
    /// 4, 5): all bits reserved, written as 0.
    pub struct Unused {}
    reserved [31:0]
}

/// One word slot of an instruction type: its position and register name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordSlot {
    /// Word index 0–5.
    pub index: usize,
    /// Short register name used to qualify field names (`RGB_INST.OMOD`).
    pub name: &'static str,
    /// The word's fields.
    pub fields: &'static [super::layout::FieldInfo],
    /// The word's reserved ranges.
    pub reserved: &'static [(u8, u8)],
}

const fn slot(
    index: usize,
    name: &'static str,
    fields: &'static [super::layout::FieldInfo],
    reserved: &'static [(u8, u8)],
) -> WordSlot {
    WordSlot {
        index,
        name,
        fields,
        reserved,
    }
}

/// Word order of ALU and OUTPUT instructions (§2.1).
pub const ALU_WORDS: [WordSlot; 6] = [
    slot(0, "CMN", Cmn::FIELDS, Cmn::RESERVED),
    slot(1, "RGB_ADDR", AddrWord::FIELDS, AddrWord::RESERVED),
    slot(2, "ALPHA_ADDR", AddrWord::FIELDS, AddrWord::RESERVED),
    slot(3, "RGB_INST", RgbInst::FIELDS, RgbInst::RESERVED),
    slot(4, "ALPHA_INST", AlphaInst::FIELDS, AlphaInst::RESERVED),
    slot(5, "RGBA_INST", RgbaInst::FIELDS, RgbaInst::RESERVED),
];

/// Word order of FC instructions (§2.1: FC_INST is word 2, FC_ADDR word 3).
pub const FC_WORDS: [WordSlot; 6] = [
    slot(0, "CMN", Cmn::FIELDS, Cmn::RESERVED),
    slot(1, "UNUSED1", Unused::FIELDS, Unused::RESERVED),
    slot(2, "FC_INST", FcInst::FIELDS, FcInst::RESERVED),
    slot(3, "FC_ADDR", FcAddr::FIELDS, FcAddr::RESERVED),
    slot(4, "UNUSED4", Unused::FIELDS, Unused::RESERVED),
    slot(5, "UNUSED5", Unused::FIELDS, Unused::RESERVED),
];

/// Word order of TEX instructions (§2.1).
pub const TEX_WORDS: [WordSlot; 6] = [
    slot(0, "CMN", Cmn::FIELDS, Cmn::RESERVED),
    slot(1, "TEX_INST", TexInst::FIELDS, TexInst::RESERVED),
    slot(2, "TEX_ADDR", TexAddr::FIELDS, TexAddr::RESERVED),
    slot(3, "TEX_DXDY", TexDxdy::FIELDS, TexDxdy::RESERVED),
    slot(4, "UNUSED4", Unused::FIELDS, Unused::RESERVED),
    slot(5, "UNUSED5", Unused::FIELDS, Unused::RESERVED),
];
