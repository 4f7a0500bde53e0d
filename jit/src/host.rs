//! What the host CPU must offer for compiled clauses.
//!
//! Without SSE4.1 and FMA Cranelift lowers vector `floor` and `fma` to libm
//! calls that cannot be resolved from a Rust binary, so the JIT refuses to
//! start instead (`docs/design.md`, decisions).

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

/// MXCSR bit 6, "denormals are zero": SSE arithmetic and comparisons read a
/// denormal operand as a zero of the same sign — exactly [`crate::fp::daz`].
/// Compiled clauses run with it set, which makes every explicit `daz`
/// unnecessary; results are still flushed explicitly (FTZ, bit 15, decides
/// tininess after rounding and is never used).
pub const MXCSR_DAZ: u32 = 1 << 6;

/// Sets or clears DAZ until dropped, then restores the previous MXCSR.
///
/// Rust code assumes the default floating-point environment, so the guard
/// must span only calls into compiled code (whose runtime callbacks put the
/// default back with a nested guard), or, with [`set_daz`], a series of
/// such calls with only integer work between them, ended by a guard made
/// before the first.
#[derive(Debug)]
pub struct DazGuard {
    saved: u32,
}

impl DazGuard {
    /// Sets DAZ (`on`) or clears it.
    #[inline]
    pub fn new(on: bool) -> DazGuard {
        let saved = read_mxcsr();
        let want = if on {
            saved | MXCSR_DAZ
        } else {
            saved & !MXCSR_DAZ
        };
        if want != saved {
            write_mxcsr(want);
        }
        DazGuard { saved }
    }
}

/// Sets DAZ on this thread and leaves it set, for code that calls compiled
/// code over and over with only integer work between the calls; whoever
/// does so restores the default with a [`DazGuard`] made before.
#[inline]
pub fn set_daz() {
    let m = read_mxcsr();
    if m & MXCSR_DAZ == 0 {
        write_mxcsr(m | MXCSR_DAZ);
    }
}

/// Whether MXCSR.DAZ is set on this thread.
pub fn daz_is_set() -> bool {
    read_mxcsr() & MXCSR_DAZ != 0
}

impl Drop for DazGuard {
    #[inline]
    fn drop(&mut self) {
        if read_mxcsr() != self.saved {
            write_mxcsr(self.saved);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_mxcsr() -> u32 {
    let mut x: u32 = 0;
    // SAFETY: stores the 32-bit MXCSR into `x`, a valid local.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &raw mut x, options(nostack, preserves_flags));
    }
    x
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn write_mxcsr(x: u32) {
    // SAFETY: loads MXCSR from a valid local; only the DAZ bit differs from
    // the value read before, which changes no Rust-visible state other than
    // how SSE instructions read denormals (see `DazGuard`).
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &raw const x, options(nostack, readonly, preserves_flags));
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn read_mxcsr() -> u32 {
    0
}

#[cfg(not(target_arch = "x86_64"))]
fn write_mxcsr(_: u32) {}
