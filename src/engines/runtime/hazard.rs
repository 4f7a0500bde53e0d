//! The texture-semaphore hazard checker (`docs/isa.md` §5.3), off by default
//! (`--check-hazards`).
//!
//! ctm performs every fetch synchronously, which gives the "correctly
//! synchronised" result even for programs that would race on hardware. The
//! checker models what the hardware guarantees instead: a fetched value is
//! *in flight* from the fetch until a `TEX_SEM_WAIT` that follows a
//! `TEX_SEM_ACQUIRE` issued at or after that fetch. It reports, with pc and
//! pixel:
//! * a read of a register channel whose fetch is still in flight;
//! * a write to such a channel (the late fetch could land after it);
//! * an ACQUIRE on an instruction without WAIT;
//! * a processor ending on an instruction without WAIT.
//!
//! Reports are merged by (kind, pc, register): the first pixel is kept and
//! further occurrences counted.

use ctm_jit::state::Mask;
use std::collections::HashMap;
use std::fmt;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HazardKind {
    /// A read of `r{reg}.{chan}` while the fetch at `fetch_pc` is in flight.
    UnsyncedRead {
        /// Register.
        reg: u8,
        /// Channel 0–3.
        chan: u8,
        /// The fetch.
        fetch_pc: u16,
    },
    /// A write of `r{reg}.{chan}` while the fetch at `fetch_pc` is in flight.
    OverwriteInFlight {
        /// Register.
        reg: u8,
        /// Channel 0–3.
        chan: u8,
        /// The fetch.
        fetch_pc: u16,
    },
    /// `TEX_SEM_ACQUIRE` without `TEX_SEM_WAIT` on the same instruction.
    AcquireWithoutWait,
    /// The last instruction a processor executed lacks `TEX_SEM_WAIT`.
    FinalWithoutWait,
}

/// One report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// What.
    pub kind: HazardKind,
    /// The instruction.
    pub pc: u16,
    /// The first pixel it happened for.
    pub pixel: (u32, u32),
    /// How many times (pixels × executions) it happened.
    pub count: u64,
}

const CH: [char; 4] = ['r', 'g', 'b', 'a'];

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (pc, (i, j)) = (self.pc, self.pixel);
        write!(f, "pc {pc}, pixel ({i}, {j}): ")?;
        match self.kind {
            HazardKind::UnsyncedRead {
                reg,
                chan,
                fetch_pc,
            } => write!(
                f,
                "reads r{reg}.{} fetched at pc {fetch_pc} before a TEX_SEM_WAIT covers it",
                CH[usize::from(chan)]
            )?,
            HazardKind::OverwriteInFlight {
                reg,
                chan,
                fetch_pc,
            } => write!(
                f,
                "writes r{reg}.{} while its fetch at pc {fetch_pc} may still land",
                CH[usize::from(chan)]
            )?,
            HazardKind::AcquireWithoutWait => write!(
                f,
                "TEX_SEM_ACQUIRE without TEX_SEM_WAIT on the same instruction"
            )?,
            HazardKind::FinalWithoutWait => {
                write!(f, "the program ends on an instruction without TEX_SEM_WAIT")?
            }
        }
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    pc: u16,
    lanes: Mask,
    acquired: bool,
}

/// Checker state for the group being run plus the merged reports.
#[derive(Debug, Default)]
pub struct Hazards {
    pending: HashMap<(u8, u8), Pending>,
    last_wait: Option<u16>,
    reports: Vec<Hazard>,
    seen: HashMap<(HazardKind, u16), usize>,
    /// Every hazard as it happens, with its lanes, while logging.
    log: Option<Vec<(Hazard, Mask)>>,
    /// Every write as it happens, with its lanes, while logging.
    writes: Vec<(Place, Mask)>,
}

/// Where an instruction wrote (for observers, [`Hazards::take_writes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Temporary `reg`, channel `chan`.
    Temp(u8, u8),
    /// Render target, channel.
    Out(u8, u8),
    /// The conditional value.
    Depth,
    /// Predicate bit.
    Pred(u8),
    /// The ALU result.
    AluResult,
}

impl Hazards {
    /// Forgets the previous group's state (reports are kept).
    pub fn start_group(&mut self) {
        self.pending.clear();
        self.last_wait = None;
    }

    /// Starts keeping every hazard as it happens ([`Hazards::take_log`]).
    pub fn start_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The hazards that happened since the last call, each with the lanes
    /// it concerns.
    pub fn take_log(&mut self) -> Vec<(Hazard, Mask)> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The writes made since the last call (while logging), each with its
    /// lanes — also writes that left a value unchanged.
    pub fn take_writes(&mut self) -> Vec<(Place, Mask)> {
        std::mem::take(&mut self.writes)
    }

    /// Lanes `lanes` wrote `place` (recorded while logging).
    pub fn written(&mut self, place: Place, lanes: Mask) {
        if self.log.is_some() && lanes != 0 {
            self.writes.push((place, lanes));
        }
    }

    fn report(&mut self, kind: HazardKind, pc: u16, lanes: Mask, pixels: &[(u32, u32)]) {
        let n = u64::from(lanes.count_ones());
        if let Some(log) = &mut self.log {
            log.push((
                Hazard {
                    kind,
                    pc,
                    pixel: pixels[super::first_lane(lanes)],
                    count: n,
                },
                lanes,
            ));
        }
        if let Some(&k) = self.seen.get(&(kind, pc)) {
            self.reports[k].count += n;
            return;
        }
        self.seen.insert((kind, pc), self.reports.len());
        self.reports.push(Hazard {
            kind,
            pc,
            pixel: pixels[super::first_lane(lanes)],
            count: n,
        });
    }

    /// Lanes `lanes` read `r{reg}.{chan}` at `pc`.
    pub fn read(&mut self, pc: u16, reg: u8, chan: u8, lanes: Mask, pixels: &[(u32, u32)]) {
        if let Some(p) = self.pending.get(&(reg, chan)).copied() {
            let hit = p.lanes & lanes;
            if hit != 0 {
                let kind = HazardKind::UnsyncedRead {
                    reg,
                    chan,
                    fetch_pc: p.pc,
                };
                self.report(kind, pc, hit, pixels);
            }
        }
    }

    /// Lanes `lanes` wrote `r{reg}.{chan}` at `pc`, from a fetch or not.
    pub fn write(
        &mut self,
        pc: u16,
        reg: u8,
        chan: u8,
        lanes: Mask,
        fetched: bool,
        pixels: &[(u32, u32)],
    ) {
        if lanes == 0 {
            return;
        }
        self.written(Place::Temp(reg, chan), lanes);
        let key = (reg, chan);
        if let Some(p) = self.pending.get(&key).copied() {
            let hit = p.lanes & lanes;
            if hit != 0 && !fetched {
                let kind = HazardKind::OverwriteInFlight {
                    reg,
                    chan,
                    fetch_pc: p.pc,
                };
                self.report(kind, pc, hit, pixels);
            }
            let rest = p.lanes & !lanes;
            if rest == 0 {
                self.pending.remove(&key);
            } else {
                self.pending.insert(key, Pending { lanes: rest, ..p });
            }
        }
        if fetched {
            self.pending.insert(
                key,
                Pending {
                    pc,
                    lanes,
                    acquired: false,
                },
            );
        }
    }

    /// `TEX_SEM_ACQUIRE` at `pc`: every fetch so far completes at the next wait.
    pub fn acquire(&mut self, pc: u16, wait: bool, lanes: Mask, pixels: &[(u32, u32)]) {
        if !wait && lanes != 0 {
            self.report(HazardKind::AcquireWithoutWait, pc, lanes, pixels);
        }
        for p in self.pending.values_mut() {
            p.acquired = true;
        }
    }

    /// `TEX_SEM_WAIT` at `pc`: acquired fetches have landed.
    pub fn wait(&mut self, pc: u16) {
        self.pending.retain(|_, p| !p.acquired);
        self.last_wait = Some(pc);
    }

    /// Lanes `lanes` end after the instruction at `pc`.
    pub fn finish(&mut self, pc: u16, lanes: Mask, pixels: &[(u32, u32)]) {
        if lanes != 0 && self.last_wait != Some(pc) {
            self.report(HazardKind::FinalWithoutWait, pc, lanes, pixels);
        }
    }

    /// The merged reports, in order of first occurrence.
    pub fn into_reports(self) -> Vec<Hazard> {
        self.reports
    }
}

/// The semaphore hazards `program` certainly has: in the straight run of
/// clauses every processor executes from the start (up to the first flow
/// control, early exit or end), a read of a register channel whose fetch
/// is still in flight, or an unconditional write to one, as the checker
/// above defines them — each `(pc, what)`, the channels of one register
/// merged. What depends on data or flow is left to `--check-hazards`.
pub fn provable(program: &ctm_jit::ir::Program) -> Vec<(u16, String)> {
    use ctm_jit::ir::{Op, Term};
    // (pc, writes?, reg, fetch pc) → channels.
    let mut found: std::collections::BTreeMap<(u16, bool, u8, u16), String> = Default::default();
    // (reg, chan) → (fetch pc, acquired).
    let mut pending: HashMap<(u8, u8), (u16, bool)> = HashMap::new();
    let mut at = program.clause_at(0);
    let mut seen = 0;
    while let Some(c) = at.and_then(|c| program.clauses.get(c as usize)) {
        seen += 1;
        if seen > program.clauses.len() {
            break;
        }
        for node in &c.nodes {
            let mut hit = |write: bool, reg: u8, chan: u8, fetch: u16| {
                found
                    .entry((node.pc, write, reg, fetch))
                    .or_default()
                    .push(['r', 'g', 'b', 'a'][usize::from(chan & 3)]);
            };
            match &node.op {
                Op::Temp { index, chan, .. } if !index.rel => {
                    if let Some((fetch, _)) = pending.remove(&(index.base, *chan)) {
                        hit(false, index.base, *chan, fetch);
                    }
                }
                Op::SetTemp {
                    index,
                    chan,
                    fetched,
                    gate,
                    ..
                } if !index.rel => {
                    let key = (index.base, *chan);
                    if *fetched {
                        pending.insert(key, (node.pc, false));
                    } else if gate.pred.is_none()
                        && !gate.inactive
                        && let Some((fetch, _)) = pending.remove(&key)
                    {
                        hit(true, index.base, *chan, fetch);
                    }
                }
                Op::SemAcquire { .. } => pending.values_mut().for_each(|p| p.1 = true),
                Op::SemWait => pending.retain(|_, p| !p.1),
                _ => {}
            }
        }
        at = match &c.term {
            Term::Next(pc) => program.clause_at(*pc),
            _ => None,
        };
    }
    found
        .into_iter()
        .map(|((pc, write, reg, fetch), chans)| {
            let what = if write {
                format!("writes r{reg}.{chans} while the lookup at @{fetch} that writes it may still land")
            } else {
                format!("reads r{reg}.{chans} before the lookup at @{fetch} that writes it is covered by an acquire and a wait")
            };
            (pc, format!("{what} (docs/isa.md §5.3)"))
        })
        .collect()
}
