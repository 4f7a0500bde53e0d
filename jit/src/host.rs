//! What the host CPU must offer for compiled clauses.
//!
//! Without SSE4.1 and FMA Cranelift lowers vector `floor` and `fma` to libm
//! calls that cannot be resolved from a Rust binary, so the JIT refuses to
//! start instead (`DESIGN.md`, decisions).

/// A host CPU feature the JIT needs and does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the JIT needs the host CPU feature(s) {missing}; use the interpreter on this machine")]
pub struct MissingFeatures {
    /// Comma-separated feature names.
    pub missing: String,
}

/// Checks that the host can run compiled clauses.
///
/// ```
/// // Either the host is fit or the error names what is missing.
/// match ctm_jit::host::check_features() {
///     Ok(()) => {}
///     Err(e) => assert!(e.to_string().contains("sse4.1") || e.to_string().contains("fma")),
/// }
/// ```
pub fn check_features() -> Result<(), MissingFeatures> {
    let mut missing = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if !std::arch::is_x86_feature_detected!("sse4.1") {
            missing.push("sse4.1");
        }
        if !std::arch::is_x86_feature_detected!("fma") {
            missing.push("fma");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    missing.push("x86_64 (sse4.1, fma)");
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MissingFeatures {
            missing: missing.join(", "),
        })
    }
}
