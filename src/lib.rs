//! ctm: an emulator of the ATI CTM data-parallel processor (DPP).
//!
//! Today the crate reads, writes and checks DPP programs: [`abi`] loads and
//! writes ELF executables with ATI notes, [`isa`] decodes, encodes,
//! assembles, disassembles and validates instructions, and [`program`] reads
//! a program file in any of its forms.
//!
//! ```
//! use ctm::isa::{Inst, asm::assemble, disasm::disassemble};
//! let words = assemble("tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait").unwrap();
//! let inst = Inst::decode(words[..6].try_into().unwrap()).unwrap();
//! assert_eq!(inst.tex().unwrap().inst.tex_id, 0);
//! assert_eq!(disassemble(&inst), "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait");
//! ```

#![doc = include_str!("../README.md")]

pub mod abi;
pub mod bench;
pub mod co;
pub mod device;
pub mod diff;
pub mod engine;
pub mod frontend;
pub mod interp;
pub mod isa;
pub mod jit;
pub mod kernel;
pub mod mc;
pub mod pe;
pub mod program;
pub mod runtime;
