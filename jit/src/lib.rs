//! ctm-jit: the machine model shared by ctm's two engines and, as it grows,
//! the clause IR and its Cranelift backend.
//!
//! This crate knows lanes, quads and masks, never the binary encoding, ELF or
//! the memory controller (those live in the `ctm` crate, which depends on this
//! one).

pub mod host;
pub mod quad;
