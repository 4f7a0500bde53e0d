//! Host-visible arenas, executable images at the instruction base and
//! asynchronous connections (`docs/dispatch.md`, `docs/abi.md` §10,
//! `docs/machine.md` §9) and the host API's errors.

use ctm::abi::{Executable, write};
use ctm::device::{BufferId, DeviceConfig, DeviceError};
use ctm::host::Connection;
use ctm::isa::asm::assemble;
use ctm::mc::{ArenaKind, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;

const SYSC: ArenaKind = ArenaKind::SystemCached;
/// out0 = r0 = (i, j, v, 1).
const IDENTITY: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
const PROG: usize = 0x800;
const OUT: usize = 0x10_0000;

fn image(src: &str) -> Vec<u8> {
    write(&Executable::from_code(assemble(src).unwrap()))
}

/// out0 = (i·k, j·k, v·k, 1) for a constant k in the program.
fn scaled(k: f32) -> Vec<u8> {
    image(&format!(
        "out rtA.rgb = mad(s0, s1, s2) | rtA.a = max.off(s0, s0) src0=r0 src1={k:?} src2=0.0 wait last"
    ))
}

/// A buffer at the arena's base running the image at +PROG over w × h into
/// a float32_4 output at +OUT.
fn commands(base: u32, w: u32, h: u32) -> Vec<u8> {
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: base + PROG as u32,
        fmt: SurfaceFormat::linear(Format::Float32_1, 0),
    })
    .push(Cmd::InvInstCache)
    .push(Cmd::SetOutFmt {
        output: 0,
        base: base + OUT as u32,
        fmt: SurfaceFormat::linear(Format::Float32_4, w),
        height: h,
    })
    .push(Cmd::SetDomain(Domain::new(w, h)))
    .push(Cmd::StartProgram)
    .push(Cmd::FlushOutCache);
    cb.to_bytes()
}

fn put(conn: &Connection, at: usize, bytes: &[u8]) {
    conn.device().arena_mut(SYSC)[at..at + bytes.len()].copy_from_slice(bytes);
}

/// A fresh connection with a `w` × `h` run of `scaled(k)` in place: the
/// connection, the command buffer's address and its length in bytes.
fn loaded(w: u32, h: u32, k: f32) -> (Connection, u32, u32) {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let cmds = commands(base, w, h);
    put(&conn, 0, &cmds);
    put(&conn, PROG, &scaled(k));
    (conn, base, cmds.len() as u32)
}

fn pixel(conn: &Connection, w: u32, i: u32, j: u32) -> [f32; 4] {
    let dev = conn.device();
    let at = OUT + ((j * w + i) * 16) as usize;
    std::array::from_fn(|c| {
        let b = &dev.arena(SYSC)[at + 4 * c..at + 4 * c + 4];
        f32::from_le_bytes(b.try_into().unwrap())
    })
}

#[test]
fn what_the_host_writes_in_place_is_what_runs_and_results_appear_in_place() {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let cmds = commands(base, 8, 4);
    // Through the raw pointer, as a C client writes.
    let p = conn.arena_ptr(SYSC);
    let prog = scaled(2.0);
    // SAFETY: the arena is at least 1 MiB + the output; nothing is in flight.
    unsafe {
        std::ptr::copy_nonoverlapping(cmds.as_ptr(), p, cmds.len());
        std::ptr::copy_nonoverlapping(prog.as_ptr(), p.add(PROG), prog.len());
    }
    let id = conn.submit(base, cmds.len() as u32).unwrap();
    conn.wait(id).unwrap();
    assert!(conn.consumed(id));
    assert_eq!(pixel(&conn, 8, 3, 2), [6.0, 4.0, 0.0, 1.0]);
    // SAFETY: the buffer is consumed; reading the result through the pointer.
    let x = unsafe { std::ptr::read_unaligned(p.add(OUT + (2 * 8 + 3) * 16).cast::<f32>()) };
    assert_eq!(x, 6.0);
}

#[test]
fn a_new_image_at_the_same_base_is_built_anew() {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let cmds = commands(base, 4, 2);
    put(&conn, 0, &cmds);
    for k in [2.0f32, 3.0, 2.0, 5.0] {
        put(&conn, PROG, &scaled(k));
        let id = conn.submit(base, cmds.len() as u32).unwrap();
        conn.wait(id).unwrap();
        assert_eq!(pixel(&conn, 4, 3, 1), [3.0 * k, k, 0.0, 1.0], "k = {k}");
    }
}

#[test]
fn a_broken_image_or_no_program_is_a_fault_naming_the_base() {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let cmds = commands(base, 4, 2);
    put(&conn, 0, &cmds);
    // Nothing at the base.
    let id = conn.submit(base, cmds.len() as u32).unwrap();
    let e = conn.wait(id).unwrap_err().to_string();
    assert!(e.contains("no program at 0x70000800"), "{e}");
    // A good image, then the same one with one byte of its header broken
    // (the last image read is found again by its bytes, all of them).
    put(&conn, PROG, &scaled(1.0));
    let id = conn.submit(base, cmds.len() as u32).unwrap();
    conn.wait(id).unwrap();
    // An ELF header whose machine is wrong.
    let mut bad = scaled(1.0);
    bad[18] = 3;
    put(&conn, PROG, &bad);
    let id = conn.submit(base, cmds.len() as u32).unwrap();
    let e = conn.wait(id).unwrap_err().to_string();
    assert!(
        e.contains("executable image at 0x70000800") && e.contains("e_machine"),
        "{e}"
    );
    // Tables that claim to run far past the arena.
    let mut far = scaled(1.0);
    far[0x20..0x24].copy_from_slice(&0x7FFF_0000u32.to_le_bytes());
    put(&conn, PROG, &far);
    let id = conn.submit(base, cmds.len() as u32).unwrap();
    let e = conn.wait(id).unwrap_err().to_string();
    assert!(e.contains("executable image at 0x70000800"), "{e}");
}

#[test]
fn buffers_run_in_order_after_submit_returns_and_faults_are_kept() {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let (w, h) = (64u32, 64u32);
    let cmds = commands(base, w, h);
    put(&conn, 0, &cmds);
    put(&conn, PROG, &scaled(1.0));
    // A second buffer that faults: a packet with an unknown opcode.
    let fault_at = 0x8_0000;
    put(&conn, fault_at, &0xC000_7700u32.to_le_bytes());
    put(&conn, fault_at + 4, &0u32.to_le_bytes());
    let ids: Vec<BufferId> = (0..20)
        .map(|k| {
            if k == 7 {
                conn.submit(base + fault_at as u32, 8).unwrap()
            } else {
                conn.submit(base, cmds.len() as u32).unwrap()
            }
        })
        .collect();
    assert_eq!(ids[0], BufferId(1));
    assert!(ids.windows(2).all(|p| p[1].0 == p[0].0 + 1));
    conn.finish();
    assert!(ids.iter().all(|&id| conn.consumed(id)));
    // Reports read whole, or only whether the buffer ran to its end (the
    // even ones), once each either way.
    for (k, &id) in ids.iter().enumerate() {
        if k % 2 == 0 {
            assert!(conn.outcome(id).is_ok(), "{k}");
            continue;
        }
        let r = conn.wait(id);
        if k == 7 {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("byte 0x0"), "{e}");
        } else {
            assert_eq!(r.unwrap().runs.len(), 1);
        }
    }
    assert!(matches!(conn.wait(ids[3]), Err(DeviceError::ReportGone(4))));
    assert!(matches!(conn.wait(ids[4]), Err(DeviceError::ReportGone(5))));
    assert!(matches!(
        conn.outcome(ids[4]),
        Err(DeviceError::ReportGone(5))
    ));
    // A fault read as an outcome.
    let again = conn.submit(base + fault_at as u32, 8).unwrap();
    let e = conn.outcome(again).unwrap_err().to_string();
    assert!(e.contains("byte 0x0"), "{e}");
    assert!(matches!(
        conn.outcome(BufferId(99)),
        Err(DeviceError::UnknownBuffer(99))
    ));
    assert_eq!(pixel(&conn, w, 63, 63), [63.0, 63.0, 0.0, 1.0]);
}

#[test]
fn submits_are_checked_and_unknown_ids_read_as_consumed() {
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    assert!(matches!(
        conn.submit(base, 6),
        Err(DeviceError::BadSize { size: 6 })
    ));
    assert!(matches!(
        conn.submit(0x0800_0000, 16),
        Err(DeviceError::Unmapped(_))
    ));
    let end = base + conn.info().arena_size_sys_c;
    assert!(conn.submit(end - 8, 16).is_err());
    assert!(conn.consumed(BufferId(0)));
    assert!(conn.consumed(BufferId(99)));
    assert!(!conn.knows(BufferId(99)));
    assert!(matches!(
        conn.wait(BufferId(99)),
        Err(DeviceError::UnknownBuffer(99))
    ));
}

#[test]
fn connections_in_threads_are_independent_and_close_with_buffers_queued() {
    let results: Vec<[f32; 4]> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=3)
            .map(|k| {
                s.spawn(move || {
                    let (conn, base, len) = loaded(32, 32, k as f32);
                    for _ in 0..5 {
                        conn.submit(base, len).unwrap();
                    }
                    conn.finish();
                    pixel(&conn, 32, 31, 30)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (k, px) in results.iter().enumerate() {
        let k = (k + 1) as f32;
        assert_eq!(*px, [31.0 * k, 30.0 * k, 0.0, 1.0]);
    }
    // A drop with buffers still queued runs them and stops the worker.
    let (conn, base, len) = loaded(256, 256, 1.0);
    let mut last = BufferId(0);
    for _ in 0..4 {
        last = conn.submit(base, len).unwrap();
    }
    assert!(conn.knows(last));
    drop(conn);
}

#[test]
fn a_worker_parked_between_buffers_wakes_for_the_next_and_every_end_is_seen() {
    use std::time::{Duration, Instant};
    let (conn, base, len) = loaded(16, 16, 2.0);
    let polled = |id: BufferId| {
        let start = Instant::now();
        while !conn.consumed(id) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{id:?} never consumed"
            );
            std::hint::spin_loop();
        }
    };
    for k in 0..3 {
        if k > 0 {
            // Longer than the worker waits awake for the next buffer.
            std::thread::sleep(Duration::from_millis(20));
        }
        let id = conn.submit(base, len).unwrap();
        polled(id);
        assert_eq!(conn.wait(id).unwrap().runs.len(), 1);
    }
    // Callers parked in `wait` and `finish` on other threads wake as the
    // buffers they wait for end, while this one submits and polls.
    std::thread::scope(|s| {
        let conn = &conn;
        // The worker cannot run the buffer while the device is held, so
        // both callers park before it ends.
        let held = conn.device();
        let first = conn.submit(base, len).unwrap();
        let waiter = s.spawn(move || conn.wait(first).map(|r| r.runs.len()));
        let finisher = s.spawn(move || conn.finish());
        std::thread::sleep(Duration::from_millis(20));
        drop(held);
        for _ in 0..10 {
            polled(conn.submit(base, len).unwrap());
        }
        assert_eq!(waiter.join().unwrap().unwrap(), 1);
        finisher.join().unwrap();
    });
    assert_eq!(pixel(&conn, 16, 15, 14), [30.0, 28.0, 0.0, 1.0]);
}

#[test]
fn a_polling_client_keeps_a_core_for_itself_during_short_runs() {
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;
    use std::time::Duration;
    let (conn, base, len) = loaded(16, 16, 2.0);
    let poll = |id: BufferId| while !conn.consumed(id) {};
    // The interpreter: nothing compiles, so buffers are short (but the
    // first, which builds the program).
    conn.device().settings_mut().engine = ctm::engine::EngineKind::Interp;
    conn.device().settings_mut().threads = 2;
    poll(conn.submit(base, len).unwrap());
    // A recorded run: the threads that ran its rows, each row 2 ms long.
    let ran: Arc<Mutex<HashSet<ThreadId>>> = Arc::default();
    let record = ran.clone();
    let progress: ctm::pe::Progress = Arc::new(move |_, _| {
        record.lock().unwrap().insert(std::thread::current().id());
        std::thread::sleep(Duration::from_millis(2));
    });
    let recorded = |polled: bool| {
        conn.device().settings_mut().progress = Some(progress.clone());
        let id = conn.submit(base, len).unwrap();
        if polled {
            poll(id);
        }
        conn.wait(id).unwrap();
        conn.device().settings_mut().progress = None;
        std::mem::take(&mut *ran.lock().unwrap()).len()
    };
    // After a short buffer the client polled, one thread where there is a
    // core to leave it (a loaded machine may stretch a short buffer past
    // the limit: a few tries).
    if ctm::pe::all_cores() > 1 {
        let alone = (0..20).any(|_| {
            poll(conn.submit(base, len).unwrap());
            recorded(true) == 1
        });
        assert!(alone, "every run took both threads beside a polling client");
    }
    // After a long one (16 ms of rows), both threads again: each takes a
    // block of four rows, 8 ms, before it takes the other's.
    recorded(true);
    assert_eq!(recorded(false), 2);
    // Without a poll, both; the settings are as they were.
    assert_eq!(recorded(false), 2);
    assert_eq!(conn.device().settings().threads, 2);
    assert_eq!(pixel(&conn, 16, 15, 14), [30.0, 28.0, 0.0, 1.0]);
}

#[test]
fn interpolants_need_parameters_that_span_an_area() {
    // oC0 = v0: the ctm dialect's interpolant.
    let shader = ctm::d3d9::assemble("ps_3_0\ndcl_texcoord0 v0\nmov oC0, v0\n").unwrap();
    let exe = ctm::d3d9::compile_dialect(&shader, ctm::d3d9::Dialect::Ctm)
        .unwrap()
        .exe;
    let conn = Connection::open(DeviceConfig::default()).unwrap();
    let base = conn.info().base_address_sys_c;
    let params_at = 0x8_0000usize;
    // The commands, after a set_params when asked (state lasts across
    // buffers: the run without parameters comes first).
    let run = |with_params: bool| {
        let mut cb = CommandBuffer::new();
        if with_params {
            cb.push(Cmd::SetParams {
                base: base + params_at as u32,
            });
        }
        let mut words = cb.to_bytes();
        words.extend(commands(base, 4, 2));
        put(&conn, 0, &words);
        conn.wait(conn.submit(base, words.len() as u32).unwrap())
    };
    put(&conn, PROG, &write(&exe));
    let e = run(false).unwrap_err().to_string();
    assert!(e.contains("no set_params"), "{e}");
    let identity: Vec<u8> = ctm::pe::params::identity()
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    put(&conn, params_at, &identity);
    run(true).unwrap();
    assert_eq!(pixel(&conn, 4, 3, 1), [3.5, 1.5, 0.0, 1.0]);
    // All three vertices on one line.
    let mut flat = identity.clone();
    flat[32 * 4 * 2 + 4..32 * 4 * 2 + 8].copy_from_slice(&0f32.to_le_bytes());
    flat[32 * 4 * 2..32 * 4 * 2 + 4].copy_from_slice(&2f32.to_le_bytes());
    put(&conn, params_at, &flat);
    let e = run(true).unwrap_err().to_string();
    assert!(e.contains("span no area"), "{e}");
}

#[test]
fn host_api_errors() {
    let mut dev = ctm::device::Device::open(DeviceConfig::default()).unwrap();
    let info = dev.info();
    assert_eq!(info.base_address_sys_c % 2048, 0);
    assert!(info.arena_size_gpu > 0 && info.arena_size_sys > 0);
    let a = dev.alloc(ArenaKind::System, 10).unwrap();
    let b = dev.alloc(ArenaKind::System, 10).unwrap();
    assert_eq!((a % 2048, b - a), (0, 2048));
    assert!(matches!(
        dev.alloc(ArenaKind::System, 1 << 30),
        Err(DeviceError::OutOfMemory { .. })
    ));
    assert!(matches!(
        dev.write(0x10, &[1]),
        Err(DeviceError::Unmapped(_))
    ));
    assert!(matches!(
        dev.submit(a, 6),
        Err(DeviceError::BadSize { size: 6 })
    ));
    assert!(!dev.consumed(BufferId(7)));
    assert!(matches!(
        dev.wait(BufferId(7)),
        Err(DeviceError::UnknownBuffer(7))
    ));
    assert!(matches!(
        dev.load_program(&Executable::from_code(assemble(IDENTITY).unwrap()), a + 4),
        Err(DeviceError::Misaligned { .. })
    ));
    assert_eq!(
        dev.set_engine(ctm::engine::EngineKind::Jit).is_ok(),
        ctm_jit::host::check_features().is_ok(),
    );
}
