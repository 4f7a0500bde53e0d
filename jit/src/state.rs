//! The machine state one group of quads executes on: the layout both engines
//! read and write (`DESIGN.md`: `#[repr(C)]`, offsets asserted, owned here).
//!
//! A group is [`GROUP_QUADS`] quads = [`GROUP_LANES`] lanes; lane `4q + l` is
//! lane `l` (top-left, top-right, bottom-left, bottom-right) of quad `q`.
//! Per-lane data is stored channel-major so that one channel of one quad is
//! one aligned F32X4: `temps[reg][chan][lane]`. Per-lane booleans are bit
//! masks ([`Mask`], bit = lane).

use crate::ir::{CONSTS, INT_CONSTS, TARGETS, TEMPS};

/// Quads per group.
pub const GROUP_QUADS: usize = 4;
/// Lanes per group.
pub const GROUP_LANES: usize = GROUP_QUADS * crate::quad::LANES;
/// One bit per lane.
pub type Mask = u32;
/// Every lane of a full group.
pub const ALL_LANES: Mask = (1 << GROUP_LANES) - 1;

/// One channel across the lanes of a group.
pub type Channel = [u32; GROUP_LANES];

/// Per-group, per-lane state.
#[derive(Clone)]
#[repr(C, align(16))]
pub struct Lanes {
    /// Temporaries r0–r127 as raw patterns, `[reg][chan][lane]`.
    pub temps: [[Channel; 4]; TEMPS],
    /// Render targets A–D, `[target][chan][lane]`.
    pub out: [[Channel; 4]; TARGETS],
    /// The conditional (depth) output value.
    pub depth: Channel,
    /// Predicate bits R, G, B, A.
    pub pred: [Mask; 4],
    /// The ALU result bit.
    pub alu_result: Mask,
    /// Lanes that are active (not switched off by flow control).
    pub active: Mask,
    /// Lanes that still execute: present, not finished, not killed.
    pub running: Mask,
    /// Lanes killed by KILL_LT_0.
    pub killed: Mask,
    /// Lanes outside the domain (they execute but never write outputs).
    pub helper: Mask,
    /// Output channels written, `[target][chan]`.
    pub out_written: [[Mask; 4]; TARGETS],
    /// Lanes that wrote the conditional value.
    pub depth_written: Mask,
    /// The innermost LOOP's aL (0 outside loops).
    pub al: i32,
    /// Quads present in this group (1..=GROUP_QUADS).
    pub quads: u32,
}

/// Byte offsets compiled code relies on.
pub mod offsets {
    use super::Lanes;
    use std::mem::offset_of;
    /// `Lanes::temps`.
    pub const TEMPS: usize = offset_of!(Lanes, temps);
    /// `Lanes::out`.
    pub const OUT: usize = offset_of!(Lanes, out);
    /// `Lanes::depth`.
    pub const DEPTH: usize = offset_of!(Lanes, depth);
    /// `Lanes::pred`.
    pub const PRED: usize = offset_of!(Lanes, pred);
    /// `Lanes::alu_result`.
    pub const ALU_RESULT: usize = offset_of!(Lanes, alu_result);
    /// `Lanes::active`.
    pub const ACTIVE: usize = offset_of!(Lanes, active);
    /// `Lanes::al`.
    pub const AL: usize = offset_of!(Lanes, al);
}

const _: () = {
    assert!(offsets::TEMPS == 0);
    assert!(offsets::OUT == 128 * 4 * GROUP_LANES * 4);
    assert!(offsets::DEPTH == offsets::OUT + 4 * 4 * GROUP_LANES * 4);
    assert!(offsets::PRED == offsets::DEPTH + GROUP_LANES * 4);
    assert!(offsets::ALU_RESULT == offsets::PRED + 16);
    assert!(offsets::ACTIVE == offsets::ALU_RESULT + 4);
    assert!(GROUP_LANES <= Mask::BITS as usize);
};

impl Lanes {
    /// A zeroed group state on the heap (it is about 33 KiB).
    pub fn new_boxed() -> Box<Lanes> {
        Box::new(Lanes {
            temps: [[[0; GROUP_LANES]; 4]; TEMPS],
            out: [[[0; GROUP_LANES]; 4]; TARGETS],
            depth: [0; GROUP_LANES],
            pred: [0; 4],
            alu_result: 0,
            active: 0,
            running: 0,
            killed: 0,
            helper: 0,
            out_written: [[0; 4]; TARGETS],
            depth_written: 0,
            al: 0,
            quads: 0,
        })
    }

    /// Zeroes everything and sets the number of present quads.
    pub fn reset(&mut self, quads: u32) {
        for reg in self.temps.iter_mut() {
            *reg = [[0; GROUP_LANES]; 4];
        }
        self.out = [[[0; GROUP_LANES]; 4]; TARGETS];
        self.depth = [0; GROUP_LANES];
        self.pred = [0; 4];
        self.alu_result = 0;
        self.active = 0;
        self.running = 0;
        self.killed = 0;
        self.helper = 0;
        self.out_written = [[0; 4]; TARGETS];
        self.depth_written = 0;
        self.al = 0;
        self.quads = quads;
    }

    /// Number of lanes present (4 per present quad).
    pub fn lane_count(&self) -> usize {
        self.quads as usize * crate::quad::LANES
    }
}

/// One integer (loop) constant, `spec/isa.md` §6.6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct IntConst {
    /// KR: iteration count 0–255.
    pub count: u8,
    /// KG: initial aL 0–255.
    pub init: u8,
    /// KB: aL step, signed.
    pub step: i8,
}

/// Values uniform over a run: the constant files.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Uniforms {
    /// Float constants c0–c255 as raw patterns.
    pub consts: [[u32; 4]; CONSTS],
    /// Integer constants i0–i31.
    pub ints: [IntConst; INT_CONSTS],
    /// The 32 boolean constants, bit k = b_k.
    pub bools: u32,
}

impl Default for Uniforms {
    fn default() -> Self {
        Uniforms {
            consts: [[0; 4]; CONSTS],
            ints: [IntConst::default(); INT_CONSTS],
            bools: 0,
        }
    }
}
