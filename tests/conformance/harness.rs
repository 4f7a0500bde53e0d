//! The conformance harness: a program (assembly text) plus a [`Setup`]
//! (domain, constants, inputs) runs on every engine in [`ENGINES`]; the
//! outcomes must agree exactly (NaN-aware: compared as bit patterns) and the
//! first is returned for the test's expectations. Cases state their inputs
//! and expected bits once; a new engine joins by being listed here.

use ctm::frontend;
use ctm::interp::Interpreter;
use ctm::isa::{asm::assemble, decode_program};
use ctm::jit::JitEngine;
use ctm::runtime::Engine;
use ctm::runtime::texture::{Image, Images};
use ctm::runtime::{Domain, RunError, RunOptions};
use ctm_jit::compile::{JitOptions, OptLevel, Tier};
use ctm_jit::state::{IntConst, Uniforms};
use ctm_tools::check::{Observed, ran_natively, report, run_program};

/// The engines every case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The reference interpreter.
    Interp,
    /// Compiled code with these options.
    Jit(JitOptions),
}

/// All engines: the interpreter first (the reference), then the JIT's
/// optimised code at both optimisation levels, with whole groups and
/// single quads per iteration, and its quick code.
pub const ENGINES: &[EngineKind] = &[
    EngineKind::Interp,
    EngineKind::Jit(JitOptions {
        opt_level: OptLevel::Speed,
        quads_per_iter: 4,
        tier: Tier::Optimised,
    }),
    EngineKind::Jit(JitOptions {
        opt_level: OptLevel::None,
        quads_per_iter: 1,
        tier: Tier::Optimised,
    }),
    EngineKind::Jit(JitOptions {
        opt_level: OptLevel::Auto,
        quads_per_iter: 0,
        tier: Tier::Quick,
    }),
];

/// Inputs of a run.
#[derive(Clone)]
pub struct Setup {
    pub domain: Domain,
    pub v: u32,
    pub uniforms: Uniforms,
    pub textures: Images,
    pub options: RunOptions,
    pub frontend: frontend::Options,
}

impl Setup {
    /// A w×h domain at (0, 0), all constants 0.
    pub fn new(w: u32, h: u32) -> Setup {
        Setup {
            domain: Domain::new(w, h),
            v: 0,
            uniforms: Uniforms::default(),
            textures: Images::default(),
            options: RunOptions::default(),
            frontend: frontend::Options::default(),
        }
    }

    /// Float constant `n` from f32 values.
    pub fn c(mut self, n: usize, v: [f32; 4]) -> Setup {
        self.uniforms.consts[n] = v.map(f32::to_bits);
        self
    }

    /// Float constant `n` from raw patterns.
    pub fn cbits(mut self, n: usize, v: [u32; 4]) -> Setup {
        self.uniforms.consts[n] = v;
        self
    }

    /// Integer constant `n`.
    pub fn int(mut self, n: usize, count: u8, init: u8, step: i8) -> Setup {
        self.uniforms.ints[n] = IntConst { count, init, step };
        self
    }

    /// The boolean constants.
    pub fn bools(mut self, b: u32) -> Setup {
        self.uniforms.bools = b;
        self
    }

    /// Input `n`.
    pub fn input(mut self, n: usize, img: Image) -> Setup {
        self.textures.inputs[n] = Some(img);
        self
    }

    /// Uncached memory of w×h.
    pub fn uncached(mut self, w: u32, h: u32) -> Setup {
        self.textures.uncached_size = (w, h);
        self
    }

    /// Check semaphore hazards.
    pub fn hazards(mut self) -> Setup {
        self.options.check_hazards = true;
        self
    }
}

/// What a run produced: the harness's (pixels, counters, uncached memory).
pub use ctm_tools::check::Run as Outcome;

/// Reading render targets of an [`Outcome`].
pub trait Pixels {
    /// Render target `t` of pixel (i, j); unwritten channels are `None`.
    fn rt(&self, t: usize, i: u32, j: u32) -> [Option<u32>; 4];
    /// Render target A of pixel (i, j), every channel written.
    fn a(&self, i: u32, j: u32) -> [u32; 4];
    /// Render target A of pixel (i, j) as floats.
    fn af(&self, i: u32, j: u32) -> [f32; 4];
}

impl Pixels for Outcome {
    /// Render target `t` of pixel (i, j); unwritten channels are `None`.
    fn rt(&self, t: usize, i: u32, j: u32) -> [Option<u32>; 4] {
        self.pixels
            .get(&(i, j))
            .unwrap_or_else(|| panic!("pixel ({i}, {j}) did not finish"))
            .targets[t]
    }

    /// Render target A of pixel (i, j), every channel written.
    fn a(&self, i: u32, j: u32) -> [u32; 4] {
        self.rt(0, i, j)
            .map(|c| c.unwrap_or_else(|| panic!("rtA of ({i}, {j}) not fully written")))
    }

    /// Render target A of pixel (i, j) as floats.
    fn af(&self, i: u32, j: u32) -> [f32; 4] {
        self.a(i, j).map(f32::from_bits)
    }
}

fn run_on(kind: EngineKind, asm: &str, s: &Setup) -> Result<Outcome, RunError> {
    let words = assemble(asm).unwrap_or_else(|e| panic!("assembly failed: {e}\n{asm}"));
    let program = frontend::build(&decode_program(&words), s.frontend);
    program.verify().expect("IR verifies");
    let at = (s.domain, s.v);
    match kind {
        EngineKind::Interp => run_program(
            &program,
            &mut Interpreter::new(),
            &s.uniforms,
            s.options,
            at,
            &s.textures,
        ),
        EngineKind::Jit(opts) => {
            let mut engine = JitEngine::new(opts);
            let got = run_program(
                &program,
                &mut engine,
                &s.uniforms,
                s.options,
                at,
                &s.textures,
            );
            // With the hazard checker on, the JIT interprets every clause.
            if let Err(e) = ran_natively(&engine.stats(), !s.options.check_hazards) {
                panic!("{e}\n{asm}");
            }
            got
        }
    }
}

/// Runs on every engine, with the program as built and, where the hazard
/// checker is off, once more without the register writes nothing observes
/// (`drop_dead_writes`, as the PE builds programs); all must agree bit for
/// bit. Returns the outcome.
pub fn try_run(asm: &str, s: &Setup) -> Result<Outcome, RunError> {
    let mut first: Option<Result<Outcome, RunError>> = None;
    let mut lean = s.clone();
    lean.frontend.drop_dead_writes = true;
    let setups = if s.options.check_hazards || s.frontend.drop_dead_writes {
        vec![s]
    } else {
        vec![s, &lean]
    };
    for setup in setups {
        for &e in ENGINES {
            let got = run_on(e, asm, setup);
            match &first {
                None => first = Some(got),
                Some(want) => {
                    let name = format!(
                        "{e:?}, dead writes dropped: {}",
                        setup.frontend.drop_dead_writes
                    );
                    if let Some(r) =
                        report(&Observed::run(want), &Observed::run(&got), "interp", &name)
                    {
                        panic!("the engines disagree on\n{asm}\n{r}");
                    }
                }
            }
        }
    }
    first.expect("at least one engine")
}

/// Runs on every engine and expects success.
pub fn run(asm: &str, s: &Setup) -> Outcome {
    try_run(asm, s).unwrap_or_else(|e| panic!("run failed: {e}\n{asm}"))
}

/// The final instruction most cases end with: rtA = r1, bit-exact.
pub const OUT_R1: &str =
    "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

/// Runs `body` (which leaves its result in r1) on a 1×1 domain with `s`,
/// outputs r1 and returns rtA of pixel (0, 0).
pub fn r1(body: &str, s: &Setup) -> [u32; 4] {
    let asm = format!("{body}\n{OUT_R1}\n");
    run(&asm, s).a(0, 0)
}

/// f32 patterns of four values.
pub fn bits(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

/// Asserts patterns equal, printing floats and hex on failure.
#[track_caller]
pub fn assert_bits(got: [u32; 4], want: [u32; 4], what: &str) {
    if got != want {
        panic!(
            "{what}:\n  got  {:08x?} = {:?}\n  want {:08x?} = {:?}",
            got,
            got.map(f32::from_bits),
            want,
            want.map(f32::from_bits)
        );
    }
}
