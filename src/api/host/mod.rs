//! Asynchronous connections (`docs/machine.md` §9, `docs/dispatch.md`): a
//! [`Connection`] is a [`Device`]
//! with a worker thread of its own, as the board was to a CTM application.
//!
//! [`Connection::submit`] checks a command buffer's address and size and
//! returns its id at once; the worker executes buffers one after the other
//! in submission order; [`Connection::consumed`] polls, [`Connection::wait`]
//! blocks and returns what the buffer did or its fault. Meanwhile the host
//! reads and writes the arenas in place, through [`Connection::arena_ptr`]
//! (the C interface's CPU base addresses) or [`Connection::device`]. As on
//! the hardware, what a buffer still in flight reads or writes must not be
//! written by the host until the buffer is consumed. Dropping a connection
//! waits for every buffer submitted to it. While a client polls, short
//! buffers run on at most all cores but one: the client spins on the one
//! left (`docs/dispatch.md`).
//!
//! ```
//! use ctm::device::DeviceConfig;
//! use ctm::host::Connection;
//! use ctm::mc::{ArenaKind, Format, SurfaceFormat};
//! use ctm::pe::{Command, CommandBuffer};
//! use ctm::runtime::Domain;
//!
//! let conn = Connection::open(DeviceConfig::default()).unwrap();
//! let base = conn.info().base_address_sys_c;
//! // An executable's bytes at the instruction base are all start_program needs.
//! let exe = ctm::abi::Executable::from_code(ctm::isa::asm::assemble(
//!     "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
//! ).unwrap());
//! let image = ctm::abi::write(&exe);
//! let out = base + 0x10_0000;
//! let mut cb = CommandBuffer::new();
//! cb.push(Command::SetInstFmt { base: base + 0x800, fmt: SurfaceFormat::linear(Format::Float32_1, 0) })
//!     .push(Command::SetOutFmt { output: 0, base: out, fmt: SurfaceFormat::linear(Format::Float32_4, 8), height: 4 })
//!     .push(Command::SetDomain(Domain::new(8, 4)))
//!     .push(Command::StartProgram)
//!     .push(Command::FlushOutCache);
//! let words = cb.to_bytes();
//! {
//!     let mut dev = conn.device();
//!     let arena = dev.arena_mut(ArenaKind::SystemCached);
//!     arena[..words.len()].copy_from_slice(&words);
//!     arena[0x800..0x800 + image.len()].copy_from_slice(&image);
//! }
//! let id = conn.submit(base, words.len() as u32).unwrap();
//! conn.wait(id).unwrap();
//! let dev = conn.device();
//! let px = &dev.arena(ArenaKind::SystemCached)[0x10_0000 + (2 * 8 + 3) * 16..][..4];
//! assert_eq!(f32::from_le_bytes(px.try_into().unwrap()), 3.0); // i of (3, 2)
//! ```

use crate::device::{BufferId, Device, DeviceConfig, DeviceError, DeviceInfo, MAX_UNREAD};
use crate::mc::{Arena, ArenaKind};
use crate::pe::BufferReport;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One connection with its worker.
#[derive(Debug)]
pub struct Connection {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
    info: DeviceInfo,
    arenas: Vec<Arena>,
    ptrs: [usize; 4],
}

#[derive(Debug)]
struct Shared {
    device: Mutex<Device>,
    queue: Mutex<Queue>,
    /// Ids handed out so far (ids are 1, 2, …). Written with `queue` held;
    /// read without it by [`Connection::consumed`] and by the worker while
    /// it waits for the next buffer.
    submitted: AtomicU32,
    /// Every id up to this one has completed (written with `queue` held).
    completed: AtomicU32,
    /// Set with `Queue::closing`: the worker stops spinning.
    closing: AtomicBool,
    /// Set when a poll ([`Connection::consumed`]) found a buffer not done,
    /// cleared as the worker starts the next: the client spins on a core
    /// of its own (see [`work`]).
    polled: AtomicBool,
    /// Signalled when a buffer is queued while the worker is parked, or
    /// the connection closes.
    work: Condvar,
    /// Signalled when a buffer completes while a caller waits for one.
    done: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    /// Buffers submitted and not started: id, address, size.
    pending: VecDeque<(u32, u32, u32)>,
    /// Reports of completed buffers not read yet (at most [`MAX_UNREAD`]).
    reports: BTreeMap<u32, Result<BufferReport, DeviceError>>,
    /// Reports whose outcome was read ([`Connection::outcome`]), dropped
    /// by the worker: it made them, so their memory goes back to where it
    /// came from (freed on the client's thread, each report's allocation
    /// took the allocator's slow path on the worker's).
    spent: Vec<BufferReport>,
    closing: bool,
    /// Whether the worker is parked on `Shared::work`.
    worker_parked: bool,
    /// Callers parked on `Shared::done`.
    waiting: usize,
}

/// How long the worker spins for the next buffer before it parks: a client
/// that submits a buffer soon after the last one completed (as one that
/// polls [`Connection::consumed`] does) then finds the worker awake instead
/// of paying a thread's wake-up (`docs/dispatch.md`).
const LINGER: Duration = Duration::from_micros(500);

/// Buffers shorter than this (their time times their threads), with a
/// client polling, leave the client's core to it (see [`work`]): longer
/// ones span the system's time slices, over which threads sharing a core
/// take turns anyway (the interpreter's 512² runs of `tiny`, about 1.3 ms
/// of work, were faster on two workers beside a polling client than on
/// one).
const SHORT: Duration = Duration::from_millis(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock is caught where it happens (runs are
    // wrapped), so a poisoned lock still holds consistent state.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

const KINDS: [ArenaKind; 4] = [
    ArenaKind::Local,
    ArenaKind::LocalB,
    ArenaKind::System,
    ArenaKind::SystemCached,
];

impl Connection {
    /// Opens a device and starts its worker.
    pub fn open(config: DeviceConfig) -> Result<Connection, DeviceError> {
        let device = Device::open(config)?;
        let info = device.info();
        let arenas = device.mc().mem.arenas().to_vec();
        let ptrs = KINDS.map(|k| device.arena_ptr(k) as usize);
        let shared = Arc::new(Shared {
            device: Mutex::new(device),
            queue: Mutex::new(Queue::default()),
            submitted: AtomicU32::new(0),
            completed: AtomicU32::new(0),
            closing: AtomicBool::new(false),
            polled: AtomicBool::new(false),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let worker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("ctm-device".into())
                .spawn(move || work(&shared))
                .map_err(|e| DeviceError::Worker(e.to_string()))?
        };
        Ok(Connection {
            shared,
            worker: Some(worker),
            info,
            arenas,
            ptrs,
        })
    }

    /// The arenas' GPU bases and sizes.
    pub fn info(&self) -> DeviceInfo {
        self.info
    }

    /// The host address of an arena's first byte (null for an empty
    /// arena), valid until the connection is dropped.
    pub fn arena_ptr(&self, arena: ArenaKind) -> *mut u8 {
        let k = KINDS.iter().position(|&k| k == arena).unwrap_or(0);
        self.ptrs[k] as *mut u8
    }

    /// The device, once the buffer running now (if any) has finished; the
    /// worker waits while it is held, so release it before
    /// [`Connection::wait`] or [`Connection::finish`] on a buffer that has
    /// not run yet (or they wait for ever).
    pub fn device(&self) -> MutexGuard<'_, Device> {
        lock(&self.shared.device)
    }

    /// Queues `size` bytes of commands at GPU address `addr`
    /// (`amSubmitCommandBuffer`) and returns at once. The buffer must lie
    /// inside one arena and be a whole number of dwords; what it contains
    /// is only read when it runs (a malformed buffer is consumed with a
    /// fault).
    pub fn submit(&self, addr: u32, size: u32) -> Result<BufferId, DeviceError> {
        if !size.is_multiple_of(4) {
            return Err(DeviceError::BadSize { size });
        }
        let (a, n) = (u64::from(addr), u64::from(size));
        if !self.arenas.iter().any(|r| r.contains(a, n)) {
            return Err(crate::mc::Unmapped { addr: a, len: n }.into());
        }
        let mut q = lock(&self.shared.queue);
        if q.closing {
            return Err(DeviceError::Closed);
        }
        let id = self.shared.submitted() + 1;
        q.pending.push_back((id, addr, size));
        self.shared.submitted.store(id, Release);
        if q.worker_parked {
            self.shared.work.notify_one();
        }
        Ok(BufferId(id))
    }

    /// Whether buffer `id` has completed (`amCommandBufferConsumed`). An
    /// id this connection never handed out reads as consumed: there is
    /// nothing to wait for (a client that polls the 0 of a failed submit
    /// does not spin for ever).
    pub fn consumed(&self, id: BufferId) -> bool {
        // Without the queue's lock: a client polling in a loop reads two
        // counters and leaves the lock to the worker.
        let done = id.0 == 0 || id.0 <= self.shared.completed() || id.0 > self.shared.submitted();
        if !done {
            // Written once per buffer, not at every poll.
            if !self.shared.polled.load(Relaxed) {
                self.shared.polled.store(true, Relaxed);
            }
            // With one core, a client that polls in a loop would keep the
            // worker from running until its time slice ends.
            if crate::pe::all_cores() == 1 {
                std::thread::yield_now();
            }
        }
        done
    }

    /// Whether `id` was handed out by this connection.
    pub fn knows(&self, id: BufferId) -> bool {
        id.0 != 0 && id.0 <= self.shared.submitted()
    }

    /// Waits for buffer `id` and returns what it did or its fault (each
    /// report is read once; at most [`MAX_UNREAD`] unread ones are kept).
    pub fn wait(&self, id: BufferId) -> Result<BufferReport, DeviceError> {
        self.waited(id).and_then(|(_, report)| report)
    }

    /// Waits for buffer `id` and says whether it ran to its end or its
    /// fault: [`Connection::wait`] for a caller that does not read the
    /// report (the report is read as by `wait`, once).
    pub fn outcome(&self, id: BufferId) -> Result<(), DeviceError> {
        let (mut q, report) = self.waited(id)?;
        report.map(|r| q.spent.push(r))
    }

    /// The report of buffer `id` once it is consumed, taken out of the
    /// queue, with the queue still held.
    #[allow(clippy::type_complexity)]
    fn waited(
        &self,
        id: BufferId,
    ) -> Result<(MutexGuard<'_, Queue>, Result<BufferReport, DeviceError>), DeviceError> {
        let mut q = lock(&self.shared.queue);
        if id.0 == 0 || id.0 > self.shared.submitted() {
            return Err(DeviceError::UnknownBuffer(id.0));
        }
        while self.shared.completed() < id.0 {
            q = self.shared.park(q);
        }
        let report = q.reports.remove(&id.0);
        Ok((q, report.unwrap_or(Err(DeviceError::ReportGone(id.0)))))
    }

    /// Waits until buffer `id` is consumed, leaving its report to
    /// [`Connection::wait`].
    pub fn settle(&self, id: BufferId) {
        let mut q = lock(&self.shared.queue);
        while id.0 <= self.shared.submitted() && self.shared.completed() < id.0 {
            q = self.shared.park(q);
        }
    }

    /// Waits until every buffer submitted so far has completed.
    pub fn finish(&self) {
        let mut q = lock(&self.shared.queue);
        while self.shared.completed() < self.shared.submitted() {
            q = self.shared.park(q);
        }
    }
}

impl Shared {
    fn submitted(&self) -> u32 {
        self.submitted.load(Acquire)
    }

    fn completed(&self) -> u32 {
        self.completed.load(Acquire)
    }

    /// Parks a caller until a buffer completes.
    fn park<'a>(&self, mut q: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        q.waiting += 1;
        let mut q = self.done.wait(q).unwrap_or_else(PoisonError::into_inner);
        q.waiting -= 1;
        q
    }
}

impl Drop for Connection {
    /// Waits for outstanding buffers, then stops the worker.
    fn drop(&mut self) {
        lock(&self.shared.queue).closing = true;
        self.shared.closing.store(true, Release);
        self.shared.work.notify_all();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// The worker: executes queued buffers in order until the connection
/// closes and nothing is left.
fn work(shared: &Shared) {
    let mut taken = 0;
    // How long the last buffer would have taken on one thread, about: its
    // time times the threads it ran on.
    let mut last = Duration::ZERO;
    // With one core, spinning would only keep the client from submitting.
    let linger = if crate::pe::all_cores() > 1 {
        LINGER
    } else {
        Duration::ZERO
    };
    loop {
        // Spin while no buffer is queued, for a while.
        let start = Instant::now();
        crate::pe::spin(
            || shared.submitted() == taken && !shared.closing.load(Acquire),
            || start.elapsed() < linger,
        );
        let (id, addr, size) = {
            let mut q = lock(&shared.queue);
            loop {
                if let Some(next) = q.pending.pop_front() {
                    break next;
                }
                if q.closing {
                    return;
                }
                q.worker_parked = true;
                q = shared.work.wait(q).unwrap_or_else(PoisonError::into_inner);
                q.worker_parked = false;
            }
        };
        taken = id;
        let result = {
            let mut dev = lock(&shared.device);
            // A client that polled since the last buffer started spins on
            // a core of its own: short runs leave it that core, as a worker
            // sharing one with it made each of them wait for the slowest
            // (`docs/dispatch.md`).
            let threads = dev.settings().threads;
            let cores = crate::pe::all_cores();
            let polled = shared.polled.swap(false, Relaxed);
            if polled && cores > 1 && last < SHORT {
                dev.settings_mut().threads = threads.min(cores - 1);
            }
            let used = dev.settings().threads.max(1) as u32;
            let start = Instant::now();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let own = dev.submit(addr, size)?;
                dev.wait(own)
            }))
            .unwrap_or_else(|p| Err(DeviceError::Panicked(crate::interp::panic_message(&*p))));
            last = start.elapsed().saturating_mul(used);
            dev.settings_mut().threads = threads;
            r
        };
        let mut q = lock(&shared.queue);
        q.spent.clear();
        q.reports.insert(id, result);
        while q.reports.len() > MAX_UNREAD {
            q.reports.pop_first();
        }
        shared.completed.store(id, Release);
        if q.waiting > 0 {
            shared.done.notify_all();
        }
    }
}
