//! ctm: an emulator of the ATI CTM data-parallel processor (DPP).

pub mod abi;
pub mod isa;
pub mod program;
