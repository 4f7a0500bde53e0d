//! Programs as files and words: instruction encoding and decoding, the
//! assembler and disassembler round trips, flow-control constructs,
//! executables (ELF with ATI notes), static validation and the clause IR's
//! rewrites.

mod codec;
mod constructs;
mod elf;
mod ir;
mod roundtrip;
mod validate;
