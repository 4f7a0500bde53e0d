//! Choosing the engine that executes clauses.

use crate::interp::Interpreter;
use crate::runtime::Engine;
use std::fmt;

/// The engines ctm offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// The reference interpreter.
    #[default]
    Interp,
    /// Native code through Cranelift.
    Jit,
}

/// An engine that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EngineUnavailable(pub String);

impl EngineKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Interp => "interp",
            EngineKind::Jit => "jit",
        }
    }

    /// The engine named `name`.
    pub fn parse(name: &str) -> Option<EngineKind> {
        [EngineKind::Interp, EngineKind::Jit]
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name))
    }

    /// Checks the engine can run on this build and host.
    pub fn check(self) -> Result<(), EngineUnavailable> {
        match self {
            EngineKind::Interp => Ok(()),
            EngineKind::Jit => Err(EngineUnavailable(
                "the JIT engine is not part of this build yet; use the interpreter (--engine interp)"
                    .into(),
            )),
        }
    }

    /// A fresh engine (one per thread).
    pub fn make(self) -> Result<Box<dyn Engine + Send>, EngineUnavailable> {
        self.check()?;
        Ok(Box::new(Interpreter::new()))
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
