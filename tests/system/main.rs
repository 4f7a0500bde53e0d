//! The machine around the DPP (`docs/machine.md`): every command, every CO
//! test at both locations, the format conversions, the 2×2 gather, bounds,
//! the strict caches and malformed command streams; the host API
//! (`host.rs`), the two ways results reach memory (`delivery.rs`) and
//! prepared jobs (`prepared.rs`).
//! The rig below sets up a device; the cases are grouped by unit.

#[path = "../common/mod.rs"]
mod common;

mod co;
mod commands;
mod delivery;
mod gather;
mod host;
mod memory;
mod prepared;
mod random;
mod strict;
mod strips;
mod threads;
mod uncached;

use ctm::abi::Executable;
use ctm::co::{CondLoc, CondTest};
use ctm::device::{Device, DeviceConfig, DeviceError};
use ctm::isa::asm::assemble_source;
use ctm::mc::{ArenaKind, CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer, OPCODES, Op, PeError, StreamFault, decode_stream};
use ctm::runtime::{Domain, RunError};

const SYS: ArenaKind = ArenaKind::SystemCached;

/// out0 = r0 = (i, j, v, 1).
const IDENTITY: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
/// out0 = input 0 at (i, j).
const COPY: &str = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

/// Panics where a run on the JIT (`engine`) left a clause or a run to the
/// interpreter, or ran pixels without compiled code: a JIT that fails to
/// compile gives the interpreter's results, which a comparison of outputs
/// alone would pass.
fn assert_native(engine: ctm::engine::EngineKind, report: &ctm::pe::RunReport, what: &str) {
    if engine == ctm::engine::EngineKind::Jit
        && let Err(e) = common::ran_natively(&report.engine, report.pixels > 0)
    {
        panic!("{what}: {e}");
    }
}

fn exe(src: &str) -> Executable {
    let a = assemble_source(src).unwrap();
    let mut e = Executable::from_code(a.words);
    e.info.set_uncached(a.uncached);
    e
}

/// A device with `mode` caches whose runs use `engine` on `threads`
/// workers, with `src` loaded in the cached system arena: the device and
/// the program's address.
fn device_with(
    src: &str,
    engine: ctm::engine::EngineKind,
    mode: CacheMode,
    threads: usize,
) -> (Device, u32) {
    let mut dev = Device::open(DeviceConfig {
        cache_mode: mode,
        settings: ctm::pe::RunSettings {
            engine,
            threads,
            ..ctm::pe::RunSettings::default()
        },
        ..DeviceConfig::default()
    })
    .unwrap();
    let e = exe(src);
    let prog = dev.alloc(SYS, e.code.len() * 4).unwrap();
    dev.load_program(&e, prog).unwrap();
    (dev, prog)
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// A device with a program loaded and a float32_4 output 0 of `w × h`.
struct Rig {
    dev: Device,
    prog: u32,
    out: u32,
    fmt: SurfaceFormat,
    w: u32,
    h: u32,
}

impl Rig {
    fn new(src: &str, w: u32, h: u32, mode: CacheMode) -> Rig {
        let mut dev = Device::open(DeviceConfig {
            cache_mode: mode,
            ..DeviceConfig::default()
        })
        .unwrap();
        let e = exe(src);
        let prog = dev.alloc(SYS, e.code.len() * 4).unwrap();
        dev.load_program(&e, prog).unwrap();
        let fmt = SurfaceFormat::linear(Format::Float32_4, w);
        let out = dev.alloc(SYS, (fmt.pitch * h * 16) as usize).unwrap();
        Rig {
            dev,
            prog,
            out,
            fmt,
            w,
            h,
        }
    }

    /// The usual prologue: program, output 0, domain.
    fn setup(&self) -> CommandBuffer {
        let mut cb = CommandBuffer::new();
        cb.push(Cmd::SetInstFmt {
            base: self.prog,
            fmt: self.fmt,
        })
        .push(Cmd::SetOutFmt {
            output: 0,
            base: self.out,
            fmt: self.fmt,
            height: self.h,
        })
        .push(Cmd::SetDomain(Domain::new(self.w, self.h)));
        cb
    }

    fn submit(&mut self, cb: &CommandBuffer) -> Result<ctm::pe::BufferReport, DeviceError> {
        let id = self.dev.submit_commands(cb)?;
        assert!(self.dev.consumed(id));
        self.dev.wait(id)
    }

    fn pixel(&self, i: u32, j: u32) -> [f32; 4] {
        let mut b = [0u8; 16];
        self.dev
            .read(self.out + (j * self.fmt.pitch + i) * 16, &mut b)
            .unwrap();
        f32s(&b).try_into().unwrap()
    }
}
