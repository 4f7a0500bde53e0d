//! Compiling pixel shaders to DPP programs (`docs/d3d9.md` §3).
//!
//! The shader's registers map onto the machine as follows (ctm's choices,
//! listed by [`CompiledShader::bindings`]): each input `v#`/`t#` it reads is an
//! input surface read at the pixel's own position, loaded into a temporary
//! at the start; each sampler `s#` is an input surface read with point
//! sampling and wrapped coordinates; `oC0`–`oC3` are outputs 0–3 (render
//! targets A–D), `oDepth` the conditional value; `c#`, `i#`, `b#` are the
//! constant files at the same numbers, `def` values carried in the
//! executable; `vPos` is r0 (the pixel's (i, j)); `vFace` a constant that is
//! +1 unless the host sets it. The compiler's own constants take the float
//! constants from c255 down.
//!
//! ps_1_x shaders ([`ps1x`], [`texaddr`]) add clamped constants and colour
//! inputs, their source modifiers, co-issue, texture stages and r0 as the
//! result (`docs/d3d9.md` §6).
//!
//! Lowering is per instruction ([`lower`]); flow control maps onto the
//! DPP's constructs (`docs/isa.md` §6.9); a last pass places the texture
//! semaphore (one acquire on the last of a run of lookups, a wait before
//! the first instruction that touches their results) and the NOP the
//! derivative operations need.

mod dest;
mod emit;
mod finish;
mod flow;
mod inputs;
mod limits;
mod lower;
mod notes;
mod passes;
mod ps1x;
mod tex;
mod texaddr;

use super::{Inst, Item, Opcode, Reg, RegKind, Shader};
use crate::abi::Executable;
use emit::{Alu, Cond, Dpp, Flow, Operand, Val};
use std::collections::BTreeMap;
use std::fmt;

/// A shader the compiler cannot translate, with the item at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// Index of the item in [`Shader::items`] (None: the shader as a whole).
    pub item: Option<usize>,
    /// The item's text.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item {
            Some(k) => write!(f, "item {} (`{}`): {}", k + 1, self.text, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for CompileError {}

/// A compiled shader.
#[derive(Clone, Debug)]
pub struct CompiledShader {
    /// The executable (code, notes, carried constants, bindings).
    pub exe: Executable,
    /// The DPP assembly it was built from.
    pub listing: String,
    /// Shader register → machine resource (`v0` → `in0`, `oC1` → `out1`,
    /// `s0.size` → `c254`, …), also in the executable's notes.
    pub bindings: Vec<(String, String)>,
    /// Numbers about the output.
    pub stats: Stats,
    /// For each DPP instruction, the shader items (indices into
    /// [`Shader::items`]) it was compiled from (none: the compiler's own
    /// loads, jumps and final output).
    pub origins: Vec<Vec<usize>>,
}

/// Measures of the compiled code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Shader instructions (not counting declarations, definitions, labels).
    pub shader_insts: usize,
    /// DPP instructions.
    pub dpp_insts: usize,
    /// ALU/OUTPUT instructions whose RGB and alpha units both do work.
    pub coissued: usize,
    /// ALU/OUTPUT instructions.
    pub alu_insts: usize,
    /// Of the co-issued: pairs formed from two shader operations (one on
    /// the RGB unit, one on the alpha unit).
    pub paired: usize,
}

/// Where a structured construct stands while compiling.
enum Block {
    /// `if`: where its IF instruction is (patched when an `else` comes)
    /// and its jump condition.
    If {
        else_label: String,
        end_label: String,
        has_else: bool,
        at: usize,
        cond: Cond,
    },
    /// `rep` or `loop` and its integer constant.
    Loop {
        end_label: String,
        body_label: String,
        int: u16,
        rep: bool,
    },
}

/// Which meaning a shader's inputs and texture reads have
/// (`docs/d3d9.md` §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Direct3D 9: `v#` are surfaces read at the pixel, samplers take
    /// normalised, wrapped coordinates.
    #[default]
    D3d9,
    /// The CTM SDK compiler's: `texld` takes texel coordinates (texel
    /// (⌊u⌋, ⌊v⌋), no wrapping), `v0`–`v6` are interpolated from the
    /// parameters of `set_params` (`docs/machine.md` §6.1).
    Ctm,
}

impl Dialect {
    /// `d3d9` or `ctm`.
    pub fn parse(name: &str) -> Option<Dialect> {
        match name {
            "d3d9" => Some(Dialect::D3d9),
            "ctm" => Some(Dialect::Ctm),
            _ => None,
        }
    }
}

/// Compiles a shader to a DPP executable (the Direct3D 9 dialect).
pub fn compile(shader: &Shader) -> Result<CompiledShader, CompileError> {
    compile_dialect(shader, Dialect::D3d9)
}

/// Compiles a shader in `dialect`.
pub fn compile_dialect(shader: &Shader, dialect: Dialect) -> Result<CompiledShader, CompileError> {
    limits::check(shader)?;
    let mut c = Compiler::new(shader, dialect)?;
    c.body()?;
    c.finish()
}

pub(super) struct Compiler<'s> {
    shader: &'s Shader,
    pub(super) dialect: Dialect,
    /// The ctm dialect's interpolated inputs: register → the first of its
    /// three plane constants.
    planes: BTreeMap<Reg, u16>,
    /// The item being compiled.
    item: Option<usize>,
    pub(super) code: Vec<Dpp>,
    next_temp: u16,
    temps: BTreeMap<Reg, u16>,
    /// Output registers the shader writes (straight into render targets
    /// and the conditional value by OUTPUT instructions).
    outputs: std::collections::BTreeSet<Reg>,
    /// Input registers (v#, t#) → input surface and temporary.
    inputs: BTreeMap<Reg, (u8, u16)>,
    /// The temporary of v0 when v0–v9 are a block (`v[aL+n]`).
    v_block: Option<u16>,
    /// Samplers → input surface and the constant with their size.
    samplers: BTreeMap<u16, (u8, u16)>,
    next_surface: u8,
    /// Compiler constants: value bits → index.
    consts: Vec<(u16, [u32; 4])>,
    next_const: u16,
    vface: Option<u16>,
    /// Scratch temporaries for expansions, allocated on first use: 0 and
    /// 1 for expansions, then ps_1_x's modified sources and co-issue
    /// ([`ps1x::MOD_SCRATCH`], [`ps1x::COISSUE_SCRATCH`]), 6 and 7 for
    /// its texture addressing.
    scratch: [Option<u16>; 8],
    /// ps_1_x: the constant of each (stage, luminance) bump-environment
    /// value — the matrix (`false`) or the luminance scale and offset.
    bumpenv: BTreeMap<(u16, bool), u16>,
    /// ps_1_x: the constants the host sets, clamped into temporaries.
    clamped: BTreeMap<u16, u16>,
    /// ps_1_x: modified sources of the instruction being lowered.
    mod_next: usize,
    /// ps_1_x co-issue: a register the instruction before wrote, saved
    /// in a temporary for the co-issued one to read (`saved` until that
    /// one is lowered, `redirect` while it is).
    saved: Option<(Reg, u16)>,
    redirect: Option<(Reg, u16)>,
    blocks: Vec<Block>,
    labels: u32,
    stats: Stats,
    /// Where the loads at the start end and where the main program's
    /// epilogue ends (subroutines follow it until `finish` moves them).
    prologue_end: usize,
    main_end: usize,
    /// DPP instructions in `code[..scanned]` (labels are not instructions).
    counted: usize,
    scanned: usize,
    /// Beside `code` once the body is lowered: the items each entry came
    /// from.
    origin: Vec<Vec<usize>>,
}

impl<'s> Compiler<'s> {
    fn new(shader: &'s Shader, dialect: Dialect) -> Result<Self, CompileError> {
        let mut c = Compiler {
            shader,
            dialect,
            planes: BTreeMap::new(),
            item: None,
            code: Vec::new(),
            next_temp: 1,
            temps: BTreeMap::new(),
            outputs: std::collections::BTreeSet::new(),
            inputs: BTreeMap::new(),
            v_block: None,
            samplers: BTreeMap::new(),
            next_surface: 0,
            consts: Vec::new(),
            next_const: 255,
            vface: None,
            scratch: [None; 8],
            bumpenv: BTreeMap::new(),
            clamped: BTreeMap::new(),
            mod_next: 0,
            saved: None,
            redirect: None,
            blocks: Vec::new(),
            labels: 0,
            stats: Stats::default(),
            prologue_end: 0,
            main_end: 0,
            counted: 0,
            scanned: 0,
            origin: Vec::new(),
        };
        c.declare_inputs()?;
        c.declare_1x()?;
        c.prologue_end = c.code.len();
        Ok(c)
    }

    pub(super) fn error<T>(&self, message: impl Into<String>) -> Result<T, CompileError> {
        Err(CompileError {
            item: self.item,
            text: self
                .item
                .map(|k| super::disasm::item_text(&self.shader.items[k]))
                .unwrap_or_default(),
            message: message.into(),
        })
    }

    fn fresh(&mut self) -> Result<u16, CompileError> {
        if self.next_temp >= 128 {
            return self.error("the shader needs more than the DPP's 128 temporaries");
        }
        self.next_temp += 1;
        Ok(self.next_temp - 1)
    }

    pub(super) fn label(&mut self) -> String {
        self.labels += 1;
        format!("L{}", self.labels)
    }

    /// Scratch temporary `k` (see [`Compiler::scratch`]'s field).
    pub(super) fn scratch(&mut self, k: usize) -> Result<u16, CompileError> {
        if let Some(t) = self.scratch[k] {
            return Ok(t);
        }
        let t = self.fresh()?;
        self.scratch[k] = Some(t);
        Ok(t)
    }

    /// A constant register holding `v` (reused when it exists).
    pub(super) fn constant(&mut self, v: [f32; 4]) -> Result<Operand, CompileError> {
        if v.iter().all(|&x| x == v[0] && x.is_sign_positive())
            && crate::isa::inline_code(v[0]).is_some()
        {
            return Ok(Operand::Inline(v[0]));
        }
        let bits = v.map(f32::to_bits);
        if let Some((n, _)) = self.consts.iter().find(|(_, b)| *b == bits) {
            return Ok(Operand::Const(*n));
        }
        let n = self.const_slot()?;
        self.consts.push((n, bits));
        Ok(Operand::Const(n))
    }

    /// The DPP temporary of a shader temporary or input register.
    pub(super) fn temp(&mut self, r: Reg) -> Result<u16, CompileError> {
        match r.kind {
            RegKind::Input | RegKind::Texture => match self.inputs.get(&r) {
                Some(&(_, t)) => Ok(t),
                None => self.error(format!("{r} is not declared")),
            },
            RegKind::ColorOut | RegKind::DepthOut => self.error(format!(
                "{r} is written by OUTPUT instructions, not a temporary"
            )),
            _ => {
                if let Some(&t) = self.temps.get(&r) {
                    return Ok(t);
                }
                let t = self.fresh()?;
                self.temps.insert(r, t);
                Ok(t)
            }
        }
    }

    /// The operand of a source register.
    pub(super) fn operand(&mut self, s: &super::Src) -> Result<Operand, CompileError> {
        let r = s.reg;
        if let Some((saved, t)) = self.redirect
            && saved == r
        {
            return Ok(Operand::Temp(t));
        }
        Ok(match (r.kind, s.rel) {
            (RegKind::Const, None) => match self.clamped.get(&r.num) {
                Some(&t) => Operand::Temp(t),
                None => Operand::Const(r.num),
            },
            (RegKind::Const, Some(_)) => Operand::ConstRel(r.num),
            (RegKind::Input, Some(_)) => match self.v_block {
                Some(base) => Operand::TempRel(base + r.num),
                None => return self.error("v[aL+n] outside ps_3_0"),
            },
            (RegKind::Misc, _) if r.num == 0 => Operand::Temp(0),
            (RegKind::Misc, _) => {
                let c = match self.vface {
                    Some(c) => c,
                    None => {
                        let c = self.const_slot()?;
                        self.vface = Some(c);
                        c
                    }
                };
                Operand::Const(c)
            }
            (RegKind::Temp | RegKind::Input | RegKind::Texture, _) => Operand::Temp(self.temp(r)?),
            _ => return self.error(format!("{r} cannot be read as a value")),
        })
    }

    /// A shader source as a DPP value.
    pub(super) fn val(&mut self, s: &super::Src) -> Result<Val, CompileError> {
        if s.modifier.is_1x() && !matches!(s.modifier, super::SrcMod::Dz | super::SrcMod::Dw) {
            return self.modified(s);
        }
        let opnd = self.operand(s)?;
        let mut swz = [0u8; 4];
        for (c, x) in swz.iter_mut().enumerate() {
            *x = super::swizzle_channel(s.swizzle, c) as u8;
        }
        use super::SrcMod::*;
        Ok(Val {
            opnd: Some(opnd),
            swz,
            neg: matches!(s.modifier, Neg | AbsNeg),
            abs: matches!(s.modifier, Abs | AbsNeg),
        })
    }

    /// The instructions of the main program, then the outputs, then the
    /// subroutines.
    fn body(&mut self) -> Result<(), CompileError> {
        let items = &self.shader.items;
        let mut main_done = false;
        let mut in_sub = false;
        // The loads before the first item come from no item.
        self.origin.resize(self.code.len(), Vec::new());
        for (k, item) in items.iter().enumerate() {
            self.item = Some(k);
            let Item::Inst(inst) = item else {
                continue;
            };
            if main_done && !in_sub && inst.op != Opcode::Label {
                return self
                    .error("code after the main program's `ret` that is not in a subroutine");
            }
            match inst.op {
                Opcode::Label => {
                    if !self.blocks.is_empty() {
                        return self.error("a label inside if/rep/loop");
                    }
                    if !main_done {
                        self.epilogue()?;
                        main_done = true;
                    }
                    in_sub = true;
                    self.code
                        .push(Dpp::Label(format!("l{}", inst.src[0].reg.num)));
                }
                Opcode::Ret => {
                    if !self.blocks.is_empty() {
                        return self.error("`ret` inside if/rep/loop is not supported (ctm)");
                    }
                    if in_sub {
                        self.code.push(Dpp::flow(Flow::Ret));
                        in_sub = false;
                    } else if !main_done {
                        self.epilogue()?;
                        main_done = true;
                    }
                }
                _ => {
                    self.stats.shader_insts += 1;
                    if self.shader.version.is_1x() {
                        self.before_1x(k, inst)?;
                    }
                    self.inst(inst)?;
                }
            }
            self.check_size()?;
            self.origin.resize(self.code.len(), vec![k]);
        }
        if !self.blocks.is_empty() {
            self.item = None;
            return self.error("if/rep/loop without its end");
        }
        if !main_done {
            self.item = None;
            self.epilogue()?;
        }
        if in_sub {
            return self.error("a subroutine without `ret`");
        }
        Ok(())
    }

    /// An error at the instruction whose DPP code no longer fits the
    /// instruction store.
    fn check_size(&mut self) -> Result<(), CompileError> {
        self.counted += self.code[self.scanned..]
            .iter()
            .filter(|d| !matches!(d, Dpp::Label(_)))
            .count();
        self.scanned = self.code.len();
        if self.counted > crate::isa::MAX_INSTS {
            return self.error(format!(
                "the program needs more than the DPP's {} instructions here ({} so far)",
                crate::isa::MAX_INSTS,
                self.counted
            ));
        }
        Ok(())
    }

    /// The end of the main program: `wait last` on its final instruction
    /// when that is an OUTPUT, else an OUTPUT that writes nothing.
    fn epilogue(&mut self) -> Result<(), CompileError> {
        self.result_1x()?;
        match self.code.last_mut() {
            Some(Dpp::Alu(a)) if a.out => {
                a.wait = true;
                a.last = true;
            }
            _ => self.code.push(Dpp::Alu(Alu {
                out: true,
                wait: true,
                last: true,
                ..Alu::default()
            })),
        }
        self.main_end = self.code.len();
        Ok(())
    }

    /// Records an output register written.
    pub(super) fn wrote_output(&mut self, r: Reg) {
        self.outputs.insert(r);
    }

    fn push_block(&mut self, b: Block) {
        self.blocks.push(b);
    }

    /// Ifs between the innermost loop and here.
    fn if_depth_in_loop(&self) -> Result<(usize, &Block), CompileError> {
        let mut d = 0;
        for b in self.blocks.iter().rev() {
            match b {
                Block::If { .. } => d += 1,
                Block::Loop { .. } => return Ok((d, b)),
            }
        }
        self.error("break outside rep/loop")
    }

    fn inst(&mut self, inst: &Inst) -> Result<(), CompileError> {
        lower::inst(self, inst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_shader_compiles_and_assembles() {
        let s = super::super::assemble("ps_3_0\ndcl_texcoord0 v0\nadd r0, v0, c0\nmov oC0, r0\n")
            .unwrap();
        let c = compile(&s).unwrap();
        assert!(c.listing.contains("tex ld"), "{}", c.listing);
        assert!(c.bindings.contains(&("v0".into(), "in0".into())));
    }
}
