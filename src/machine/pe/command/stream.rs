//! Command streams: packets decoded one after another, with faults that
//! name their byte offset, and the typed builder (`docs/machine.md` §3.1).

use super::{Command, Op, ParamError};

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
