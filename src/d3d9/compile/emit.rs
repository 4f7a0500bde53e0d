//! DPP instructions as the compiler builds them, written out in the
//! assembly syntax of `docs/asm.md` (the assembler then encodes and checks
//! them).

use std::fmt::Write;

/// Swizzle codes of a DPP input channel: 0–3 r g b a, then the constants.
pub const ZERO: u8 = 4;
/// The swizzle constant 1.0.
pub const ONE: u8 = 6;
/// The swizzle constant 0.5 (`h`).
pub const HALF: u8 = 5;

const SWZ: [char; 7] = ['r', 'g', 'b', 'a', '0', 'h', '1'];

/// A value read by an instruction: an operand (`r5`, `c3`, `c[aL+3]`,
/// `0.5`), the channel each of x, y, z, w takes, and sign modifiers.
#[derive(Clone, Debug, PartialEq)]
pub struct Val {
    /// The operand's text.
    pub opnd: String,
    /// Per channel: 0–3 a channel of the operand, or ZERO/HALF/ONE.
    pub swz: [u8; 4],
    /// Negate (after abs).
    pub neg: bool,
    /// Absolute value.
    pub abs: bool,
}

impl Val {
    /// The operand with its channels in order.
    pub fn reg(opnd: impl Into<String>) -> Val {
        Val {
            opnd: opnd.into(),
            swz: [0, 1, 2, 3],
            neg: false,
            abs: false,
        }
    }

    /// A swizzle constant in every channel (no operand needed).
    pub fn constant(code: u8) -> Val {
        Val {
            opnd: String::new(),
            swz: [code; 4],
            neg: false,
            abs: false,
        }
    }

    /// The same value negated.
    pub fn negated(mut self) -> Val {
        self.neg = !self.neg;
        self
    }

    /// Channel `c` replicated.
    pub fn scalar(mut self, c: usize) -> Val {
        self.swz = [self.swz[c]; 4];
        self
    }

    /// Whether it reads no operand.
    fn is_constant(&self) -> bool {
        self.swz.iter().all(|&s| s >= ZERO)
    }
}

/// One unit's operation and inputs.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Operation name (`mad`, `max`, `rcp`, `sop`, …).
    pub op: &'static str,
    /// Its inputs in order.
    pub inputs: Vec<Val>,
    /// The output modifier: `.off` for bit-exact selections.
    pub off: bool,
    /// Clamp to [0, 1].
    pub sat: bool,
    /// Output scale 2^omod (−3..=3; ps_1_x's result shifts).
    pub omod: i8,
}

impl Unit {
    /// `op(inputs…)`.
    pub fn new(op: &'static str, inputs: Vec<Val>) -> Unit {
        Unit {
            op,
            inputs,
            off: false,
            sat: false,
            omod: 0,
        }
    }

    /// A selection with the modifier disabled (bit-exact), unless clamped.
    pub fn exact(op: &'static str, inputs: Vec<Val>, sat: bool) -> Unit {
        Unit {
            op,
            inputs,
            off: !sat,
            sat,
            omod: 0,
        }
    }
}

/// An ALU or OUTPUT instruction.
#[derive(Clone, Debug, Default)]
pub struct Alu {
    /// OUTPUT rather than ALU.
    pub out: bool,
    /// RGB unit (None: computes nothing useful, writes nothing).
    pub rgb: Option<Unit>,
    /// Alpha unit.
    pub alpha: Option<Unit>,
    /// RGB destinations (`r5.rg`, `rtA.rgb`, `p.rgb<0`).
    pub rgb_dst: Vec<String>,
    /// Alpha destinations (`r5.a`, `rtA.a`, `depth`, `p.a<0`).
    pub alpha_dst: Vec<String>,
    /// `res=…`: the ALU result.
    pub res: Option<&'static str>,
    /// `pred=…`, `apred=…`.
    pub pred: Option<String>,
    /// Alpha predicate.
    pub apred: Option<String>,
    /// Wait for the texture semaphore.
    pub wait: bool,
    /// An idle cycle after it (before derivatives, `docs/isa.md` §8.2).
    pub nop: bool,
    /// Processors may end after it.
    pub last: bool,
}

/// A DPP instruction (or a label) in the compiler's output.
#[derive(Clone, Debug)]
pub enum Dpp {
    /// A label on the next instruction.
    Label(String),
    /// ALU or OUTPUT.
    Alu(Alu),
    /// A lookup: destination temp, input, coordinate temp; acquire.
    Tex {
        /// `ld`, `kill`.
        op: &'static str,
        /// Destination `rN.mask` (`_` for kill).
        dst: String,
        /// Input surface.
        input: u8,
        /// Which fetched channel goes to destination r, g, b, a.
        chan: String,
        /// Coordinate operand with its channels (`r3.rgba`).
        coord: String,
        /// Unscaled coordinates.
        unscaled: bool,
        /// Take the semaphore (and wait first).
        acquire: bool,
        /// Wait before issuing.
        wait: bool,
        /// Predication of R, G, B.
        pred: Option<String>,
        /// Predication of A.
        apred: Option<String>,
    },
    /// A flow-control line in the assembler's construct syntax
    /// (`IF b0 == 0 -> L3 jump=incr`).
    Fc(String),
}

impl Dpp {
    /// Whether the instruction waits for the semaphore.
    pub fn set_wait(&mut self) {
        match self {
            Dpp::Alu(a) => a.wait = true,
            Dpp::Tex { wait, .. } => *wait = true,
            Dpp::Fc(s) => {
                if !s.ends_with(" wait") {
                    s.push_str(" wait");
                }
            }
            Dpp::Label(_) => {}
        }
    }
}

fn input_text(v: &Val, slot: usize, alpha: bool) -> String {
    let chans: String = if alpha {
        SWZ[usize::from(v.swz[3])].to_string()
    } else {
        v.swz[..3].iter().map(|&c| SWZ[usize::from(c)]).collect()
    };
    let inner = format!("s{slot}.{chans}");
    let inner = if v.abs {
        format!("abs({inner})")
    } else {
        inner
    };
    if v.neg { format!("-{inner}") } else { inner }
}

impl Alu {
    /// The assembly line.
    pub fn text(&self) -> Result<String, String> {
        // Operand slots shared by both units (the same register for the
        // RGB and the alpha address).
        let mut slots: Vec<String> = Vec::new();
        let mut unit = |u: &Option<Unit>, alpha: bool| -> Result<String, String> {
            let Some(u) = u else {
                return Ok("max.off(s0, s0)".to_string());
            };
            let mut args = Vec::new();
            for v in &u.inputs {
                let slot = if v.is_constant() {
                    0
                } else if let Some(k) = slots.iter().position(|s| *s == v.opnd) {
                    k
                } else {
                    slots.push(v.opnd.clone());
                    slots.len() - 1
                };
                if slot > 2 {
                    return Err(format!("more than three operands: {slots:?}"));
                }
                args.push(input_text(v, slot, alpha));
            }
            let mut m = String::new();
            if u.omod != 0 {
                let k = [1, 2, 3, -1, -2, -3]
                    .iter()
                    .position(|&x| x == u.omod)
                    .ok_or_else(|| format!("output scale 2^{} does not exist", u.omod))?;
                m.push('.');
                m.push_str(["x2", "x4", "x8", "d2", "d4", "d8"][k]);
            }
            if u.off {
                m.push_str(".off");
            }
            if u.sat {
                m.push_str(".sat");
            }
            Ok(format!("{}{m}({})", u.op, args.join(", ")))
        };
        let rgb = unit(&self.rgb, false)?;
        let alpha = unit(&self.alpha, true)?;
        let dsts = |d: &[String]| {
            if d.is_empty() {
                "_".to_string()
            } else {
                d.join(" ")
            }
        };
        let mut s = format!(
            "{} {} = {rgb} | {} = {alpha}",
            if self.out { "out" } else { "alu" },
            dsts(&self.rgb_dst),
            dsts(&self.alpha_dst)
        );
        for (k, o) in slots.iter().enumerate() {
            let _ = write!(s, " src{k}={o}");
        }
        if let Some(r) = self.res {
            let _ = write!(s, " res={r}");
        }
        if let Some(p) = &self.pred {
            let _ = write!(s, " pred={p}");
        }
        if let Some(p) = &self.apred {
            let _ = write!(s, " apred={p}");
        }
        if self.wait {
            s.push_str(" wait");
        }
        if self.nop {
            s.push_str(" nop");
        }
        if self.last {
            s.push_str(" last");
        }
        Ok(s)
    }
}

/// The program text of `code`; `last` goes on the final instruction.
pub fn program_text(code: &[Dpp]) -> Result<String, String> {
    let mut out = String::new();
    for d in code {
        match d {
            Dpp::Label(l) => {
                let _ = writeln!(out, "{l}:");
            }
            Dpp::Alu(a) => {
                let _ = writeln!(out, "    {}", a.text()?);
            }
            Dpp::Tex {
                op,
                dst,
                input,
                chan,
                coord,
                unscaled,
                acquire,
                wait,
                pred,
                apred,
            } => {
                let mut s = format!("    tex {op} {dst}, in{input}.{chan}, {coord}");
                if *unscaled {
                    s.push_str(" unscaled");
                }
                if *acquire {
                    s.push_str(" acquire");
                }
                if *wait {
                    s.push_str(" wait");
                }
                if let Some(p) = pred {
                    let _ = write!(s, " pred={p}");
                }
                if let Some(p) = apred {
                    let _ = write!(s, " apred={p}");
                }
                let _ = writeln!(out, "{s}");
            }
            Dpp::Fc(f) => {
                let _ = writeln!(out, "    {f}");
            }
        }
    }
    Ok(out)
}
