//! The process's worker threads (`docs/dispatch.md`): one pool per thread
//! count, kept across runs and devices, and how a run's tasks reach them.
//!
//! A run of N tasks takes the calling thread and the N − 1 threads of its
//! pool, task k on the pool's thread k − 1 where each thread takes one: a
//! worker that touches the same rows on every run finds them in its core's
//! caches. The calling thread waits for the helpers by spinning, and they
//! stay awake after a run for the next ([`linger`]), so back-to-back runs
//! park no thread unless a helper is still busy 0.1 ms after the caller
//! is done (`docs/threads.md`, "Many cores").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Most thread pools kept at once (one per thread count asked for).
const POOLS: usize = 4;

/// The threads that help the calling thread with a run of `workers`
/// workers: `workers - 1` of them (`None` for one worker). Pools are the
/// process's, one per thread count, kept for later runs: neither a re-run
/// nor a run on a fresh device starts threads (`docs/dispatch.md`). Runs
/// of several devices at once share a pool's threads.
pub(crate) fn pool(workers: usize) -> Option<Arc<rayon::ThreadPool>> {
    // Whoever takes a pool is about to use it: threads lingering after a
    // run (`linger`) go back to it now, or its tasks would wait for them.
    POOL_RUNS.fetch_add(1, Ordering::Relaxed);
    static KEPT: std::sync::Mutex<Vec<Arc<rayon::ThreadPool>>> = std::sync::Mutex::new(Vec::new());
    let helpers = workers.checked_sub(1).filter(|&n| n > 0)?;
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = kept.iter().position(|p| p.current_num_threads() == helpers) {
        let pool = kept.remove(k);
        kept.push(pool.clone());
        return Some(pool);
    }
    // A pool that cannot be made leaves the run to scoped threads.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(helpers)
        .thread_name(|k| format!("ctm-worker-{k}"))
        .build()
        .ok()
        .map(Arc::new)?;
    if kept.len() >= POOLS {
        // Its threads end once the runs using it have.
        kept.remove(0);
    }
    kept.push(pool.clone());
    Some(pool)
}

/// Runs `task(k)` for every `k` in `0..count` at once and returns when all
/// have: `task(0)` on the calling thread, which starts on it at once, and
/// the others on the threads of `pool` (which should have `count − 1`),
/// each task once. Where every thread takes one, `task(k)` runs on the
/// pool's thread `k − 1`, the same on every call; a thread that runs late
/// (more threads than cores, a busy machine) holds nothing up, as any
/// thread takes the tasks left.
pub(crate) fn on_threads(pool: &rayon::ThreadPool, count: usize, task: &(dyn Fn(usize) + Sync)) {
    let epoch = POOL_RUNS.fetch_add(1, Ordering::Relaxed) + 1;
    let claimed: Vec<AtomicBool> = (0..count).map(|k| AtomicBool::new(k == 0)).collect();
    let done = AtomicUsize::new(0);
    // One pool task per helper: it takes the task of its thread's index
    // if no other thread has, else the first one left.
    let helper = || {
        let own = rayon::current_thread_index().map_or(1, |t| t + 1);
        let take = |k: usize| !claimed[k].swap(true, Ordering::AcqRel);
        let k = if own < count && take(own) {
            Some(own)
        } else {
            (1..count).find(|&k| take(k))
        };
        if let Some(k) = k {
            task(k);
        }
        // The last helper to finish keeps every thread awake for the next
        // run: by then no task of this run waits in a queue behind the
        // wait, and the calling thread pays nothing for it (spawning a wait
        // per thread from the calling thread after the run took it 8 µs at
        // 16 threads: `docs/threads.md`).
        if done.fetch_add(1, Ordering::Release) + 2 == count {
            rayon::spawn_broadcast(move |_| linger(epoch));
        }
    };
    pool.in_place_scope(|s| {
        if count > 1 {
            // One pool task wakes the others' threads: their wake-ups cost
            // the calling thread nothing.
            let helper = &helper;
            s.spawn(move |s| {
                for _ in 2..count {
                    s.spawn(move |_| helper());
                }
                helper();
            });
        }
        task(0);
        // Spinning where a thread per core is waiting would take a core
        // from the helpers.
        if count <= super::all_cores() {
            wait_for(&done, count - 1);
        }
    });
}

/// How long the calling thread spins for the helpers to finish their
/// tasks before it leaves the wait to the pool's latch, which parks it:
/// a parked caller took 15–22 µs to wake after the last helper was done,
/// at 16 threads (`docs/threads.md`). A helper still busy after this long
/// has more work left than waking costs.
const SPIN: Duration = Duration::from_micros(100);

/// Spins until `done` reaches `n` or [`SPIN`] has passed.
fn wait_for(done: &AtomicUsize, n: usize) {
    let start = Instant::now();
    while done.load(Ordering::Acquire) < n && start.elapsed() < SPIN {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}

/// How long a pool's threads stay awake after a run, waiting for the next
/// (`docs/dispatch.md`): waking a parked thread took 12–25 µs of each
/// two-thread re-run of the tiny and texture kernels (runs of 100–250 µs)
/// where the next run came after a pause.
const LINGER: Duration = Duration::from_micros(500);

/// Runs on a pool started so far, in the process, and other takings of a
/// pool ([`pool`]): the next one ends every lingering thread's wait.
static POOL_RUNS: AtomicU64 = AtomicU64::new(0);

/// A pool thread's wait after run `epoch`: it spins until another run
/// starts or [`LINGER`] has passed, then goes back to the pool (whose
/// threads park when idle).
fn linger(epoch: u64) {
    let start = Instant::now();
    while POOL_RUNS.load(Ordering::Relaxed) == epoch && start.elapsed() < LINGER {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn each_task_runs_once_and_the_first_on_the_calling_thread() {
        for (threads, count) in [(4, 4), (4, 2), (4, 1), (3, 3)] {
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
}
