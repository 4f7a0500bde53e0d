//! The engines on whole kernels: the examples and the benchmark suite on
//! both engines, compiled loop regions, compiled texture lookups, the
//! JIT's own contract (code caches, statistics, options, compile
//! failures, tiered compilation), the tracer, numeric sweeps, and the edges (bad sizes,
//! bounded growth, invalid IR and state, panicking texture units, stopped
//! runs). Tests that count compilations use code caches of their own.

#[path = "../common/mod.rs"]
mod common;

mod bench_suite;
mod branch_regions;
mod fetch;
mod jit;
mod kernels;
mod loop_branches;
mod loop_lookups;
mod loops;
mod reliability;
mod sweeps;
mod tiers;
mod trace;
