//! How programs are compiled: quick code first and optimised code once a
//! program proves hot (by default), Cranelift's optimisation level, chosen
//! per program by default, and the batch width.

use crate::ir::Program;

/// Cranelift's optimisation level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// No optimisation passes: instructions stay in the order the lowering
    /// emits them (program order, interleaving independent chains).
    None,
    /// Optimise for speed: Cranelift's e-graph pass (value numbering,
    /// loop-invariant hoisting, rewrites).
    Speed,
    /// Chosen per program (the default): [`OptLevel::None`] for programs
    /// with a long straight clause (16 instructions or more) and no memory
    /// access from compiled code, [`OptLevel::Speed`] otherwise. The e-graph
    /// pass places each pure instruction where it is first demanded, so a
    /// long clause comes out one dependent chain after another, which the
    /// processor cannot overlap; measured on the bundled kernels, one
    /// 64-MAD chain runs 2.3× faster without it, eight chains 1.1×, while
    /// clauses that fetch run 10–20% faster with it.
    #[default]
    Auto,
}

/// Which code a program runs: code compiled quickly, code compiled with
/// every optimisation, or the first until the program proves hot
/// (`docs/compile.md`, "Tiered compilation").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Quick code first; once a program's quick code has run about as long
    /// as compiling it took, its optimised code is compiled on a thread of
    /// its own and runs from the next group on (the default). Both compute
    /// the same bits: they come from the same lowering.
    #[default]
    Tiered,
    /// Quick code only: Cranelift's single-pass register allocator and no
    /// e-graph pass ([`OptLevel`] is not used). Compiles 2–5.5× faster;
    /// runs 1.4–3.3× slower.
    Quick,
    /// Optimised code only: the backtracking register allocator, at the
    /// optimisation level [`JitOptions::opt_level`] says.
    Optimised,
}

/// Straight-clause length from which [`OptLevel::Auto`] skips the e-graph.
const AUTO_LONG_CLAUSE: u16 = 16;

impl OptLevel {
    pub(super) fn setting(self) -> &'static str {
        match self {
            OptLevel::None => "none",
            OptLevel::Speed | OptLevel::Auto => "speed",
        }
    }
}

/// How clauses are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JitOptions {
    /// Cranelift's optimisation level.
    pub opt_level: OptLevel,
    /// Quads processed per loop iteration: 1, 2 or 4, or 0 to choose per
    /// clause (code that calls the runtime for lookups or uncached writes
    /// always takes whole groups).
    pub quads_per_iter: u8,
    /// Quick code, optimised code, or the first then the second.
    pub tier: Tier,
}

impl JitOptions {
    /// These options with [`OptLevel::Auto`] decided for `program` (quick
    /// code is built without the e-graph pass).
    pub fn resolved(self, program: &Program) -> JitOptions {
        if self.tier != Tier::Optimised {
            return JitOptions {
                opt_level: OptLevel::None,
                ..self
            };
        }
        if self.opt_level != OptLevel::Auto {
            return self;
        }
        let memory = program.clauses.iter().any(crate::lower::needs_whole_group);
        let long = program.clauses.iter().any(|c| c.len >= AUTO_LONG_CLAUSE);
        JitOptions {
            opt_level: if long && !memory {
                OptLevel::None
            } else {
                OptLevel::Speed
            },
            ..self
        }
    }

    /// Quads per batch a clause's function is asked for: the options' own,
    /// else one for quick code (it compiles fastest, and runs only until
    /// the program is hot), else 0 (chosen per clause).
    pub(crate) fn clause_quads(self) -> usize {
        match self.quads_per_iter {
            0 if self.tier != Tier::Optimised => 1,
            w => usize::from(w),
        }
    }
}

impl Default for JitOptions {
    /// Optimisation chosen per program ([`OptLevel::Auto`]), quads per
    /// iteration chosen per clause: as many as keep the
    /// registers the clause touches within the vector registers (measured:
    /// small loop bodies run faster four quads at a time, large clauses
    /// spill and run fastest one quad at a time), quick code first
    /// ([`Tier::Tiered`]).
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::Auto,
            quads_per_iter: 0,
            tier: Tier::Tiered,
        }
    }
}
