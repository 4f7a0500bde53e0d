//! What runs programs: the frontend that cuts instructions into the clause
//! IR, the reference interpreter, the Cranelift JIT, the runtime shim both
//! share (flow control, the texture semaphore, results), the choice of
//! engine and the tracer (`docs/design.md`).

pub mod engine;
pub mod frontend;
pub mod interp;
pub mod jit;
pub mod runtime;
pub mod trace;
