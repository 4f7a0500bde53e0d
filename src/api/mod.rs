//! The host API (`docs/machine.md` §9): devices with their arenas and
//! command buffers, one-call kernels, and asynchronous connections.

pub mod device;
pub mod host;
pub mod kernel;
