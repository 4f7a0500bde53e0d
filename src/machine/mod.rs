//! The machine around the DPP (`docs/machine.md`): the command processor
//! (PE), the memory controller (MC) and the conditional output unit (CO).

pub mod co;
pub mod mc;
pub mod pe;
