//! The DPP instruction set (`spec/isa.md`): the declarative encoding table and
//! everything derived from it — decoder, encoder, disassembler, assembler,
//! static validation and random instruction generation.

pub mod layout;
pub mod table;
pub mod inst;

pub use inst::*;
pub use table::*;
