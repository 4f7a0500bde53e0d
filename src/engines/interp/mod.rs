//! The reference interpreter: executes the operations of a clause
//! ([`ctm_jit::ir`]) over all lanes of a group at once.
//!
//! Each operation runs as one loop over the present lanes; nothing is decoded
//! per pixel. Numeric results come from [`ctm_jit::fp`], the same definitions
//! the JIT lowers, so the two engines agree bit for bit.

use crate::runtime::hazard::Place;
use crate::runtime::{Ctx, Engine, FetchRequest, RunError, TexFault, first_lane};
use ctm_jit::fp;
use ctm_jit::ir::{Binary, Gate, Op, Program, Select, Test, UmrtIndex, Unary};
use ctm_jit::ir::{CONSTS, TEMPS};
use ctm_jit::state::{Channel, GROUP_LANES, Lanes, Mask};

/// The interpreter engine. Holds only scratch space; one per thread.
#[derive(Debug, Default)]
pub struct Interpreter {
    vals: Vec<Channel>,
    /// The program last verified: its address and shape (a run passes the
    /// same program for every row).
    verified: Option<(usize, usize, u16)>,
}

impl Interpreter {
    /// A new interpreter.
    pub fn new() -> Interpreter {
        Interpreter::default()
    }
}

/// The lanes a gated write touches (`docs/isa.md` §4.9).
#[inline]
pub fn enabled(lanes: &Lanes, gate: Gate) -> Mask {
    let mut m = lanes.running & if gate.inactive { !0 } else { lanes.active };
    if let Some((c, inv)) = gate.pred {
        let p = lanes.pred[usize::from(c & 3)];
        m &= if inv { !p } else { p };
    }
    m
}

fn unary(op: Unary) -> fn(u32) -> u32 {
    match op {
        Unary::Neg => fp::neg,
        Unary::Abs => fp::abs,
        Unary::Nab => fp::nab,
        Unary::Frc => fp::frc,
        Unary::Ex2 => fp::ex2,
        Unary::Ln2 => fp::ln2,
        Unary::Rcp => fp::rcp,
        Unary::Rsq => fp::rsq,
        Unary::Sin => fp::sin,
        Unary::Cos => fp::cos,
        Unary::Canon => fp::canon,
        Unary::Clamp => fp::clamp,
        Unary::Omod(_) => unreachable!("Omod has a parameter"),
    }
}

fn binary(op: Binary) -> fn(u32, u32) -> u32 {
    match op {
        Binary::Add => fp::add,
        Binary::Sub => fp::sub,
        Binary::Mul => fp::mul,
        Binary::Div => fp::div,
        Binary::Min => fp::min,
        Binary::Max => fp::max,
    }
}

impl Engine for Interpreter {
    /// Verifies the program: hand-built IR that breaks the rules is an
    /// error here, as in the JIT, not a panic later.
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        let key = (
            std::ptr::from_ref(program) as usize,
            program.clauses.len(),
            program.len,
        );
        if self.verified != Some(key) {
            program.verify().map_err(|e| RunError::Engine {
                engine: "interp",
                message: format!("invalid IR: {e}"),
            })?;
            self.verified = Some(key);
        }
        Ok(())
    }

    fn run_clause(
        &mut self,
        program: &Program,
        clause: u32,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), RunError> {
        let bad = |message: String| RunError::Engine {
            engine: "interp",
            message,
        };
        crate::runtime::check_quads("interp", lanes)?;
        let Some(clause) = program.clauses.get(clause as usize) else {
            return Err(bad(format!("the program has no clause {clause}")));
        };
        let n = lanes.lane_count();
        let vals = &mut self.vals;
        if vals.len() < clause.values as usize {
            vals.resize(clause.values as usize, [0; GROUP_LANES]);
        }
        for node in &clause.nodes {
            let pc = node.pc;
            match &node.op {
                Op::Const { .. }
                | Op::Imm { .. }
                | Op::Temp { .. }
                | Op::Unary { .. }
                | Op::Binary { .. }
                | Op::Mad { .. }
                | Op::Dot { .. }
                | Op::Select { .. }
                | Op::QuadLane { .. } => value(&node.op, pc, vals, lanes, ctx, n),
                Op::SetTemp { .. }
                | Op::SetOut { .. }
                | Op::SetDepth { .. }
                | Op::SetPred { .. }
                | Op::SetAluResult { .. } => write(&node.op, pc, vals, lanes, ctx, n),
                Op::Fetch { .. }
                | Op::Kill { .. }
                | Op::UmrtWrite { .. }
                | Op::SemWait
                | Op::SemAcquire { .. } => effect(&node.op, pc, vals, lanes, ctx, n)?,
            }
        }
        Ok(())
    }
}

/// The values an operation defines, over the group's `n` lanes.
#[inline]
fn value(
    op: &Op,
    pc: u16,
    vals: &mut [[u32; GROUP_LANES]],
    lanes: &Lanes,
    ctx: &mut Ctx<'_>,
    n: usize,
) {
    match op {
        Op::Const { dst, index, chan } => {
            let c = ctx.uniforms.consts[index.resolve(lanes.al, CONSTS)][usize::from(*chan)];
            vals[dst.0 as usize] = [c; GROUP_LANES];
        }
        Op::Imm { dst, bits } => vals[dst.0 as usize] = [*bits; GROUP_LANES],
        Op::Temp { dst, index, chan } => {
            let reg = index.resolve(lanes.al, TEMPS);
            if let Some(h) = ctx.hazards.as_deref_mut() {
                let readers = lanes.running & lanes.active;
                h.read(pc, reg as u8, *chan, readers, ctx.pixels);
            }
            vals[dst.0 as usize] = lanes.temps[reg][usize::from(*chan)];
        }
        Op::Unary { dst, op, a } => {
            let a = vals[a.0 as usize];
            let d = &mut vals[dst.0 as usize];
            if let Unary::Omod(k) = op {
                for l in 0..n {
                    d[l] = fp::omod(a[l], *k);
                }
            } else {
                let f = unary(*op);
                for l in 0..n {
                    d[l] = f(a[l]);
                }
            }
        }
        Op::Binary { dst, op, a, b } => {
            let (a, b) = (vals[a.0 as usize], vals[b.0 as usize]);
            let f = binary(*op);
            let d = &mut vals[dst.0 as usize];
            for l in 0..n {
                d[l] = f(a[l], b[l]);
            }
        }
        Op::Mad { dst, a, b, c } => {
            let (a, b, c) = (vals[a.0 as usize], vals[b.0 as usize], vals[c.0 as usize]);
            let d = &mut vals[dst.0 as usize];
            for l in 0..n {
                d[l] = fp::mad(a[l], b[l], c[l]);
            }
        }
        Op::Dot { dst, pairs, addend } => {
            let mut d = [0; GROUP_LANES];
            let mut terms = [(0, 0); 4];
            for (l, out) in d.iter_mut().enumerate().take(n) {
                for (t, &(a, b)) in terms.iter_mut().zip(pairs) {
                    *t = (vals[a.0 as usize][l], vals[b.0 as usize][l]);
                }
                let c = addend.map(|c| vals[c.0 as usize][l]);
                *out = fp::dot(&terms[..pairs.len().min(4)], c);
            }
            vals[dst.0 as usize] = d;
        }
        Op::Select { dst, op, c, a, b } => {
            let (c, a, b) = (vals[c.0 as usize], vals[a.0 as usize], vals[b.0 as usize]);
            let f = match op {
                Select::Cnd => fp::cnd,
                Select::Cmp => fp::cmp,
            };
            let d = &mut vals[dst.0 as usize];
            for l in 0..n {
                d[l] = f(c[l], a[l], b[l]);
            }
        }
        Op::QuadLane { dst, a, lane } => {
            let a = vals[a.0 as usize];
            let d = &mut vals[dst.0 as usize];
            for l in 0..n {
                d[l] = a[(l & !3) | usize::from(*lane)];
            }
        }
        _ => unreachable!("value is called for operations that define values"),
    }
}

/// A store into the group's state (temporaries, outputs, the conditional
/// value, predicate bits, the ALU result) where its gate lets it.
#[inline]
fn write(
    op: &Op,
    pc: u16,
    vals: &[[u32; GROUP_LANES]],
    lanes: &mut Lanes,
    ctx: &mut Ctx<'_>,
    n: usize,
) {
    match op {
        Op::SetTemp {
            index,
            chan,
            v,
            gate,
            fetched,
        } => {
            let m = enabled(lanes, *gate);
            let reg = index.resolve(lanes.al, TEMPS);
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.write(pc, reg as u8, *chan, m, *fetched, ctx.pixels);
            }
            store(
                &mut lanes.temps[reg][usize::from(*chan)],
                &vals[v.0 as usize],
                m,
                n,
            );
        }
        Op::SetOut {
            target,
            chan,
            v,
            gate,
        } => {
            let m = enabled(lanes, *gate);
            let (t, c) = (usize::from(*target), usize::from(*chan));
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.written(Place::Out(*target, *chan), m);
            }
            store(&mut lanes.out[t][c], &vals[v.0 as usize], m, n);
            lanes.out_written[t][c] |= m;
        }
        Op::SetDepth { v, gate } => {
            let m = enabled(lanes, *gate);
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.written(Place::Depth, m);
            }
            store(&mut lanes.depth, &vals[v.0 as usize], m, n);
            lanes.depth_written |= m;
        }
        Op::SetPred {
            chan,
            test: t,
            v,
            gate,
        } => {
            let m = enabled(lanes, *gate);
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.written(Place::Pred(*chan), m);
            }
            let bits = truth(&vals[v.0 as usize], *t, n);
            let p = &mut lanes.pred[usize::from(*chan)];
            *p = (*p & !m) | (bits & m);
        }
        Op::SetAluResult { test: t, v, gate } => {
            let m = enabled(lanes, *gate);
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.written(Place::AluResult, m);
            }
            let bits = truth(&vals[v.0 as usize], *t, n);
            lanes.alu_result = (lanes.alu_result & !m) | (bits & m);
        }
        _ => unreachable!("write is called for stores"),
    }
}

/// Lookups, kills, uncached writes and the semaphore.
#[inline]
fn effect(
    op: &Op,
    pc: u16,
    vals: &mut [[u32; GROUP_LANES]],
    lanes: &mut Lanes,
    ctx: &mut Ctx<'_>,
    n: usize,
) -> Result<(), RunError> {
    match op {
        Op::Fetch {
            dst,
            kind,
            input,
            unscaled,
            coords,
            inactive,
        } => {
            // A fetch is an unpredicated write of its lanes.
            let m = enabled(
                lanes,
                Gate {
                    pred: None,
                    inactive: *inactive,
                },
            );
            let mut xy = [[0u32; 4]; GROUP_LANES];
            for (l, c) in xy.iter_mut().enumerate().take(n) {
                *c = coords.map(|v| vals[v.0 as usize][l]);
            }
            let mut got = [[0u32; 4]; GROUP_LANES];
            let req = FetchRequest {
                kind: *kind,
                input: *input,
                unscaled: *unscaled,
                helpers: lanes.helper,
            };
            fetch_lanes(ctx, pc, req, 0, &xy[..n], m, &mut got[..n])?;
            for (c, d) in dst.iter().enumerate() {
                let out = &mut vals[d.0 as usize];
                for l in 0..n {
                    out[l] = got[l][c];
                }
            }
        }
        Op::Kill { checks } => {
            let mut kill: Mask = 0;
            for (v, gate) in checks {
                let m = enabled(lanes, *gate);
                kill |= truth(&vals[v.0 as usize], Test::Lt, n) & m;
            }
            lanes.killed |= kill;
            lanes.running &= !kill;
            lanes.active &= !kill;
        }
        Op::UmrtWrite {
            value,
            x,
            y,
            index,
            gate,
        } => {
            let m = enabled(lanes, *gate) & !lanes.helper;
            let (value, x, y) = (
                vals[value.0 as usize],
                vals[x.0 as usize],
                vals[y.0 as usize],
            );
            umrt_lanes(ctx, pc, *index, 0, [&value[..n], &x[..n], &y[..n]], m)?;
        }
        Op::SemWait => {
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.wait(pc);
            }
        }
        Op::SemAcquire { wait } => {
            if let Some(h) = ctx.hazards.as_deref_mut() {
                h.acquire(pc, *wait, lanes.running & lanes.active, ctx.pixels);
            }
        }
        _ => unreachable!("effect is called for lookups, kills, uncached writes and the semaphore"),
    }
    Ok(())
}

/// Calls a texture unit, turning a panic in it into a fault: the unit may
/// be the embedder's code, and compiled code calls it through frames a
/// panic must not unwind through.
pub(crate) fn guarded<T>(call: impl FnOnce() -> Result<T, TexFault>) -> Result<T, TexFault> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(r) => r,
        Err(panic) => Err(TexFault(format!(
            "the texture unit panicked: {}",
            panic_message(panic.as_ref())
        ))),
    }
}

/// The message of a caught panic (its `&str` or `String` payload), as the
/// engines report a texture unit or a compiler that panicked.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Fetches for the lanes `lane0..lane0 + coords.len()` of a group whose bit
/// is set in `m` (bit 0 = `lane0`); the other lanes of `got` become zeros.
/// Both engines fetch through here.
pub(crate) fn fetch_lanes(
    ctx: &mut Ctx<'_>,
    pc: u16,
    req: FetchRequest,
    lane0: usize,
    coords: &[[u32; 4]],
    m: Mask,
    got: &mut [[u32; 4]],
) -> Result<(), RunError> {
    if m != 0 {
        let pixels = &ctx.pixels[lane0..lane0 + coords.len()];
        let tex = &mut *ctx.tex;
        guarded(|| tex.fetch(req, coords, m, pixels, got)).map_err(|fault| RunError::Texture {
            pc,
            fault,
            pixel: pixels[first_lane(m)],
        })?;
    }
    for (l, g) in got.iter_mut().enumerate() {
        if m & (1 << l) == 0 {
            *g = [0; 4];
        }
    }
    Ok(())
}

/// The uncached writes of lanes `lane0..` whose bit is set in `m` (helpers
/// already removed), quad by quad in lane order; `ops` = value, x, y per
/// lane (`docs/isa.md` §5.4). Both engines write through here.
pub(crate) fn umrt_lanes(
    ctx: &mut Ctx<'_>,
    pc: u16,
    index: UmrtIndex,
    lane0: usize,
    ops: [&[u32]; 3],
    m: Mask,
) -> Result<(), RunError> {
    let [value, x, y] = ops;
    for q in 0..value.len() / 4 {
        let qm = (m >> (q * 4)) & 0xF;
        if qm == 0 {
            continue;
        }
        let lead = q * 4 + qm.trailing_zeros() as usize;
        for l in (q * 4..q * 4 + 4).filter(|l| m & (1 << l) != 0) {
            let at = match index {
                UmrtIndex::Shared => lead,
                UmrtIndex::PerProcessor => l,
            };
            let tex = &mut *ctx.tex;
            guarded(|| tex.uncached_write(x[at], y[at], value[l])).map_err(|fault| {
                RunError::Texture {
                    pc,
                    fault,
                    pixel: ctx.pixels[lane0 + l],
                }
            })?;
        }
    }
    Ok(())
}

/// Writes `v` into `dst` on the lanes of `m`.
#[inline]
fn store(dst: &mut Channel, v: &Channel, m: Mask, n: usize) {
    for l in 0..n {
        if m & (1 << l) != 0 {
            dst[l] = v[l];
        }
    }
}

/// The lanes where `test(v)` holds.
#[inline]
fn truth(v: &Channel, t: Test, n: usize) -> Mask {
    (0..n).fold(0, |m, l| {
        m | (u32::from(fp::test_zero(t.code(), v[l])) << l)
    })
}
