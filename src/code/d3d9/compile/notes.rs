//! What a compiled shader tells its host: which machine resource each of
//! its registers (and each name of its constant table) became.

use super::Compiler;
use crate::d3d9::{Reg, RegKind};

impl Compiler<'_> {
    /// `v0=in0`, `s0=in1`, `s0.size=c254`, `oC0=out0`, `oDepth=cond`,
    /// `vFace=c253`, `vPos=r0`, ps_1_x's `bumpenv1=c252` and
    /// `bumpenvl1=c251`, and the constant table's names.
    pub(super) fn bindings(&self) -> Vec<(String, String)> {
        let mut bindings = Vec::new();
        for (r, (surface, _)) in &self.inputs {
            if let Some(c) = self.planes.get(r) {
                bindings.push((format!("{r}.plane"), format!("c{c}")));
            } else {
                bindings.push((r.to_string(), format!("in{surface}")));
            }
        }
        for (n, (surface, c)) in &self.samplers {
            bindings.push((format!("s{n}"), format!("in{surface}")));
            if self.dialect == super::Dialect::D3d9 {
                bindings.push((format!("s{n}.size"), format!("c{c}")));
            }
        }
        for r in &self.outputs {
            let to = match r.kind {
                RegKind::DepthOut => "cond".to_string(),
                _ => format!("out{}", r.num),
            };
            bindings.push((r.to_string(), to));
        }
        for (&(n, luminance), c) in &self.bumpenv {
            let l = if luminance { "l" } else { "" };
            bindings.push((format!("bumpenv{l}{n}"), format!("c{c}")));
        }
        if let Some(c) = self.vface {
            bindings.push(("vFace".into(), format!("c{c}")));
        }
        if self
            .shader
            .insts()
            .any(|i| i.src.iter().any(|s| s.reg == Reg::new(RegKind::Misc, 0)))
        {
            bindings.push(("vPos".into(), "r0".into()));
        }
        // Names from the shader's constant table (`scale=c3`, `tex=in1`).
        for n in crate::d3d9::ctab::constant_table(self.shader) {
            let taken = bindings
                .iter()
                .any(|(a, _)| a.eq_ignore_ascii_case(&n.name));
            if n.name.is_empty() || n.name.contains(['=', '\n', '\0']) || taken {
                continue;
            }
            let resource = match n.kind {
                RegKind::Const => format!("c{}", n.index),
                RegKind::ConstInt => format!("i{}", n.index),
                RegKind::ConstBool => format!("b{}", n.index),
                _ => match self.samplers.get(&n.index) {
                    Some((surface, _)) => format!("in{surface}"),
                    None => continue,
                },
            };
            bindings.push((n.name, resource));
        }
        bindings
    }
}
