//! ctm-jit: the machine model shared by ctm's two engines — the clause IR
//! ([`ir`]), the numeric rules ([`fp`]), the per-group state layout
//! ([`state`]) — and, as it grows, the Cranelift backend.
//!
//! This crate knows lanes, quads and masks, never the binary encoding, ELF or
//! the memory controller (those live in the `ctm` crate, which depends on this
//! one).

pub mod compile;
pub mod fp;
pub mod host;
pub mod ir;
mod lower;
pub mod peak;
pub mod quad;
pub mod regions;
pub mod state;
