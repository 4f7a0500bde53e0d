//! ctm-jit: the machine model shared by ctm's two engines — the clause IR
//! ([`ir`]), the numeric rules ([`fp`]), the per-group state layout
//! ([`state`]) — and the Cranelift backend ([`compile`]).
//!
//! This crate knows lanes, quads and masks, never the binary encoding, ELF or
//! the memory controller (those live in the `ctm` crate, which depends on this
//! one).
//!
//! # Why compiled code stays inside its memory
//!
//! Compiled clauses are `unsafe` to call ([`state::ClauseFn`],
//! [`state::LoopFn`]); every `// SAFETY:` comment that calls one relies
//! on this argument. Compiled code touches exactly five blocks: the group
//! state [`state::Lanes`], the constant files [`state::Uniforms`], the
//! engine's [`state::Io`] block, the loop state [`state::LoopState`], and
//! the input pages of a [`state::TexTable`]. Which addresses it computes,
//! and from what:
//!
//! * **Fixed offsets from the IR.** Register, render-target, channel,
//!   constant and predicate numbers are baked into the code as offsets into
//!   `Lanes`/`Uniforms`/`Io`. [`ir::Program::verify`] bounds every one
//!   (temporaries < 128, targets < 4, channels < 4, constants < 256,
//!   integer constants < 32, values defined before use); [`compile::compile`]
//!   (and so [`compile::cached`]), general bodies
//!   ([`compile::Compiled::general`]) and [`compile::clif`] verify before
//!   generating anything, so no unverified IR becomes code.
//! * **Relative addressing (guest data: aL).** `r[aL+n]` and `c[aL+n]` add
//!   the loop register, which programs control through integer constants, to
//!   the base and mask the sum with the file size − 1 (128, 256) before
//!   scaling it: any aL, positive or negative, lands inside the file.
//! * **The number of quads (caller data).** Clause code loops over
//!   `Lanes::quads` quads of four lanes; the engines refuse a state whose
//!   count is not 1–[`state::GROUP_QUADS`] before calling. A lane-wise loop
//!   region also writes one event per lane into [`state::LoopState`]
//!   (`events`, one entry per lane of a group).
//! * **Lookups (guest data: coordinates).** Texel coordinates are floored,
//!   compared with the surface's size (NaN, ±Inf and negatives fail) and
//!   only lanes inside pitch × height form `base + (y · pitch + x) <<
//!   shift`; the others read the table's zero entry. The page table is
//!   indexed by that address's 64 KiB page, which the table's builder
//!   guarantees to cover ([`state::TexTable::set`] is `unsafe` and states
//!   the contract; the memory controller builds the only tables that are
//!   not [`state::TexTable::NONE`]). Clause code of most clauses reads the
//!   descriptor's page table without testing it for null: the caller must
//!   only call it when the table it hands over covers
//!   [`compile::Compiled::direct_inputs`] ([`state::TexTable::covers`]),
//!   and call [`compile::Compiled::host_body`] otherwise.
//! * **Runtime calls.** Compiled code calls back into Rust (`Io::fetch`,
//!   `Io::umrt`) with a node index and a lane range it was compiled with;
//!   the callbacks bound the range by the group's lanes, never unwind
//!   (panics become run errors) and restore the default floating-point
//!   mode.
//!
//! Nothing else — no guest value — reaches an address computation: values
//! of registers are data, masks select lanes, and branch conditions choose
//! between code paths that each obey the rules above.

pub mod branch;
pub mod compile;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod fp;
pub mod host;
pub mod ir;
pub mod lanewise;
mod lower;
pub mod quad;
pub mod regions;
pub mod state;
pub mod strip;
