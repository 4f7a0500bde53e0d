//! Reliability at the edges: the bugs an outside audit found, each with the
//! input that triggered it, the JIT's soundness through its public doors,
//! bounded resources, and runs stopped from outside.

use ctm::device::{Device, DeviceConfig, DeviceError, MAX_UNREAD};
use ctm::engine::EngineKind;
use ctm::interp::Interpreter;
use ctm::ir::{Clause, Gate, Index, Node, Op, Program, Term, V};
use ctm::jit::JitEngine;
use ctm::kernel::{HostSurface, Job, Kernel, KernelError};
use ctm::mc::{ArenaKind, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer, MAX_BUILT};
use ctm::runtime::{
    Cancel, Ctx, Domain, Engine, FetchRequest, NoTextures, PixelOut, RunError, RunOptions, Runner,
    TexFault, TextureUnit,
};
use ctm::state::{Lanes, Mask, Uniforms};
use ctm::{JitOptions, OptLevel, Tier};
use std::time::Duration;

use crate::common;
use common::jit_available;

const ENDLESS: &str = "top:
    JUMP -> top
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";

#[test]
fn an_input_of_width_zero_is_an_error() {
    let k = Kernel::assemble(
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
         out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    for (w, h) in [(0, 0), (0, 4), (4, 0)] {
        let job = Job::new(4, 4)
            .input(0, HostSurface::zeroed(Format::Float32_4, w, h))
            .output(0, Format::Float32_4);
        let e = k.run(&job).unwrap_err().to_string();
        assert!(e.contains("at least one element"), "{w}×{h}: {e}");
    }
}

#[test]
fn the_assembler_stops_at_the_first_statement_too_many() {
    let line = "alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r0\n";
    let src = line.repeat(200_000);
    let e = ctm::isa::asm::assemble(&src).unwrap_err().to_string();
    assert!(
        e.starts_with("513:") && e.contains("instruction 513"),
        "{e}"
    );
    // Oversize sources and lines are refused before anything else.
    let huge = "; comment\n".repeat(2 << 20);
    assert!(
        ctm::isa::asm::assemble(&huge)
            .unwrap_err()
            .to_string()
            .contains("MiB")
    );
    let long = format!("alu {}", "r".repeat(100_000));
    assert!(
        ctm::isa::asm::assemble(&long)
            .unwrap_err()
            .to_string()
            .contains("a line of")
    );
}

/// A device that runs on the interpreter, one thread.
fn interp_device() -> Device {
    Device::open(DeviceConfig {
        settings: ctm::pe::RunSettings {
            engine: EngineKind::Interp,
            threads: 1,
            ..Default::default()
        },
        ..DeviceConfig::default()
    })
    .unwrap()
}

/// The program at `prog` set up to write a float32_4 row of four pixels
/// at `out`.
fn four_pixels(prog: u32, out: u32) -> CommandBuffer {
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: prog,
        fmt: SurfaceFormat::linear(Format::Float32_4, 0),
    })
    .push(Cmd::SetOutFmt {
        output: 0,
        base: out,
        fmt: SurfaceFormat::linear(Format::Float32_4, 4),
        height: 1,
    })
    .push(Cmd::SetDomain(Domain::new(4, 1)));
    cb
}

#[test]
fn a_long_lived_device_does_not_grow() {
    let mut dev = interp_device();
    let out = dev.alloc(ArenaKind::SystemCached, 4 * 16).unwrap();
    let prog = dev.alloc(ArenaKind::SystemCached, 2048).unwrap();
    let mut last = None;
    for k in 0..(MAX_BUILT + 40) {
        // A distinct program each time (a different inline constant
        // exponent and register).
        let src = format!(
            "alu r{}.rgb = max(s0, s0) | r{}.a = max(s0, s0) src0=r0\nout rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
            k % 100 + 1,
            k / 100 + 1
        );
        let exe = ctm::abi::Executable::from_code(ctm::isa::asm::assemble(&src).unwrap());
        dev.load_program(&exe, prog).unwrap();
        let mut cb = four_pixels(prog, out);
        cb.push(Cmd::InvInstCache).push(Cmd::StartProgram);
        last = Some(dev.submit_commands(&cb).unwrap());
    }
    assert!(dev.pe().built_programs() <= MAX_BUILT);
    let id = last.unwrap();
    assert!(dev.consumed(id));
    assert_eq!(dev.wait(id).unwrap().runs.len(), 1);
    assert!(matches!(dev.wait(id), Err(DeviceError::ReportGone(_))));
    // Unread reports are bounded too.
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetCondVal(0));
    for _ in 0..MAX_UNREAD + 10 {
        dev.submit_commands(&cb).unwrap();
    }
    assert_eq!(dev.unread_reports(), MAX_UNREAD);
}

/// A program whose IR no frontend would build: `node` in one clause.
fn hand_built(node: Op) -> Program {
    let n = |op| Node { pc: 0, op };
    Program {
        clauses: vec![Clause {
            start: 0,
            len: 1,
            values: 1,
            term: Term::End,
            nodes: vec![
                n(Op::Temp {
                    dst: V(0),
                    index: Index {
                        base: 1,
                        rel: false,
                    },
                    chan: 0,
                }),
                n(node),
            ],
        }],
        entry: vec![Some(0)],
        len: 1,
        early_exit: true,
        forms: Default::default(),
        uncached_unorm: None,
        narrow: None,
    }
}

fn bad_programs() -> Vec<Program> {
    vec![
        hand_built(Op::SetTemp {
            index: Index {
                base: 255,
                rel: false,
            },
            chan: 0,
            v: V(0),
            gate: Gate::ACTIVE,
            fetched: false,
        }),
        hand_built(Op::SetOut {
            target: 200,
            chan: 0,
            v: V(0),
            gate: Gate::ACTIVE,
        }),
        // A dot product without factors (it panicked the JIT's lowering).
        hand_built(Op::Dot {
            dst: V(0),
            pairs: vec![],
            addend: None,
        }),
        // An entry table naming a clause that does not exist (both engines
        // indexed past the clauses).
        Program {
            clauses: vec![Clause {
                start: 0,
                len: 1,
                values: 0,
                nodes: vec![],
                term: Term::Next(1),
            }],
            entry: vec![Some(0), Some(7)],
            len: 2,
            early_exit: false,
            forms: Default::default(),
            uncached_unorm: None,
            narrow: None,
        },
    ]
}

#[test]
fn compiled_code_is_only_made_from_verified_ir() {
    if !jit_available() {
        return;
    }
    for p in bad_programs() {
        let opts = JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 0,
            tier: Tier::Optimised,
        };
        let e = ctm_jit_compile(&p, opts);
        assert!(e.contains("invalid IR"), "{e}");
    }
}

fn ctm_jit_compile(p: &Program, opts: JitOptions) -> String {
    let direct = match ctm_jit::compile::compile(p, opts) {
        Ok(_) => "compiled".into(),
        Err(e) => e.to_string(),
    };
    let cached = match ctm_jit::compile::cached(p, opts) {
        Ok(_) => "compiled".into(),
        Err(e) => e.to_string(),
    };
    assert_eq!(direct, cached);
    direct
}

/// Runs `program` over a 4 × 4 domain on `engine`.
fn run_on(
    engine: &mut dyn Engine,
    program: &Program,
    tex: &mut dyn TextureUnit,
) -> Result<(), RunError> {
    let uniforms = Uniforms::default();
    let mut sink = |_: u32, _: u32, _: &PixelOut| {};
    Runner::new(program, engine, &uniforms, RunOptions::default())
        .run(Domain::new(4, 4), 0, tex, &mut sink)
        .map(|_| ())
}

#[test]
fn both_engines_refuse_invalid_ir_and_state_alike() {
    let mut engines: Vec<Box<dyn Engine>> = vec![Box::new(Interpreter::new())];
    if jit_available() {
        engines.push(Box::new(JitEngine::new(JitOptions::default())));
    }
    for engine in &mut engines {
        for p in bad_programs() {
            let e = run_on(&mut **engine, &p, &mut NoTextures).unwrap_err();
            assert!(e.to_string().contains("invalid IR"), "{e}");
        }
        // A valid program, state that claims more quads than a group has.
        let good = Kernel::assemble(
            "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
        )
        .unwrap();
        let program = ctm_tools::bench::program_of(&good);
        let uniforms = Uniforms::default();
        let pixels = [(0, 0); ctm_jit::state::GROUP_LANES];
        for quads in [0, ctm_jit::state::GROUP_QUADS as u32 + 1, 20, 3000] {
            let mut lanes = Lanes::new_boxed();
            lanes.reset(4, 8);
            lanes.quads = quads;
            (lanes.running, lanes.active) = (ctm_jit::state::ALL_LANES, ctm_jit::state::ALL_LANES);
            let mut tex = NoTextures;
            let mut ctx = Ctx {
                uniforms: &uniforms,
                tex: &mut tex,
                hazards: None,
                pixels: &pixels,
            };
            engine.prepare(&program).unwrap();
            let _daz = ctm_jit_daz(engine.wants_daz());
            let e = engine
                .run_clause(&program, 0, &mut lanes, &mut ctx)
                .unwrap_err();
            assert!(e.to_string().contains("quads"), "{quads}: {e}");
            let e = engine
                .run_clause(&program, 7, &mut lanes, &mut ctx)
                .unwrap_err();
            assert!(!e.to_string().is_empty());
        }
    }
}

fn ctm_jit_daz(on: bool) -> Option<ctm_jit::host::DazGuard> {
    on.then(|| ctm_jit::host::DazGuard::new(true))
}

/// A texture unit that panics.
struct Panicky;

impl TextureUnit for Panicky {
    fn fetch(
        &mut self,
        _: FetchRequest,
        _: &[[u32; 4]],
        _: Mask,
        _: &[(u32, u32)],
        _: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        panic!("the embedder's texture unit is broken");
    }

    fn uncached_write(&mut self, _: u32, _: u32, _: u32) -> Result<(), TexFault> {
        panic!("no uncached writes here");
    }
}

#[test]
fn a_panicking_texture_unit_is_a_run_error_on_both_engines() {
    let k = Kernel::assemble(
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
         out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    let program = ctm_tools::bench::program_of(&k);
    let mut engines: Vec<Box<dyn Engine>> = vec![Box::new(Interpreter::new())];
    if jit_available() {
        engines.push(Box::new(JitEngine::new(JitOptions::default())));
    }
    for engine in &mut engines {
        let e = run_on(&mut **engine, &program, &mut Panicky).unwrap_err();
        assert!(
            matches!(&e, RunError::Texture { fault, .. } if fault.0.contains("panicked: the embedder's")),
            "{e}"
        );
    }
}

#[test]
fn threads_are_capped_at_the_work() {
    let k = Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let job = Job::new(4, 4)
        .output(0, Format::Float32_4)
        .threads(100_000_000);
    let r = k.run(&job).unwrap();
    assert_eq!(r.report.pixels, 16);
}

#[test]
fn runs_stop_from_outside_on_both_engines() {
    let k = Kernel::assemble(ENDLESS).unwrap();
    let mut engines = vec![EngineKind::Interp];
    if jit_available() {
        engines.push(EngineKind::Jit);
    }
    for engine in engines {
        // No per-group budget: only the limits stop it.
        let base = Job::new(64, 64)
            .output(0, Format::Float32_4)
            .budget(u64::MAX)
            .engine(engine)
            .threads(2);
        let e = k
            .run(&base.clone().timeout(Duration::from_millis(100)))
            .unwrap_err();
        assert!(
            matches!(&e, KernelError::Device(_)) && e.to_string().contains("time limit of 0.100 s"),
            "{engine}: {e}"
        );
        let e = k
            .run(&base.clone().max_instructions(1_000_000))
            .unwrap_err();
        assert!(
            e.to_string().contains("more than 1000000 instructions"),
            "{engine}: {e}"
        );
        let cancel = Cancel::new();
        let job = base.clone().cancel(&cancel);
        let c = cancel.clone();
        let pull = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            c.cancel();
        });
        let e = k.run(&job).unwrap_err();
        pull.join().unwrap();
        assert!(
            e.to_string().contains("stopped: cancelled"),
            "{engine}: {e}"
        );
    }
}

#[test]
fn programs_run_in_turn_are_each_built_once_and_each_run_runs_its_own() {
    // Two programs at two bases, run in turn and again: the PE finds the
    // last program run by its words, any other by its key, builds each
    // once, and every run writes what its own program computes.
    let mut dev = interp_device();
    let out = dev.alloc(ArenaKind::SystemCached, 4 * 16).unwrap();
    let bases: Vec<u32> = [1.0f32, 3.0]
        .iter()
        .map(|&c| {
            let src = format!(
                "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0={c:.1} wait last"
            );
            let exe = ctm::abi::Executable::from_code(ctm::isa::asm::assemble(&src).unwrap());
            let base = dev.alloc(ArenaKind::SystemCached, 2048).unwrap();
            dev.load_program(&exe, base).unwrap();
            base
        })
        .collect();
    for (turn, which) in [0, 0, 1, 1, 0, 1, 0].into_iter().enumerate() {
        let mut cb = four_pixels(bases[which], out);
        cb.push(Cmd::StartProgram).push(Cmd::FlushOutCache);
        let id = dev.submit_commands(&cb).unwrap();
        dev.wait(id).unwrap();
        let mut b = [0u8; 4];
        dev.read(out + 3 * 16, &mut b).unwrap();
        let want = [1.0f32, 3.0][which];
        assert_eq!(f32::from_le_bytes(b), want, "turn {turn}");
    }
    assert_eq!(dev.pe().built_programs(), 2);
}
