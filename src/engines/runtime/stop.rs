//! Stopping a whole run: a cancel handle any thread may pull, a wall-clock
//! limit and a total instruction budget. Every worker checks at each clause
//! (compiled loop regions hand back to the shim at least every
//! [`LOOP_SLICE`] instructions), so a run stops within milliseconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Instructions a compiled loop region may run for a group before it
/// returns to the shim, which then checks [`Stop`] (about a millisecond).
pub const LOOP_SLICE: u64 = 1 << 20;

/// Cancels runs from another thread.
///
/// ```
/// use ctm::kernel::{Job, Kernel};
/// use ctm::mc::Format;
/// use ctm::runtime::Cancel;
/// // A program that never ends, with an unlimited per-group budget.
/// let k = Kernel::assemble("top:\n JUMP -> top\n out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last").unwrap();
/// let cancel = Cancel::new();
/// let job = Job::new(8, 8).output(0, Format::Float32_4).budget(u64::MAX).cancel(&cancel);
/// let c = cancel.clone();
/// std::thread::spawn(move || { std::thread::sleep(std::time::Duration::from_millis(50)); c.cancel() });
/// let e = k.run(&job).unwrap_err();
/// assert!(e.to_string().contains("cancelled"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A handle not yet pulled.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops every run that holds this handle, at its workers' next
    /// clause.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a run was stopped from outside its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A [`Cancel`] handle was pulled.
    Cancelled,
    /// The run took longer than its time limit.
    Timeout(Duration),
    /// The run executed more instructions than its limit.
    Instructions(u64),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Cancelled => f.write_str("cancelled"),
            StopReason::Timeout(d) => write!(
                f,
                "the run took longer than its time limit of {:.3} s (`--timeout`, `Job::timeout`)",
                d.as_secs_f64()
            ),
            StopReason::Instructions(n) => write!(
                f,
                "the run executed more than {n} instructions in all (`--max-instructions`, `Job::max_instructions`)"
            ),
        }
    }
}

/// The stop state of one run, shared by its workers.
#[derive(Debug)]
pub struct Stop {
    /// 0 running (or cancelled: the handle says), 2 timeout, 3 instructions.
    why: AtomicU8,
    /// Instructions (counted as the per-group budget counts them) left.
    remaining: AtomicU64,
    limit: u64,
    timeout: Duration,
    cancel: Option<Cancel>,
}

impl Stop {
    /// A run stopped by `cancel`, after `max_instructions` in all, or by a
    /// watchdog calling [`Stop::time_out`] after `timeout`.
    pub fn new(
        cancel: Option<Cancel>,
        max_instructions: Option<u64>,
        timeout: Option<Duration>,
    ) -> Stop {
        let limit = max_instructions.unwrap_or(u64::MAX);
        Stop {
            why: AtomicU8::new(0),
            remaining: AtomicU64::new(limit),
            limit,
            timeout: timeout.unwrap_or(Duration::MAX),
            cancel,
        }
    }

    /// Stops the run for exceeding its time limit (called by a watchdog).
    pub fn time_out(&self) {
        let _ = self
            .why
            .compare_exchange(0, 2, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Why the run must stop, if it must, for a group that has executed
    /// `executed` instructions so far (not yet [spent](Stop::spend)).
    #[inline]
    pub fn check(&self, executed: u64) -> Option<StopReason> {
        if self.limit != u64::MAX && executed > self.remaining.load(Ordering::Relaxed) {
            let _ = self
                .why
                .compare_exchange(0, 3, Ordering::Relaxed, Ordering::Relaxed);
        }
        self.stopped()
    }

    /// Why the run must stop, if it must.
    #[inline]
    pub fn stopped(&self) -> Option<StopReason> {
        match self.why.load(Ordering::Relaxed) {
            0 if self.cancel.as_ref().is_some_and(Cancel::is_cancelled) => {
                Some(StopReason::Cancelled)
            }
            0 => None,
            2 => Some(StopReason::Timeout(self.timeout)),
            _ => Some(StopReason::Instructions(self.limit)),
        }
    }

    /// Whether an instruction limit applies.
    pub fn limited(&self) -> bool {
        self.limit != u64::MAX
    }

    /// Counts `n` instructions a group executed against the total.
    #[inline]
    pub fn spend(&self, n: u64) {
        if self.limit == u64::MAX {
            return;
        }
        let before = self
            .remaining
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                Some(r.saturating_sub(n))
            })
            .unwrap_or(0);
        if before < n {
            let _ = self
                .why
                .compare_exchange(0, 3, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// Calls [`Stop::time_out`] when its time is up, unless dropped first
/// (dropping ends it at once).
#[derive(Debug)]
pub struct Watchdog {
    done: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching `stop` for `limit` from now.
    pub fn start(stop: Arc<Stop>, limit: Duration) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let deadline = Instant::now().checked_add(limit);
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let Some(deadline) = deadline else {
                    std::thread::park();
                    continue;
                };
                let now = Instant::now();
                if now >= deadline {
                    stop.time_out();
                    return;
                }
                std::thread::park_timeout(deadline - now);
            }
        });
        Watchdog {
            done,
            handle: Some(handle),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
