//! Differential testing: random DPP programs run on two engines and
//! compared bit for bit (`docs/design.md`, "Differential testing").
//!
//! [`Case::random`] builds a program from the encoding table: ALU, OUT and
//! TEX instructions with every field drawn from its domain (registers folded
//! into r0–r7 and c0–c7 so values flow between instructions), nested inside
//! structured flow control — IF/ELSE/ENDIF on the ALU result, predicate bits
//! or boolean constants, LOOP (with `aL`-relative operands) and REP with
//! conditional BREAK and CONTINUE. Constants and input texels mix ordinary
//! numbers, ±0, ±Inf, NaNs with payloads, denormals and random patterns. A
//! quarter of the programs run in uncached mode (uncached writes and reads).
//!
//! [`Case::run`] executes a case on one engine and returns everything
//! observable: each finished pixel's outputs, the run counters, uncached
//! memory, or the error. [`compare`] reports a difference as the program's
//! text and a two-column table with `*` on the differing lanes.
//!
//! ```
//! use ctm_tools::diff::{Case, compare};
//! use ctm::engine::EngineKind;
//! let case = Case::random(7);
//! let (a, _) = case.run(EngineKind::Interp, Default::default());
//! let (b, _) = case.run(EngineKind::Interp, Default::default());
//! assert!(compare(&case, &a, &b, "interp", "interp").is_none());
//! ```

mod straight;

use crate::check::{self, Observed, Outcome, run_program};
use ctm::engine::EngineKind;
use ctm::isa::InstType;
use ctm::isa::disasm::disassemble;
use ctm::isa::{asm::assemble, decode_program};
use ctm::runtime::texture::{Image, Images};
use ctm::runtime::{Domain, EngineStats, RunOptions};
use ctm::{frontend, isa};
use ctm_jit::compile::JitOptions;
use ctm_jit::ir::Program;
use ctm_jit::state::{IntConst, Uniforms};

/// A small deterministic generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }

    /// One of `v` (not empty).
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u32) as usize]
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n.max(1)
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: u32) -> bool {
        self.below(100) < p
    }

    /// A float pattern: ordinary values, special values, or random bits.
    pub fn float(&mut self) -> u32 {
        const SPECIAL: [u32; 14] = [
            0x0000_0000, // +0
            0x8000_0000, // −0
            0x7F80_0000, // +Inf
            0xFF80_0000, // −Inf
            0x7FC0_0000, // quiet NaN
            0xFFC0_1234, // negative NaN with payload
            0x7F80_0001, // signalling NaN
            0x0000_0001, // smallest denormal
            0x807F_FFFF, // largest negative denormal
            0x0080_0000, // smallest normal
            0x7F7F_FFFF, // largest finite
            0x3F00_0000, // 0.5
            0x3F80_0000, // 1
            0xBF80_0000, // −1
        ];
        match self.below(10) {
            0..=3 => ((self.below(33) as f32 - 16.0) / 4.0).to_bits(),
            4 | 5 => (self.next_u32() as f32 / u32::MAX as f32 * 8.0 - 4.0).to_bits(),
            6 | 7 => SPECIAL[self.below(SPECIAL.len() as u32) as usize],
            _ => self.next_u32(),
        }
    }
}

/// One differential case: a program and everything it runs with.
#[derive(Clone, Debug)]
pub struct Case {
    /// The seed it was generated from.
    pub seed: u64,
    /// Assembly text.
    pub asm: String,
    /// The program runs in uncached mode.
    pub uncached: bool,
    /// The domain.
    pub domain: Domain,
    /// Constant files.
    pub uniforms: Uniforms,
    /// Inputs 0 and 1 and the uncached surface.
    pub textures: Images,
}

/// Registers random operands are folded into.
const REGS: u32 = 8;

struct Gen {
    rng: Rng,
    lines: Vec<String>,
    labels: u32,
    uncached: bool,
}

impl Gen {
    fn label(&mut self) -> String {
        self.labels += 1;
        format!("l{}", self.labels)
    }

    /// A random instruction of type `ty` with operands folded into the
    /// first registers and the fields that would end or break the program
    /// cleared.
    fn inst(&mut self, ty: InstType) -> String {
        let mut inst = loop {
            let i = isa::random::random_inst(&mut || self.rng.next_u32());
            if i.ty() == ty {
                break i;
            }
        };
        let slots = inst.slots();
        let uncached_out = ty == InstType::Out && self.uncached;
        for slot in slots.iter() {
            for (f, info) in slot.fields.iter().enumerate() {
                let raw = inst.get_field(slot.index, f);
                let new = match info.name {
                    "LAST" => 0,
                    "ADDR0" | "ADDR1" | "ADDR2" if raw & 0x80 == 0 => raw % REGS,
                    "ADDR0" | "ADDR1" | "ADDR2" => raw,
                    "RGB_ADDRD" | "ALPHA_ADDRD" | "SRC_ADDR" | "DST_ADDR" | "DX_ADDR"
                    | "DY_ADDR" => raw % REGS,
                    "TEX_ID" => raw % 2,
                    // Lookups, projected lookups and kills (uncached reads
                    // in uncached mode); the others act as lookups.
                    "INST" if ty == InstType::Tex => {
                        let ops: &[u32] = if self.uncached {
                            &[1, 2, 3, 7]
                        } else {
                            &[1, 2, 3]
                        };
                        ops[self.rng.below(ops.len() as u32) as usize]
                    }
                    // Uncached outputs write all four channels or none.
                    "RGB_OMASK" if uncached_out => 7,
                    "ALPHA_OMASK" if uncached_out => 1,
                    _ => raw,
                };
                if new != raw {
                    inst.set_field(slot.index, f, new)
                        .expect("folded values stay in the field's domain");
                }
            }
        }
        disassemble(&inst)
    }

    fn cond(&mut self) -> String {
        match self.rng.below(4) {
            0 => "alu_result == 0".into(),
            1 => "alu_result != 0".into(),
            2 => {
                let c = ["r", "g", "b", "a"][self.rng.below(4) as usize];
                let inv = if self.rng.percent(50) { "!" } else { "" };
                format!("{inv}p.{c} != 0")
            }
            _ => format!("b{} == 0", self.rng.below(4)),
        }
    }

    fn block(&mut self, depth: u32, in_loop: Option<(&str, &str, bool)>, budget: &mut u32) {
        let n = 1 + self.rng.below(4);
        for _ in 0..n {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let pick = self.rng.below(100);
            match pick {
                0..=49 => {
                    let t = self.inst(InstType::Alu);
                    self.lines.push(t);
                }
                50..=59 => {
                    let t = self.inst(InstType::Out);
                    self.lines.push(t);
                }
                60..=71 => {
                    let t = self.inst(InstType::Tex);
                    self.lines.push(t);
                }
                72..=81 if depth < 3 => {
                    let (els, end) = (self.label(), self.label());
                    let c = self.cond();
                    if self.rng.percent(50) {
                        self.lines.push(format!("IF {c} -> {els} jump=incr"));
                        self.block(depth + 1, in_loop, budget);
                        self.lines.push(format!("ELSE -> {end}"));
                        self.lines.push(format!("{els}:"));
                        self.block(depth + 1, in_loop, budget);
                        self.lines.push("ENDIF".into());
                        self.lines.push(format!("{end}:"));
                    } else {
                        self.lines.push(format!("IF {c} -> {end}"));
                        self.block(depth + 1, in_loop, budget);
                        self.lines.push("ENDIF".into());
                        self.lines.push(format!("{end}:"));
                    }
                }
                82..=91 if depth < 3 => {
                    let is_loop = self.rng.percent(50);
                    let k = self.rng.below(4);
                    let (body, cont, done) = (self.label(), self.label(), self.label());
                    let (op, end) = if is_loop {
                        ("LOOP", "ENDLOOP")
                    } else {
                        ("REP", "ENDREP")
                    };
                    self.lines.push(format!("{op} i{k} -> {done}"));
                    self.lines.push(format!("{body}:"));
                    self.block(depth + 1, Some((&done, &cont, is_loop)), budget);
                    self.lines.push(format!("{cont}:"));
                    self.lines.push(format!("{end} i{k} -> {body}"));
                    self.lines.push(format!("{done}:"));
                }
                92..=99 => {
                    if let Some((done, cont, is_loop)) = in_loop {
                        let brk = if is_loop { "BREAKLOOP" } else { "BREAKREP" };
                        match self.rng.below(3) {
                            0 => self.lines.push(format!("{brk} alu_result != 0 -> {done}")),
                            k => {
                                // A break or a continue inside a one-level IF.
                                let inner = if k == 1 {
                                    format!("{brk} -> {done} pop=1")
                                } else {
                                    format!("CONTINUE -> {cont} pop=1")
                                };
                                let skip = self.label();
                                let c = self.cond();
                                self.lines.push(format!("IF {c} -> {skip}"));
                                self.lines.push(inner);
                                self.lines.push("ENDIF".into());
                                self.lines.push(format!("{skip}:"));
                            }
                        }
                    } else {
                        let t = self.inst(InstType::Alu);
                        self.lines.push(t);
                    }
                }
                _ => {
                    let t = self.inst(InstType::Alu);
                    self.lines.push(t);
                }
            }
        }
    }
}

impl Case {
    /// The case generated from `seed`.
    pub fn random(seed: u64) -> Case {
        let mut g = Gen {
            rng: Rng::new(seed),
            lines: Vec::new(),
            labels: 0,
            uncached: false,
        };
        g.uncached = g.rng.percent(25);
        if g.uncached {
            g.lines.push(".uncached".into());
        }
        // Seed r1–r4 from constants, the pair and an input.
        g.lines.push(
            "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1".into(),
        );
        g.lines.push(
            "alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=c2 src1=c3 src2=c4".into(),
        );
        g.lines
            .push("tex ld r3.rgba, in0.rgba, r0.rgba unscaled acquire wait".into());
        g.lines.push(
            "alu r4.rgb = max.off(s0, s1) | r4.a = max.off(s0, s1) src0=c5 src1=c6 wait".into(),
        );
        let mut budget = 6 + g.rng.below(30);
        while budget > 0 {
            g.block(0, None, &mut budget);
        }
        // Make the registers observable.
        if g.uncached {
            g.lines.push(
                "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last".into(),
            );
        } else {
            for (t, r) in ["rtB", "rtC", "rtD"].iter().zip(2..) {
                g.lines.push(format!(
                    "out {t}.rgb = max.off(s0, s0) | {t}.a = max.off(s0, s0) src0=r{r} wait"
                ));
            }
            g.lines.push(
                "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last".into(),
            );
        }
        let mut uniforms = Uniforms::default();
        for c in uniforms.consts.iter_mut().take(REGS as usize) {
            *c = [g.rng.float(), g.rng.float(), g.rng.float(), g.rng.float()];
        }
        for i in uniforms.ints.iter_mut().take(4) {
            *i = IntConst {
                count: g.rng.below(4) as u8,
                init: g.rng.below(8) as u8,
                step: g.rng.below(5) as i8 - 2,
            };
        }
        uniforms.bools = g.rng.next_u32();
        let mut textures = Images::default();
        for n in 0..2 {
            let (w, h) = (1 + g.rng.below(6), 1 + g.rng.below(6));
            let texels = (0..w * h)
                .map(|_| [g.rng.float(), g.rng.float(), g.rng.float(), g.rng.float()])
                .collect();
            textures.inputs[n] = Some(Image {
                width: w,
                height: h,
                texels,
            });
        }
        textures.uncached_size = (6, 6);
        let (w, h) = (1 + g.rng.below(9), 1 + g.rng.below(5));
        Case {
            seed,
            asm: g.lines.join("\n") + "\n",
            uncached: g.uncached,
            domain: Domain::new(w, h),
            uniforms,
            textures,
        }
    }

    /// A case around a given program (raw words; undecodable slots are
    /// errors when reached), with the constants, inputs and domain of
    /// [`Case::random`]`(seed)`. Used by the fuzz targets.
    pub fn from_words(words: &[u32], uncached: bool, seed: u64) -> Case {
        let mut case = Case::random(seed);
        let mut asm =
            ctm::isa::disasm::disassemble_program(words, ctm::isa::disasm::Options::default());
        if uncached {
            asm.insert_str(0, ".uncached\n");
        }
        case.asm = asm;
        case.uncached = uncached;
        case
    }

    /// Runs the case on `engine` (JIT engines compile with `jit`); also
    /// returns what the engine did (fallbacks, native clause runs).
    pub fn run(&self, engine: EngineKind, jit: JitOptions) -> (Outcome, EngineStats) {
        self.run_built(engine, jit, frontend::Options::loaded(self.uncached))
    }

    /// The case's program as the frontend builds it with `opts`.
    pub fn program(&self, opts: frontend::Options) -> Program {
        let words = match assemble(&self.asm) {
            Ok(w) => w,
            Err(e) => panic!("generated program does not assemble: {e}\n{}", self.asm),
        };
        frontend::build(&decode_program(&words), opts)
    }

    /// [`Case::run`] with the program built with `opts`.
    pub fn run_built(
        &self,
        engine: EngineKind,
        jit: JitOptions,
        opts: frontend::Options,
    ) -> (Outcome, EngineStats) {
        let program = self.program(opts);
        // The frontend's output must meet the IR's rules the engines rely
        // on (canonical at every observation point among them).
        if let Err(e) = program.verify() {
            panic!(
                "the IR of a generated program does not verify: {e}
{}",
                self.asm
            );
        }
        let mut engine = engine
            .make(jit)
            .unwrap_or_else(|e| panic!("engine unavailable: {e}"));
        let options = RunOptions {
            budget: 20_000,
            ..RunOptions::default()
        };
        let outcome = run_program(
            &program,
            &mut *engine,
            &self.uniforms,
            options,
            (self.domain, 0x3F00_0000),
            &self.textures,
        );
        (outcome, engine.stats())
    }

    /// Runs the case on the interpreter and on the JIT with `jit`; they
    /// must agree ([`compare`]) and the JIT must have run natively: no
    /// clause fallen back, and some clause compiled where pixels were written. Returns the outcome and what the JIT did.
    pub fn run_both(&self, jit: JitOptions) -> Result<(Outcome, EngineStats), String> {
        let (want, _) = self.run(EngineKind::Interp, jit);
        let (got, stats) = self.run(EngineKind::Jit, jit);
        // A run that wrote results ran clauses, natively or not at all.
        let wrote = got.as_ref().is_ok_and(|r| {
            r.pixels
                .values()
                .any(|p| p.targets.iter().flatten().any(Option::is_some))
        });
        check::ran_natively(&stats, wrote)
            .map_err(|e| format!("seed {}: {e}\n{}", self.seed, self.asm))?;
        match compare(self, &want, &got, "interp", &format!("jit {jit:?}")) {
            None => Ok((got, stats)),
            Some(report) => Err(report),
        }
    }
}

/// `None` if the outcomes are identical; otherwise a report: the case, the
/// program, and the comparator's two-column table ([`check::report`]).
pub fn compare(case: &Case, a: &Outcome, b: &Outcome, an: &str, bn: &str) -> Option<String> {
    let table = check::report(&Observed::run(a), &Observed::run(b), an, bn)?;
    Some(format!(
        "seed {}: {an} and {bn} differ (domain {}×{}, uncached {})\n--- program ---\n{}{table}",
        case.seed,
        case.domain.i1 + 1,
        case.domain.j1 + 1,
        case.uncached,
        case.asm
    ))
}
