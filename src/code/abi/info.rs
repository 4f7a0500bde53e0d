//! What the notes say about a program (docs/abi.md §5–§6), and the notes
//! a program's code implies.

use super::*;

/// What the notes say about a program (§5–§6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramInfo {
    /// `dpp_proginfo` word 0 (reserved, 1 in every known file).
    pub proginfo_reserved: u32,
    /// `dpp_proginfo.FG_DEPTH_SRC`: bit 0 = the program supplies the conditional value.
    pub fg_depth_src: u32,
    /// Further `dpp_proginfo` words, kept opaque and written back unchanged.
    pub proginfo_extra: Vec<u32>,
    /// Input ids referenced (0–15).
    pub inputs: Vec<u32>,
    /// Output ids referenced (0–3).
    pub outputs: Vec<u32>,
    /// The program writes a conditional output value.
    pub cond_out: bool,
    /// Float constants referenced (0–255).
    pub f32_consts: Vec<u32>,
    /// Integer constants referenced (0–31).
    pub i32_consts: Vec<u32>,
    /// The program contains an early exit (`LAST`).
    pub early_exit: bool,
    /// **(ctm)** Constant values the executable carries (`ctm` notes,
    /// docs/abi.md §5.5): loaded after the host's, so they win.
    pub values: ConstValues,
    /// **(ctm)** Names of the program's resources in its source language
    /// (`v0` → `in0`), for binding by name (docs/abi.md §5.5).
    pub bindings: Vec<(String, String)>,
}

/// Constant values carried by an executable (compiled shaders' `def`,
/// `defi`, `defb` and the compiler's own constants).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstValues {
    /// Float constants: index (0–255) and the four channels' bits.
    pub floats: Vec<(u32, [u32; 4])>,
    /// Integer constants: index (0–31), count, initial aL, step.
    pub ints: Vec<(u32, [u8; 3])>,
    /// Boolean constants: index (0–31) and value.
    pub bools: Vec<(u32, bool)>,
    /// Float constants' defaults: loaded before the host's values, so the
    /// host may set them (a shader's `vFace`).
    pub defaults: Vec<(u32, [u32; 4])>,
}

impl ConstValues {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.floats.is_empty()
            && self.ints.is_empty()
            && self.bools.is_empty()
            && self.defaults.is_empty()
    }
}

impl Default for ProgramInfo {
    fn default() -> Self {
        ProgramInfo {
            proginfo_reserved: 1,
            fg_depth_src: 0,
            proginfo_extra: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            cond_out: false,
            f32_consts: Vec::new(),
            i32_consts: Vec::new(),
            early_exit: false,
            values: ConstValues::default(),
            bindings: Vec::new(),
        }
    }
}

impl ProgramInfo {
    /// Whether the program writes uncached (UMRT) outputs. (ctm): the
    /// Guide says the mode comes from the program file, on a lost page;
    /// ctm keeps it in bit 0 of `dpp_proginfo` word 2 (the first word after
    /// `FG_DEPTH_SRC`).
    pub fn uncached(&self) -> bool {
        self.proginfo_extra.first().is_some_and(|w| w & 1 != 0)
    }

    /// Sets the uncached (UMRT) mode bit (see [`ProgramInfo::uncached`]).
    pub fn set_uncached(&mut self, on: bool) {
        match self.proginfo_extra.first_mut() {
            Some(w) => *w = (*w & !1) | u32::from(on),
            None if on => self.proginfo_extra.push(1),
            None => {}
        }
    }

    /// The notes a program's code implies: inputs read by TEX lookups,
    /// render targets written by OUTPUT instructions, the conditional value
    /// (`W_OMASK`), constants addressed, loop integer constants, and `LAST`
    /// before the final instruction (an early exit).
    pub fn from_code(insts: &[Inst]) -> ProgramInfo {
        let mut info = ProgramInfo::default();
        for (index, inst) in insts.iter().enumerate() {
            // `LAST` on the final instruction is the normal end, not an early exit.
            info.early_exit |= inst.cmn.last && index + 1 < insts.len();
            match &inst.body {
                // KILL reads no memory; uncached lookups read output 0.
                Body::Tex(t)
                    if !matches!(
                        t.inst.op,
                        isa::TexOp::Nop | isa::TexOp::Kill | isa::TexOp::LdUncached
                    ) =>
                {
                    info.inputs.push(u32::from(t.inst.tex_id))
                }
                Body::Tex(_) => {}
                Body::Fc(f) => {
                    use isa::FcOp::*;
                    if matches!(f.inst.op, Loop | EndLoop | Rep | EndRep) {
                        info.i32_consts.push(u32::from(f.addr.int_addr));
                    }
                }
                Body::Alu(a) => {
                    for addr in [&a.rgb_addr, &a.alpha_addr] {
                        for k in 0..3 {
                            if let SrcKind::Const(n) = addr.src(k).kind {
                                info.f32_consts.push(u32::from(n));
                            }
                        }
                    }
                    if inst.cmn.ty == InstType::Out {
                        if inst.cmn.rgb_omask != 0 {
                            info.outputs.push(u32::from(a.rgb.target));
                        }
                        if inst.cmn.alpha_omask {
                            info.outputs.push(u32::from(a.alpha.target));
                        }
                        info.cond_out |= a.alpha.w_omask;
                    }
                }
            }
        }
        for list in [
            &mut info.inputs,
            &mut info.outputs,
            &mut info.f32_consts,
            &mut info.i32_consts,
        ] {
            list.sort_unstable();
            list.dedup();
        }
        info.fg_depth_src = u32::from(info.cond_out);
        info
    }
}

/// An integer (loop) constant's count, initial aL and step (§6.6).
pub type LoopConst = (u8, u8, i8);

/// The float constants a program can read: `listed` (its notes, or what
/// its code implies) with each `c[aL+n]` read resolved to every constant
/// it reaches, n + init + k·step (mod 256) for each of the iterations of
/// the LOOP that encloses it in program order. `int` gives a LOOP's
/// integer constant; a read whose loop constant it does not know, or that
/// no LOOP encloses (a subroutine's: its aL is the caller's), stays listed
/// by its base. A base that only relative reads name is not itself read.
pub fn reachable_consts(
    insts: &[Inst],
    listed: &[u32],
    int: impl Fn(u32) -> Option<LoopConst>,
) -> Vec<u32> {
    use std::collections::BTreeSet;
    let mut direct = BTreeSet::new();
    let mut bases = BTreeSet::new();
    let mut reached = BTreeSet::new();
    // The enclosing constructs: Some(int) for LOOP, None for REP.
    let mut loops: Vec<Option<u32>> = Vec::new();
    for inst in insts {
        match &inst.body {
            Body::Fc(f) => match f.inst.op {
                isa::FcOp::Loop => loops.push(Some(u32::from(f.addr.int_addr))),
                isa::FcOp::Rep => loops.push(None),
                isa::FcOp::EndLoop | isa::FcOp::EndRep => {
                    loops.pop();
                }
                _ => {}
            },
            Body::Alu(a) => {
                for addr in [&a.rgb_addr, &a.alpha_addr] {
                    for k in 0..3 {
                        let src = addr.src(k);
                        let SrcKind::Const(n) = src.kind else {
                            continue;
                        };
                        let n = u32::from(n);
                        if !src.rel {
                            direct.insert(n);
                            continue;
                        }
                        let range = loops.iter().rev().find_map(|l| *l).and_then(&int);
                        match range {
                            Some((count, init, step)) => {
                                bases.insert(n);
                                for k in 0..i64::from(count) {
                                    let c = i64::from(n) + i64::from(init) + k * i64::from(step);
                                    reached.insert(c.rem_euclid(256) as u32);
                                }
                            }
                            None => {
                                direct.insert(n);
                            }
                        }
                    }
                }
            }
            Body::Tex(_) => {}
        }
    }
    let mut out: BTreeSet<u32> = listed
        .iter()
        .copied()
        .filter(|c| !bases.contains(c) || direct.contains(c) || reached.contains(c))
        .collect();
    out.extend(direct);
    out.extend(reached);
    out.into_iter().collect()
}
