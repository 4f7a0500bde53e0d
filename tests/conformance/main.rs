//! The conformance suite: the tables of `docs/isa.md` as executable cases,
//! run on every engine (see `harness`).

mod alu;
mod errors;
mod flow;
mod harness;
mod tex;
