//! The observing interpreter behind [`super::trace`]: it runs every clause
//! (one instruction each) on the interpreter and, for the traced group,
//! records the writes the interpreter logs, the lookups, the hazards and
//! the flow-control state the shim shows it.

use super::{Fetch, LaneState, LaneStep, Step, TraceOptions, Write};
use crate::interp::Interpreter;
use crate::pe::EngineFactory;
use crate::runtime::hazard::Place;
use crate::runtime::{
    Ctx, Engine, EngineStats, FetchRequest, FlowView, RunError, TexFault, TextureUnit,
};
use ctm_jit::ir::{Program, TEMPS};
use ctm_jit::state::{GROUP_LANES, Lanes, Mask};
use std::sync::{Arc, Mutex};

/// The flow state last observed for the traced group.
#[derive(Clone, Debug, Default)]
struct FlowCopy {
    bc: Vec<i32>,
    loops: Vec<crate::runtime::LoopFrame>,
    al: Vec<i32>,
    returns: usize,
}

/// What the trace engines of a run record, shared.
pub(super) struct Recorder {
    pixels: Vec<(u32, u32)>,
    opts: TraceOptions,
    text: Vec<String>,
    steps: Vec<Step>,
    flow: FlowCopy,
}

/// Makes a trace engine per worker, all recording into `rec`.
pub(super) fn factory(rec: &Arc<Mutex<Recorder>>) -> EngineFactory {
    let rec = rec.clone();
    Arc::new(move || {
        Box::new(TraceEngine {
            inner: Interpreter::new(),
            rec: rec.clone(),
            focus: None,
        })
    })
}

impl Recorder {
    /// A recorder for `pixels`; `text` is the disassembly of every pc.
    pub(super) fn shared(
        pixels: Vec<(u32, u32)>,
        opts: TraceOptions,
        text: Vec<String>,
    ) -> Arc<Mutex<Recorder>> {
        Arc::new(Mutex::new(Recorder {
            pixels,
            opts,
            text,
            steps: Vec::new(),
            flow: FlowCopy::default(),
        }))
    }

    /// The steps recorded.
    pub(super) fn take_steps(rec: &Arc<Mutex<Recorder>>) -> Vec<Step> {
        std::mem::take(&mut rec.lock().unwrap_or_else(|e| e.into_inner()).steps)
    }

    /// The group lanes of the traced pixels, if this group holds them.
    fn lanes_of(&self, pixels: &[(u32, u32); GROUP_LANES], lanes: &Lanes) -> Option<Vec<usize>> {
        let present = lanes.lane_count();
        let found: Vec<usize> = self
            .pixels
            .iter()
            .filter_map(|p| pixels[..present].iter().position(|q| q == p))
            .collect();
        (found.len() == self.pixels.len()).then_some(found)
    }

    fn wanted(&self, pc: u16) -> bool {
        self.opts.from.is_none_or(|f| pc >= f) && self.opts.until.is_none_or(|u| pc <= u)
    }

    fn state(&self, lanes: &Lanes, lane: usize) -> LaneState {
        let bit = 1 << lane;
        LaneState {
            running: lanes.running & bit != 0,
            active: lanes.active & bit != 0,
            held: self
                .flow
                .loops
                .iter()
                .any(|f| (f.broken | f.continued) & bit != 0),
            branch_counter: self.flow.bc.get(lane).copied().unwrap_or(0),
            loops: self
                .flow
                .loops
                .iter()
                .map(|f| (f.count, f.is_loop))
                .collect(),
            al: self
                .flow
                .loops
                .iter()
                .any(|f| f.is_loop)
                .then(|| self.flow.al.last().copied().unwrap_or(0)),
            returns: self.flow.returns,
        }
    }

    fn text(&self, pc: u16) -> String {
        self.text.get(usize::from(pc)).cloned().unwrap_or_default()
    }
}

/// What lane `l` wrote, from the writes the interpreter logged (values
/// read after the instruction; a write of an unchanged value shows too).
fn writes_of(log: &[(Place, Mask)], lanes: &Lanes, l: usize, was_killed: bool) -> Vec<Write> {
    let bit = 1 << l;
    let mut out: Vec<Write> = Vec::new();
    for &(place, m) in log {
        if m & bit == 0 {
            continue;
        }
        let w = match place {
            Place::Temp(reg, chan) => Write::Temp {
                reg,
                chan,
                bits: lanes.temps[usize::from(reg) % TEMPS][usize::from(chan & 3)][l],
            },
            Place::Out(target, chan) => Write::Output {
                target,
                chan,
                bits: lanes.out[usize::from(target & 3)][usize::from(chan & 3)][l],
            },
            Place::Depth => Write::Depth(lanes.depth[l]),
            Place::Pred(c) => Write::Pred {
                chan: c,
                value: lanes.pred[usize::from(c & 3)] & bit != 0,
            },
            Place::AluResult => Write::AluResult(lanes.alu_result & bit != 0),
        };
        match out.iter_mut().find(|o| o.place() == w.place()) {
            Some(o) => *o = w,
            None => out.push(w),
        }
    }
    if !was_killed && lanes.killed & bit != 0 {
        out.push(Write::Killed);
    }
    out
}

/// The interpreter, observed.
struct TraceEngine {
    inner: Interpreter,
    rec: Arc<Mutex<Recorder>>,
    /// The traced lanes, while the group running is the traced one (set
    /// by every clause, so it holds when the clause's flow-control
    /// terminator is observed).
    focus: Option<Vec<usize>>,
}

impl TraceEngine {
    fn rec(&self) -> std::sync::MutexGuard<'_, Recorder> {
        self.rec.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Forwards lookups, keeping those of the traced lanes.
struct Recording<'a> {
    inner: &'a mut dyn TextureUnit,
    lanes: Vec<usize>,
    log: Vec<(usize, Fetch)>,
}

impl TextureUnit for Recording<'_> {
    fn fetch(
        &mut self,
        req: FetchRequest,
        coords: &[[u32; 4]],
        mask: Mask,
        pixels: &[(u32, u32)],
        out: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        self.inner.fetch(req, coords, mask, pixels, out)?;
        for &l in &self.lanes {
            if mask & (1 << l) != 0 {
                self.log.push((
                    l,
                    Fetch {
                        kind: req.kind,
                        input: req.input,
                        coords: coords[l],
                        texel: out[l],
                    },
                ));
            }
        }
        Ok(())
    }

    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), TexFault> {
        self.inner.uncached_write(x, y, value)
    }
}

impl Engine for TraceEngine {
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        self.inner.prepare(program)
    }

    fn run_clause(
        &mut self,
        program: &Program,
        clause: u32,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), RunError> {
        let c = &program.clauses[clause as usize];
        let (focus, wanted) = {
            let rec = self.rec();
            (rec.lanes_of(ctx.pixels, lanes), rec.wanted(c.start))
        };
        self.focus = focus.clone();
        let Some(focus) = focus.filter(|_| c.len > 0 && wanted) else {
            return self.inner.run_clause(program, clause, lanes, ctx);
        };
        let killed_before = lanes.killed;
        if let Some(h) = ctx.hazards.as_deref_mut() {
            h.start_log();
            h.take_log();
            h.take_writes();
        }
        let mut tex = Recording {
            inner: &mut *ctx.tex,
            lanes: focus.clone(),
            log: Vec::new(),
        };
        let result = {
            let mut inner_ctx = Ctx {
                uniforms: ctx.uniforms,
                tex: &mut tex,
                hazards: ctx.hazards.as_deref_mut(),
                pixels: ctx.pixels,
            };
            self.inner
                .run_clause(program, clause, lanes, &mut inner_ctx)
        };
        let log = std::mem::take(&mut tex.log);
        let (hazards, written) = match ctx.hazards.as_deref_mut() {
            Some(h) => (h.take_log(), h.take_writes()),
            None => (Vec::new(), Vec::new()),
        };
        let mut rec = self.rec();
        let steps = focus
            .iter()
            .map(|&l| LaneStep {
                writes: writes_of(&written, lanes, l, killed_before & (1 << l) != 0),
                fetches: log.iter().filter(|(k, _)| *k == l).map(|f| f.1).collect(),
                state: rec.state(lanes, l),
            })
            .collect();
        let mask: Mask = focus.iter().fold(0, |m, &l| m | 1 << l);
        let step = Step {
            pc: c.start,
            text: rec.text(c.start),
            lanes: steps,
            hazards: hazards
                .iter()
                .filter(|(_, m)| m & mask != 0)
                .map(|(h, _)| h.to_string())
                .collect(),
        };
        rec.steps.push(step);
        result
    }

    fn stats(&self) -> EngineStats {
        self.inner.stats()
    }

    fn observes_flow(&self) -> bool {
        true
    }

    fn observe_flow(&mut self, pc: u16, lanes: &Lanes, flow: &FlowView<'_>) {
        let Some(focus) = self.focus.clone() else {
            return;
        };
        let mut rec = self.rec();
        rec.flow = FlowCopy {
            bc: flow.branch_counters.to_vec(),
            loops: flow.loops.to_vec(),
            al: flow.al.to_vec(),
            returns: flow.returns.len(),
        };
        if !rec.wanted(pc) {
            return;
        }
        let steps = focus
            .iter()
            .map(|&l| LaneStep {
                writes: Vec::new(),
                fetches: Vec::new(),
                state: rec.state(lanes, l),
            })
            .collect();
        let step = Step {
            pc,
            text: rec.text(pc),
            lanes: steps,
            hazards: Vec::new(),
        };
        rec.steps.push(step);
    }
}
