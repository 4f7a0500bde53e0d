//! The DPP instruction set (`docs/isa.md`): the declarative encoding table and
//! everything derived from it — decoder, encoder, disassembler, assembler,
//! static validation and random instruction generation.

pub mod asm;
pub mod disasm;
pub mod inst;
pub mod layout;
pub mod random;
pub mod table;
pub mod validate;

pub use inst::*;
pub use table::*;
