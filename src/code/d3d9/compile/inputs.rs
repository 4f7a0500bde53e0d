//! Where a shader's inputs come from (`docs/d3d9.md` §3.1, §5): input
//! registers as surfaces read at the pixel (Direct3D 9) or as interpolants
//! (the ctm dialect), samplers as input surfaces, and the compiler's own
//! constants.

use super::emit::{Dpp, Lookup, Val};
use super::{CompileError, Compiler, Dialect, dest, emit};
use crate::d3d9::{Item, Opcode, Reg, RegKind, Version};
use std::collections::BTreeMap;

impl Compiler<'_> {
    /// Every input register the shader declares or reads directly gets a
    /// surface and a temporary loaded at the start; with `v[aL+n]`, v0–v9
    /// get a block of temporaries (undeclared ones read 0).
    pub(super) fn declare_inputs(&mut self) -> Result<(), CompileError> {
        let mut regs = std::collections::BTreeSet::new();
        for item in &self.shader.items {
            match item {
                Item::Dcl(d) if matches!(d.dst.reg.kind, RegKind::Input | RegKind::Texture) => {
                    regs.insert(d.dst.reg);
                }
                Item::Inst(i) => {
                    for s in i.src.iter().chain(i.predicate.iter()) {
                        if matches!(s.reg.kind, RegKind::Input | RegKind::Texture)
                            && s.rel.is_none()
                        {
                            regs.insert(s.reg);
                        }
                    }
                    // texkill reads its register; ps_1_x's texture
                    // instructions read the coordinates of theirs.
                    if let Some(d) = &i.dst
                        && (i.op == Opcode::Texkill || self.shader.version.is_1x())
                        && matches!(d.reg.kind, RegKind::Input | RegKind::Texture)
                    {
                        regs.insert(d.reg);
                    }
                }
                _ => {}
            }
        }
        let relative_v = self.shader.insts().any(|i| {
            i.src
                .iter()
                .any(|s| s.rel.is_some() && s.reg.kind == RegKind::Input)
        });
        let mut block = BTreeMap::new();
        if relative_v {
            for n in 0..self.shader.version.count(RegKind::Input) {
                block.insert(Reg::new(RegKind::Input, n), self.fresh()?);
            }
        }
        self.v_block = block.values().next().copied();
        if self.dialect == Dialect::Ctm {
            if !matches!(self.shader.version, Version::Ps30) && !self.shader.version.is_1x() {
                return self.error("the ctm dialect compiles ps_3_0 and ps_1_x shaders");
            }
            if relative_v {
                return self.error("v[aL + n] is not available in the ctm dialect");
            }
            for r in regs {
                self.interpolant(r)?;
            }
            return Ok(());
        }
        for r in regs {
            let surface = self.surface()?;
            let t = match block.get(&r) {
                Some(&t) => t,
                None => self.fresh()?,
            };
            self.inputs.insert(r, (surface, t));
            self.code.push(Dpp::Tex(Lookup::load(t, surface, 0)));
        }
        Ok(())
    }

    /// A ctm-dialect input: v_t = A' + i·B + j·C from three constants the
    /// PE fills from the parameters (`docs/machine.md` §6.1): ps_3_0's
    /// v0–v6 from slots 1–7, ps_1_x's v0, v1 from slots 1, 2 and t0–t4
    /// from slots 3–7.
    fn interpolant(&mut self, r: Reg) -> Result<(), CompileError> {
        let fits = match r.kind {
            RegKind::Input if self.shader.version.is_1x() => r.num <= 1,
            RegKind::Input => r.num <= 6,
            RegKind::Texture => r.num <= 4,
            _ => false,
        };
        if !fits {
            return self.error(format!(
                "{r}: the ctm dialect's inputs are the interpolants {}",
                if self.shader.version.is_1x() {
                    "v0, v1 and t0–t4 (parameter slots 1–7)"
                } else {
                    "v0–v6"
                }
            ));
        }
        let (a, b, c) = (self.const_slot()?, self.const_slot()?, self.const_slot()?);
        debug_assert!(a == c + 2 && b == c + 1);
        let t = self.fresh()?;
        self.planes.insert(r, c);
        let pos = Val::temp(0);
        let first = emit::mad(pos.clone().scalar(0), Val::konst(c + 1), Val::konst(c));
        dest::to_scratch(self, t, 15, Some(first.clone()), Some(first));
        let second = emit::mad(pos.scalar(1), Val::konst(c + 2), Val::temp(t));
        dest::to_scratch(self, t, 15, Some(second.clone()), Some(second));
        self.inputs.insert(r, (u8::MAX, t));
        Ok(())
    }

    fn surface(&mut self) -> Result<u8, CompileError> {
        if self.next_surface >= 16 {
            return self.error("the shader reads more than the DPP's 16 input surfaces");
        }
        self.next_surface += 1;
        Ok(self.next_surface - 1)
    }

    /// The surface and size constant of sampler `n`.
    pub(super) fn sampler(&mut self, n: u16) -> Result<(u8, u16), CompileError> {
        if let Some(&s) = self.samplers.get(&n) {
            return Ok(s);
        }
        let surface = self.surface()?;
        // The ctm dialect takes texel coordinates: no size is needed.
        let c = match self.dialect {
            Dialect::D3d9 => self.const_slot()?,
            Dialect::Ctm => 0,
        };
        self.samplers.insert(n, (surface, c));
        Ok((surface, c))
    }

    pub(super) fn const_slot(&mut self) -> Result<u16, CompileError> {
        let lowest = match self.shader.version {
            Version::Ps30 => 224,
            _ => 32,
        };
        if self.next_const < lowest {
            return self.error("the compiler ran out of constant registers");
        }
        self.next_const -= 1;
        Ok(self.next_const + 1)
    }
}
