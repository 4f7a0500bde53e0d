//! The tooling built on the ctm library: the checking harness its tests,
//! benchmarks and fuzz targets share, and the `ctm` command-line tool
//! (the binary of this crate) that exposes it.
//!
//! * [`check`]: **the** engine comparator — everything a run made
//!   observable, compared bit for bit (NaN-aware), differences in a
//!   two-column report; [`check::run_both`] runs a kernel job on the
//!   interpreter and the JIT.
//! * [`diff`]: random DPP programs; [`diff::Case::run_both`] runs one on
//!   both engines through the comparator.
//! * [`fuzz`]: the fuzz targets (bytes in, a verdict out), bounded by input
//!   counts.
//! * [`bench`](mod@bench): the benchmark suite and its measurements; [`peak`]: the
//!   host's ceilings they are compared against.
//!
//! None of this is the library's API: an embedder depends on `ctm` alone.

pub mod bench;
pub mod check;
pub mod diff;
pub mod fuzz;
pub mod peak;
