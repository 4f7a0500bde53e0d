//! Flow control of one group (the DPP flow-control rules): branch counters, loop
//! frames with aL, the address stack, and the execution of one
//! flow-control instruction on the group's lane masks. The interpreter and
//! the JIT both go through here; compiled loop regions perform only the
//! transitions that keep a loop going and hand every other one back.

use super::{MAX_DEPTH, RunError, Stack, first_lane};
use ctm_jit::branch;
use ctm_jit::ir::{Fc, FcOp, StackOp};
use ctm_jit::state::{GROUP_LANES, Lanes, Mask, Uniforms};

/// One loop frame (docs/isa.md §6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopFrame {
    /// Iterations left.
    pub count: u32,
    /// Lanes that entered the loop.
    pub entry: Mask,
    /// Lanes held by BREAK until the loop ends.
    pub broken: Mask,
    /// Lanes held by CONTINUE until the loop's end instruction.
    pub continued: Mask,
    /// A LOOP frame (else REP).
    pub is_loop: bool,
}

/// The flow-control state of a group, read-only (for observers such as
/// the tracer, [`crate::runtime::Engine::observe_flow`]).
#[derive(Clone, Copy, Debug)]
pub struct FlowView<'a> {
    /// Each lane's branch counter (meaningful while the lane is inactive).
    pub branch_counters: &'a [i32; GROUP_LANES],
    /// The loop stack, outermost first.
    pub loops: &'a [LoopFrame],
    /// The aL stack (one entry per LOOP frame), outermost first.
    pub al: &'a [i32],
    /// The address stack (return addresses), oldest first.
    pub returns: &'a [u16],
}

/// Flow-control state of one group. A row's groups take turns with one
/// (see [`Flow::restart`]), so that its stacks keep their memory.
#[derive(Default)]
pub(super) struct Flow {
    pub(super) bc: [i32; GROUP_LANES],
    pub(super) loops: Vec<LoopFrame>,
    pub(super) al: Vec<i32>,
    pub(super) ret: Vec<u16>,
}

impl Flow {
    /// The state at a group's start: branch counters zero, stacks empty
    /// (their memory kept for the next group).
    pub(super) fn restart(&mut self) {
        self.bc = [0; GROUP_LANES];
        self.loops.clear();
        self.al.clear();
        self.ret.clear();
    }

    /// The state, read-only.
    pub(super) fn view(&self) -> FlowView<'_> {
        FlowView {
            branch_counters: &self.bc,
            loops: &self.loops,
            al: &self.al,
            returns: &self.ret,
        }
    }

    /// Lanes a loop frame holds (broken or continued): they take no part in
    /// votes, B_ELSE or branch-counter operations (§6.7).
    pub(super) fn held(&self) -> Mask {
        self.loops.iter().fold(0, |m, f| m | f.broken | f.continued)
    }
}

/// Executes one flow-control instruction for the group (the DPP flow-control rules)
/// and returns the next pc.
pub(super) fn exec_fc(
    fc: &Fc,
    pc: u16,
    lanes: &mut Lanes,
    flow: &mut Flow,
    uniforms: &Uniforms,
    len: u16,
    pixels: &[(u32, u32); GROUP_LANES],
) -> Result<u16, RunError> {
    let at = At { pc, pixels };
    let running = lanes.running;
    let k = uniforms.ints[usize::from(fc.int_addr) % uniforms.ints.len()];
    let is_end = matches!(fc.op, FcOp::EndLoop | FcOp::EndRep);
    if is_end && k.count == 0 {
        // Zero-count landing (§6.6): the LOOP pushed nothing.
        return Ok(pc + 1);
    }
    check_frame(fc, &at, flow, running)?;
    if is_end {
        let top = flow.loops.last_mut().expect("checked above");
        lanes.active |= top.continued & running;
        top.continued = 0;
    }
    if fc.b_else {
        let held = flow.held();
        branch::else_wake(&mut lanes.active, running, &mut flow.bc, held);
    }
    let active = lanes.active & running;
    let want = branch::wanted(fc, lanes, uniforms) & active;
    let jump = branch::decide(fc, want, active);
    let jump = stacks(fc, &at, k, lanes, flow, want, jump)?;
    counters(fc, &at, lanes, flow, want, jump)?;
    if !jump {
        return Ok(pc + 1);
    }
    target(fc, &at, flow, len, (running, active))
}

/// The instruction being executed, for errors: its pc and the group's
/// pixels.
struct At<'a> {
    pc: u16,
    pixels: &'a [(u32, u32); GROUP_LANES],
}

impl At<'_> {
    /// The pixel of the first lane of `m`.
    fn pixel(&self, m: Mask) -> (u32, u32) {
        self.pixels[first_lane(m)]
    }
}

/// The loop frame an end, break or continue needs is there and of its
/// kind.
fn check_frame(fc: &Fc, at: &At<'_>, flow: &Flow, running: Mask) -> Result<(), RunError> {
    let needs_frame = matches!(
        fc.op,
        FcOp::EndLoop | FcOp::EndRep | FcOp::BreakLoop | FcOp::BreakRep | FcOp::Continue
    );
    if !needs_frame {
        return Ok(());
    }
    let Some(top) = flow.loops.last() else {
        return Err(RunError::Underflow {
            pc: at.pc,
            stack: Stack::Loop,
            pixel: at.pixel(running),
        });
    };
    let want_loop = match fc.op {
        FcOp::EndLoop | FcOp::BreakLoop => Some(true),
        FcOp::EndRep | FcOp::BreakRep => Some(false),
        _ => None,
    };
    if let Some(w) = want_loop
        && w != top.is_loop
    {
        return Err(RunError::FrameMismatch {
            pc: at.pc,
            op: op_name(fc.op),
            frame: if top.is_loop { "LOOP" } else { "REP" },
            pixel: at.pixel(running),
        });
    }
    Ok(())
}

/// The loop stack's part (§6.6): LOOP/REP push a frame, their ends count
/// down, BREAK and CONTINUE hold lanes; returns whether the instruction
/// jumps after all.
fn stacks(
    fc: &Fc,
    at: &At<'_>,
    k: ctm_jit::state::IntConst,
    lanes: &mut Lanes,
    flow: &mut Flow,
    want: Mask,
    mut jump: bool,
) -> Result<bool, RunError> {
    let (running, active) = (lanes.running, lanes.active & lanes.running);
    match fc.op {
        FcOp::Jump => {}
        FcOp::Loop | FcOp::Rep => {
            if k.count == 0 {
                jump = true;
            } else if !jump {
                if flow.loops.len() >= MAX_DEPTH {
                    return Err(RunError::Overflow {
                        pc: at.pc,
                        stack: Stack::Loop,
                        pixel: at.pixel(active),
                    });
                }
                flow.loops.push(LoopFrame {
                    count: u32::from(k.count),
                    entry: active,
                    broken: 0,
                    continued: 0,
                    is_loop: fc.op == FcOp::Loop,
                });
                if fc.op == FcOp::Loop {
                    flow.al.push(i32::from(k.init));
                }
            }
        }
        FcOp::EndLoop | FcOp::EndRep => {
            let top = flow.loops.last_mut().expect("checked above");
            top.count -= 1;
            if top.count == 0 {
                jump = false;
            }
            if jump {
                if let Some(al) = flow.al.last_mut().filter(|_| fc.op == FcOp::EndLoop) {
                    *al += i32::from(k.step);
                }
            } else {
                lanes.active |= top.broken & running;
                pop_frame(flow);
            }
        }
        FcOp::BreakLoop | FcOp::BreakRep => {
            let top = flow.loops.last_mut().expect("checked above");
            top.broken |= want;
            lanes.active &= !want;
            jump = top.entry & running & !top.broken == 0;
            if jump {
                lanes.active |= top.broken & running;
                pop_frame(flow);
            }
        }
        FcOp::Continue => {
            let top = flow.loops.last_mut().expect("checked above");
            top.continued |= want;
            lanes.active &= !want;
            jump = top.entry & running & !(top.broken | top.continued) == 0;
        }
    }
    Ok(jump)
}

/// The branch counters of the lanes no loop holds (§6.4).
fn counters(
    fc: &Fc,
    at: &At<'_>,
    lanes: &mut Lanes,
    flow: &mut Flow,
    want: Mask,
    jump: bool,
) -> Result<(), RunError> {
    let free = lanes.running & !flow.held();
    let op = if jump { fc.jump } else { fc.stay };
    branch::count(
        (op, fc.pop),
        &mut lanes.active,
        &mut flow.bc,
        (free, want, jump),
    )
    .map_err(|l| RunError::Overflow {
        pc: at.pc,
        stack: Stack::Branch,
        pixel: at.pixels[l],
    })
}

/// Where a jump goes: the target, or the address stack's top for a
/// return (a call pushes the next pc); past a LOOP/REP's landing where
/// the construct says so. `running` and `active` are the lanes at the
/// vote, for errors.
fn target(
    fc: &Fc,
    at: &At<'_>,
    flow: &mut Flow,
    len: u16,
    (running, active): (Mask, Mask),
) -> Result<u16, RunError> {
    let pc = at.pc;
    if fc.stack == StackOp::Push {
        if flow.ret.len() >= MAX_DEPTH {
            return Err(RunError::Overflow {
                pc,
                stack: Stack::Address,
                pixel: at.pixel(active),
            });
        }
        flow.ret.push(pc + 1);
    }
    let mut target = if fc.stack == StackOp::Pop {
        flow.ret.pop().ok_or(RunError::Underflow {
            pc,
            stack: Stack::Address,
            pixel: at.pixel(running),
        })?
    } else {
        fc.target
    };
    if fc.skip_target && matches!(fc.op, FcOp::Loop | FcOp::Rep) {
        target += 1;
    }
    if target > len {
        return Err(RunError::JumpOutOfRange {
            pc,
            target,
            len,
            pixel: at.pixel(running),
        });
    }
    Ok(target)
}

fn pop_frame(flow: &mut Flow) {
    if let Some(f) = flow.loops.pop()
        && f.is_loop
    {
        flow.al.pop();
    }
}

fn op_name(op: FcOp) -> &'static str {
    match op {
        FcOp::Jump => "JUMP",
        FcOp::Loop => "LOOP",
        FcOp::EndLoop => "ENDLOOP",
        FcOp::Rep => "REP",
        FcOp::EndRep => "ENDREP",
        FcOp::BreakLoop => "BREAKLOOP",
        FcOp::BreakRep => "BREAKREP",
        FcOp::Continue => "CONTINUE",
    }
}
