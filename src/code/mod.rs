//! Programs as files and words: DPP executables (ELF with ATI notes,
//! `docs/abi.md`), the instruction set (`docs/isa.md`, `docs/asm.md`),
//! Direct3D 9 pixel shaders and their compiler (`docs/d3d9.md`), and
//! program files in any of these forms.

pub mod abi;
pub mod d3d9;
pub mod isa;
pub mod program;
