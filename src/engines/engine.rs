//! Choosing the engine that executes clauses.

use crate::interp::Interpreter;
use crate::jit::JitEngine;
use crate::runtime::Engine;
use ctm_jit::compile::{CodeCache, JitOptions};
use std::fmt;
use std::sync::Arc;

/// The engines ctm offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// The reference interpreter.
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

    /// The fastest engine this host runs: the JIT where the CPU supports
    /// it, else the interpreter.
    pub fn best() -> EngineKind {
        if EngineKind::Jit.check().is_ok() {
            EngineKind::Jit
        } else {
            EngineKind::Interp
        }
    }

    /// Checks the engine can run on this build and host.
    pub fn check(self) -> Result<(), EngineUnavailable> {
        match self {
            EngineKind::Interp => Ok(()),
            EngineKind::Jit => ctm_jit::host::check_features()
                .map_err(|e| EngineUnavailable(format!("{e} (--engine interp)"))),
        }
    }

    /// A fresh engine (one per thread); JIT engines compile with `jit` and
    /// share the process-wide code cache.
    pub fn make(self, jit: JitOptions) -> Result<Box<dyn Engine + Send>, EngineUnavailable> {
        self.make_with(jit, None)
    }

    /// [`EngineKind::make`] with JIT engines sharing `cache` instead
    /// (`None`: the process-wide one).
    pub fn make_with(
        self,
        jit: JitOptions,
        cache: Option<&Arc<CodeCache>>,
    ) -> Result<Box<dyn Engine + Send>, EngineUnavailable> {
        self.check()?;
        Ok(match self {
            EngineKind::Interp => Box::new(Interpreter::new()),
            EngineKind::Jit => Box::new(match cache {
                Some(c) => JitEngine::with_cache(jit, c.clone()),
                None => JitEngine::new(jit),
            }),
        })
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
