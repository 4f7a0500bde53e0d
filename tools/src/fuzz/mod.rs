//! Fuzz targets and a seed-replayable driver.
//!
//! Each [`Target`] takes arbitrary bytes and checks what must hold for any
//! input: no panic, and the invariants of that door —
//!
//! * [`Target::Elf`]: loading either fails with an error or gives an
//!   executable that writes and loads back to the same code and notes;
//! * [`Target::Words`]: any words decode (or fail per instruction) and
//!   disassemble to text that assembles back to the same words;
//! * [`Target::Asm`]: any text either fails with a positioned error or
//!   assembles to words that disassemble and assemble back identically;
//! * [`Target::Stream`]: any command stream runs against a small device to
//!   a report or a fault, and its text form assembles back to the words;
//! * [`Target::Program`]: any program runs on the interpreter and the JIT
//!   (both optimisation levels) with the same outcome, bit for bit;
//! * [`Target::Shader`]: any bytes read as Direct3D 9 bytecode fail with a
//!   positioned error or give a shader that writes back to the same tokens,
//!   round-trips through its text, and compiles either to an error or to a
//!   program with no validator warning, in both dialects; any text either
//!   fails or round-trips;
//! * [`Target::Ir`]: clause IR built straight from bytes is either refused
//!   by the verifier (and by both engines and the compiler alike) or
//!   compiles at both optimisation levels and runs on both engines with the
//!   same outputs, bit for bit (`ir.rs`).
//!
//! The same functions serve `cargo fuzz` (the `fuzz/` directory, nightly)
//! and [`Driver`], a stable mutation fuzzer that CI runs for a bounded time
//! (`tests/fuzz.rs`): it mutates a corpus of seeds with a deterministic
//! generator, so a run is replayed exactly from its seed, and returns every
//! failing input (the test saves them under `fuzz/crashes/`).

mod ir;
mod seeds;

use seeds::{SHADER_SEEDS, seed_sources};

use crate::diff::{Case, Rng};
use ctm::engine::EngineKind;
use ctm_jit::compile::{JitOptions, OptLevel, Tier};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// A fuzzed door.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// ELF executables.
    Elf,
    /// Instruction words: decode, encode, disassemble.
    Words,
    /// Assembly text.
    Asm,
    /// Command streams against a device.
    Stream,
    /// Whole programs on both engines.
    Program,
    /// Direct3D 9 shader bytecode and text.
    Shader,
    /// Clause IR built from bytes, on both engines.
    Ir,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 7] = [
        Target::Elf,
        Target::Words,
        Target::Asm,
        Target::Stream,
        Target::Program,
        Target::Shader,
        Target::Ir,
    ];

    /// Its name (directory names, `cargo fuzz` targets).
    pub fn name(self) -> &'static str {
        match self {
            Target::Elf => "elf",
            Target::Words => "words",
            Target::Asm => "asm",
            Target::Stream => "stream",
            Target::Program => "program",
            Target::Shader => "shader",
            Target::Ir => "ir",
        }
    }

    /// Checks one input: `Err` says which invariant broke. Panics are the
    /// caller's to catch ([`Driver`] does).
    pub fn check(self, data: &[u8]) -> Result<(), String> {
        match self {
            Target::Elf => elf(data),
            Target::Words => words(data),
            Target::Asm => asm(data),
            Target::Stream => stream(data),
            Target::Program => program(data),
            Target::Shader => shader(data),
            Target::Ir => ir::check(data),
        }
    }

    /// Seeds to mutate: inputs that reach deep into the door.
    pub fn seeds(self) -> Vec<Vec<u8>> {
        let sources = seed_sources();
        let programs: Vec<Vec<u32>> = sources
            .iter()
            .filter_map(|s| ctm::isa::asm::assemble(s).ok())
            .collect();
        let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
        match self {
            Target::Elf => programs
                .iter()
                .map(|w| ctm::abi::write(&ctm::abi::Executable::from_code(w.clone())))
                .collect(),
            Target::Words | Target::Program => programs.iter().map(|w| bytes(w)).collect(),
            Target::Asm => sources.iter().map(|s| s.as_bytes().to_vec()).collect(),
            Target::Shader => SHADER_SEEDS
                .iter()
                .filter_map(|s| ctm::d3d9::assemble(s).ok())
                .flat_map(|s| {
                    let tokens = bytes(&ctm::d3d9::write(&s));
                    [tokens, ctm::d3d9::disassemble(&s).into_bytes()]
                })
                .collect(),
            Target::Stream => {
                let mut out = Vec::new();
                for src in &sources {
                    let Ok(k) = ctm::kernel::Kernel::assemble(src) else {
                        continue;
                    };
                    let job = ctm::kernel::Job::new(4, 2).output(0, ctm::mc::Format::Float32_4);
                    if let Ok(st) = k.stage(&job) {
                        out.push(st.commands.to_bytes());
                    }
                }
                out
            }
            // Constants and immediates through arithmetic, selections and
            // dot products into every kind of write.
            Target::Ir => vec![
                vec![1, 4, 0, 0, 3, 11, 5, 0, 1, 2, 12, 0, 0, 2, 0],
                vec![0, 1, 1, 0, 0, 2, 6, 0, 1, 1, 3, 2, 11, 12, 1, 2, 3, 0],
                vec![
                    1, 8, 1, 4, 7, 3, 0, 1, 1, 2, 2, 0, 1, 3, 3, 12, 13, 0, 1, 4, 0,
                ],
                vec![
                    2, 0, 0, 8, 0, 0, 0, 3, 9, 1, 2, 14, 1, 2, 3, 1, 15, 0, 4, 0, 15, 1, 0, 4, 0,
                ],
            ],
        }
    }
}

fn shader(data: &[u8]) -> Result<(), String> {
    if let Ok(s) = ctm::d3d9::read_bytes(data) {
        let tokens = ctm::d3d9::write(&s);
        if tokens != words_of(data) {
            return Err("a shader read from tokens writes different tokens".into());
        }
        let text = ctm::d3d9::disassemble(&s);
        match ctm::d3d9::assemble(&text) {
            Ok(back) if back == s => {}
            Ok(_) => return Err(format!("a shader's text assembles differently:\n{text}")),
            Err(e) => return Err(format!("a shader's text does not assemble: {e}\n{text}")),
        }
        for dialect in [ctm::d3d9::Dialect::D3d9, ctm::d3d9::Dialect::Ctm] {
            let Ok(c) = ctm::d3d9::compile_dialect(&s, dialect) else {
                continue;
            };
            let warnings = ctm::isa::validate::validate(&ctm::isa::decode_program(&c.exe.code));
            if !warnings.is_empty() {
                return Err(format!(
                    "a shader compiled in the {dialect:?} dialect has validator warnings {warnings:?}:\n{text}"
                ));
            }
            if let Some(e) = stack_overflow(&c.exe) {
                return Err(format!(
                    "a shader compiled in the {dialect:?} dialect overflows a stack when run: {e}\n{text}"
                ));
            }
            let back = ctm::abi::load(&ctm::abi::write(&c.exe))
                .map_err(|e| format!("a compiled shader's executable does not load: {e}"))?;
            if back.exe.info != c.exe.info {
                return Err("a compiled shader's notes do not survive writing".into());
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(s) = ctm::d3d9::assemble(text)
    {
        let listing = ctm::d3d9::disassemble(&s);
        if ctm::d3d9::assemble(&listing).as_ref() != Ok(&s) {
            return Err(format!("assembled text does not round-trip:\n{listing}"));
        }
        if ctm::d3d9::read(&ctm::d3d9::write(&s)).as_ref() != Ok(&s) {
            return Err("an assembled shader does not read back from its tokens".into());
        }
    }
    Ok(())
}

/// Runs `exe` on the interpreter over 4 × 2 pairs with every loop taken
/// once and every boolean true: the stack overflow it meets, if any (the
/// shader limits promise none; other faults, such as unbound inputs, do not
/// matter here).
fn stack_overflow(exe: &ctm::abi::Executable) -> Option<ctm::runtime::RunError> {
    let slots = ctm::isa::decode_program(&exe.code);
    let program = ctm::frontend::build(&slots, ctm::frontend::Options::loaded(exe.info.uncached()));
    let u = ctm_jit::state::Uniforms {
        ints: [ctm_jit::state::IntConst {
            count: 1,
            init: 0,
            step: 1,
        }; ctm_jit::ir::INT_CONSTS],
        bools: u32::MAX,
        ..Default::default()
    };
    let mut sink = |_: u32, _: u32, _: &ctm::runtime::PixelOut| {};
    let options = ctm::runtime::RunOptions {
        budget: 100_000,
        ..Default::default()
    };
    let run = ctm::runtime::Runner::new(&program, ctm::interp::Interpreter::new(), &u, options)
        .run(
            ctm::runtime::Domain::new(4, 2),
            0,
            &mut ctm::runtime::NoTextures,
            &mut sink,
        );
    match run {
        Err(e @ ctm::runtime::RunError::Overflow { .. }) => Some(e),
        _ => None,
    }
}

fn words_of(data: &[u8]) -> Vec<u32> {
    data.chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

fn elf(data: &[u8]) -> Result<(), String> {
    let Ok(loaded) = ctm::abi::load(data) else {
        return Ok(());
    };
    let exe = loaded.exe;
    let again = ctm::abi::load(&ctm::abi::write(&exe))
        .map_err(|e| format!("a loaded executable does not load after writing: {e}"))?;
    if again.exe.code != exe.code || again.exe.info != exe.info {
        return Err("write then load changed the executable".into());
    }
    Ok(())
}

fn words(data: &[u8]) -> Result<(), String> {
    let mut w = words_of(&data[..data.len().min(ctm::isa::MAX_INSTS * 24)]);
    w.truncate(w.len() / 6 * 6);
    let text = ctm::isa::disasm::disassemble_program(&w, ctm::isa::disasm::Options::default());
    let back = ctm::isa::asm::assemble(&text)
        .map_err(|e| format!("the disassembly does not assemble: {e}\n{text}"))?;
    if back != w {
        return Err(format!("disassembly does not round-trip:\n{text}"));
    }
    let _ = ctm::isa::validate::validate(&ctm::isa::decode_program(&w));
    Ok(())
}

fn asm(data: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(data);
    let Ok(a) = ctm::isa::asm::assemble_source(&text) else {
        return Ok(());
    };
    let listing =
        ctm::isa::disasm::disassemble_program(&a.words, ctm::isa::disasm::Options::default());
    let back = ctm::isa::asm::assemble(&listing)
        .map_err(|e| format!("the disassembly of assembled text does not assemble: {e}"))?;
    if back != a.words {
        return Err("assembled text does not round-trip through the disassembler".into());
    }
    Ok(())
}

fn stream(data: &[u8]) -> Result<(), String> {
    let mut w = words_of(data);
    w.truncate(4096);
    let text = ctm::pe::disassemble_stream(&w);
    let back = ctm::pe::assemble_stream(&text)
        .map_err(|e| format!("a stream's listing does not assemble: {e}\n{text}"))?;
    if back != w {
        return Err(format!("a stream's listing does not round-trip:\n{text}"));
    }
    // Small arenas; everything lies in the cached one at its base, where a
    // program is loaded so that `start_program` finds one.
    let mut dev = ctm::device::Device::open(ctm::device::DeviceConfig {
        arena_sizes: [64 << 10, 64 << 10, 64 << 10, 1 << 20],
        settings: ctm::pe::RunSettings {
            engine: EngineKind::Interp,
            threads: 1,
            options: ctm::runtime::RunOptions {
                budget: 100_000,
                ..Default::default()
            },
            max_instructions: Some(2_000_000),
            ..Default::default()
        },
        ..Default::default()
    })
    .map_err(|e| format!("opening a device: {e}"))?;
    let base = dev.info().base_address_sys_c;
    static PROGRAM: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    let words =
        PROGRAM.get_or_init(|| ctm::isa::asm::assemble(&seed_sources()[1]).unwrap_or_default());
    let _ = dev.load_program(&ctm::abi::Executable::from_code(words.clone()), base);
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let at = base + (512 << 10);
    if dev.write(at, &bytes).is_ok()
        && let Ok(id) = dev.submit(at, bytes.len() as u32)
    {
        let _ = dev.wait(id);
    }
    Ok(())
}

fn program(data: &[u8]) -> Result<(), String> {
    if ctm::engine::EngineKind::Jit.check().is_err() || data.len() < 2 {
        return Ok(());
    }
    let (head, rest) = data.split_at(2);
    let seed = u64::from(head[0]);
    let uncached = head[1] & 1 != 0;
    let mut w = words_of(&rest[..rest.len().min(64 * 24)]);
    w.truncate(w.len() / 6 * 6);
    if w.is_empty() {
        return Ok(());
    }
    let case = Case::from_words(&w, uncached, seed);
    let opt_level = if head[1] & 2 != 0 {
        OptLevel::None
    } else {
        OptLevel::Speed
    };
    let opts = JitOptions {
        opt_level,
        quads_per_iter: [0, 1, 2, 4][usize::from(head[1] >> 2 & 3)],
        tier: if head[1] & 16 != 0 {
            Tier::Quick
        } else {
            Tier::Optimised
        },
    };
    case.run_both(opts).map(drop)
}

/// A failing input: the bytes and what broke (an invariant's message or a
/// panic's).
#[derive(Clone, Debug)]
pub struct Failure {
    /// The input.
    pub data: Vec<u8>,
    /// What happened.
    pub message: String,
}

/// What a driver run did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Inputs tried.
    pub inputs: u64,
    /// Inputs that broke something.
    pub failures: Vec<Failure>,
}

/// A deterministic mutation fuzzer over one target.
#[derive(Debug)]
pub struct Driver {
    target: Target,
    rng: Rng,
    corpus: Vec<Vec<u8>>,
}

impl Driver {
    /// A driver for `target` starting from `seed`, with the target's seeds
    /// and `extra` inputs as corpus.
    pub fn new(target: Target, seed: u64, extra: Vec<Vec<u8>>) -> Driver {
        let mut corpus = target.seeds();
        corpus.extend(extra);
        if corpus.is_empty() {
            corpus.push(Vec::new());
        }
        Driver {
            target,
            rng: Rng::new(seed),
            corpus,
        }
    }

    /// Checks one input, catching panics (the process's panic hook still
    /// prints them; fuzzing binaries silence it).
    pub fn try_one(target: Target, data: &[u8]) -> Result<(), String> {
        match catch_unwind(AssertUnwindSafe(|| target.check(data))) {
            Ok(r) => r,
            Err(p) => Err(format!("panic: {}", ctm::interp::panic_message(p.as_ref()))),
        }
    }

    /// Runs for `time` or `max_inputs` inputs, whichever ends first.
    pub fn run(&mut self, time: Duration, max_inputs: u64) -> Summary {
        let start = Instant::now();
        let mut summary = Summary::default();
        while summary.inputs < max_inputs && start.elapsed() < time {
            let input = self.next_input();
            summary.inputs += 1;
            if let Err(message) = Driver::try_one(self.target, &input) {
                summary.failures.push(Failure {
                    data: input,
                    message,
                });
                if summary.failures.len() >= 10 {
                    break;
                }
            } else if self.rng.percent(2) && self.corpus.len() < 4096 {
                // Keep some inputs that pass: mutations of mutations reach
                // further.
                self.corpus.push(input);
            }
        }
        summary
    }

    /// The next input: a corpus entry, mutated one to eight times.
    fn next_input(&mut self) -> Vec<u8> {
        let r = &mut self.rng;
        let mut d = self.corpus[r.below(self.corpus.len() as u32) as usize].clone();
        for _ in 0..1 + r.below(8) {
            let len = d.len() as u32;
            match r.below(8) {
                0 if len > 0 => {
                    let at = r.below(len) as usize;
                    d[at] ^= 1 << r.below(8);
                }
                1 if len > 0 => {
                    let at = r.below(len) as usize;
                    d[at] = r.next_u32() as u8;
                }
                2 => {
                    let at = r.below(len + 1) as usize;
                    let n = 1 + r.below(8) as usize;
                    let bytes: Vec<u8> = (0..n).map(|_| r.next_u32() as u8).collect();
                    d.splice(at..at, bytes);
                }
                3 if len > 0 => {
                    let at = r.below(len) as usize;
                    let n = (1 + r.below(16) as usize).min(d.len() - at);
                    d.drain(at..at + n);
                }
                4 if len >= 4 => {
                    // An interesting dword.
                    let at = (r.below(len / 4) * 4) as usize;
                    let v = [
                        0u32,
                        0xFFFF_FFFF,
                        0x8000_0000,
                        0x7F80_0000,
                        0x7FFF_FFFF,
                        1,
                        0xC000_0000,
                    ][r.below(7) as usize];
                    d[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                5 => {
                    // Splice a piece of another corpus entry.
                    let other = &self.corpus[r.below(self.corpus.len() as u32) as usize];
                    if !other.is_empty() {
                        let a = r.below(other.len() as u32) as usize;
                        let b = (a + 1 + r.below(64) as usize).min(other.len());
                        let at = r.below(len + 1) as usize;
                        d.splice(at..at, other[a..b].to_vec());
                    }
                }
                6 if len >= 4 => {
                    // Flip a bit of a dword-aligned word (fields).
                    let at = (r.below(len / 4) * 4) as usize + r.below(4) as usize;
                    d[at] ^= 1 << r.below(8);
                }
                _ if len > 1 => {
                    // Duplicate a chunk.
                    let a = r.below(len) as usize;
                    let b = (a + 1 + r.below(32) as usize).min(d.len());
                    let chunk = d[a..b].to_vec();
                    let at = r.below(len) as usize;
                    d.splice(at..at, chunk);
                }
                _ => {}
            }
        }
        d.truncate(1 << 16);
        d
    }
}
