//! Tracing one pixel (or its quad) instruction by instruction, on the
//! interpreter: for every instruction the pixel's group executes, the
//! values it wrote — temporaries, predicate bits, the ALU result, render
//! targets, the conditional value — the texels its lookups fetched, the
//! flow-control state (active, branch counter, loop frames, aL, address
//! stack) and the semaphore hazards as they happen.
//!
//! The run is a normal run of the whole job (so groups, votes and the
//! memory the pixel sees are those of any run), built with one clause per
//! instruction and observed between clauses; only the pixel's group is
//! recorded.
//!
//! ```
//! use ctm::kernel::{Job, Kernel};
//! use ctm::mc::Format;
//! use ctm::trace::{trace, TraceOptions, Write};
//! let k = Kernel::assemble(
//!     "alu r1.rgb = max.x2(s0, s0) | r1.a = max.x2(s0, s0) src0=r0
//!      out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last").unwrap();
//! let job = Job::new(4, 4).output(0, Format::Float32_4);
//! let t = trace(&k, &job, &TraceOptions::pixel(3, 1)).unwrap();
//! assert_eq!(t.steps.len(), 2);
//! // @0 wrote r1 = 2·(3, 1, 0, 1).
//! assert!(t.steps[0].lanes[0].writes.contains(&Write::Temp { reg: 1, chan: 0, bits: 6.0f32.to_bits() }));
//! println!("{t}");
//! ```

mod engine;

use crate::engine::EngineKind;
use crate::kernel::{Job, JobResult, Kernel, KernelError};
use ctm_jit::ir::FetchKind;
use std::fmt;

/// What to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// The pixel (i, j).
    pub pixel: (u32, u32),
    /// All four lanes of its quad, side by side.
    pub quad: bool,
    /// Record instructions at or after this pc only.
    pub from: Option<u16>,
    /// Record instructions at or before this pc only.
    pub until: Option<u16>,
}

impl TraceOptions {
    /// Every instruction of pixel (i, j).
    pub fn pixel(i: u32, j: u32) -> TraceOptions {
        TraceOptions {
            pixel: (i, j),
            quad: false,
            from: None,
            until: None,
        }
    }
}

/// A value written by an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// Temporary `r{reg}`, channel `chan` (0 r … 3 a), as a raw pattern.
    Temp {
        /// Register.
        reg: u8,
        /// Channel.
        chan: u8,
        /// The value's bits.
        bits: u32,
    },
    /// Predicate bit `chan`.
    Pred {
        /// Channel.
        chan: u8,
        /// New value.
        value: bool,
    },
    /// The ALU result.
    AluResult(bool),
    /// Render target `target` (0 A … 3 D), channel `chan`.
    Output {
        /// Target.
        target: u8,
        /// Channel.
        chan: u8,
        /// The value's bits.
        bits: u32,
    },
    /// The conditional value.
    Depth(u32),
    /// The lane was killed.
    Killed,
}

/// One lookup of a traced lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetch {
    /// Lookup or uncached read.
    pub kind: FetchKind,
    /// The input.
    pub input: u8,
    /// S, T, R, Q as given.
    pub coords: [u32; 4],
    /// The four channels fetched (before the destination swizzle and mask).
    pub texel: [u32; 4],
}

/// A lane's flow-control state after an instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneState {
    /// Still executing (not finished, not killed).
    pub running: bool,
    /// Active (not switched off by flow control).
    pub active: bool,
    /// Held by a BREAK or CONTINUE until its loop ends.
    pub held: bool,
    /// Its branch counter (meaningful while inactive).
    pub branch_counter: i32,
    /// The group's loop frames, outermost first: (iterations left, a LOOP).
    pub loops: Vec<(u32, bool)>,
    /// The innermost LOOP's aL.
    pub al: Option<i32>,
    /// Return addresses on the address stack.
    pub returns: usize,
}

/// What one lane did in one instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneStep {
    /// Values written.
    pub writes: Vec<Write>,
    /// Lookups made.
    pub fetches: Vec<Fetch>,
    /// The state after the instruction.
    pub state: LaneState,
}

/// One executed instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The instruction.
    pub pc: u16,
    /// Its disassembly.
    pub text: String,
    /// The traced lanes, in [`Trace::pixels`] order.
    pub lanes: Vec<LaneStep>,
    /// Semaphore hazards of the traced lanes at this instruction.
    pub hazards: Vec<String>,
}

/// A finished trace.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The traced pixels (one, or the quad's four: top-left, top-right,
    /// bottom-left, bottom-right).
    pub pixels: Vec<(u32, u32)>,
    /// Which of them are helper lanes (outside the domain).
    pub helpers: Vec<bool>,
    /// Every instruction the group executed (within `from`/`until`).
    pub steps: Vec<Step>,
    /// Why the run stopped, if it failed.
    pub error: Option<String>,
    /// The run's result, if it finished.
    pub result: Option<JobResult>,
}

/// Runs `job` on the interpreter, tracing one pixel (or its quad).
pub fn trace(kernel: &Kernel, job: &Job, opts: &TraceOptions) -> Result<Trace, KernelError> {
    let (i, j) = opts.pixel;
    if i >= job.width || j >= job.height {
        return Err(KernelError::Job(format!(
            "pixel ({i}, {j}) is outside the {}×{} domain",
            job.width, job.height
        )));
    }
    kernel.check(job)?;
    let (qx, qy) = (i / 2, j / 2);
    let quad: Vec<(u32, u32)> = (0..4)
        .map(|l| ctm_jit::quad::pixel_of_lane(qx, qy, l))
        .collect();
    let pixels = if opts.quad { quad } else { vec![(i, j)] };
    let helpers = pixels
        .iter()
        .map(|&(x, y)| x >= job.width || y >= job.height)
        .collect();
    let slots = crate::isa::decode_program(&kernel.exe.code);
    let text = slots
        .iter()
        .map(|s| match s {
            Ok(inst) => crate::isa::disasm::disassemble(inst),
            Err(e) => format!("(undecodable: {e})"),
        })
        .collect();
    let rec = engine::Recorder::shared(pixels.clone(), opts.clone(), text);
    let mut job = job.clone();
    job.settings.engine = EngineKind::Interp;
    job.settings.threads = 1;
    job.settings.progress = None;
    job.settings.options.check_hazards = true;
    job.settings.options.single_step = true;
    job.settings.engine_factory = Some(engine::factory(&rec));
    let outcome = kernel.run(&job);
    let steps = engine::Recorder::take_steps(&rec);
    let (result, error) = match outcome {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(Trace {
        pixels,
        helpers,
        steps,
        error,
        result,
    })
}

/// A value as the machine holds it: ±0, denormals and NaN payloads visible.
pub fn show(bits: u32) -> String {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        format!("NaN(0x{bits:08x})")
    } else if x == 0.0 {
        if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        }
    } else if x.is_subnormal() {
        format!("{x:e}(denormal 0x{bits:08x})")
    } else {
        format!("{x}")
    }
}

const CH: [char; 4] = ['r', 'g', 'b', 'a'];
const RT: [char; 4] = ['A', 'B', 'C', 'D'];

impl Write {
    /// Where it went, e.g. `r3.g`, `p.a`, `rtB.r`.
    pub fn place(&self) -> String {
        match *self {
            Write::Temp { reg, chan, .. } => format!("r{reg}.{}", CH[usize::from(chan & 3)]),
            Write::Pred { chan, .. } => format!("p.{}", CH[usize::from(chan & 3)]),
            Write::AluResult(_) => "alu_result".into(),
            Write::Output { target, chan, .. } => {
                format!(
                    "rt{}.{}",
                    RT[usize::from(target & 3)],
                    CH[usize::from(chan & 3)]
                )
            }
            Write::Depth(_) => "depth".into(),
            Write::Killed => "killed".into(),
        }
    }

    /// The value written.
    pub fn value(&self) -> String {
        match *self {
            Write::Temp { bits, .. } | Write::Output { bits, .. } | Write::Depth(bits) => {
                show(bits)
            }
            Write::Pred { value, .. } | Write::AluResult(value) => u8::from(value).to_string(),
            Write::Killed => "yes".into(),
        }
    }
}

impl fmt::Display for LaneState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = if !self.running {
            "ended"
        } else if self.held {
            "held by its loop"
        } else if self.active {
            "active"
        } else {
            "inactive"
        };
        write!(f, "{status}")?;
        if self.running && !self.active {
            write!(f, ", branch counter {}", self.branch_counter)?;
        }
        if !self.loops.is_empty() {
            let frames: Vec<String> = self
                .loops
                .iter()
                .map(|(n, l)| format!("{} {n} left", if *l { "loop" } else { "rep" }))
                .collect();
            write!(f, ", {}", frames.join(" / "))?;
        }
        if let Some(al) = self.al {
            write!(f, ", aL {al}")?;
        }
        if self.returns > 0 {
            write!(f, ", {} return address(es)", self.returns)?;
        }
        Ok(())
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .pixels
            .iter()
            .zip(&self.helpers)
            .map(|(&(i, j), &h)| {
                if h {
                    format!("({i}, {j}) helper")
                } else {
                    format!("({i}, {j})")
                }
            })
            .collect();
        writeln!(
            f,
            "trace of {}: {} instruction(s)",
            names.join(", "),
            self.steps.len()
        )?;
        let many = self.pixels.len() > 1;
        for s in &self.steps {
            writeln!(f, "@{:<4} {}", s.pc, s.text)?;
            // Every place any lane wrote, in first-seen order.
            let mut places: Vec<String> = Vec::new();
            for l in &s.lanes {
                for w in &l.writes {
                    let p = w.place();
                    if !places.contains(&p) {
                        places.push(p);
                    }
                }
            }
            for (k, l) in s.lanes.iter().enumerate() {
                for fe in &l.fetches {
                    let who = if many {
                        format!("[{k}] ")
                    } else {
                        String::new()
                    };
                    let kind = match fe.kind {
                        FetchKind::Lookup => "in",
                        FetchKind::Uncached => "uncached in",
                    };
                    writeln!(
                        f,
                        "        {who}fetch {kind}{} at ({}) -> ({})",
                        fe.input,
                        fe.coords.map(show).join(", "),
                        fe.texel.map(show).join(", ")
                    )?;
                }
            }
            for p in &places {
                let vals: Vec<String> = s
                    .lanes
                    .iter()
                    .map(|l| {
                        l.writes
                            .iter()
                            .find(|w| &w.place() == p)
                            .map_or_else(|| "·".to_string(), Write::value)
                    })
                    .collect();
                writeln!(f, "        {p:<10} = {}", vals.join(" | "))?;
            }
            let states: Vec<String> = s.lanes.iter().map(|l| l.state.to_string()).collect();
            let all_same = states.windows(2).all(|w| w[0] == w[1]);
            if all_same {
                writeln!(f, "        [{}]", states[0])?;
            } else {
                writeln!(f, "        [{}]", states.join(" | "))?;
            }
            for h in &s.hazards {
                writeln!(f, "        hazard: {h}")?;
            }
        }
        if let Some(e) = &self.error {
            writeln!(f, "stopped: {e}")?;
        }
        Ok(())
    }
}
