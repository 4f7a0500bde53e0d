//! Direct3D 9 pixel shaders (ps_1_1–ps_1_4, ps_2_0, ps_2_x, ps_3_0): the
//! bytecode, its text form, and their compilation to DPP programs.
//!
//! * [`read`]: bytecode (a sequence of 32-bit tokens) → [`Shader`], or a
//!   [`ReadError`] naming the token offset. Every word sequence gives one
//!   or the other.
//! * [`write()`]: [`Shader`] → tokens (`read(write(s)) == s`).
//! * [`assemble`] / [`disassemble`]: the text form (`ps_3_0`,
//!   `dcl_texcoord0 v0`, `mad_sat r0, r1, c0_abs, -v0.yzwx`, `(p0.x) add …`)
//!   with `assemble(disassemble(s)) == s`.
//! * [`compile`]: a shader → a DPP executable with its register bindings
//!   (`docs/d3d9.md` §3–§4), also behind `Kernel::from_d3d9`.
//!
//! The token layouts are those of Microsoft's Direct3D 9 driver reference
//! ("Shader codes": version token, instruction token, destination and
//! source parameter tokens, comment token, DCL and DEF formats) and the
//! pixel shader references for ps_1_1–ps_1_4, ps_2_0, ps_2_x and ps_3_0
//! (registers, modifiers and instructions). `docs/d3d9.md` says how ctm reads them and what it chose
//! where they are silent.
//!
//! ```
//! use ctm::d3d9;
//! let s = d3d9::assemble("ps_3_0\ndcl_texcoord0 v0.xy\nmul oC0, v0.xyxy, c0\n").unwrap();
//! let tokens = d3d9::write(&s);
//! assert_eq!(tokens[0], 0xFFFF_0300);
//! assert_eq!(d3d9::read(&tokens).unwrap(), s);
//! assert!(d3d9::disassemble(&s).contains("mul oC0, v0.xyxy, c0"));
//! ```

mod compile;
pub mod ctab;
mod disasm;
mod error;
mod op;
mod operand;
mod param;
mod read;
mod text;
mod write;

pub use compile::{CompileError, CompiledShader, Dialect, Stats, compile, compile_dialect};
pub use disasm::{disassemble, item_text};
pub use op::{Compare, Opcode};
pub use read::{ReadError, ReadErrorKind, read, read_bytes};
pub use text::{TextError, assemble, assemble_with_lines};
pub use write::{item_offsets, write};

/// A pixel shader version: 1.1–1.4, 2.0, 2.x (written 2.1 in the version
/// token) or 3.0. Versions compare in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// `ps_1_1`.
    Ps11,
    /// `ps_1_2`.
    Ps12,
    /// `ps_1_3`.
    Ps13,
    /// `ps_1_4`.
    Ps14,
    /// `ps_2_0`.
    Ps20,
    /// `ps_2_x` (version token minor 1).
    Ps2x,
    /// `ps_3_0`.
    Ps30,
}

impl Version {
    /// The version token.
    pub fn token(self) -> u32 {
        0xFFFF_0000
            | match self {
                Version::Ps11 => 0x0101,
                Version::Ps12 => 0x0102,
                Version::Ps13 => 0x0103,
                Version::Ps14 => 0x0104,
                Version::Ps20 => 0x0200,
                Version::Ps2x => 0x0201,
                Version::Ps30 => 0x0300,
            }
    }

    /// The assembler's name.
    pub fn name(self) -> &'static str {
        match self {
            Version::Ps11 => "ps_1_1",
            Version::Ps12 => "ps_1_2",
            Version::Ps13 => "ps_1_3",
            Version::Ps14 => "ps_1_4",
            Version::Ps20 => "ps_2_0",
            Version::Ps2x => "ps_2_x",
            Version::Ps30 => "ps_3_0",
        }
    }

    /// Every version, oldest first.
    pub const ALL: [Version; 7] = [
        Version::Ps11,
        Version::Ps12,
        Version::Ps13,
        Version::Ps14,
        Version::Ps20,
        Version::Ps2x,
        Version::Ps30,
    ];

    /// Whether it is one of the ps_1_x models (modifiers, co-issue, texture
    /// registers and the result in r0; `docs/d3d9.md` §6).
    pub fn is_1x(self) -> bool {
        self < Version::Ps20
    }

    /// How many registers of `kind` this version has (0: none).
    pub fn count(self, kind: RegKind) -> u16 {
        use RegKind::*;
        use Version::*;
        match (kind, self) {
            (Temp, Ps14) => 6,
            (Temp, Ps11 | Ps12 | Ps13) => 2,
            (Const, Ps11 | Ps12 | Ps13 | Ps14) => 8,
            (Input, Ps11 | Ps12 | Ps13 | Ps14) => 2,
            (Texture, Ps14) => 6,
            (Texture, Ps11 | Ps12 | Ps13) => 4,
            (_, Ps11 | Ps12 | Ps13 | Ps14) => 0,
            (Temp, Ps20) => 12,
            (Temp, _) => 32,
            (Const, Ps30) => 224,
            (Const, _) => 32,
            (ConstInt | ConstBool, Ps20) => 0,
            (ConstInt | ConstBool, _) => 16,
            (Input, Ps30) => 10,
            (Input, _) => 2,
            (Texture, Ps30) => 0,
            (Texture, _) => 8,
            (Sampler, _) => 16,
            (ColorOut, _) => 4,
            (DepthOut, _) => 1,
            (Predicate, Ps20) => 0,
            (Predicate, _) => 1,
            (Loop, Ps30) => 1,
            (Loop, _) => 0,
            (Misc, Ps30) => 2,
            (Misc, _) => 0,
            (Label, Ps20) => 0,
            (Label, Ps2x) => 16,
            (Label, Ps30) => 2048,
        }
    }
}

/// The kinds of register a pixel shader names (`D3DSPR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegKind {
    /// `r#` (type 0).
    Temp,
    /// `v#` (type 1).
    Input,
    /// `c#` (type 2).
    Const,
    /// `t#` (type 3 in pixel shaders).
    Texture,
    /// `i#` (type 7).
    ConstInt,
    /// `oC#` (type 8).
    ColorOut,
    /// `oDepth` (type 9).
    DepthOut,
    /// `s#` (type 10).
    Sampler,
    /// `b#` (type 14).
    ConstBool,
    /// `aL` (type 15).
    Loop,
    /// `vPos` (number 0) and `vFace` (1) (type 17).
    Misc,
    /// `l#` (type 18).
    Label,
    /// `p0` (type 19).
    Predicate,
}

impl RegKind {
    /// Every kind.
    pub const ALL: [RegKind; 13] = [
        RegKind::Temp,
        RegKind::Input,
        RegKind::Const,
        RegKind::Texture,
        RegKind::ConstInt,
        RegKind::ColorOut,
        RegKind::DepthOut,
        RegKind::Sampler,
        RegKind::ConstBool,
        RegKind::Loop,
        RegKind::Misc,
        RegKind::Label,
        RegKind::Predicate,
    ];

    /// The `D3DSPR_*` code.
    pub fn code(self) -> u32 {
        match self {
            RegKind::Temp => 0,
            RegKind::Input => 1,
            RegKind::Const => 2,
            RegKind::Texture => 3,
            RegKind::ConstInt => 7,
            RegKind::ColorOut => 8,
            RegKind::DepthOut => 9,
            RegKind::Sampler => 10,
            RegKind::ConstBool => 14,
            RegKind::Loop => 15,
            RegKind::Misc => 17,
            RegKind::Label => 18,
            RegKind::Predicate => 19,
        }
    }

    /// The kind of a `D3DSPR_*` code, if pixel shaders have it.
    pub fn from_code(code: u32) -> Option<RegKind> {
        RegKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// A register: kind and number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reg {
    /// Kind.
    pub kind: RegKind,
    /// Number (vPos is Misc 0, vFace Misc 1).
    pub num: u16,
}

impl Reg {
    /// `kind` number `num`.
    pub const fn new(kind: RegKind, num: u16) -> Reg {
        Reg { kind, num }
    }
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.num;
        match self.kind {
            RegKind::Temp => write!(f, "r{n}"),
            RegKind::Input => write!(f, "v{n}"),
            RegKind::Const => write!(f, "c{n}"),
            RegKind::Texture => write!(f, "t{n}"),
            RegKind::ConstInt => write!(f, "i{n}"),
            RegKind::ColorOut => write!(f, "oC{n}"),
            RegKind::DepthOut => write!(f, "oDepth"),
            RegKind::Sampler => write!(f, "s{n}"),
            RegKind::ConstBool => write!(f, "b{n}"),
            RegKind::Loop => write!(f, "aL"),
            RegKind::Misc if n == 0 => write!(f, "vPos"),
            RegKind::Misc => write!(f, "vFace"),
            RegKind::Label => write!(f, "l{n}"),
            RegKind::Predicate => write!(f, "p{n}"),
        }
    }
}

/// A destination operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dst {
    /// The register written.
    pub reg: Reg,
    /// Write mask: bit 0 x … bit 3 w.
    pub mask: u8,
    /// `_sat`: clamp to [0, 1].
    pub sat: bool,
    /// `_pp`: partial precision allowed.
    pub pp: bool,
    /// `_centroid` (declarations of inputs).
    pub centroid: bool,
    /// ps_1_x result shift: the result is scaled by 2^shift before `_sat`
    /// (`_x2` 1, `_x4` 2, `_x8` 3, `_d2` −1, `_d4` −2, `_d8` −3; 0 none).
    pub shift: i8,
}

impl Dst {
    /// `reg` with every channel and no modifier.
    pub const fn full(reg: Reg) -> Dst {
        Dst {
            reg,
            mask: 0xF,
            sat: false,
            pp: false,
            centroid: false,
            shift: 0,
        }
    }
}

/// Source modifiers: `-`, `_abs` and `!` of pixel shaders 2.0 and later,
/// and the ps_1_x ones (`docs/d3d9.md` §6.2 says how each is computed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SrcMod {
    /// None.
    #[default]
    None,
    /// `-x`.
    Neg,
    /// `x_bias`: x − 0.5 (ps_1_x).
    Bias,
    /// `-x_bias` (ps_1_x).
    BiasNeg,
    /// `x_bx2`: 2x − 1 (ps_1_x).
    Bx2,
    /// `-x_bx2` (ps_1_x).
    Bx2Neg,
    /// `1-x` (ps_1_x).
    Comp,
    /// `x_x2`: 2x (ps_1_4).
    X2,
    /// `-x_x2` (ps_1_4).
    X2Neg,
    /// `x_dz` (also written `_db`): x and y divided by z (ps_1_4's
    /// `texld`, `texcrd`).
    Dz,
    /// `x_dw` (also `_da`): x and y divided by w.
    Dw,
    /// `x_abs`.
    Abs,
    /// `-x_abs`.
    AbsNeg,
    /// `!p0` (predicates only).
    Not,
}

impl SrcMod {
    /// Every modifier, in code order.
    pub const ALL: [SrcMod; 14] = [
        SrcMod::None,
        SrcMod::Neg,
        SrcMod::Bias,
        SrcMod::BiasNeg,
        SrcMod::Bx2,
        SrcMod::Bx2Neg,
        SrcMod::Comp,
        SrcMod::X2,
        SrcMod::X2Neg,
        SrcMod::Dz,
        SrcMod::Dw,
        SrcMod::Abs,
        SrcMod::AbsNeg,
        SrcMod::Not,
    ];

    /// The token's modifier code (bits 24–27).
    pub fn code(self) -> u32 {
        match self {
            SrcMod::None => 0,
            SrcMod::Neg => 1,
            SrcMod::Bias => 2,
            SrcMod::BiasNeg => 3,
            SrcMod::Bx2 => 4,
            SrcMod::Bx2Neg => 5,
            SrcMod::Comp => 6,
            SrcMod::X2 => 7,
            SrcMod::X2Neg => 8,
            SrcMod::Dz => 9,
            SrcMod::Dw => 10,
            SrcMod::Abs => 11,
            SrcMod::AbsNeg => 12,
            SrcMod::Not => 13,
        }
    }

    /// The modifier of code `code`.
    pub fn from_code(code: u32) -> Option<SrcMod> {
        SrcMod::ALL.into_iter().find(|m| m.code() == code)
    }

    /// Whether only ps_1_x has it.
    pub fn is_1x(self) -> bool {
        !matches!(
            self,
            SrcMod::None | SrcMod::Neg | SrcMod::Abs | SrcMod::AbsNeg | SrcMod::Not
        )
    }

    /// Whether it negates (the `-` in front).
    pub fn negates(self) -> bool {
        matches!(
            self,
            SrcMod::Neg | SrcMod::BiasNeg | SrcMod::Bx2Neg | SrcMod::X2Neg | SrcMod::AbsNeg
        )
    }
}

/// A source swizzle: two bits per channel, x first (`0xE4` is `.xyzw`).
pub const IDENTITY: u8 = 0xE4;

/// Which channel of the register a swizzle gives for channel `c` (0–3).
pub fn swizzle_channel(swizzle: u8, c: usize) -> usize {
    usize::from(swizzle >> (2 * c)) & 3
}

/// Relative addressing: the register added (aL) and its swizzle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rel {
    /// The address register (`aL`).
    pub reg: Reg,
    /// Its swizzle (which component is used: the first).
    pub swizzle: u8,
}

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    /// The register read (the base, with relative addressing).
    pub reg: Reg,
    /// `c[aL + n]`, `v[aL + n]`.
    pub rel: Option<Rel>,
    /// Swizzle.
    pub swizzle: u8,
    /// Modifier.
    pub modifier: SrcMod,
}

impl Src {
    /// `reg` with no swizzle or modifier.
    pub const fn plain(reg: Reg) -> Src {
        Src {
            reg,
            rel: None,
            swizzle: IDENTITY,
            modifier: SrcMod::None,
        }
    }
}

/// What a `dcl` declares beyond its register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DclKind {
    /// `dcl`: an input with no usage (ps_2_0/2_x inputs and textures, vPos,
    /// vFace).
    Plain,
    /// `dcl_texcoord0` …: a ps_3_0 input with its usage and index.
    Usage {
        /// `D3DDECLUSAGE` (0–13).
        usage: u8,
        /// Usage index (0–15).
        index: u8,
    },
    /// `dcl_2d`, `dcl_cube`, `dcl_volume`: a sampler and its texture type
    /// (2, 3, 4).
    Sampler(u8),
}

/// The names of `D3DDECLUSAGE` values, by code.
pub const USAGES: [&str; 14] = [
    "position",
    "blendweight",
    "blendindices",
    "normal",
    "psize",
    "texcoord",
    "tangent",
    "binormal",
    "tessfactor",
    "positiont",
    "color",
    "fog",
    "depth",
    "sample",
];

/// A declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dcl {
    /// What is declared.
    pub kind: DclKind,
    /// The register, its mask and `_centroid`/`_pp`.
    pub dst: Dst,
}

/// A definition: a constant's value inside the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Def {
    /// `def cN, x, y, z, w`: raw f32 bit patterns.
    Float(u16, [u32; 4]),
    /// `defi iN, x, y, z, w`.
    Int(u16, [i32; 4]),
    /// `defb bN, true|false`.
    Bool(u16, bool),
}

/// An instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// Operation.
    pub op: Opcode,
    /// Operation-specific control bits (16–23): the comparison of `ifc`,
    /// `breakc`, `setp`; `texldp` (1) and `texldb` (2) on `texld`.
    pub control: u8,
    /// `(p0.x)`, `(!p0)`: the predicate that gates the writes.
    pub predicate: Option<Src>,
    /// Destination, for operations that have one.
    pub dst: Option<Dst>,
    /// Sources.
    pub src: Vec<Src>,
    /// ps_1_x co-issue (`+` in front): runs together with the instruction
    /// before it, both reading their sources before either writes.
    pub coissue: bool,
}

/// One element of a shader's token stream, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// A comment block's payload (e.g. the `CTAB` constant table).
    Comment(Vec<u32>),
    /// `dcl…`.
    Dcl(Dcl),
    /// `def`, `defi`, `defb`.
    Def(Def),
    /// Everything else.
    Inst(Inst),
}

/// A pixel shader as its token stream says, item by item.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shader {
    /// Version.
    pub version: Version,
    /// Comments, declarations, definitions and instructions in order.
    pub items: Vec<Item>,
}

impl Shader {
    /// The instructions, in order.
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.items.iter().filter_map(|i| match i {
            Item::Inst(i) => Some(i),
            _ => None,
        })
    }
}
