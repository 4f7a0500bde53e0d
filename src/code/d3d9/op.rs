//! The pixel shader instructions of shader models 1, 2 and 3: opcode
//! numbers (`D3DSIO_*`), names, operands and the versions that have them.

use super::Version;

macro_rules! opcodes {
    ($($v:ident $code:literal $name:literal $dst:literal $src:literal $min:ident $max:ident;)*) => {
        /// An instruction's operation (the low 16 bits of its token).
        /// Declarations, definitions, comments and `end` are items of their
        /// own ([`super::Item`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Opcode {
            $(#[doc = concat!("`", $name, "` (", stringify!($code), ").")] $v,)*
        }

        impl Opcode {
            /// Every operation.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$v,)*];

            /// The `D3DSIO_*` number.
            pub fn code(self) -> u16 {
                match self { $(Opcode::$v => $code,)* }
            }

            /// The assembler's name (without comparison or `texld` suffix).
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$v => $name,)* }
            }

            /// Whether it writes a destination operand.
            pub fn has_dst(self) -> bool {
                match self { $(Opcode::$v => $dst == 1,)* }
            }

            /// The first and the last version that have it.
            pub fn versions(self) -> (Version, Version) {
                match self { $(Opcode::$v => (Version::$min, Version::$max),)* }
            }

            fn base_sources(self) -> usize {
                match self { $(Opcode::$v => $src,)* }
            }
        }
    };
}

opcodes! {
    Nop 0 "nop" 0 0 Ps11 Ps30;
    Mov 1 "mov" 1 1 Ps11 Ps30;
    Add 2 "add" 1 2 Ps11 Ps30;
    Sub 3 "sub" 1 2 Ps11 Ps30;
    Mad 4 "mad" 1 3 Ps11 Ps30;
    Mul 5 "mul" 1 2 Ps11 Ps30;
    Rcp 6 "rcp" 1 1 Ps20 Ps30;
    Rsq 7 "rsq" 1 1 Ps20 Ps30;
    Dp3 8 "dp3" 1 2 Ps11 Ps30;
    Dp4 9 "dp4" 1 2 Ps12 Ps30;
    Min 10 "min" 1 2 Ps20 Ps30;
    Max 11 "max" 1 2 Ps20 Ps30;
    Slt 12 "slt" 1 2 Ps20 Ps30;
    Sge 13 "sge" 1 2 Ps20 Ps30;
    Exp 14 "exp" 1 1 Ps20 Ps30;
    Log 15 "log" 1 1 Ps20 Ps30;
    Lrp 18 "lrp" 1 3 Ps11 Ps30;
    Frc 19 "frc" 1 1 Ps20 Ps30;
    M4x4 20 "m4x4" 1 2 Ps20 Ps30;
    M4x3 21 "m4x3" 1 2 Ps20 Ps30;
    M3x4 22 "m3x4" 1 2 Ps20 Ps30;
    M3x3 23 "m3x3" 1 2 Ps20 Ps30;
    M3x2 24 "m3x2" 1 2 Ps20 Ps30;
    Call 25 "call" 0 1 Ps2x Ps30;
    Callnz 26 "callnz" 0 2 Ps2x Ps30;
    Loop 27 "loop" 0 2 Ps30 Ps30;
    Ret 28 "ret" 0 0 Ps2x Ps30;
    Endloop 29 "endloop" 0 0 Ps30 Ps30;
    Label 30 "label" 0 1 Ps2x Ps30;
    Pow 32 "pow" 1 2 Ps20 Ps30;
    Crs 33 "crs" 1 2 Ps20 Ps30;
    Abs 35 "abs" 1 1 Ps20 Ps30;
    Nrm 36 "nrm" 1 1 Ps20 Ps30;
    Sincos 37 "sincos" 1 1 Ps20 Ps30;
    Rep 38 "rep" 0 1 Ps2x Ps30;
    Endrep 39 "endrep" 0 0 Ps2x Ps30;
    If 40 "if" 0 1 Ps2x Ps30;
    Ifc 41 "if" 0 2 Ps2x Ps30;
    Else 42 "else" 0 0 Ps2x Ps30;
    Endif 43 "endif" 0 0 Ps2x Ps30;
    Break 44 "break" 0 0 Ps2x Ps30;
    Breakc 45 "break" 0 2 Ps2x Ps30;
    Texcoord 64 "texcoord" 1 0 Ps11 Ps14;
    Texkill 65 "texkill" 1 0 Ps11 Ps30;
    Tex 66 "texld" 1 2 Ps11 Ps30;
    Texbem 67 "texbem" 1 1 Ps11 Ps13;
    Texbeml 68 "texbeml" 1 1 Ps11 Ps13;
    Texreg2ar 69 "texreg2ar" 1 1 Ps11 Ps13;
    Texreg2gb 70 "texreg2gb" 1 1 Ps11 Ps13;
    Texm3x2pad 71 "texm3x2pad" 1 1 Ps11 Ps13;
    Texm3x2tex 72 "texm3x2tex" 1 1 Ps11 Ps13;
    Texm3x3pad 73 "texm3x3pad" 1 1 Ps11 Ps13;
    Texm3x3tex 74 "texm3x3tex" 1 1 Ps11 Ps13;
    Texm3x3spec 76 "texm3x3spec" 1 2 Ps11 Ps13;
    Texm3x3vspec 77 "texm3x3vspec" 1 1 Ps11 Ps13;
    Cnd 80 "cnd" 1 3 Ps11 Ps30;
    Texreg2rgb 82 "texreg2rgb" 1 1 Ps12 Ps13;
    Texdp3tex 83 "texdp3tex" 1 1 Ps12 Ps13;
    Texm3x2depth 84 "texm3x2depth" 1 1 Ps13 Ps13;
    Texdp3 85 "texdp3" 1 1 Ps12 Ps13;
    Texm3x3 86 "texm3x3" 1 1 Ps12 Ps13;
    Texdepth 87 "texdepth" 1 0 Ps14 Ps14;
    Cmp 88 "cmp" 1 3 Ps12 Ps30;
    Bem 89 "bem" 1 2 Ps14 Ps14;
    Dp2add 90 "dp2add" 1 3 Ps20 Ps30;
    Dsx 91 "dsx" 1 1 Ps2x Ps30;
    Dsy 92 "dsy" 1 1 Ps2x Ps30;
    Texldd 93 "texldd" 1 4 Ps2x Ps30;
    Setp 94 "setp" 1 2 Ps2x Ps30;
    Texldl 95 "texldl" 1 2 Ps30 Ps30;
    Breakp 96 "breakp" 0 1 Ps2x Ps30;
    Phase 0xFFFD "phase" 0 0 Ps14 Ps14;
}

impl Opcode {
    /// The operation numbered `code`, if pixel shaders have it.
    pub fn from_code(code: u16) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.code() == code)
    }

    /// Whether `version` has it.
    pub fn in_version(self, version: Version) -> bool {
        let (min, max) = self.versions();
        (min..=max).contains(&version)
    }

    /// How many source operands it takes in `version` (`sincos` takes two
    /// constant registers besides its source before ps_3_0; ps_1_1–1_3's
    /// `tex` and `texcoord` take none, ps_1_4's `texld` and `texcrd` one).
    pub fn sources(self, version: Version) -> usize {
        match self {
            Opcode::Sincos if version < Version::Ps30 => 3,
            Opcode::Tex | Opcode::Texcoord if version < Version::Ps14 => 0,
            Opcode::Tex | Opcode::Texcoord if version == Version::Ps14 => 1,
            _ => self.base_sources(),
        }
    }

    /// The assembler's name in `version`: ps_1_1–1_3's `tex`, ps_1_4's
    /// `texcrd`; otherwise [`Opcode::name`].
    pub fn name_in(self, version: Version) -> &'static str {
        self.name_with(self.sources(version))
    }

    /// The assembler's name of the form with `sources` source operands
    /// (what tells ps_1_x's forms apart): `tex` takes none, `texcrd` one.
    pub fn name_with(self, sources: usize) -> &'static str {
        match self {
            Opcode::Tex if sources == 0 => "tex",
            Opcode::Texcoord if sources == 1 => "texcrd",
            _ => self.name(),
        }
    }

    /// Whether it is one of ps_1_x's texture instructions (texture
    /// coordinates in, a lookup or coordinates out): `tex`, `texcoord`,
    /// `texkill`, `texbem` … `texdepth`, `texld`/`texcrd`.
    pub fn is_tex_1x(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Tex | Texcoord
                | Texkill
                | Texbem
                | Texbeml
                | Texreg2ar
                | Texreg2gb
                | Texreg2rgb
                | Texm3x2pad
                | Texm3x2tex
                | Texm3x2depth
                | Texm3x3pad
                | Texm3x3tex
                | Texm3x3spec
                | Texm3x3vspec
                | Texm3x3
                | Texdp3
                | Texdp3tex
                | Texdepth
        )
    }

    /// Whether its control bits hold a comparison (`if_gt`, `break_lt`,
    /// `setp_ne`).
    pub fn compares(self) -> bool {
        matches!(self, Opcode::Ifc | Opcode::Breakc | Opcode::Setp)
    }

    /// For `m4x4` … `m3x2`: the vector's size and the number of rows.
    pub fn matrix(self) -> Option<(usize, usize)> {
        match self {
            Opcode::M4x4 => Some((4, 4)),
            Opcode::M4x3 => Some((4, 3)),
            Opcode::M3x4 => Some((3, 4)),
            Opcode::M3x3 => Some((3, 3)),
            Opcode::M3x2 => Some((3, 2)),
            _ => None,
        }
    }

    /// Whether it may be predicated (`(p0) …`): not flow control, not
    /// `texkill`, nothing only ps_1_x has.
    pub fn predicable(self) -> bool {
        self.has_dst() && self != Opcode::Texkill && self.versions().1 >= Version::Ps20
    }
}

/// The comparisons of `if_comp`, `break_comp` and `setp_comp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
    /// `gt` (1).
    Gt,
    /// `eq` (2).
    Eq,
    /// `ge` (3).
    Ge,
    /// `lt` (4).
    Lt,
    /// `ne` (5).
    Ne,
    /// `le` (6).
    Le,
}

impl Compare {
    /// Every comparison.
    pub const ALL: [Compare; 6] = [
        Compare::Gt,
        Compare::Eq,
        Compare::Ge,
        Compare::Lt,
        Compare::Ne,
        Compare::Le,
    ];

    /// The control code (bits 16–18 of the instruction token).
    pub fn code(self) -> u8 {
        match self {
            Compare::Gt => 1,
            Compare::Eq => 2,
            Compare::Ge => 3,
            Compare::Lt => 4,
            Compare::Ne => 5,
            Compare::Le => 6,
        }
    }

    /// The comparison with control code `code`.
    pub fn from_code(code: u8) -> Option<Compare> {
        Compare::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The suffix (`gt`, …).
    pub fn name(self) -> &'static str {
        match self {
            Compare::Gt => "gt",
            Compare::Eq => "eq",
            Compare::Ge => "ge",
            Compare::Lt => "lt",
            Compare::Ne => "ne",
            Compare::Le => "le",
        }
    }

    /// `a <comparison> b` on floats (IEEE: every comparison with NaN is
    /// false but `ne`).
    pub fn test(self, a: f32, b: f32) -> bool {
        match self {
            Compare::Gt => a > b,
            Compare::Eq => a == b,
            Compare::Ge => a >= b,
            Compare::Lt => a < b,
            Compare::Ne => a != b,
            Compare::Le => a <= b,
        }
    }
}

/// `texld`'s control bits: 1 projects (`texldp`), 2 biases (`texldb`).
pub const TEXLD_PROJECT: u8 = 1;
/// See [`TEXLD_PROJECT`].
pub const TEXLD_BIAS: u8 = 2;
