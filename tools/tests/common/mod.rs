//! Helpers shared by the tool's tests: running `ctm` ([`cli`]), the JIT
//! check of the harness.
#![allow(dead_code)]

pub mod cli;

#[allow(unused_imports)]
pub use ctm_tools::check::jit_available;
