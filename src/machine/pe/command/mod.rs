//! Commands and their packets (`docs/machine.md` §3): one table declares
//! every command, and the enum, the decoder, the encoder, the text form
//! and the docs' table come from it.
//!
//! Packets are PM4 type 3: header `0xC000_0000 | (params − 1) << 16 |
//! opcode << 8`, then the parameter dwords. Only `set_consti_fmt` (0x0F) and
//! `set_cond_test` (0x1B) have opcodes from the Guide; the others are the
//! provisional (ctm) values of §3.3, all in [`OPCODES`]. Reserved bits are
//! written as 0 and ignored when read. The Radeon type-2 filler word
//! `0x8000_0000` is accepted as a one-dword no-op (ctm, never emitted).

mod codec;
mod stream;

use crate::co::{CondLoc, CondTest};
use crate::mc::{ReservedFormat, SurfaceFormat};
use crate::runtime::Domain;
pub use codec::ParamKind;
use codec::{Base, Bits13, Bounds, Codec, F32Bits, Field, Flag, Fmt, Loc, Test};
pub use stream::{CommandBuffer, StreamFault, decode_packet, decode_stream};

/// One parameter of a command: what the docs and listings call it, and
/// its dwords' kinds.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// Its name in listings and the docs' table.
    pub name: &'static str,
    /// Its dwords.
    pub kinds: &'static [ParamKind],
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
    /// Parameter dwords (a command without parameters has one, reserved).
    pub params: usize,
    /// Its parameters (none: one reserved dword).
    pub fields: &'static [ParamInfo],
}

/// Dwords of parameters with these kinds: at least one.
const fn dwords(kinds: &[&[ParamKind]]) -> usize {
    let mut n = 0;
    let mut k = 0;
    while k < kinds.len() {
        n += kinds[k].len();
        k += 1;
    }
    if n == 0 { 1 } else { n }
}

/// The command table: each row declares a command once — its variant in
/// [`Command`] (with the pattern naming its values), its name, its opcode
/// and its parameters with their [`Codec`]s and names. [`Op`],
/// [`OPCODES`], [`Command::op`], [`Command::encode`], [`Command::decode`],
/// the text form (`text.rs`) and the table of `docs/machine.md` §3.3 (a
/// test compares them) all come from it.
macro_rules! commands {
    ($(
        $(#[doc = $doc:literal])*
        $var:ident $( ( $tup:ty ) )? $( { $($field:tt)* } )?
            as $pat:tt = $name:literal $opcode:literal
            [ $( $b:ident : $codec:ty = $pname:literal ),* ];
    )*) => {
        /// What a command does, without its parameters.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Op {
            $($var,)*
        }

        /// Every command: name, opcode (§3.3), parameters.
        pub const OPCODES: &[OpInfo] = &[$(OpInfo {
            op: Op::$var,
            name: $name,
            opcode: $opcode,
            params: dwords(&[$(<$codec as Codec>::KINDS),*]),
            fields: &[$(ParamInfo { name: $pname, kinds: <$codec as Codec>::KINDS }),*],
        }),*];

        /// One command with its parameters.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Command {
            $(
                $(#[doc = $doc])*
                $var $( ( $tup ) )? $( { $($field)* } )?,
            )*
        }

        impl Command {
            /// What the command is.
            pub fn op(&self) -> Op {
                match self {
                    $(Command::$var { .. } => Op::$var,)*
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
                let mut words = vec![header(self.op())];
                match self {
                    $(Command::$var $pat => {
                        $(<$codec as Codec>::encode($b, &mut words);)*
                    })*
                }
                if words.len() == 1 {
                    words.push(0);
                }
                words
            }

            /// Decodes the parameters of `op` (exactly as many as the table
            /// says).
            pub fn decode(op: Op, p: &[u32]) -> Result<Command, ParamError> {
                let mut at = 0;
                let mut next = |n: usize| {
                    at += n;
                    &p[at - n..at]
                };
                let _ = &mut next;
                Ok(match op {
                    $(Op::$var => {
                        $(let $b = <$codec as Codec>::decode(next(<$codec as Codec>::KINDS.len()))?;)*
                        Command::$var $pat
                    })*
                })
            }
        }
    };
}

commands! {
    /// The conditional value v (f32 pattern) for dispatched pairs.
    SetCondVal(u32) as (v) = "set_cond_val" 0x80 [v: F32Bits = "v (f32 bits)"];
    /// The inclusive domain (bits 12:0 of each bound).
    SetDomain(Domain) as (d) = "set_domain" 0x81
        [d: Bounds = "i0, j0, i1, j1 (bits 12:0 each; inclusive)"];
    /// Run the program over the domain.
    StartProgram as {} = "start_program" 0x82 [];
    /// Enable the performance counters.
    InitPerfCounters as {} = "init_perf_counters" 0x83 [];
    /// Reset both counters to 0 and count.
    StartPerfCounters as {} = "start_perf_counters" 0x84 [];
    /// Stop counting.
    StopPerfCounters as {} = "stop_perf_counters" 0x85 [];
    /// Write [total, active] as two u32 at the base address.
    ReadPerfCounters {
        /// Destination.
        base: u32,
    } as { base } = "read_perf_counters" 0x86 [base: Base = "base"];
    /// Instruction memory.
    SetInstFmt {
        /// Base address.
        base: u32,
        /// Format dword (stored, not used for addressing).
        fmt: SurfaceFormat,
    } as { base, fmt } = "set_inst_fmt" 0x90 [base: Base = "base", fmt: Fmt = "format"];
    /// Float constants (16 bytes each).
    SetConstfFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    } as { base, fmt } = "set_constf_fmt" 0x91 [base: Base = "base", fmt: Fmt = "format"];
    /// Integer constants (4 bytes each).
    SetConstiFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    } as { base, fmt } = "set_consti_fmt" 0x0F [base: Base = "base", fmt: Fmt = "format"];
    /// Boolean constants (4 bytes each).
    SetConstbFmt {
        /// Base address.
        base: u32,
        /// Format dword (not used for addressing).
        fmt: SurfaceFormat,
    } as { base, fmt } = "set_constb_fmt" 0x92 [base: Base = "base", fmt: Fmt = "format"];
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
    } as { input, base, fmt, height } = "set_inp_fmt" 0x93 [
        input: Field<15> = "input (bits 3:0)",
        base: Base = "base",
        fmt: Fmt = "format",
        height: Bits13 = "height"
    ];
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
    } as { output, base, fmt, height } = "set_out_fmt" 0x94 [
        output: Field<3> = "output (bits 1:0)",
        base: Base = "base",
        fmt: Fmt = "format",
        height: Bits13 = "height"
    ];
    /// The conditional buffer.
    SetCondOutFmt {
        /// Base address.
        base: u32,
        /// Format.
        fmt: SurfaceFormat,
        /// Rows.
        height: u32,
    } as { base, fmt, height } = "set_cond_out_fmt" 0x95
        [base: Base = "base", fmt: Fmt = "format", height: Bits13 = "height"];
    /// Invalidate the instruction cache.
    InvInstCache as {} = "inv_inst_cache" 0x98 [];
    /// Invalidate the float-constant cache.
    InvConstfCache as {} = "inv_constf_cache" 0x99 [];
    /// Invalidate the integer-constant cache.
    InvConstiCache as {} = "inv_consti_cache" 0x9A [];
    /// Invalidate the boolean-constant cache.
    InvConstbCache as {} = "inv_constb_cache" 0x9B [];
    /// Invalidate the input cache.
    InvInpCache as {} = "inv_inp_cache" 0x9C [];
    /// Write pending output writes to memory.
    FlushOutCache as {} = "flush_out_cache" 0x9D [];
    /// Invalidate the conditional-buffer cache.
    InvCondOutCache as {} = "inv_cond_out_cache" 0x9E [];
    /// Write pending conditional-buffer writes to memory.
    FlushCondOutCache as {} = "flush_cond_out_cache" 0x9F [];
    /// Per-channel output write enables (bits 3:0).
    SetOutMask(u8) as (m) = "set_out_mask" 0xA0
        [m: Field<15> = "channel write mask (bits 3:0)"];
    /// Write the conditional value back on a pass.
    SetCondOutMask(bool) as (w) = "set_cond_out_mask" 0xA1
        [w: Flag = "write the conditional value back (bit 0)"];
    /// The conditional test.
    SetCondTest(CondTest) as (t) = "set_cond_test" 0x1B [t: Test = "test (bits 2:0, §6)"];
    /// Which client the test applies to.
    SetCondLoc(CondLoc) as (l) = "set_cond_loc" 0xA8 [l: Loc = "0 DPP, 1 PE (bit 0)"];
    /// Where the interpolation parameters are: three vertices of 32 floats
    /// (docs/machine.md §6.1).
    SetParams {
        /// Base address.
        base: u32,
    } as { base } = "set_params" 0xA9 [base: Base = "base of the interpolation parameters (§6.1)"];
}

impl Op {
    /// The table row.
    pub fn info(self) -> &'static OpInfo {
        &OPCODES[self as usize]
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

/// A parameter that does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A format dword with a reserved element format.
    #[error(transparent)]
    Format(#[from] ReservedFormat),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/machine.md` §3.3 lists the table as it is: every command's
    /// name, opcode and parameters, in the table's order.
    #[test]
    fn the_docs_table_is_the_command_table() {
        let docs = include_str!("../../../../docs/machine.md");
        let section = &docs[docs.find("### 3.3 The commands").unwrap()..];
        let rows: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("|---"))
            .skip(1)
            .take_while(|l| l.starts_with('|'))
            .collect();
        let want: Vec<String> = OPCODES
            .iter()
            .map(|i| {
                let params: Vec<&str> = i.fields.iter().map(|f| f.name).collect();
                let params = if params.is_empty() {
                    "reserved".to_string()
                } else {
                    params.join(", ")
                };
                format!("| `{}` | {:#04X} | {params} |", i.name, i.opcode).replace("0X", "0x")
            })
            .collect();
        assert_eq!(rows, want);
    }

    #[test]
    fn every_command_round_trips_through_its_packet() {
        for info in OPCODES {
            // Parameters with every reserved bit set decode to the values
            // the packet encodes back, reserved bits cleared.
            let fmt = SurfaceFormat::linear(crate::mc::Format::Float32_2, 64).encode();
            let mut p: Vec<u32> = info
                .fields
                .iter()
                .flat_map(|f| f.kinds)
                .map(|&k| match k {
                    ParamKind::Format => fmt,
                    _ => 0xFFFF_FFFF,
                })
                .collect();
            p.resize(info.params, 0xFFFF_FFFF);
            let cmd = Command::decode(info.op, &p).unwrap();
            assert_eq!(cmd.op(), info.op);
            let words = cmd.encode();
            assert_eq!(words.len(), 1 + info.params, "{}", info.name);
            assert_eq!(Command::decode(info.op, &words[1..]), Ok(cmd));
        }
    }
}
