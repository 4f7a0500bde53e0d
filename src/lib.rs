//! ctm: an emulator of the ATI CTM data-parallel processor (DPP) and the
//! machine around it.
//!
//! * [`kernel`]: the common case in one call — a program, a domain, inputs
//!   and constants in, outputs out ([`kernel::Kernel`], [`kernel::Job`]).
//! * [`device`]: the host API of CTM — arenas of GPU memory, command
//!   buffers ([`pe::CommandBuffer`]), the loader.
//! * [`abi`], [`isa`], [`program`]: DPP executables (ELF with ATI notes),
//!   instructions (decode, encode, assemble, disassemble, validate) and
//!   program files in any form.
//! * [`frontend`], [`ir`], [`interp`], [`jit`], [`runtime`]: the clause IR
//!   both engines execute, the reference interpreter, the Cranelift JIT and
//!   the flow-control shim between them.
//! * [`mc`], [`co`], [`pe`]: the memory controller, the conditional output
//!   unit and the command processor.
//! * [`d3d9`]: Direct3D 9 pixel shaders (ps_2_0, ps_2_x, ps_3_0): bytecode,
//!   text, and their compilation to DPP programs.
//! * [`host`]: an asynchronous connection — a device with its own worker
//!   thread, arenas the host reads and writes in place.
//! * [`trace`]: one pixel, instruction by instruction.
//!
//! Everything the public API needs is reachable from this crate (the IR,
//! the group state and the JIT's options are re-exported from `ctm-jit`).
//!
//! **Where to start.** To run a program over a domain, assemble or load it
//! ([`kernel::Kernel::assemble`], [`kernel::Kernel::from_path`]; Direct3D 9
//! shaders load the same way), describe the run with a [`kernel::Job`]
//! (inputs, outputs, constants, engine, threads) and call
//! [`kernel::Kernel::run`]; the job is checked against the program's notes
//! first. To drive the machine as CTM applications did — memory, command
//! buffers, buffer ids — open a [`device::Device`] (synchronous) or a
//! [`host::Connection`] (asynchronous). Programs written in C use the same
//! machine through `libctm` (the `capi` crate of this workspace and the
//! headers in `include/`). The reference for every rule is the `docs/`
//! folder of the repository: the instruction set, the machine, the
//! executable format, the C interface.
//!
//! ```
//! use ctm::kernel::{Job, Kernel};
//! use ctm::mc::Format;
//! // r0 = (i, j, v, 1) at start: write i + j.
//! let k = Kernel::assemble(
//!     "out rtA.rgb = mad(s0.rrr, s1, s0.ggg) | rtA.a = max.off(s0, s0) src0=r0 src1=1.0 wait last",
//! )
//! .unwrap();
//! let r = k.run(&Job::new(4, 3).output(0, Format::Float32_1)).unwrap();
//! assert_eq!(r.output(0).unwrap().to_f32()[2 * 4 + 3], 5.0);
//! ```
//!
//! ```
//! use ctm::isa::{Inst, asm::assemble, disasm::disassemble};
//! let words = assemble("tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait").unwrap();
//! let inst = Inst::decode(words[..6].try_into().unwrap()).unwrap();
//! assert_eq!(inst.tex().unwrap().inst.tex_id, 0);
//! assert_eq!(disassemble(&inst), "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait");
//! ```

/// The README's Rust examples, compiled and run as doc tests (not part of
/// the rendered documentation, whose links into `docs/` would not resolve).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// The source tree is one folder per layer; the public paths are the
// modules themselves (`ctm::kernel`, `ctm::mc`, …).
mod api;
mod code;
mod engines;
mod machine;

pub use api::{device, host, kernel};
pub use code::{abi, d3d9, isa, program};
pub use engines::{engine, frontend, interp, jit, runtime, trace};
pub use machine::{co, mc, pe};

pub use ctm_jit::compile::{CodeCache, JitOptions, OptLevel, Tier};
/// The DPP's numeric rules, one function per operation (from `ctm-jit`).
pub use ctm_jit::fp;
/// The clause IR both engines execute (from `ctm-jit`).
pub use ctm_jit::ir;
/// Quads and lanes (from `ctm-jit`).
pub use ctm_jit::quad;
/// Per-group machine state and uniforms (from `ctm-jit`).
pub use ctm_jit::state;
