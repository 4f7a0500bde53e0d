//! Direct3D 9 pixel shaders: reading and writing bytecode and text, the
//! compiler on every instruction and flow construct, ps_1_x, random
//! shaders against a reference evaluator, and the corpus in
//! `tests/shaders/` (`cargo test --test d3d9 corpus -- --nocapture` prints
//! its statistics).

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod flow;
mod ops;
mod ps1x;
mod random;
mod read;
