//! `amDeviceManaged.h` and the device half of `ctm.h` (`docs/c-api.md` §2,
//! §3): a managed device is a [`Connection`] behind an opaque handle (a
//! number never reused), with the outcomes of its buffers kept for
//! `ctmGetBufferStatus`.

use crate::{c_str, guard};
use ctm_rs::device::{BufferId, DeviceConfig, DeviceError};
use ctm_rs::engine::EngineKind;
use ctm_rs::host::Connection;
use ctm_rs::mc::{ArenaKind, CacheMode};
use std::collections::{BTreeMap, VecDeque};
use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The C `AMmanagedDeviceInfo` (`amDeviceManaged.h`): twelve members, the
/// nine the SDK's clients use first in the order ctm chose.
#[repr(C)]
pub struct AMmanagedDeviceInfo {
    base_address_gpu: c_uint,
    arena_size_gpu: c_uint,
    base_address_gpu_b: c_uint,
    arena_size_gpu_b: c_uint,
    base_address_sys: c_uint,
    arena_size_sys: c_uint,
    base_address_sys_c: c_uint,
    arena_size_sys_c: c_uint,
    base_address_cpu: *mut c_void,
    base_address_cpu_c: *mut c_void,
    base_address_cpu_gpu: *mut c_void,
    base_address_cpu_gpu_b: *mut c_void,
}

/// What an `AMmanagedDevice` names (its handle is a key of `DEVICES`,
/// never a pointer to this).
pub struct ManagedDevice {
    conn: Connection,
    /// Outcomes read out of the connection.
    outcomes: Mutex<Outcomes>,
}

/// Outcomes kept per device (the oldest go first).
const MAX_OUTCOMES: usize = 4096;

/// The outcomes of a device's buffers read out of its connection, by id
/// in id order: `None` done, `Some` the fault. At most [`MAX_OUTCOMES`],
/// the lowest ids dropped first, in memory allocated once: a map's nodes
/// were allocated and freed as buffers came and went (34 allocations per
/// 200 round trips of the interface's bench).
struct Outcomes(VecDeque<(u32, Option<CString>)>);

impl Outcomes {
    fn new() -> Outcomes {
        Outcomes(VecDeque::with_capacity(MAX_OUTCOMES + 1))
    }

    fn get(&self, id: u32) -> Option<&Option<CString>> {
        let k = self.0.binary_search_by_key(&id, |o| o.0).ok()?;
        Some(&self.0[k].1)
    }

    /// Keeps the outcome `make` gives for `id` unless one is kept (a
    /// client may read its buffers out of order), dropping the lowest ids
    /// beyond [`MAX_OUTCOMES`]; `Err`: `make`'s, nothing kept.
    fn keep<E>(
        &mut self,
        id: u32,
        make: impl FnOnce() -> Result<Option<CString>, E>,
    ) -> Result<(), E> {
        if let Err(at) = self.0.binary_search_by_key(&id, |o| o.0) {
            self.0.insert(at, (id, make()?));
            while self.0.len() > MAX_OUTCOMES {
                self.0.pop_front();
            }
        }
        Ok(())
    }
}

/// Buffer states of `ctmGetBufferStatus` (`ctm.h`).
const DONE: c_int = 0;
const FAULTED: c_int = 1;
const PENDING: c_int = 2;
const UNKNOWN: c_int = 3;
const FORGOTTEN: c_int = 4;

/// The settings of a new connection from the environment (`docs/c-api.md`
/// §4): `CTM_ENGINE`, `CTM_THREADS`, `CTM_BUDGET`, `CTM_CACHES`, and the
/// arena sizes in MiB `CTM_ARENA_GPU`, `CTM_ARENA_GPUB`, `CTM_ARENA_SYS`,
/// `CTM_ARENA_SYSC`.
fn config_from_env() -> Result<DeviceConfig, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let number = |name: &str, max: u64| -> Result<Option<u64>, String> {
        var(name)
            .map(|v| match v.trim().parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(format!(
                    "{name}={v}: expected a whole number from 1 to {max}"
                )),
            })
            .transpose()
    };
    let mut config = DeviceConfig::default();
    for (k, name) in [
        "CTM_ARENA_GPU",
        "CTM_ARENA_GPUB",
        "CTM_ARENA_SYS",
        "CTM_ARENA_SYSC",
    ]
    .iter()
    .enumerate()
    {
        if let Some(mib) = number(name, 512)? {
            config.arena_sizes[k] = (mib << 20) as u32;
        }
    }
    // Unless set, the uncached system arena is as large as the cached one:
    // clients that use the larger one and take CPU pointers relative to the
    // uncached base then land on the right bytes (docs/c-api.md §3).
    if var("CTM_ARENA_SYS").is_none() {
        config.arena_sizes[2] = config.arena_sizes[3];
    }
    if let Some(name) = var("CTM_ENGINE") {
        config.settings.engine = engine(&name)?;
    }
    if let Some(n) = number("CTM_THREADS", 4096)? {
        config.settings.threads = n as usize;
    }
    if let Some(n) = number("CTM_BUDGET", u64::MAX)? {
        config.settings.options.budget = n;
    }
    if let Some(mode) = var("CTM_CACHES") {
        config.cache_mode = match mode.trim() {
            "coherent" => CacheMode::Coherent,
            "strict" => CacheMode::Strict,
            other => return Err(format!("CTM_CACHES={other}: expected coherent or strict")),
        };
    }
    Ok(config)
}

fn engine(name: &str) -> Result<EngineKind, String> {
    let kind = match name.trim() {
        "auto" | "best" => EngineKind::best(),
        other => EngineKind::parse(other)
            .ok_or_else(|| format!("engine `{other}`: expected auto, jit or interp"))?,
    };
    kind.check().map_err(|e| e.to_string())?;
    Ok(kind)
}

/// Whether `name` names a board: `/dev/pcie` and a number (`docs/c-api.md`
/// §2). Every open is a board of its own.
fn is_board(name: &str) -> bool {
    name.strip_prefix("/dev/pcie")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Open devices by handle. A handle is a number that is never reused, so a
/// closed or made-up handle is an error, never a dangling pointer.
static DEVICES: Mutex<BTreeMap<usize, Arc<ManagedDevice>>> = Mutex::new(BTreeMap::new());
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(1);

/// The device behind a handle, or an error.
fn device(dev: *mut ManagedDevice) -> Result<Arc<ManagedDevice>, String> {
    if dev.is_null() {
        return Err("the device is NULL".into());
    }
    let devices = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
    devices.get(&(dev as usize)).cloned().ok_or_else(|| {
        format!(
            "device handle {:#x} is not open (closed already, or never returned by amOpenManagedConnection)",
            dev as usize
        )
    })
}

/// `amOpenManagedConnection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amOpenManagedConnection(
    name: *const c_char,
    info: *mut AMmanagedDeviceInfo,
) -> *mut ManagedDevice {
    guard(std::ptr::null_mut(), || {
        // SAFETY: a C string from the caller.
        let name = unsafe { c_str(name, "the device name") }?;
        if !is_board(name) {
            return Err(format!(
                "no board `{name}`: ctm emulates boards named /dev/pcie0, /dev/pcie1, …"
            ));
        }
        if info.is_null() {
            return Err("the device info pointer is NULL".into());
        }
        let conn = Connection::open(config_from_env()?).map_err(|e| e.to_string())?;
        let i = conn.info();
        let ptr = |k| conn.arena_ptr(k).cast::<c_void>();
        let out = AMmanagedDeviceInfo {
            base_address_gpu: i.base_address_gpu,
            arena_size_gpu: i.arena_size_gpu,
            base_address_gpu_b: i.base_address_gpu_b,
            arena_size_gpu_b: i.arena_size_gpu_b,
            base_address_sys: i.base_address_sys,
            arena_size_sys: i.arena_size_sys,
            base_address_sys_c: i.base_address_sys_c,
            arena_size_sys_c: i.arena_size_sys_c,
            base_address_cpu: ptr(ArenaKind::System),
            base_address_cpu_c: ptr(ArenaKind::SystemCached),
            base_address_cpu_gpu: ptr(ArenaKind::Local),
            base_address_cpu_gpu_b: ptr(ArenaKind::LocalB),
        };
        // SAFETY: checked non-null; the caller's struct of this layout.
        unsafe { info.write(out) };
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        let d = Arc::new(ManagedDevice {
            conn,
            outcomes: Mutex::new(Outcomes::new()),
        });
        DEVICES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle, d);
        Ok(handle as *mut ManagedDevice)
    })
}

/// `amCloseManagedConnection`: waits for outstanding buffers, then frees the
/// device and its arenas. 1 on success, 0 for a NULL device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amCloseManagedConnection(dev: *mut ManagedDevice) -> c_uint {
    guard(0, || {
        device(dev)?;
        let d = DEVICES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(dev as usize));
        // The connection closes (waiting for its buffers) when the last
        // call still using it returns.
        drop(d);
        Ok(1)
    })
}

/// `amSubmitCommandBuffer`: the buffer's id (1, 2, …), or 0 when it was
/// not queued (the reason through `ctmGetLastError`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amSubmitCommandBuffer(
    dev: *mut ManagedDevice,
    addr: c_uint,
    size: c_uint,
) -> c_uint {
    guard(0, || {
        let d = device(dev)?;
        d.conn
            .submit(addr, size)
            .map(|id| id.0)
            .map_err(|e| format!("amSubmitCommandBuffer({addr:#010x}, {size}): {e}"))
    })
}

/// `amCommandBufferConsumed`: non-zero once buffer `id` has completed (or
/// faulted); an id never handed out reads as consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn amCommandBufferConsumed(dev: *mut ManagedDevice, id: c_uint) -> c_uint {
    guard(1, || {
        let d = device(dev)?;
        Ok(c_uint::from(d.conn.consumed(BufferId(id))))
    })
}

impl ManagedDevice {
    /// The state of buffer `id`, reading its outcome out of the connection
    /// once it is consumed.
    fn status(&self, id: u32) -> c_int {
        let b = BufferId(id);
        if !self.conn.knows(b) {
            return UNKNOWN;
        }
        if !self.conn.consumed(b) {
            return PENDING;
        }
        let mut outcomes = self.outcomes.lock().unwrap_or_else(|e| e.into_inner());
        let kept = outcomes.keep(id, || match self.conn.outcome(b) {
            Ok(_) => Ok(None),
            Err(DeviceError::ReportGone(_)) => Err(FORGOTTEN),
            Err(e) => Ok(Some(
                CString::new(e.to_string().replace('\0', " ")).unwrap_or_default(),
            )),
        });
        if let Err(state) = kept {
            return state;
        }
        match outcomes.get(id) {
            Some(None) => DONE,
            Some(Some(_)) => FAULTED,
            None => FORGOTTEN,
        }
    }
}

/// `ctmGetBufferStatus`: CTM_BUFFER_DONE, _FAULTED, _PENDING, _UNKNOWN or
/// _FORGOTTEN; -1 for a NULL device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmGetBufferStatus(dev: *mut ManagedDevice, id: c_uint) -> c_int {
    guard(-1, || Ok(device(dev)?.status(id)))
}

/// `ctmGetBufferFault`: the fault of a consumed buffer, or NULL (done,
/// pending, unknown). Valid until the device is closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmGetBufferFault(dev: *mut ManagedDevice, id: c_uint) -> *const c_char {
    guard(std::ptr::null(), || {
        let d = device(dev)?;
        if d.status(id) != FAULTED {
            return Ok(std::ptr::null());
        }
        let outcomes = d.outcomes.lock().unwrap_or_else(|e| e.into_inner());
        // The string's heap buffer does not move while it is kept.
        Ok(outcomes
            .get(id)
            .and_then(|o| o.as_ref())
            .map_or(std::ptr::null(), |s| s.as_ptr()))
    })
}

/// `ctmWaitBuffer`: blocks until buffer `id` is consumed; 1 when it
/// completed, 0 when it faulted or is unknown (the reason through
/// `ctmGetLastError`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmWaitBuffer(dev: *mut ManagedDevice, id: c_uint) -> c_uint {
    guard(0, || {
        let d = device(dev)?;
        if !d.conn.knows(BufferId(id)) {
            return Err(format!("no command buffer has id {id}"));
        }
        d.conn.settle(BufferId(id));
        match d.status(id) {
            DONE => Ok(1),
            FAULTED => {
                let outcomes = d.outcomes.lock().unwrap_or_else(|e| e.into_inner());
                let text = outcomes.get(id).and_then(|o| o.as_ref());
                Err(text.map_or_else(String::new, |t| t.to_string_lossy().into_owned()))
            }
            _ => Err(format!(
                "the outcome of command buffer {id} is no longer kept (at most {MAX_OUTCOMES})"
            )),
        }
    })
}

/// `ctmFinish`: blocks until every buffer submitted so far is consumed.
/// 1, or 0 for a NULL device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmFinish(dev: *mut ManagedDevice) -> c_uint {
    guard(0, || {
        device(dev)?.conn.finish();
        Ok(1)
    })
}

/// `ctmSetEngine`: "auto", "jit" or "interp" for later buffers. 1, or 0
/// with the reason.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmSetEngine(dev: *mut ManagedDevice, name: *const c_char) -> c_uint {
    guard(0, || {
        let d = device(dev)?;
        // SAFETY: the caller's string.
        let name = unsafe { c_str(name, "the engine name") }?;
        let kind = engine(name)?;
        d.conn
            .device()
            .set_engine(kind)
            .map_err(|e| e.to_string())?;
        Ok(1)
    })
}

/// `ctmGetEngine`: "jit" or "interp".
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmGetEngine(dev: *mut ManagedDevice) -> *const c_char {
    guard(std::ptr::null(), || {
        let d = device(dev)?;
        Ok(match d.conn.device().settings().engine {
            EngineKind::Jit => c"jit".as_ptr(),
            EngineKind::Interp => c"interp".as_ptr(),
        })
    })
}

/// `ctmSetThreads`: worker threads of later runs (0: all cores). 1, or 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmSetThreads(dev: *mut ManagedDevice, threads: c_uint) -> c_uint {
    guard(0, || {
        let d = device(dev)?;
        d.conn.device().settings_mut().threads = match threads {
            0 => ctm_rs::pe::all_cores(),
            n => n as usize,
        };
        Ok(1)
    })
}

/// `ctmSetBudget`: instructions each group of quads may execute per run
/// (0: the default). 1, or 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctmSetBudget(dev: *mut ManagedDevice, budget: c_uint) -> c_uint {
    guard(0, || {
        let d = device(dev)?;
        d.conn.device().settings_mut().options.budget = match budget {
            0 => ctm_rs::runtime::RunOptions::default().budget,
            n => u64::from(n),
        };
        Ok(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_kept_by_id_in_order_and_the_lowest_go_first() {
        let mut o = Outcomes::new();
        let fault = || Ok::<_, ()>(Some(CString::new("bad").unwrap()));
        o.keep(5, || Ok::<_, ()>(None)).unwrap();
        o.keep(3, fault).unwrap();
        o.keep(4, || Err(())).unwrap_err();
        assert!(o.get(4).is_none(), "an error keeps nothing");
        o.keep(5, || -> Result<_, ()> { panic!("kept once") })
            .unwrap();
        assert_eq!(o.get(5), Some(&None));
        assert_eq!(
            o.get(3).and_then(|f| f.as_deref()).map(|s| s.to_bytes()),
            Some(&b"bad"[..])
        );
        let room = o.0.capacity();
        for id in 6..6 + MAX_OUTCOMES as u32 {
            o.keep(id, || Ok::<_, ()>(None)).unwrap();
        }
        assert_eq!(o.0.len(), MAX_OUTCOMES);
        assert!(
            o.get(3).is_none() && o.get(5).is_none(),
            "the lowest went first"
        );
        assert_eq!(o.get(6), Some(&None));
        let ids: Vec<u32> = o.0.iter().map(|e| e.0).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(o.0.capacity(), room, "allocated once");
    }
}
