//! The machine state one group of quads executes on: the layout both engines
//! read and write (`docs/design.md`: `#[repr(C)]`, offsets asserted, owned here).
//!
//! A group is [`GROUP_QUADS`] quads = [`GROUP_LANES`] lanes; lane `4q + l` is
//! lane `l` (top-left, top-right, bottom-left, bottom-right) of quad `q`.
//! Per-lane data is stored channel-major so that one channel of one quad is
//! one aligned F32X4: `temps[reg][chan][lane]`. Per-lane booleans are bit
//! masks ([`Mask`], bit = lane).

mod tex;
mod umrt;

pub use tex::{TexDesc, TexTable, tex_offsets};
pub use umrt::{UmrtLog, UncachedWrite, umrt_offsets};

use crate::ir::{CONSTS, INT_CONSTS, TARGETS, TEMPS};

/// Quads per group.
pub const GROUP_QUADS: usize = 8;
/// Lanes per group.
pub const GROUP_LANES: usize = GROUP_QUADS * crate::quad::LANES;
/// One bit per lane.
pub type Mask = u32;
/// Every lane of a full group.
pub const ALL_LANES: Mask = lanes_mask(GROUP_LANES);

/// The mask of the first `n` lanes (`n` up to the bits of a [`Mask`]).
pub const fn lanes_mask(n: usize) -> Mask {
    if n >= Mask::BITS as usize {
        Mask::MAX
    } else {
        (1 << n) - 1
    }
}

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
    /// `Lanes::running`.
    pub const RUNNING: usize = offset_of!(Lanes, running);
    /// `Lanes::killed`.
    pub const KILLED: usize = offset_of!(Lanes, killed);
    /// `Lanes::helper`.
    pub const HELPER: usize = offset_of!(Lanes, helper);
    /// `Lanes::out_written`.
    pub const OUT_WRITTEN: usize = offset_of!(Lanes, out_written);
    /// `Lanes::depth_written`.
    pub const DEPTH_WRITTEN: usize = offset_of!(Lanes, depth_written);
    /// `Lanes::al`.
    pub const AL: usize = offset_of!(Lanes, al);
    /// `Lanes::quads`.
    pub const QUADS: usize = offset_of!(Lanes, quads);
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

    /// Zeroes everything but the temporaries from `temps` on (which a
    /// program that uses fewer never reads) and the output and depth values
    /// (only lanes whose `out_written`/`depth_written` bit is set are ever
    /// read), and sets the number of present quads.
    pub fn reset(&mut self, quads: u32, temps: usize) {
        for reg in self.temps.iter_mut().take(temps) {
            *reg = [[0; GROUP_LANES]; 4];
        }
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

/// One integer (loop) constant, `docs/isa.md` §6.6.
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

/// The host side of a compiled clause: argument and result buffers for the
/// calls compiled code makes into the runtime (texture fetches, uncached
/// writes), plus the callbacks themselves. Per-lane data is channel-major
/// like [`Lanes`]: `args[chan][lane]`.
///
/// A compiled clause has the signature [`ClauseFn`]; it stores the operands
/// of a fetch or uncached write into `args` for the lanes of the quads it is
/// working on, calls the callback with the operation's node index within the
/// clause, the first lane, the number of lanes and the mask of lanes that
/// take part (bit 0 = `lane0`), and reads a fetch's four channels back from
/// `result`. A callback returns 0 on success; anything else stops the clause,
/// which returns that status (the host keeps the error).
#[repr(C, align(16))]
pub struct Io {
    /// Operands: coordinates S, T, R, Q, or value, x, y of an uncached write.
    pub args: [Channel; 4],
    /// Fetched channels R, G, B, A (zero on lanes outside the mask).
    pub result: [Channel; 4],
    /// Opaque host state for the callbacks.
    pub host: *mut std::ffi::c_void,
    /// Texture fetch: `(io, node, lane0, count, mask) -> status`.
    pub fetch: HostFn,
    /// Uncached write: `(io, node, lane0, count, mask) -> status`.
    pub umrt: HostFn,
    /// 1.0 in every lane: compiled code flushes a denormal `x` as `x · 1`
    /// under DAZ, and loads the factor so no optimiser can fold it away.
    pub one: [f32; 4],
    /// The inputs compiled code may read itself: 16 descriptors
    /// ([`TexTable`]), never null ([`TexTable::NONE`] when there are none).
    pub tex: *const TexDesc,
    /// Lookups that fell outside their surface in compiled code, as
    /// negative lane counts (the host adds them up and clears them).
    pub oob: [i32; 4],
    /// Where compiled code appends uncached writes itself ([`UmrtLog`]):
    /// the runtime sets it before calling a clause that writes, for as many
    /// entries as the clause's lanes can write, and takes them over after.
    pub umrt_log: UmrtLog,
    /// Float constant channels already broadcast: entry `4·n + c` holds
    /// channel `c` of `cN` in all four lanes. Compiled code reads the
    /// constants it addresses directly from here (one vector load, no
    /// broadcast at each use); the host fills the entries the program
    /// reads from the run's [`Uniforms`] before each call
    /// ([`Io::splat_consts`]).
    pub splat: [[u32; 4]; CONSTS * 4],
}

impl Io {
    /// Makes `splat` hold the channels `used` (`(n, c)` pairs) of
    /// `uniforms`' constants, writing only entries that differ.
    pub fn splat_consts(&mut self, uniforms: &Uniforms, used: &[(u8, u8)]) {
        for &(n, c) in used {
            let v = uniforms.consts[usize::from(n) % CONSTS][usize::from(c & 3)];
            let e = &mut self.splat[(usize::from(n) % CONSTS) * 4 + usize::from(c & 3)];
            if e[0] != v {
                *e = [v; 4];
            }
        }
    }
}

// SAFETY: `host` is set only for the duration of one clause call on the
// thread that owns the `Io` and is null otherwise; nothing else is shared.
unsafe impl Send for Io {}

/// A runtime callback of compiled code (see [`Io`]).
pub type HostFn = unsafe extern "C" fn(*mut Io, u32, u32, u32, u32) -> u32;

/// A compiled clause: `(lanes, uniforms, io) -> status` (0 = done).
pub type ClauseFn = unsafe extern "C" fn(*mut Lanes, *const Uniforms, *mut Io) -> u32;

/// The runtime shim's state of the innermost loop, handed to a compiled loop
/// region ([`crate::regions`]) and taken back when it returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct LoopState {
    /// Iterations left in the frame.
    pub count: u32,
    /// Lanes that entered the loop.
    pub entry: Mask,
    /// Lanes that broke out.
    pub broken: Mask,
    /// Lanes that continued (wait for the ENDLOOP).
    pub continued: Mask,
    /// aL of the frame (LOOP) — also kept in `Lanes::al`.
    pub al: i32,
    /// aL step per iteration (LOOP; 0 for REP).
    pub step: i32,
    /// Helper lanes of the group (not counted in pixel-instructions).
    pub helper: Mask,
    /// Lanes the outer loop frames hold (broken or continued): with this
    /// frame's `broken` and `continued`, the lanes branch-counter
    /// operations leave alone (docs/isa.md §6.4).
    pub held: Mask,
    /// Each lane's branch counter, which the lock-step driver's IF, ELSE
    /// and ENDIF update (docs/isa.md §6.4).
    pub branch_counters: [i32; GROUP_LANES],
    /// Instructions the group executed so far (the runaway budget's count).
    pub executed: u64,
    /// The runaway budget.
    pub budget: u64,
    /// Pixel-instructions counted so far.
    pub pixel_instructions: u64,
    /// Filled by a lane-wise region ([`crate::lanewise::Lanewise`]): per
    /// lane, where it left the loop — `iteration · clauses + j` for a break
    /// at the region's clause `j`, [`LANE_STAYED`] for a lane still in the
    /// loop when its count ran out, −1 for a lane that did not run.
    pub events: [i32; GROUP_LANES],
}

/// The depth of each flow-control stack, the branch counters' included:
/// an operation that would reach it is an overflow (docs/isa.md §6).
pub const STACK_DEPTH: usize = 32;

/// [`LoopState::events`] of a lane still in the loop when its count ran out.
pub const LANE_STAYED: i32 = i32::MAX;

/// How a compiled loop region returned: `kind << 16 | j`, `j` the position
/// of a clause in the region.
pub mod loop_exit {
    /// Stopped before clause `j` (it would exceed the budget).
    pub const BEFORE: u32 = 1;
    /// Clause `j` ran; its flow-control instruction is left to the shim.
    pub const AT_TERM: u32 = 2;
    /// Clause `j` returned a non-zero status.
    pub const FAILED: u32 = 3;
}

/// A compiled loop region: `(lanes, uniforms, io, state) -> exit`.
pub type LoopFn = unsafe extern "C" fn(*mut Lanes, *const Uniforms, *mut Io, *mut LoopState) -> u32;

/// Byte offsets of [`LoopState`] compiled code relies on.
pub mod loop_offsets {
    use super::LoopState;
    use std::mem::offset_of;
    /// `LoopState::count`.
    pub const COUNT: usize = offset_of!(LoopState, count);
    /// `LoopState::entry`.
    pub const ENTRY: usize = offset_of!(LoopState, entry);
    /// `LoopState::broken`.
    pub const BROKEN: usize = offset_of!(LoopState, broken);
    /// `LoopState::continued`.
    pub const CONTINUED: usize = offset_of!(LoopState, continued);
    /// `LoopState::al`.
    pub const AL: usize = offset_of!(LoopState, al);
    /// `LoopState::step`.
    pub const STEP: usize = offset_of!(LoopState, step);
    /// `LoopState::helper`.
    pub const HELPER: usize = offset_of!(LoopState, helper);
    /// `LoopState::held`.
    pub const HELD: usize = offset_of!(LoopState, held);
    /// `LoopState::executed`.
    pub const EXECUTED: usize = offset_of!(LoopState, executed);
    /// `LoopState::budget`.
    pub const BUDGET: usize = offset_of!(LoopState, budget);
    /// `LoopState::pixel_instructions`.
    pub const PIXEL_INSTRUCTIONS: usize = offset_of!(LoopState, pixel_instructions);
    /// `LoopState::events`.
    pub const EVENTS: usize = offset_of!(LoopState, events);
    /// `LoopState::branch_counters` (16-byte aligned).
    pub const BRANCH_COUNTERS: usize = offset_of!(LoopState, branch_counters);
    const _: () = assert!(BRANCH_COUNTERS.is_multiple_of(16));
}

/// A strip of whole quads along one quad row, run by a compiled strip
/// ([`StripFn`]): every lane in the domain, running and active. Lane `l` of
/// quad `q` is pixel `(i0 + 2q + (l & 1), j + (l >> 1))`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Strip {
    /// Per render target, where its elements of pixel rows `j` and `j + 1`
    /// start (element `i0`): `2 · quads` float32_4 elements (16 bytes each;
    /// float32_1, 4 bytes, for the targets [`Strip::narrow`] names),
    /// writable. Null for targets the program does not write.
    pub rows: [[*mut u8; 2]; TARGETS],
    /// Quads in the strip.
    pub quads: u32,
    /// The first pixel column.
    pub i0: u32,
    /// The upper pixel row.
    pub j: u32,
    /// The conditional value (r0.b), an f32 pattern.
    pub v: u32,
    /// A strip of a program that is one loop ([`crate::strip::StripLoop`]):
    /// where it records, for each lane of its quads, where the lane left
    /// the loop (as [`LoopState::events`], quad after quad: `4 · quads`
    /// entries, writable). Null for other strips.
    pub events: *mut i32,
    /// Render targets whose rows hold float32_1 elements (bit `t` = target
    /// `t`): the strip writes their red channel alone, 4 bytes per element
    /// (`2 · quads` of them from each row pointer); the others' rows hold
    /// float32_4 elements.
    pub narrow: u32,
}

/// A compiled strip: `(strip, uniforms, io) -> 0`, writing its outputs to
/// the strip's rows.
pub type StripFn = unsafe extern "C" fn(*const Strip, *const Uniforms, *mut Io) -> u32;

/// Byte offsets of [`Strip`] compiled code relies on.
pub mod strip_offsets {
    use super::Strip;
    use std::mem::offset_of;
    /// `Strip::rows`.
    pub const ROWS: usize = offset_of!(Strip, rows);
    /// `Strip::quads`.
    pub const QUADS: usize = offset_of!(Strip, quads);
    /// `Strip::i0`.
    pub const I0: usize = offset_of!(Strip, i0);
    /// `Strip::j`.
    pub const J: usize = offset_of!(Strip, j);
    /// `Strip::v`.
    pub const V: usize = offset_of!(Strip, v);
    /// `Strip::events`.
    pub const EVENTS: usize = offset_of!(Strip, events);
    /// `Strip::narrow`.
    pub const NARROW: usize = offset_of!(Strip, narrow);
}

/// Byte offsets of [`Io`] and [`Uniforms`] compiled code relies on.
pub mod io_offsets {
    use super::{Io, Uniforms};
    use std::mem::offset_of;
    /// `Io::args`.
    pub const ARGS: usize = offset_of!(Io, args);
    /// `Io::result`.
    pub const RESULT: usize = offset_of!(Io, result);
    /// `Io::fetch`.
    pub const FETCH: usize = offset_of!(Io, fetch);
    /// `Io::umrt`.
    pub const UMRT: usize = offset_of!(Io, umrt);
    /// `Io::one`.
    pub const ONE: usize = offset_of!(Io, one);
    /// `Io::tex`.
    pub const TEX: usize = offset_of!(Io, tex);
    /// `Io::oob`.
    pub const OOB: usize = offset_of!(Io, oob);
    /// `Io::umrt_log`.
    pub const UMRT_LOG: usize = offset_of!(Io, umrt_log);
    /// `Io::splat`.
    pub const SPLAT: usize = offset_of!(Io, splat);
    /// `Uniforms::consts`.
    pub const CONSTS: usize = offset_of!(Uniforms, consts);
    /// `Uniforms::bools`.
    pub const BOOLS: usize = offset_of!(Uniforms, bools);
    /// `Uniforms::ints` (three bytes each: count, initial aL, step).
    pub const INTS: usize = offset_of!(Uniforms, ints);
}

const _: () = {
    use std::mem::offset_of;
    assert!(io_offsets::ARGS == 0);
    assert!(io_offsets::RESULT == 4 * GROUP_LANES * 4);
    assert!(io_offsets::FETCH == io_offsets::RESULT + 4 * GROUP_LANES * 4 + 8);
    assert!(io_offsets::UMRT == io_offsets::FETCH + 8);
    assert!(io_offsets::ONE == io_offsets::UMRT + 8);
    assert!(io_offsets::TEX == io_offsets::ONE + 16);
    assert!(io_offsets::OOB == io_offsets::TEX + 8);
    assert!(io_offsets::SPLAT.is_multiple_of(16));
    assert!(tex_offsets::PAGES == 0 && tex_offsets::BASE_LOW == 8);
    assert!(tex_offsets::SIZE_F == 24 && tex_offsets::CHAN_OFF == 32);
    assert!(tex_offsets::FILL == 64 && tex_offsets::UNORM == 80);
    assert!(tex_offsets::UNORM_SCALE == 100 && tex_offsets::GATHER == 104);
    assert!(tex_offsets::FLAT == 112 && tex_offsets::SIZE == 120);
    assert!(io_offsets::CONSTS == 0);
    assert!(size_of::<IntConst>() == 3 && offset_of!(IntConst, step) == 2);
    assert!(offset_of!(Lanes, running) == offsets::ACTIVE + 4);
    assert!(offset_of!(Lanes, killed) == offsets::ACTIVE + 8);
    assert!(offset_of!(Lanes, helper) == offsets::ACTIVE + 12);
    assert!(offset_of!(Lanes, out_written) == offsets::ACTIVE + 16);
    assert!(offset_of!(Lanes, depth_written) == offsets::ACTIVE + 16 + 64);
    assert!(offsets::AL == offsets::ACTIVE + 16 + 68);
    assert!(offset_of!(Lanes, quads) == offsets::AL + 4);
};
