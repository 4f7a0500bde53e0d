//! The runtime calls compiled code makes: a batch's texture fetches and
//! uncached writes, served through the same helpers as the interpreter's
//! (`fetch_lanes`, `umrt_lanes`), with no panic unwinding into compiled code.

use crate::interp::{fetch_lanes, umrt_lanes};
use crate::runtime::{Ctx, FetchRequest, RunError};
use ctm_jit::host::DazGuard;
use ctm_jit::ir::{Clause, Node, Op};
use ctm_jit::state::{GROUP_LANES, Io};

/// What the runtime callbacks of one clause execution need.
pub(super) struct Host<'a, 'c> {
    pub ctx: &'a mut Ctx<'c>,
    pub clause: &'a Clause,
    pub lanes: usize,
    /// The group's helper lanes (`Lanes::helper`).
    pub helper: u32,
    pub error: Option<RunError>,
}

/// The lanes `lane0..lane0 + count` that are present.
fn span(host: &Host<'_, '_>, lane0: u32, count: u32) -> std::ops::Range<usize> {
    let start = (lane0 as usize).min(host.lanes);
    start..(start + count as usize).min(host.lanes)
}

/// Runs a callback body; a panic in it (a bug: texture units are already
/// guarded) becomes the call's error instead of unwinding into compiled
/// code, which would abort the process.
fn no_unwind(io: *mut Io, body: impl FnOnce() -> u32) -> u32 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(status) => status,
        Err(panic) => {
            // SAFETY: `io` is the engine's `Io` with a live `host` for the
            // duration of the callback (see `host_fetch`); the body that
            // borrowed it has ended.
            let host = unsafe { &mut *(*io).host.cast::<Host<'_, '_>>() };
            host.error = Some(RunError::Engine {
                engine: "jit",
                message: format!(
                    "a runtime call panicked: {}",
                    crate::interp::panic_message(panic.as_ref())
                ),
            });
            1
        }
    }
}

/// What a callback works on: the engine's `Io`, the host block of the
/// clause being run, and node `node` of that clause, which compiled code
/// called for.
///
/// # Safety
/// As for [`host_fetch`]; compiled code does not touch `io` while the
/// callback runs, and `io.host` points at a `Host` elsewhere than `io`.
unsafe fn called<'a>(io: *mut Io, node: u32) -> (&'a mut Io, &'a mut Host<'a, 'a>, &'a Node) {
    // SAFETY: guaranteed by the caller.
    let io = unsafe { &mut *io };
    // SAFETY: as above.
    let host = unsafe { &mut *io.host.cast::<Host<'a, 'a>>() };
    let clause: &'a Clause = host.clause;
    (io, host, &clause.nodes[node as usize])
}

/// Runtime callback: the fetch of node `node` for a batch of lanes.
///
/// # Safety
/// `io` must be the engine's `Io` with `host` pointing to a live `Host`
/// (set by `JitEngine::run_clause` for the duration of the call).
pub(super) unsafe extern "C" fn host_fetch(
    io: *mut Io,
    node: u32,
    lane0: u32,
    count: u32,
    mask: u32,
) -> u32 {
    // SAFETY: forwarded unchanged; no panic may unwind into compiled code.
    no_unwind(io, || unsafe { fetch_body(io, node, lane0, count, mask) })
}

/// The body of [`host_fetch`].
///
/// # Safety
/// As for [`host_fetch`].
unsafe fn fetch_body(io: *mut Io, node: u32, lane0: u32, count: u32, mask: u32) -> u32 {
    // Rust code runs in the default floating-point environment.
    let _default = DazGuard::new(false);
    // SAFETY: guaranteed by the caller (see above).
    let (io, host, node) = unsafe { called(io, node) };
    let Op::Fetch {
        kind,
        input,
        unscaled,
        ..
    } = node.op
    else {
        host.error = Some(RunError::Engine {
            engine: "jit",
            message: format!("pc {}: compiled code called fetch on a non-fetch", node.pc),
        });
        return 1;
    };
    let lanes = span(host, lane0, count);
    let mut coords = [[0u32; 4]; GROUP_LANES];
    for (l, c) in lanes.clone().zip(coords.iter_mut()) {
        *c = [io.args[0][l], io.args[1][l], io.args[2][l], io.args[3][l]];
    }
    let n = lanes.len();
    let mut got = [[0u32; 4]; GROUP_LANES];
    let req = FetchRequest {
        kind,
        input,
        unscaled,
        helpers: host.helper >> lanes.start,
    };
    if let Err(e) = fetch_lanes(
        host.ctx,
        node.pc,
        req,
        lanes.start,
        &coords[..n],
        mask,
        &mut got[..n],
    ) {
        host.error = Some(e);
        return 1;
    }
    for (l, g) in lanes.zip(got.iter()) {
        for (res, &v) in io.result.iter_mut().zip(g) {
            res[l] = v;
        }
    }
    0
}

/// Runtime callback: the uncached write of node `node` for a batch.
///
/// # Safety
/// As for [`host_fetch`].
pub(super) unsafe extern "C" fn host_umrt(
    io: *mut Io,
    node: u32,
    lane0: u32,
    count: u32,
    mask: u32,
) -> u32 {
    // SAFETY: forwarded unchanged; no panic may unwind into compiled code.
    no_unwind(io, || unsafe { umrt_body(io, node, lane0, count, mask) })
}

/// The body of [`host_umrt`].
///
/// # Safety
/// As for [`host_fetch`].
unsafe fn umrt_body(io: *mut Io, node: u32, lane0: u32, count: u32, mask: u32) -> u32 {
    let _default = DazGuard::new(false);
    // SAFETY: guaranteed by the caller (see `host_fetch`).
    let (io, host, node) = unsafe { called(io, node) };
    let Op::UmrtWrite { index, .. } = node.op else {
        host.error = Some(RunError::Engine {
            engine: "jit",
            message: format!(
                "pc {}: compiled code called an uncached write on another op",
                node.pc
            ),
        });
        return 1;
    };
    let lanes = span(host, lane0, count);
    let ops = [
        &io.args[0][lanes.clone()],
        &io.args[1][lanes.clone()],
        &io.args[2][lanes.clone()],
    ];
    match umrt_lanes(host.ctx, node.pc, index, lanes.start, ops, mask) {
        Ok(()) => 0,
        Err(e) => {
            host.error = Some(e);
            1
        }
    }
}
