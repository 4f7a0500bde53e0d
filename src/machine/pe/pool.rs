//! The process's worker threads (`docs/dispatch.md`): pools of helper
//! threads kept across runs and devices, and how a run's tasks reach them.
//!
//! A run of N tasks takes a pool of N − 1 helper threads for itself (runs
//! at once on several threads take a pool each) and the calling thread.
//! Task k goes to the pool's thread k − 1 where each thread takes one: a
//! worker that touches the same rows on every run finds them in its core's
//! caches. A run is offered by bumping a counter that the helpers watch;
//! between runs they spin for a while ([`LINGER`]) and then park, and the
//! calling thread, done with its own task, takes any task no helper has
//! taken and spins for the others ([`SPIN`]) before it parks. Offering a
//! run and seeing it done is then two cache lines crossing between cores:
//! a call handing two empty tasks to two threads takes 0.10 µs, where a
//! general work-stealing pool took 1.9 µs (`docs/threads.md`).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Most idle pools kept at once.
const POOLS: usize = 4;

/// How long the calling thread spins for the helpers to finish their
/// tasks before it parks: a parked caller took 15–22 µs to wake after the
/// last helper was done, at 16 threads (`docs/threads.md`). A helper still
/// busy after this long has more work left than waking costs.
const SPIN: Duration = Duration::from_micros(100);

/// How long a pool's threads spin after a run, waiting for the next, before
/// they park (`docs/dispatch.md`): waking a parked thread took 12–25 µs of
/// each two-thread re-run of the tiny and texture kernels (runs of 100–250
/// µs) where the next run came after a pause.
const LINGER: Duration = Duration::from_micros(500);

/// How long a lingering thread still spins once a run has started on
/// another pool, or on its own just before the run is offered.
const GRACE: Duration = Duration::from_micros(2);

/// Runs started in the process: a run on one pool ends the lingering of
/// every other pool's threads, which would take cores from it.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Pools no run holds, the most recently used last.
static IDLE: Mutex<Vec<Pool>> = Mutex::new(Vec::new());

/// Helper threads for one run at a time.
pub(crate) struct Pool {
    shared: Arc<Shared>,
}

/// What a pool's threads and the run holding it share.
struct Shared {
    /// The pool's threads.
    helpers: usize,
    /// Whether waiting threads spin before they park: not where there are
    /// more threads than cores, as a spinning thread would take a core
    /// from one with work.
    spin: bool,
    /// Bumped when a run is offered, and when the pool is dropped.
    epoch: AtomicU64,
    /// The run on offer (null: none). It lives in the calling thread's
    /// [`on_threads`], which clears this and waits for `active` to drop to
    /// zero before it returns.
    run: AtomicPtr<Run<'static>>,
    /// Helpers that may be looking at `run`.
    active: AtomicUsize,
    /// Helpers parked on `wake`.
    sleepers: AtomicUsize,
    /// Whether the calling thread is parked on `done`.
    caller_parked: AtomicBool,
    /// Set when the pool is dropped: its threads end.
    shutdown: AtomicBool,
    /// Held to park and to wake, on either condition variable.
    lock: Mutex<()>,
    /// A run was offered (or the pool dropped).
    wake: Condvar,
    /// A run's last task finished.
    done: Condvar,
}

/// One call of [`on_threads`].
struct Run<'a> {
    task: &'a (dyn Fn(usize) + Sync),
    /// Whether each task has been taken (task 0 by the calling thread).
    claimed: &'a [AtomicBool],
    /// Tasks finished.
    finished: AtomicUsize,
    /// The first panic of a task, raised again on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Run<'_> {
    fn count(&self) -> usize {
        self.claimed.len()
    }

    /// Takes task `k` if no thread has.
    fn claim(&self, k: usize) -> bool {
        !self.claimed[k].swap(true, AcqRel)
    }

    /// The first task (of 1..) that no thread has taken, taken.
    fn claim_any(&self) -> Option<usize> {
        (1..self.count()).find(|&k| self.claim(k))
    }

    /// Runs task `k`, keeping a panic for the calling thread; says whether
    /// it was the run's last to finish.
    fn execute(&self, k: usize) -> bool {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| (self.task)(k))) {
            lock(&self.panic).get_or_insert(p);
        }
        self.finished.fetch_add(1, SeqCst) + 1 == self.count()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A pool of `workers − 1` helper threads (`None` for one worker, or where
/// no thread could be started), held by the caller until dropped. Pools
/// are the process's, kept for later runs: neither a re-run nor a run on a
/// fresh device starts threads (`docs/dispatch.md`); runs at once on
/// several threads each take a pool.
pub(crate) fn pool(workers: usize) -> Option<PoolGuard> {
    let helpers = workers.checked_sub(1).filter(|&n| n > 0)?;
    let kept = {
        let mut idle = lock(&IDLE);
        let at = idle.iter().rposition(|p| p.shared.helpers == helpers);
        at.map(|k| idle.remove(k))
    };
    let pool = match kept {
        Some(p) => p,
        None => Pool::new(helpers)?,
    };
    Some(PoolGuard(Some(pool)))
}

/// A pool held for a run; it goes back to the idle pools when dropped.
pub(crate) struct PoolGuard(Option<Pool>);

impl std::ops::Deref for PoolGuard {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        self.0.as_ref().expect("held until dropped")
    }
}

impl Drop for PoolGuard {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            let dropped = {
                let mut idle = lock(&IDLE);
                idle.push(pool);
                (idle.len() > POOLS).then(|| idle.remove(0))
            };
            // Its threads end (outside the registry's lock).
            drop(dropped);
        }
    }
}

impl Pool {
    fn new(helpers: usize) -> Option<Pool> {
        let shared = Arc::new(Shared {
            helpers,
            spin: helpers < super::all_cores(),
            epoch: AtomicU64::new(0),
            run: AtomicPtr::new(std::ptr::null_mut()),
            active: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            caller_parked: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            done: Condvar::new(),
        });
        let pool = Pool { shared };
        for index in 0..helpers {
            let shared = pool.shared.clone();
            let started = std::thread::Builder::new()
                .name(format!("ctm-worker-{index}"))
                .spawn(move || helper(&shared, index + 1));
            // Dropping the pool ends the threads already started.
            started.ok()?;
        }
        Some(pool)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let s = &self.shared;
        s.shutdown.store(true, SeqCst);
        s.epoch.fetch_add(1, SeqCst);
        let _held = lock(&s.lock);
        s.wake.notify_all();
    }
}

/// A helper thread: waits for each run offered and serves it, task `own`
/// first, until the pool is dropped.
fn helper(s: &Shared, own: usize) {
    let mut seen = 0;
    loop {
        seen = next_run(s, seen);
        if s.shutdown.load(Acquire) {
            return;
        }
        s.active.fetch_add(1, SeqCst);
        let p = s.run.load(SeqCst);
        if !p.is_null() {
            // SAFETY: `on_threads` clears `run` and then waits for
            // `active` to be zero before its `Run` goes; this thread
            // counted itself in `active` before loading `run` (both
            // sequentially consistent), so either it loaded null or the
            // run waits for it.
            let run = unsafe { &*p };
            let mut next = (own < run.count() && run.claim(own)).then_some(own);
            while let Some(k) = next.take().or_else(|| run.claim_any()) {
                if run.execute(k) && s.caller_parked.load(SeqCst) {
                    let _held = lock(&s.lock);
                    s.done.notify_all();
                }
            }
        }
        s.active.fetch_sub(1, Release);
    }
}

/// Waits for the pool's epoch to move on from `seen` (spinning for
/// [`LINGER`] where the pool spins, unless a run starts elsewhere, then
/// parked) and returns it.
fn next_run(s: &Shared, seen: u64) -> u64 {
    let start = Instant::now();
    let runs = RUNS.load(Relaxed);
    // When a run started elsewhere: a run of this pool counts itself in
    // `RUNS` just before it bumps the epoch, so the thread looks a little
    // longer before it parks.
    let mut elsewhere: Option<Instant> = None;
    if s.spin {
        spin(
            || s.epoch.load(Acquire) == seen,
            || {
                if elsewhere.is_none() && RUNS.load(Relaxed) != runs {
                    elsewhere = Some(Instant::now());
                }
                match elsewhere {
                    None => start.elapsed() < LINGER,
                    Some(t) => t.elapsed() < GRACE,
                }
            },
        );
    }
    loop {
        let e = s.epoch.load(Acquire);
        if e != seen {
            return e;
        }
        s.sleepers.fetch_add(1, SeqCst);
        let mut held = lock(&s.lock);
        while s.epoch.load(SeqCst) == seen {
            held = s.wake.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        drop(held);
        s.sleepers.fetch_sub(1, SeqCst);
    }
}

/// Spins while `waiting()` holds and `lingering()` says to go on, and says
/// whether the wait ended (false: `lingering` said stop first).
/// `waiting` is asked after every pause, since a pause takes 20–40 ns on
/// recent processors (24 on this project's 2-core machine; asking after
/// every 64th made a helper see a run 0.75 µs late on average:
/// `docs/dispatch.md`); `lingering`, which may read the clock, after
/// every 16th.
pub(crate) fn spin(mut waiting: impl FnMut() -> bool, mut lingering: impl FnMut() -> bool) -> bool {
    let mut pauses = 0u32;
    while waiting() {
        pauses = pauses.wrapping_add(1);
        if pauses.is_multiple_of(16) && !lingering() {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// Runs `task(k)` for every `k` in `0..count` at once and returns when all
/// have: `task(0)` on the calling thread, which starts on it at once, and
/// the others on the threads of `pool` (which should have `count − 1`),
/// each task once. Where every thread takes one, `task(k)` runs on the
/// pool's thread `k − 1`, the same on every call; a thread that runs late
/// (more threads than cores, a busy machine) holds nothing up, as any
/// thread, the calling one included, takes the tasks left. A task's panic
/// is raised again here once every task has finished.
pub(crate) fn on_threads(pool: &Pool, count: usize, task: &(dyn Fn(usize) + Sync)) {
    let claimed = |k| AtomicBool::new(k == 0);
    slots(count.max(1), claimed, |claimed| {
        on_threads_with(pool, claimed, task)
    });
}

/// [`on_threads`] with a flag per task, task 0's set.
fn on_threads_with(pool: &Pool, claimed: &[AtomicBool], task: &(dyn Fn(usize) + Sync)) {
    let s = &*pool.shared;
    let run = Run {
        task,
        claimed,
        finished: AtomicUsize::new(0),
        panic: Mutex::new(None),
    };
    let offered = run.count() > 1;
    if offered {
        // Before the epoch: a helper that sees the run sees this count too
        // (`next_run`).
        RUNS.fetch_add(1, Relaxed);
        let p: *const Run<'_> = &run;
        s.run.store(p.cast_mut().cast(), SeqCst);
        s.epoch.fetch_add(1, SeqCst);
        if s.sleepers.load(SeqCst) > 0 {
            let _held = lock(&s.lock);
            s.wake.notify_all();
        }
    }
    run.execute(0);
    while let Some(k) = run.claim_any() {
        run.execute(k);
    }
    if offered {
        wait_for_tasks(s, &run);
        s.run.store(std::ptr::null_mut(), SeqCst);
        let mut spins = 0u32;
        while s.active.load(SeqCst) > 0 {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
    if let Some(p) = run.panic.into_inner().unwrap_or_else(|p| p.into_inner()) {
        resume_unwind(p);
    }
}

/// Most slots [`slots`] keeps on the stack.
const ON_STACK: usize = 16;

/// Calls `f` with `n` values made by `make` (from index 0 on): on the
/// stack where there are at most [`ON_STACK`], else in a vector. A run's
/// bookkeeping per thread (the tasks' flags here, the workers' blocks and
/// hand-over in `rows.rs`) then allocates nothing on a machine of up to
/// that many threads.
pub(super) fn slots<T, R>(
    n: usize,
    mut make: impl FnMut(usize) -> T,
    f: impl FnOnce(&mut [T]) -> R,
) -> R {
    if n <= ON_STACK {
        let mut on_stack: [T; ON_STACK] = std::array::from_fn(&mut make);
        f(&mut on_stack[..n])
    } else {
        f(&mut (0..n).map(make).collect::<Vec<T>>())
    }
}

/// Waits until every task of `run` has finished: spinning for [`SPIN`]
/// where the pool spins, then parked until the last helper wakes it.
fn wait_for_tasks(s: &Shared, run: &Run<'_>) {
    let all = run.count();
    let start = Instant::now();
    let unfinished = || run.finished.load(Acquire) < all;
    if s.spin {
        spin(unfinished, || start.elapsed() < SPIN);
    }
    while unfinished() {
        s.caller_parked.store(true, SeqCst);
        let mut held = lock(&s.lock);
        while run.finished.load(SeqCst) < all {
            held = s.done.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        drop(held);
        s.caller_parked.store(false, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn slots_are_made_from_index_zero_on_the_stack_or_on_the_heap() {
        for n in [0, 1, 2, ON_STACK, ON_STACK + 1, 40] {
            let made = slots(n, |k| 3 * k + 1, |s| s.to_vec());
            assert_eq!(made, (0..n).map(|k| 3 * k + 1).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_spin_reads_its_condition_after_every_pause_and_its_limit_after_every_sixteenth() {
        // Ends as soon as the condition does.
        let (mut asked, mut limits) = (0, 0);
        let ended = spin(
            || {
                asked += 1;
                asked < 5
            },
            || {
                limits += 1;
                true
            },
        );
        assert!(ended);
        assert_eq!((asked, limits), (5, 0));
        // Stops where the limit says so, at the sixteenth pause.
        let (mut asked, mut limits) = (0, 0);
        let ended = spin(
            || {
                asked += 1;
                true
            },
            || {
                limits += 1;
                limits < 3
            },
        );
        assert!(!ended);
        assert_eq!((asked, limits), (48, 3));
    }

    #[test]
    fn each_task_runs_once_and_the_first_on_the_calling_thread() {
        for (threads, count) in [(4, 4), (4, 2), (4, 1), (3, 3), (2, 5), (4, 17), (3, 40)] {
            let pool = pool(threads).unwrap();
            for _ in 0..50 {
                let ran = Mutex::new(Vec::new());
                on_threads(&pool, count, &|k| {
                    ran.lock().unwrap().push((k, std::thread::current().id()));
                });
                let mut ran = ran.into_inner().unwrap();
                ran.sort_by_key(|r| r.0);
                let tasks: Vec<usize> = ran.iter().map(|r| r.0).collect();
                assert_eq!(tasks, (0..count).collect::<Vec<_>>());
                assert_eq!(ran[0].1, std::thread::current().id());
            }
        }
    }

    #[test]
    fn runs_at_once_take_pools_of_their_own() {
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        let pool = pool(3).unwrap();
                        let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
                        on_threads(&pool, 3, &|k| {
                            hits[k].fetch_add(1, Relaxed);
                        });
                        assert!(hits.iter().all(|h| h.load(Relaxed) == 1));
                    }
                });
            }
        });
    }

    #[test]
    fn a_helpers_panic_reaches_the_caller_after_every_task() {
        let pool = pool(3).unwrap();
        let finished = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            on_threads(&pool, 3, &|k| {
                if k == 2 {
                    panic!("task two");
                }
                std::thread::sleep(Duration::from_millis(5));
                finished.fetch_add(1, Relaxed);
            });
        }));
        let why = caught.expect_err("the task's panic is raised again");
        assert_eq!(why.downcast_ref::<&str>(), Some(&"task two"));
        assert_eq!(finished.load(Relaxed), 2);
        // The pool still serves runs.
        let ran = AtomicUsize::new(0);
        on_threads(&pool, 3, &|_| {
            ran.fetch_add(1, Relaxed);
        });
        assert_eq!(ran.load(Relaxed), 3);
    }

    #[test]
    fn parked_helpers_wake_for_the_next_run() {
        let pool = pool(2).unwrap();
        for _ in 0..3 {
            // Longer than the helpers linger.
            std::thread::sleep(LINGER * 4);
            let on = Mutex::new(Vec::new());
            on_threads(&pool, 2, &|k| on.lock().unwrap().push(k));
            let mut on = on.into_inner().unwrap();
            on.sort_unstable();
            assert_eq!(on, [0, 1]);
        }
    }
}
