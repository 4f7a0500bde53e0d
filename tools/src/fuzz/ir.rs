//! The IR fuzz target: bytes build a clause of IR operations directly
//! (what no frontend would build as well as what it would), and what the
//! verifier accepts must compile at both optimisation levels and run on
//! both engines with the same outputs, bit for bit; what it refuses, both
//! engines refuse too. The rule is the IR's (`ctm_jit::ir::Program::verify`).

use ctm::engine::EngineKind;
use ctm::interp::Interpreter;
use ctm::jit::JitEngine;
use ctm::runtime::{Domain, Engine, NoTextures, PixelOut, RunOptions, Runner};
use ctm_jit::compile::{JitOptions, OptLevel, Tier};
use ctm_jit::ir::{Binary, Clause, Gate, Index, Node, Op, Program, Select, Term, Test, Unary, V};
use ctm_jit::state::Uniforms;

/// The operations a program is built from, at most.
const MAX_OPS: usize = 48;

/// Bytes read one at a time, zeros past the end.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn word(&mut self) -> u32 {
        u32::from_le_bytes([self.next(), self.next(), self.next(), self.next()])
    }
}

/// Values worth meeting: zeros, denormals, NaNs, infinities, ordinary.
const PATTERNS: [u32; 12] = [
    0,
    0x8000_0000,
    1,
    0x807f_ffff,
    0x3f80_0000,
    0xbf80_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0001,
    0xffbf_ffff,
    0x4049_0fdb,
    0x0080_0000,
];

/// A field below `n`, or `n` itself (out of range) once in 256.
fn small(b: &mut Bytes, n: u8) -> u8 {
    match b.next() {
        255 => n,
        k => k % n,
    }
}

fn gate(b: &mut Bytes) -> Gate {
    let g = b.next();
    Gate {
        pred: (g & 1 != 0).then_some(((g >> 1) & 3, g & 8 != 0)),
        inactive: g & 16 != 0,
    }
}

fn test(b: &mut Bytes) -> Test {
    [Test::Eq, Test::Lt, Test::Ge, Test::Ne][usize::from(b.next() & 3)]
}

/// The program the bytes describe: one clause of operations, then End.
pub fn build(data: &[u8]) -> Program {
    // The pair (i, j) to start from.
    let nodes: Vec<Node> = (0..2)
        .map(|chan| Node {
            pc: 0,
            op: Op::Temp {
                dst: V(u32::from(chan)),
                index: Index {
                    base: 0,
                    rel: false,
                },
                chan,
            },
        })
        .collect();
    let mut g = Builder {
        b: Bytes(data),
        nodes,
        values: 2,
    };
    for _ in 0..MAX_OPS.min(data.len() / 3) {
        let kind = g.b.next() % 16;
        let op = if kind < 10 {
            g.value_op(kind)
        } else {
            g.write_op(kind)
        };
        g.nodes.push(Node { pc: 0, op });
    }
    Program {
        clauses: vec![Clause {
            start: 0,
            len: 1,
            nodes: g.nodes,
            values: g.values,
            term: Term::End,
        }],
        entry: vec![Some(0)],
        len: 1,
        early_exit: true,
        forms: Default::default(),
        uncached_unorm: None,
        narrow: None,
    }
}

/// A clause under construction: the bytes left, its nodes, its values.
struct Builder<'a> {
    b: Bytes<'a>,
    nodes: Vec<Node>,
    values: u32,
}

impl Builder<'_> {
    /// A new value.
    fn fresh(&mut self) -> V {
        self.values += 1;
        V(self.values - 1)
    }

    /// An existing value (or a made-up one, for the verifier to refuse).
    fn pick(&mut self) -> V {
        let k = u32::from(self.b.next());
        if self.values == 0 || k == 255 {
            V(k)
        } else {
            V(k % self.values)
        }
    }

    /// A value where its bits are observed: canonicalised first, except
    /// once in 32 (for the verifier to refuse when it is raw).
    fn observe(&mut self) -> V {
        let a = self.pick();
        if self.b.next().is_multiple_of(32) {
            return a;
        }
        let dst = self.fresh();
        self.nodes.push(Node {
            pc: 0,
            op: Op::Unary {
                dst,
                op: Unary::Canon,
                a,
            },
        });
        dst
    }

    /// An operation that defines a value (kinds 0–9): a read (0–2) or
    /// arithmetic.
    fn value_op(&mut self, kind: u8) -> Op {
        match kind {
            0 => Op::Const {
                dst: self.fresh(),
                index: Index {
                    base: self.b.next() % 8,
                    rel: self.b.next() & 7 == 0,
                },
                chan: small(&mut self.b, 4),
            },
            1 => Op::Imm {
                dst: self.fresh(),
                bits: match self.b.next() {
                    k if k < 200 => PATTERNS[usize::from(k) % PATTERNS.len()],
                    _ => self.b.word(),
                },
            },
            2 => Op::Temp {
                dst: self.fresh(),
                index: Index {
                    base: self.b.next() % 4,
                    rel: false,
                },
                chan: self.b.next() % 4,
            },
            _ => self.arith_op(kind),
        }
    }

    /// Arithmetic on existing values (kinds 3–9).
    fn arith_op(&mut self, kind: u8) -> Op {
        match kind {
            3 | 4 => {
                let a = self.pick();
                let op = match self.b.next() % 14 {
                    0 => Unary::Neg,
                    1 => Unary::Abs,
                    2 => Unary::Nab,
                    3 => Unary::Frc,
                    4 => Unary::Ex2,
                    5 => Unary::Ln2,
                    6 => Unary::Rcp,
                    7 => Unary::Rsq,
                    8 => Unary::Sin,
                    9 => Unary::Cos,
                    10 => Unary::Omod(small(&mut self.b, 7) as i8 - 3),
                    11 | 12 => Unary::Canon,
                    _ => Unary::Clamp,
                };
                Op::Unary {
                    dst: self.fresh(),
                    op,
                    a,
                }
            }
            5 => {
                let op = [
                    Binary::Add,
                    Binary::Sub,
                    Binary::Mul,
                    Binary::Div,
                    Binary::Min,
                    Binary::Max,
                ][usize::from(self.b.next() % 6)];
                let (a, c) = if matches!(op, Binary::Min | Binary::Max) {
                    let a = self.observe();
                    (a, self.observe())
                } else {
                    (self.pick(), self.pick())
                };
                Op::Binary {
                    dst: self.fresh(),
                    op,
                    a,
                    b: c,
                }
            }
            6 => {
                let (x, y, z) = (self.pick(), self.pick(), self.pick());
                Op::Mad {
                    dst: self.fresh(),
                    a: x,
                    b: y,
                    c: z,
                }
            }
            7 => {
                let n = match self.b.next() % 32 {
                    0 => 0,
                    1 => 5,
                    k => 1 + k % 4,
                };
                let pairs = (0..n).map(|_| (self.pick(), self.pick())).collect();
                let addend = (self.b.next() & 1 != 0).then(|| self.pick());
                Op::Dot {
                    dst: self.fresh(),
                    pairs,
                    addend,
                }
            }
            8 => {
                let c = self.pick();
                let x = self.observe();
                let y = self.observe();
                let op = if self.b.next() & 1 == 0 {
                    Select::Cnd
                } else {
                    Select::Cmp
                };
                Op::Select {
                    dst: self.fresh(),
                    op,
                    c,
                    a: x,
                    b: y,
                }
            }
            _ => {
                let a = self.pick();
                Op::QuadLane {
                    dst: self.fresh(),
                    a,
                    lane: small(&mut self.b, 4),
                }
            }
        }
    }

    /// An operation that writes somewhere (kinds 10–15).
    fn write_op(&mut self, kind: u8) -> Op {
        match kind {
            10 | 11 => Op::SetTemp {
                index: Index {
                    base: self.b.next() % 4,
                    rel: false,
                },
                chan: small(&mut self.b, 4),
                v: self.observe(),
                gate: gate(&mut self.b),
                fetched: false,
            },
            12 | 13 => Op::SetOut {
                target: small(&mut self.b, 4),
                chan: small(&mut self.b, 4),
                v: self.observe(),
                gate: gate(&mut self.b),
            },
            14 => Op::SetPred {
                chan: small(&mut self.b, 4),
                test: test(&mut self.b),
                v: self.pick(),
                gate: gate(&mut self.b),
            },
            _ => match self.b.next() % 2 {
                0 => Op::SetDepth {
                    v: self.observe(),
                    gate: gate(&mut self.b),
                },
                _ => Op::SetAluResult {
                    test: test(&mut self.b),
                    v: self.pick(),
                    gate: gate(&mut self.b),
                },
            },
        }
    }
}

/// Runs `p` over 6 × 5 pairs (helper lanes included) on `engine`: each
/// pixel's outputs, or the error's text.
fn run(p: &Program, engine: &mut dyn Engine, u: &Uniforms) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut sink = |i: u32, j: u32, px: &PixelOut| out.push(format!("({i}, {j}): {px:?}"));
    Runner::new(p, engine, u, RunOptions::default())
        .run(Domain::new(6, 5), 0x3f00_0000, &mut NoTextures, &mut sink)
        // The same refusal reads the same whichever engine gives it.
        .map_err(|e| {
            e.to_string()
                .replace("the interp engine", "the engine")
                .replace("the jit engine", "the engine")
        })?;
    Ok(out)
}

/// The target: see the module docs.
pub fn check(data: &[u8]) -> Result<(), String> {
    let p = build(data);
    let mut u = Uniforms::default();
    for (c, chans) in u.consts.iter_mut().take(8).enumerate() {
        *chans = std::array::from_fn(|k| PATTERNS[(3 * c + k) % PATTERNS.len()]);
    }
    let verified = p.verify();
    let want = run(&p, &mut Interpreter::new(), &u);
    if EngineKind::Jit.check().is_err() {
        return Ok(());
    }
    let tiers = [
        (OptLevel::None, Tier::Optimised),
        (OptLevel::Speed, Tier::Optimised),
        (OptLevel::None, Tier::Quick),
    ];
    for (opt_level, tier) in tiers {
        let opts = JitOptions {
            opt_level,
            quads_per_iter: 0,
            tier,
        };
        let compiled = ctm_jit::compile::compile(&p, opts);
        if verified.is_ok() != compiled.is_ok() {
            return Err(format!(
                "the verifier says {verified:?} but compiling at {opt_level:?} says {:?}\n{p:?}",
                compiled.err()
            ));
        }
        let got = run(&p, &mut JitEngine::new(opts), &u);
        if got != want {
            return Err(format!(
                "the engines disagree at {opt_level:?}:\ninterp: {want:?}\njit:    {got:?}\n{p:?}"
            ));
        }
    }
    if verified.is_err() && want.is_ok() {
        return Err(format!(
            "the interpreter ran IR the verifier refuses ({verified:?})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_share_of_random_inputs_is_valid_ir() {
        let mut rng = crate::diff::Rng::new(5);
        let valid = (0..2000)
            .filter(|_| {
                let data: Vec<u8> = (0..rng.below(150)).map(|_| rng.below(256) as u8).collect();
                super::build(&data).verify().is_ok()
            })
            .count();
        assert!(valid > 1000, "{valid} of 2000");
    }
}
