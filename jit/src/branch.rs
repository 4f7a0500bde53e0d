//! A JUMP's vote and branch counters (docs/isa.md §6.2–§6.4): `B_ELSE`,
//! the lanes that want to jump, and the counter operation of the way the
//! group goes. The runtime shim executes every flow-control instruction
//! with these; a compiled loop region's lock-step driver calls
//! [`region_jump`] for the IF, ELSE and ENDIF inside it — one definition
//! for both.

use crate::ir::{Counter, Fc, FcOp, StackOp};
use crate::state::{GROUP_LANES, Lanes, LoopState, Mask, STACK_DEPTH, Uniforms};

/// Lanes of `m`, one by one, lowest first.
pub fn each(m: Mask) -> impl Iterator<Item = usize> {
    let mut rest = m;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let l = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            l
        })
    })
}

/// Each lane's bit of a mask.
const BITS: [Mask; GROUP_LANES] = {
    let mut b = [0; GROUP_LANES];
    let mut l = 0;
    while l < GROUP_LANES {
        b[l] = 1 << l;
        l += 1;
    }
    b
};

/// −1 for the lanes of `m`, else 0, four lanes at a time where the host
/// has SSE2 (the rules below then loop over lanes without branches, which
/// the compiler turns into vector code).
#[inline]
fn lane_masks(m: Mask) -> [i32; GROUP_LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_and_si128, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_set1_epi32, _mm_storeu_si128,
        };
        let mut out = [0; GROUP_LANES];
        for (o, b) in out.chunks_exact_mut(4).zip(BITS.chunks_exact(4)) {
            // SAFETY: SSE2 is part of x86-64; the loads and the store
            // touch the four lanes of `b` and `o` (unaligned).
            unsafe {
                let b = _mm_loadu_si128(b.as_ptr().cast());
                let on = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(m as i32), b), b);
                _mm_storeu_si128(o.as_mut_ptr().cast(), on);
            }
        }
        out
    }
    #[cfg(not(target_arch = "x86_64"))]
    lane_by_lane(m)
}

/// [`lane_masks`], lane by lane.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn lane_by_lane(m: Mask) -> [i32; GROUP_LANES] {
    BITS.map(|b| -i32::from(m & b != 0))
}

/// The lanes whose value in `v` is negative (a lane mask's −1): the sign
/// bits, four lanes at a time where the host has SSE2.
#[inline]
fn mask_of(v: &[i32; GROUP_LANES]) -> Mask {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_castsi128_ps, _mm_loadu_si128, _mm_movemask_ps};
        let mut m = 0;
        for (k, four) in v.chunks_exact(4).enumerate() {
            // SAFETY: SSE2 is part of x86-64; the load reads the four
            // lanes of `four` (unaligned).
            let bits =
                unsafe { _mm_movemask_ps(_mm_castsi128_ps(_mm_loadu_si128(four.as_ptr().cast()))) };
            m |= (bits as Mask) << (4 * k);
        }
        m
    }
    #[cfg(not(target_arch = "x86_64"))]
    sign_bits(v)
}

/// [`mask_of`], lane by lane.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn sign_bits(v: &[i32; GROUP_LANES]) -> Mask {
    v.iter()
        .enumerate()
        .fold(0, |m, (l, &x)| m | ((x as u32) >> 31) << l)
}

/// `B_ELSE` (§6.4): among the lanes of `running` that no loop holds
/// (`held`), the active ones go to sleep with counter 0 and the sleeping
/// ones with counter 0 wake.
pub fn else_wake(active: &mut Mask, running: Mask, bc: &mut [i32; GROUP_LANES], held: Mask) {
    let free = running & !held;
    let old_active = *active & free;
    let mut level0 = [0; GROUP_LANES];
    for (z, &c) in level0.iter_mut().zip(bc.iter()) {
        *z = -i32::from(c == 0);
    }
    let level0 = mask_of(&level0);
    let wake = free & !*active & level0;
    for (c, m) in bc.iter_mut().zip(lane_masks(old_active)) {
        *c &= !m;
    }
    *active = (*active & !free) | wake;
}

/// The lanes whose jump function (§6.2) says jump: bit alu·4 + p·2 + b of
/// `func` for a lane with ALU result `alu` and predicate `p` (`b` is
/// uniform).
pub fn wanted(fc: &Fc, lanes: &Lanes, uniforms: &Uniforms) -> Mask {
    let b = (uniforms.bools >> (fc.bool_addr & 31)) & 1;
    let alu = lanes.alu_result;
    let p = match fc.pred.0 {
        Some(c) => lanes.pred[usize::from(c & 3)],
        None => !0,
    } ^ if fc.pred.1 { !0 } else { 0 };
    let mut want: Mask = 0;
    for (a, am) in [(0, !alu), (1, alu)] {
        for (q, pm) in [(0, !p), (1, p)] {
            if (fc.func >> (a * 4 + q * 2 + b)) & 1 != 0 {
                want |= am & pm;
            }
        }
    }
    want
}

/// The group's decision (§6.3) among the active lanes `voting`, `want` of
/// them wanting to jump: with `JUMP_ANY` it jumps if any wants to (never
/// when none votes), else if all do (always when none votes).
pub fn decide(fc: &Fc, want: Mask, voting: Mask) -> bool {
    if fc.any { want != 0 } else { want == voting }
}

/// Counter operation `op` (§6.4) of an instruction popping `pop` levels,
/// after the group decided (`jump`) with `want` the active lanes that
/// wanted to jump; `free` the running lanes no loop holds. `Err(lane)`: an
/// INCR takes `lane`'s counter to [`STACK_DEPTH`] (the first such lane; the
/// counters are then not to be used).
pub fn count(
    (op, pop): (Counter, u8),
    active: &mut Mask,
    bc: &mut [i32; GROUP_LANES],
    (free, want, jump): (Mask, Mask, bool),
) -> Result<(), usize> {
    match op {
        Counter::None => {}
        Counter::Incr => {
            let act = *active & free;
            let inc = lane_masks(free & !act);
            // A lane mask is −1: subtracting it counts one more.
            for (c, m) in bc.iter_mut().zip(inc) {
                *c -= m;
            }
            let mut deep = [0; GROUP_LANES];
            for ((d, &m), &c) in deep.iter_mut().zip(&inc).zip(bc.iter()) {
                *d = m & -i32::from(c >= STACK_DEPTH as i32);
            }
            let deep = mask_of(&deep);
            if deep != 0 {
                return Err(deep.trailing_zeros() as usize);
            }
            let leave = act & if jump { !want } else { want };
            for (c, m) in bc.iter_mut().zip(lane_masks(leave)) {
                *c &= !m;
            }
            *active &= !leave;
        }
        Counter::Decr => {
            let dec = lane_masks(free & !*active);
            for (c, m) in bc.iter_mut().zip(dec) {
                *c -= m & i32::from(pop);
            }
            let mut woke = [0; GROUP_LANES];
            for ((w, &m), &c) in woke.iter_mut().zip(&dec).zip(bc.iter()) {
                *w = m & c;
            }
            *active |= mask_of(&woke);
        }
    }
    Ok(())
}

/// What [`region_jump`] returns: the group stays.
pub const STAYS: u32 = 0;
/// What [`region_jump`] returns: the group jumps.
pub const JUMPS: u32 = 1;
/// What [`region_jump`] returns: a counter would overflow; nothing changed,
/// and the shim takes the instruction (and reports the error).
pub const OVERFLOWS: u32 = 2;

/// The fields of a JUMP that [`region_jump`] reads, in one word.
pub fn pack(fc: &Fc) -> u32 {
    let counter = |c: Counter| match c {
        Counter::None => 0,
        Counter::Decr => 1,
        Counter::Incr => 2,
    };
    u32::from(fc.func)
        | u32::from(fc.any) << 8
        | u32::from(fc.b_else) << 9
        | u32::from(fc.pred.0.is_some()) << 10
        | u32::from(fc.pred.0.unwrap_or(0) & 3) << 11
        | u32::from(fc.pred.1) << 13
        | u32::from(fc.bool_addr & 31) << 14
        | counter(fc.stay) << 19
        | counter(fc.jump) << 21
        | u32::from(fc.pop) << 23
}

/// The JUMP [`pack`] made `w` from (the fields it does not keep zero).
pub fn unpack(w: u32) -> Fc {
    let counter = |c: u32| match c & 3 {
        1 => Counter::Decr,
        2 => Counter::Incr,
        _ => Counter::None,
    };
    let bit = |k: u32| (w >> k) & 1 == 1;
    Fc {
        op: FcOp::Jump,
        func: w as u8,
        any: bit(8),
        b_else: bit(9),
        stack: StackOp::None,
        stay: counter(w >> 19),
        jump: counter(w >> 21),
        pop: (w >> 23) as u8,
        bool_addr: ((w >> 14) & 31) as u8,
        int_addr: 0,
        target: 0,
        pred: (bit(10).then_some(((w >> 11) & 3) as u8), bit(13)),
        skip_target: false,
        wait: false,
    }
}

/// The JUMP [`pack`]ed into `packed`, as a loop region's lock-step driver
/// takes it (`lanes`, `uniforms` and the loop's `state` as the region was
/// called with): `B_ELSE`, the group's decision, the counters of the way
/// it goes (lanes the loop frames hold left alone); returns [`STAYS`],
/// [`JUMPS`] or [`OVERFLOWS`] (then nothing is changed).
///
/// # Safety
/// The pointers are the region's arguments: valid, aligned, not aliased
/// elsewhere for the call.
pub unsafe extern "C" fn region_jump(
    lanes: *mut Lanes,
    uniforms: *const Uniforms,
    state: *mut LoopState,
    packed: u32,
) -> u32 {
    // SAFETY: the caller's contract.
    let (lanes, uniforms, state) = unsafe { (&mut *lanes, &*uniforms, &mut *state) };
    let fc = unpack(packed);
    let held = state.held | state.broken | state.continued;
    let (mut active, mut bc) = (lanes.active, state.branch_counters);
    if fc.b_else {
        else_wake(&mut active, lanes.running, &mut bc, held);
    }
    let voting = active & lanes.running;
    let want = wanted(&fc, lanes, uniforms) & voting;
    let jump = decide(&fc, want, voting);
    let op = if jump { fc.jump } else { fc.stay };
    let free = lanes.running & !held;
    if count((op, fc.pop), &mut active, &mut bc, (free, want, jump)).is_err() {
        return OVERFLOWS;
    }
    lanes.active = active;
    state.branch_counters = bc;
    if jump { JUMPS } else { STAYS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_lane_masks_match_their_lane_by_lane_definitions() {
        let mut x = 0x9E37_79B9u32;
        for _ in 0..1000 {
            let v: [i32; GROUP_LANES] = std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as i32
            });
            assert_eq!(mask_of(&v), sign_bits(&v));
        }
        for m in [0, 1, 0x8000_0001, 0xDEAD_BEEF, !0, x] {
            assert_eq!(lane_masks(m), lane_by_lane(m));
            assert_eq!(mask_of(&lane_masks(m)), m);
        }
    }

    #[test]
    fn pack_keeps_every_field_a_jump_reads() {
        let counters = [Counter::None, Counter::Decr, Counter::Incr];
        let mut n = 0u32;
        for func in [0u8, 0x0F, 0xF0, 0xA5, 0xFF] {
            for &stay in &counters {
                for &jump in &counters {
                    for pred in [(None, false), (Some(2), true), (Some(3), false)] {
                        n += 1;
                        let fc = Fc {
                            func,
                            any: n.is_multiple_of(2),
                            b_else: n.is_multiple_of(3),
                            stay,
                            jump,
                            pop: (n * 37 % 256) as u8,
                            bool_addr: (n % 32) as u8,
                            pred,
                            ..unpack(0)
                        };
                        assert_eq!(unpack(pack(&fc)), fc);
                    }
                }
            }
        }
    }
}
