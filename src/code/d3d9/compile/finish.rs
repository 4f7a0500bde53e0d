//! The end of a compilation: subroutines placed before the main program,
//! the last passes, the program encoded, and the executable
//! with its carried values (`def`, `defi`, `defb`, the compiler's own
//! constants), bindings and statistics.

use super::emit::{Dpp, Flow};
use super::{CompileError, CompiledShader, Compiler, emit, passes, ps1x};
use crate::abi::{ConstValues, Executable};
use crate::d3d9::{Def, Item};

impl Compiler<'_> {
    pub(super) fn finish(mut self) -> Result<CompiledShader, CompileError> {
        self.item = None;
        // Entries from before the first item (loads) and after the last
        // (the epilogue) come from no item.
        let mut origin = std::mem::take(&mut self.origin);
        origin.resize(self.code.len(), Vec::new());
        // Subroutines go between the loads and the main program, so that
        // the program ends with its final OUTPUT.
        if self.code.len() > self.main_end {
            let subs = self.code.split_off(self.main_end);
            let sub_origin = origin.split_off(self.main_end);
            let main = self.label();
            let mut tail = self.code.split_off(self.prologue_end);
            let mut tail_origin = origin.split_off(self.prologue_end);
            self.code.push(Dpp::flow(Flow::Jump(main.clone())));
            origin.push(Vec::new());
            self.code.extend(subs);
            origin.extend(sub_origin);
            self.code.push(Dpp::Label(main));
            origin.push(Vec::new());
            self.code.append(&mut tail);
            origin.append(&mut tail_origin);
        }
        self.stats.paired = passes::run(&mut self.code, &mut origin);
        let origins: Vec<Vec<usize>> = self
            .code
            .iter()
            .zip(origin)
            .filter(|(d, _)| !matches!(d, Dpp::Label(_)))
            .map(|(_, o)| o)
            .collect();
        // The whole program, counted again: code moved and grew above.
        (self.counted, self.scanned) = (0, 0);
        self.check_size()?;
        // The compiler builds only what encodes: a failure here is a bug
        // in it, not in the shader.
        let listing = emit::program_text(&self.code)
            .unwrap_or_else(|m| panic!("the compiler built an instruction it cannot list: {m}"));
        let words = emit::encode(&self.code).unwrap_or_else(|m| {
            panic!("the compiler built an instruction it cannot encode: {m}\n{listing}")
        });
        let mut exe = Executable::from_code(words);
        let values = self.carried_values()?;
        let bindings = self.bindings();
        exe.info.values = values;
        exe.info.bindings = bindings.clone();
        let mut stats = self.stats;
        let insts: Vec<crate::isa::Inst> = crate::isa::decode_program(&exe.code)
            .into_iter()
            .flatten()
            .collect();
        // Every constant a relative read reaches in a loop the shader
        // defines (`defi`), not only its base.
        let ints = &exe.info.values.ints;
        exe.info.f32_consts = crate::abi::reachable_consts(&insts, &exe.info.f32_consts, |k| {
            ints.iter()
                .rev()
                .find(|(n, _)| *n == k)
                .map(|&(_, [c, i, s])| (c, i, s as i8))
        });
        count(&mut stats, &insts);
        Ok(CompiledShader {
            exe,
            listing,
            bindings,
            stats,
            origins,
        })
    }

    /// The values the executable carries: `def`, `defi`, `defb` (ps_1_x's
    /// floats clamped), the compiler's constants and vFace's default.
    fn carried_values(&mut self) -> Result<ConstValues, CompileError> {
        let mut values = ConstValues::default();
        for (k, item) in self.shader.items.iter().enumerate() {
            self.item = Some(k);
            match *item {
                Item::Def(Def::Float(n, v)) if self.shader.version.is_1x() => values
                    .floats
                    .push((u32::from(n), v.map(ps1x::clamp_constant))),
                Item::Def(Def::Float(n, v)) => values.floats.push((u32::from(n), v)),
                Item::Def(Def::Int(n, v)) => {
                    let ok = (0..=255).contains(&v[0])
                        && (0..=255).contains(&v[1])
                        && (-128..=127).contains(&v[2]);
                    if !ok {
                        return self.error(
                            "the DPP's loop constants hold a count and an initial aL of 0–255 and a step of −128–127",
                        );
                    }
                    values
                        .ints
                        .push((u32::from(n), [v[0] as u8, v[1] as u8, v[2] as i8 as u8]));
                }
                Item::Def(Def::Bool(n, b)) => values.bools.push((u32::from(n), b)),
                _ => {}
            }
        }
        self.item = None;
        for &(n, v) in &self.consts {
            values.floats.push((u32::from(n), v));
        }
        if let Some(c) = self.vface {
            values
                .defaults
                .push((u32::from(c), [1f32.to_bits(), 0, 0, 0]));
        }
        Ok(values)
    }
}

/// Counts the DPP instructions, the ALU ones and those using both units.
fn count(stats: &mut super::Stats, insts: &[crate::isa::Inst]) {
    stats.dpp_insts = insts.len();
    for i in insts {
        if let crate::isa::Body::Alu(_) = &i.body {
            stats.alu_insts += 1;
            if (i.cmn.rgb_wmask != 0 || i.cmn.rgb_omask != 0)
                && (i.cmn.alpha_wmask || i.cmn.alpha_omask)
            {
                stats.coissued += 1;
            }
        }
    }
}
