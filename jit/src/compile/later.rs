//! Code compiled on first use: clause bodies a run may never need (general
//! bodies of full-batch clauses, bodies that ask the runtime for lookups or
//! read 2×2 gathers, lock-step drivers of lane-wise regions), and, for a
//! program that runs in compiled strips ([`crate::strip`]), its clauses'
//! own bodies and its lane-wise loops: the strip runs every row it covers,
//! so those serve only rows it does not (`docs/design.md`, "Straight
//! programs in one compiled strip").
//!
//! Each slot is a `OnceLock`: the first caller compiles, in a module of its
//! own kept with the [`Compiled`] until it drops; later callers get the same
//! code, or the same reason it could not be compiled (the runtime then runs
//! that part itself).

use super::build::{compile_one, shape_of};
use super::{Compiled, FullBatches, loops};
use crate::ir::Program;
use crate::lanewise::Lanewise;
use crate::lower::{Body, Lookups};
use crate::regions::loop_regions;
use crate::state::{ClauseFn, LoopFn};
use cranelift_jit::JITModule;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A clause's own body compiled on first use ([`super::ClauseCode::Later`]):
/// what [`super::ClauseCode::Native`] or [`super::ClauseCode::Full`] would
/// have held had it been compiled with the program.
#[derive(Clone, Copy, Debug)]
pub enum OwnBody {
    /// Runs any group.
    Native(ClauseFn),
    /// Runs groups whose live batches are all full
    /// ([`FullBatches::fits`]); others take [`Compiled::general`].
    Full(FullBatches),
}

impl OwnBody {
    /// The code.
    pub fn code(self) -> ClauseFn {
        match self {
            OwnBody::Native(f) => f,
            OwnBody::Full(full) => full.code,
        }
    }
}

impl Compiled {
    /// The general body of clause `i` (a [`super::ClauseCode::Full`],
    /// [`super::ClauseCode::Deferred`] or full-batch
    /// [`super::ClauseCode::Later`] clause of `program`, which must be the
    /// program this code was compiled from),
    /// compiled on first use; with the time spent if this call compiled
    /// it. An error says why it cannot be compiled (the runtime then
    /// interprets the clause).
    pub fn general(
        &self,
        i: u32,
        program: &Program,
    ) -> (Result<ClauseFn, String>, Option<Duration>) {
        let lookups = if self.direct_inputs(i) != 0 {
            Lookups::Direct
        } else {
            Lookups::Either
        };
        self.lazy(&self.general, i, program, (Body::General, lookups))
    }

    /// Clause `i`'s body that sends every lookup through the runtime (for
    /// runs where an input of [`Compiled::direct_inputs`] has no
    /// descriptor), compiled on first use; as [`Compiled::general`].
    pub fn host_body(
        &self,
        i: u32,
        program: &Program,
    ) -> (Result<ClauseFn, String>, Option<Duration>) {
        self.lazy(&self.host, i, program, (Body::General, Lookups::Host))
    }

    /// Clause `i`'s body that reads its inputs from memory where some of
    /// [`Compiled::direct_inputs`] are one-channel 2×2 gathers
    /// ([`crate::state::TexTable::covers_gathered`]), compiled on first
    /// use; as [`Compiled::general`].
    pub fn gathered_body(
        &self,
        i: u32,
        program: &Program,
    ) -> (Result<ClauseFn, String>, Option<Duration>) {
        self.lazy(
            &self.gathered,
            i,
            program,
            (Body::General, Lookups::Gathered),
        )
    }

    /// The own body of clause `i` (a [`super::ClauseCode::Later`] clause
    /// of `program`, which must be the program this code was compiled
    /// from): the body it would have been compiled with eagerly, compiled
    /// on first use; as [`Compiled::general`].
    pub fn own(&self, i: u32, program: &Program) -> (Result<OwnBody, String>, Option<Duration>) {
        let Some(slot) = self.own.get(i as usize) else {
            return (Err(format!("no clause {i}")), None);
        };
        self.first_use(slot, || {
            let clause = checked(program, i)?;
            let ci = i as usize;
            let shape = shape_of(program, &loop_regions(program), ci);
            let (module, code) = compile_one(program, ci, (self.opts, self.isa.clone()), shape)?;
            let body = match shape.0 {
                Body::Full => OwnBody::Full(FullBatches::new(code, clause, self.opts, shape.1)),
                Body::Both | Body::General => OwnBody::Native(code),
            };
            Ok((module, body))
        })
    }

    /// The body of clause `i` in `slots`, compiled with `shape` on first
    /// use.
    fn lazy(
        &self,
        slots: &[OnceLock<Result<ClauseFn, String>>],
        i: u32,
        program: &Program,
        shape: (Body, Lookups),
    ) -> (Result<ClauseFn, String>, Option<Duration>) {
        let Some(slot) = slots.get(i as usize) else {
            return (Err(format!("no clause {i}")), None);
        };
        self.first_use(slot, || {
            checked(program, i)?;
            compile_one(program, i as usize, (self.opts, self.isa.clone()), shape)
        })
    }

    /// The code in `slot`, compiled by `compile` on first use (its module
    /// kept with the other lazily compiled code), with the time spent if
    /// this call compiled it.
    fn first_use<F: Copy>(
        &self,
        slot: &OnceLock<Result<F, String>>,
        compile: impl FnOnce() -> Result<(JITModule, F), String>,
    ) -> (Result<F, String>, Option<Duration>) {
        let mut took = None;
        let code = slot.get_or_init(|| {
            let start = Instant::now();
            let r = compile().map(|(m, f)| {
                self.general_modules
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(m);
                f
            });
            took = Some(start.elapsed());
            r
        });
        (code.clone(), took)
    }

    /// The lock-step code of loop region `k` (see [`Compiled::loop_at`])
    /// of `program` (the program this code was compiled from), compiled on
    /// first use for a region that runs lane-wise; as
    /// [`Compiled::general`].
    pub fn loop_fn(
        &self,
        k: usize,
        program: &Program,
    ) -> (Result<LoopFn, String>, Option<Duration>) {
        let region = &self.loops[k].region;
        self.first_use(&self.loops[k].driver, || {
            loops::compile_driver(program, region, (self.opts, self.isa.clone()))
        })
    }

    /// The lane-wise analysis of loop region `k`, if its lanes are
    /// independent ([`crate::lanewise`]).
    pub fn lanewise(&self, k: usize) -> Option<&Lanewise> {
        self.loops[k].lanewise.as_ref().map(|(lw, _)| lw)
    }

    /// The lane-wise code of loop region `k` of `program` (the program this
    /// code was compiled from), where [`Compiled::lanewise`] has an
    /// analysis: compiled with the program, or on first use for a program
    /// that runs in strips; as [`Compiled::general`].
    pub fn lanewise_fn(
        &self,
        k: usize,
        program: &Program,
    ) -> (Result<LoopFn, String>, Option<Duration>) {
        let Some((lw, slot)) = &self.loops[k].lanewise else {
            return (Err("the region has no lane-wise body".into()), None);
        };
        let region = &self.loops[k].region;
        self.first_use(slot, || {
            loops::compile_lanewise(program, region, lw, (self.opts, self.isa.clone()))
        })
    }
}

/// Clause `i` of `program`, which is the caller's word: verified like
/// `compile`'s, and holding clause `i`.
fn checked(program: &Program, i: u32) -> Result<&crate::ir::Clause, String> {
    program.verify().map_err(|e| format!("invalid IR: {e}"))?;
    program
        .clauses
        .get(i as usize)
        .ok_or_else(|| format!("the program has no clause {i}"))
}
