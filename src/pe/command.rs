//! Commands and their packets (`docs/machine.md` §3): one opcode table feeds
//! the decoder, the encoder and the typed builder.
//!
//! Packets are PM4 type 3: header `0xC000_0000 | (params − 1) << 16 |
//! opcode << 8`, then the parameter dwords. Only `set_consti_fmt` (0x0F) and
//! `set_cond_test` (0x1B) have opcodes from the Guide; the others are the
//! provisional (ctm) values of §3.3, all in [`OPCODES`]. Reserved bits are
//! written as 0 and ignored when read. The Radeon type-2 filler word
//! `0x8000_0000` is accepted as a one-dword no-op (ctm, never emitted).

use crate::co::{CondLoc, CondTest};
use crate::mc::{ReservedFormat, SurfaceFormat};
use crate::runtime::Domain;

/// What a command does, without its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Op {
    SetCondVal,
    SetDomain,
    StartProgram,
    InitPerfCounters,
    StartPerfCounters,
    StopPerfCounters,
    ReadPerfCounters,
    SetInstFmt,
    SetConstfFmt,
    SetConstiFmt,
    SetConstbFmt,
    SetInpFmt,
    SetOutFmt,
    SetCondOutFmt,
    InvInstCache,
    InvConstfCache,
    InvConstiCache,
    InvConstbCache,
    InvInpCache,
    FlushOutCache,
    InvCondOutCache,
    FlushCondOutCache,
    SetOutMask,
    SetCondOutMask,
    SetCondTest,
    SetCondLoc,
    SetParams,
}

/// One row of the command table.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The command.
    pub op: Op,
    /// Its name in the Guide's style.
    pub name: &'static str,
    /// The header's opcode byte.
    pub opcode: u8,
    /// Parameter dwords.
    pub params: usize,
}

macro_rules! table {
    ($($op:ident $name:literal $opcode:literal $params:literal;)*) => {
        /// Every command: name, opcode (§3.3), parameter count.
        pub const OPCODES: &[OpInfo] = &[$(OpInfo { op: Op::$op, name: $name, opcode: $opcode, params: $params }),*];
    };
}

table! {
    SetCondVal "set_cond_val" 0x80 1;
    SetDomain "set_domain" 0x81 4;
    StartProgram "start_program" 0x82 1;
    InitPerfCounters "init_perf_counters" 0x83 1;
    StartPerfCounters "start_perf_counters" 0x84 1;
    StopPerfCounters "stop_perf_counters" 0x85 1;
    ReadPerfCounters "read_perf_counters" 0x86 1;
    SetInstFmt "set_inst_fmt" 0x90 2;
    SetConstfFmt "set_constf_fmt" 0x91 2;
    SetConstiFmt "set_consti_fmt" 0x0F 2;
    SetConstbFmt "set_constb_fmt" 0x92 2;
    SetInpFmt "set_inp_fmt" 0x93 4;
    SetOutFmt "set_out_fmt" 0x94 4;
    SetCondOutFmt "set_cond_out_fmt" 0x95 3;
    InvInstCache "inv_inst_cache" 0x98 1;
    InvConstfCache "inv_constf_cache" 0x99 1;
    InvConstiCache "inv_consti_cache" 0x9A 1;
    InvConstbCache "inv_constb_cache" 0x9B 1;
    InvInpCache "inv_inp_cache" 0x9C 1;
    FlushOutCache "flush_out_cache" 0x9D 1;
    InvCondOutCache "inv_cond_out_cache" 0x9E 1;
    FlushCondOutCache "flush_cond_out_cache" 0x9F 1;
    SetOutMask "set_out_mask" 0xA0 1;
    SetCondOutMask "set_cond_out_mask" 0xA1 1;
    SetCondTest "set_cond_test" 0x1B 1;
    SetCondLoc "set_cond_loc" 0xA8 1;
    SetParams "set_params" 0xA9 1;
}

impl Op {
    /// The table row.
    pub fn info(self) -> &'static OpInfo {
        OPCODES
            .iter()
            .find(|i| i.op == self)
            .expect("every op has a row")
    }

    /// The command with opcode byte `opcode`.
    pub fn from_opcode(opcode: u8) -> Option<&'static OpInfo> {
        OPCODES.iter().find(|i| i.opcode == opcode)
    }
}

/// The header word of a packet with `params` parameter dwords.
///
/// ```
/// use ctm::pe::{header, Op};
/// assert_eq!(header(Op::SetConstiFmt), 0xC001_0F00);
/// assert_eq!(header(Op::SetCondTest), 0xC000_1B00);
/// ```
pub fn header(op: Op) -> u32 {
    let i = op.info();
    0xC000_0000 | (((i.params as u32) - 1) << 16) | (u32::from(i.opcode) << 8)
}

/// A base address dword: bits 10:0 ignored (§3.2).
fn base(word: u32) -> u32 {
    word & !0x7FF
}

/// One command with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// The conditional value v (f32 pattern) for dispatched pairs.
    SetCondVal(u32),
    /// The inclusive domain (bits 12:0 of each bound).
    SetDomain(Domain),
    /// Run the program over the domain.
    StartProgram,
    /// Enable the performance counters.
    InitPerfCounters,
    /// Reset both counters to 0 and count.
    StartPerfCounters,
    /// Stop counting.
    StopPerfCounters,
    /// Write [total, active] as two u32 at the base address.
    ReadPerfCounters {
        /// Destination.
        base: u32,
    },
    /// Instruction memory.
    SetInstFmt {
        /// Base address.
        base: u32,
        /// Format dword (stored, not used for addressing).
        fmt: SurfaceFormat,
    },
    /// Float constants (16 bytes each).
    SetConstfFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    },
    /// Integer constants (4 bytes each).
    SetConstiFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    },
    /// Boolean constants (4 bytes each).
    SetConstbFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    },
    /// An input surface.
    SetInpFmt {
        /// Input 0–15.
        input: u8,
        /// Base address.
        base: u32,
        /// Format.
        fmt: SurfaceFormat,
        /// Rows.
        height: u32,
    },
    /// An output surface.
    SetOutFmt {
        /// Output 0–3.
        output: u8,
        /// Base address.
        base: u32,
        /// Format.
        fmt: SurfaceFormat,
        /// Rows.
        height: u32,
    },
    /// The conditional buffer.
    SetCondOutFmt {
        /// Base address.
        base: u32,
        /// Format.
        fmt: SurfaceFormat,
        /// Rows.
        height: u32,
    },
    /// Invalidate the instruction cache.
    InvInstCache,
    /// Invalidate the float-constant cache.
    InvConstfCache,
    /// Invalidate the integer-constant cache.
    InvConstiCache,
    /// Invalidate the boolean-constant cache.
    InvConstbCache,
    /// Invalidate the input cache.
    InvInpCache,
    /// Write pending output writes to memory.
    FlushOutCache,
    /// Invalidate the conditional-buffer cache.
    InvCondOutCache,
    /// Write pending conditional-buffer writes to memory.
    FlushCondOutCache,
    /// Per-channel output write enables (bits 3:0).
    SetOutMask(u8),
    /// Write the conditional value back on a pass.
    SetCondOutMask(bool),
    /// The conditional test.
    SetCondTest(CondTest),
    /// Which client the test applies to.
    SetCondLoc(CondLoc),
    /// Where the interpolation parameters are: three vertices of 32 floats
    /// (docs/machine.md §6.1).
    SetParams {
        /// Base address.
        base: u32,
    },
}

/// A parameter that does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A format dword with a reserved element format.
    #[error(transparent)]
    Format(#[from] ReservedFormat),
}

impl Command {
    /// What the command is.
    pub fn op(&self) -> Op {
        use Command as C;
        match self {
            C::SetCondVal(_) => Op::SetCondVal,
            C::SetDomain(_) => Op::SetDomain,
            C::StartProgram => Op::StartProgram,
            C::InitPerfCounters => Op::InitPerfCounters,
            C::StartPerfCounters => Op::StartPerfCounters,
            C::StopPerfCounters => Op::StopPerfCounters,
            C::ReadPerfCounters { .. } => Op::ReadPerfCounters,
            C::SetInstFmt { .. } => Op::SetInstFmt,
            C::SetConstfFmt { .. } => Op::SetConstfFmt,
            C::SetConstiFmt { .. } => Op::SetConstiFmt,
            C::SetConstbFmt { .. } => Op::SetConstbFmt,
            C::SetInpFmt { .. } => Op::SetInpFmt,
            C::SetOutFmt { .. } => Op::SetOutFmt,
            C::SetCondOutFmt { .. } => Op::SetCondOutFmt,
            C::InvInstCache => Op::InvInstCache,
            C::InvConstfCache => Op::InvConstfCache,
            C::InvConstiCache => Op::InvConstiCache,
            C::InvConstbCache => Op::InvConstbCache,
            C::InvInpCache => Op::InvInpCache,
            C::FlushOutCache => Op::FlushOutCache,
            C::InvCondOutCache => Op::InvCondOutCache,
            C::FlushCondOutCache => Op::FlushCondOutCache,
            C::SetOutMask(_) => Op::SetOutMask,
            C::SetCondOutMask(_) => Op::SetCondOutMask,
            C::SetCondTest(_) => Op::SetCondTest,
            C::SetCondLoc(_) => Op::SetCondLoc,
            C::SetParams { .. } => Op::SetParams,
        }
    }

    /// The packet: header then parameters, reserved bits 0.
    ///
    /// ```
    /// use ctm::co::CondTest;
    /// use ctm::pe::Command;
    /// assert_eq!(Command::SetCondTest(CondTest::Less).encode(), [0xC000_1B00, 1]);
    /// ```
    pub fn encode(&self) -> Vec<u32> {
        use Command as C;
        let m13 = |v: u32| v & 0x1FFF;
        let params = match *self {
            C::SetCondVal(v) => vec![v],
            C::SetDomain(d) => vec![m13(d.i0), m13(d.j0), m13(d.i1), m13(d.j1)],
            C::ReadPerfCounters { base: b } | C::SetParams { base: b } => vec![base(b)],
            C::SetInstFmt { base: b, fmt }
            | C::SetConstfFmt { base: b, fmt }
            | C::SetConstiFmt { base: b, fmt }
            | C::SetConstbFmt { base: b, fmt } => vec![base(b), fmt.encode()],
            C::SetInpFmt {
                input,
                base: b,
                fmt,
                height,
            } => vec![u32::from(input & 15), base(b), fmt.encode(), m13(height)],
            C::SetOutFmt {
                output,
                base: b,
                fmt,
                height,
            } => vec![u32::from(output & 3), base(b), fmt.encode(), m13(height)],
            C::SetCondOutFmt {
                base: b,
                fmt,
                height,
            } => vec![base(b), fmt.encode(), m13(height)],
            C::SetOutMask(m) => vec![u32::from(m & 15)],
            C::SetCondOutMask(w) => vec![u32::from(w)],
            C::SetCondTest(t) => vec![t.code()],
            C::SetCondLoc(l) => vec![l.code()],
            _ => vec![0],
        };
        let mut words = vec![header(self.op())];
        words.extend(params);
        words
    }

    /// Decodes the parameters of `op` (exactly as many as the table says).
    pub fn decode(op: Op, p: &[u32]) -> Result<Command, ParamError> {
        use Command as C;
        let m13 = |v: u32| v & 0x1FFF;
        let fmt = SurfaceFormat::decode;
        Ok(match op {
            Op::SetCondVal => C::SetCondVal(p[0]),
            Op::SetDomain => C::SetDomain(Domain {
                i0: m13(p[0]),
                j0: m13(p[1]),
                i1: m13(p[2]),
                j1: m13(p[3]),
            }),
            Op::StartProgram => C::StartProgram,
            Op::InitPerfCounters => C::InitPerfCounters,
            Op::StartPerfCounters => C::StartPerfCounters,
            Op::StopPerfCounters => C::StopPerfCounters,
            Op::ReadPerfCounters => C::ReadPerfCounters { base: base(p[0]) },
            Op::SetInstFmt => C::SetInstFmt {
                base: base(p[0]),
                fmt: fmt(p[1])?,
            },
            Op::SetConstfFmt => C::SetConstfFmt {
                base: base(p[0]),
                fmt: fmt(p[1])?,
            },
            Op::SetConstiFmt => C::SetConstiFmt {
                base: base(p[0]),
                fmt: fmt(p[1])?,
            },
            Op::SetConstbFmt => C::SetConstbFmt {
                base: base(p[0]),
                fmt: fmt(p[1])?,
            },
            Op::SetInpFmt => C::SetInpFmt {
                input: (p[0] & 15) as u8,
                base: base(p[1]),
                fmt: fmt(p[2])?,
                height: m13(p[3]),
            },
            Op::SetOutFmt => C::SetOutFmt {
                output: (p[0] & 3) as u8,
                base: base(p[1]),
                fmt: fmt(p[2])?,
                height: m13(p[3]),
            },
            Op::SetCondOutFmt => C::SetCondOutFmt {
                base: base(p[0]),
                fmt: fmt(p[1])?,
                height: m13(p[2]),
            },
            Op::InvInstCache => C::InvInstCache,
            Op::InvConstfCache => C::InvConstfCache,
            Op::InvConstiCache => C::InvConstiCache,
            Op::InvConstbCache => C::InvConstbCache,
            Op::InvInpCache => C::InvInpCache,
            Op::FlushOutCache => C::FlushOutCache,
            Op::InvCondOutCache => C::InvCondOutCache,
            Op::FlushCondOutCache => C::FlushCondOutCache,
            Op::SetOutMask => C::SetOutMask((p[0] & 15) as u8),
            Op::SetCondOutMask => C::SetCondOutMask(p[0] & 1 != 0),
            Op::SetCondTest => C::SetCondTest(CondTest::from_code(p[0])),
            Op::SetCondLoc => C::SetCondLoc(CondLoc::from_code(p[0])),
            Op::SetParams => C::SetParams { base: base(p[0]) },
        })
    }
}

/// A command stream that cannot be decoded. Offsets are in bytes from the
/// start of the buffer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamFault {
    /// A header whose type bits are not 3.
    #[error("byte {offset:#x}: header {word:#010x} is not a type-3 packet (bits 31:30 = {})", word >> 30)]
    BadHeader {
        /// Where.
        offset: usize,
        /// The word.
        word: u32,
    },
    /// An opcode not in the table.
    #[error("byte {offset:#x}: unknown command opcode {opcode:#04x} (header {word:#010x})")]
    UnknownOpcode {
        /// Where.
        offset: usize,
        /// The opcode byte.
        opcode: u8,
        /// The header.
        word: u32,
    },
    /// A header whose count disagrees with the command's parameters.
    #[error("byte {offset:#x}: {name} takes {expected} parameter dwords, the header says {got}")]
    WrongCount {
        /// Where.
        offset: usize,
        /// The command.
        name: &'static str,
        /// Parameters the command has.
        expected: usize,
        /// Parameters the header announces.
        got: usize,
    },
    /// A packet running past the end of the buffer.
    #[error(
        "byte {offset:#x}: {name} needs {needed} dwords, only {available} are left in the buffer"
    )]
    PastEnd {
        /// Where.
        offset: usize,
        /// The command.
        name: &'static str,
        /// Dwords of the packet.
        needed: usize,
        /// Dwords left.
        available: usize,
    },
    /// A parameter that does not decode.
    #[error("byte {offset:#x}: {name}: {source}")]
    BadParameter {
        /// Where.
        offset: usize,
        /// The command.
        name: &'static str,
        /// Why.
        source: ParamError,
    },
}

/// Decodes the packet at word `at` of `words`: the command (or `None` for a
/// type-2 filler) and the number of words it spans.
pub fn decode_packet(words: &[u32], at: usize) -> Result<(Option<Command>, usize), StreamFault> {
    let offset = at * 4;
    let word = words[at];
    if word == 0x8000_0000 {
        return Ok((None, 1));
    }
    if word >> 30 != 3 {
        return Err(StreamFault::BadHeader { offset, word });
    }
    let opcode = (word >> 8) as u8;
    let info = Op::from_opcode(opcode).ok_or(StreamFault::UnknownOpcode {
        offset,
        opcode,
        word,
    })?;
    let got = ((word >> 16) & 0x3FFF) as usize + 1;
    if got != info.params {
        return Err(StreamFault::WrongCount {
            offset,
            name: info.name,
            expected: info.params,
            got,
        });
    }
    let available = words.len() - at;
    if 1 + got > available {
        return Err(StreamFault::PastEnd {
            offset,
            name: info.name,
            needed: 1 + got,
            available,
        });
    }
    let cmd = Command::decode(info.op, &words[at + 1..at + 1 + got]).map_err(|source| {
        StreamFault::BadParameter {
            offset,
            name: info.name,
            source,
        }
    })?;
    Ok((Some(cmd), 1 + got))
}

/// Decodes a whole stream (stopping at the first fault).
///
/// ```
/// use ctm::pe::{decode_stream, Command};
/// let words = [Command::StartProgram.encode(), Command::FlushOutCache.encode()].concat();
/// let cmds: Vec<_> = decode_stream(&words).collect::<Result<_, _>>().unwrap();
/// assert_eq!(cmds, [(0, Command::StartProgram), (8, Command::FlushOutCache)]);
/// ```
pub fn decode_stream(
    words: &[u32],
) -> impl Iterator<Item = Result<(usize, Command), StreamFault>> + '_ {
    let mut at = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        while !failed && at < words.len() {
            match decode_packet(words, at) {
                Ok((cmd, n)) => {
                    let offset = at * 4;
                    at += n;
                    if let Some(cmd) = cmd {
                        return Some(Ok((offset, cmd)));
                    }
                }
                Err(e) => {
                    failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    })
}

/// A command buffer under construction: typed commands in, words out.
///
/// ```
/// use ctm::pe::{CommandBuffer, Command};
/// use ctm::runtime::Domain;
/// let mut cb = CommandBuffer::new();
/// cb.push(Command::SetDomain(Domain::new(64, 64))).push(Command::StartProgram);
/// assert_eq!(cb.words().len(), 5 + 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandBuffer {
    words: Vec<u32>,
}

impl CommandBuffer {
    /// An empty buffer.
    pub fn new() -> CommandBuffer {
        CommandBuffer::default()
    }

    /// Appends a command.
    pub fn push(&mut self, cmd: Command) -> &mut CommandBuffer {
        self.words.extend(cmd.encode());
        self
    }

    /// The words.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The bytes, little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
