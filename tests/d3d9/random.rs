//! Random shaders compiled to the DPP agree, bit for bit, with a direct
//! evaluation of their Direct3D 9 semantics (`common::d3d9_ref`), on both
//! engines, over special and random inputs.

use crate::common;

use common::d3d9_ref::{Pixel, eval};
use common::shader::{bind, kernel, output, run, with_output};
use ctm::d3d9;
use ctm::kernel::Job;
use ctm_tools::diff::Rng;
use proptest::prelude::*;

struct Gen(Rng);

impl Gen {
    fn next(&mut self) -> u64 {
        u64::from(self.0.next_u32()) << 32 | u64::from(self.0.next_u32())
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u32) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
    /// A float: mostly ordinary, sometimes special.
    fn value(&mut self) -> u32 {
        const SPECIAL: [u32; 12] = [
            0,
            0x8000_0000,
            0x3F80_0000,
            0xBF80_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0001,
            0x0000_0001,
            0x8040_0000,
            0x7F7F_FFFF,
            0x3F00_0000,
            0x4080_0000,
        ];
        match self.below(6) {
            0 => SPECIAL[self.below(SPECIAL.len())],
            1 => self.next() as u32,
            _ => ((self.below(2001) as f32 - 1000.0) / 64.0).to_bits(),
        }
    }
    fn swizzle(&mut self) -> String {
        match self.below(4) {
            0 => String::new(),
            1 => format!(".{}", self.pick(&["x", "y", "z", "w"])),
            _ => {
                let n = 1 + self.below(4);
                let s: String = (0..n).map(|_| self.pick(&["x", "y", "z", "w"])).collect();
                format!(".{s}")
            }
        }
    }
    fn mask(&mut self) -> String {
        let m = 1 + self.below(15);
        if m == 15 {
            return String::new();
        }
        let s: String = (0..4)
            .filter(|c| m & (1 << c) != 0)
            .map(|c| ["x", "y", "z", "w"][c])
            .collect();
        format!(".{s}")
    }
    fn src(&mut self) -> String {
        let reg = match self.below(4) {
            0 | 1 => format!("r{}", self.below(6)),
            2 => format!("v{}", self.below(2)),
            _ => format!("c{}", self.below(8)),
        };
        let (pre, post) = match self.below(6) {
            0 => ("-", ""),
            1 => ("", "_abs"),
            2 => ("-", "_abs"),
            _ => ("", ""),
        };
        format!("{pre}{reg}{post}{}", self.swizzle())
    }
    fn scalar(&mut self) -> String {
        let s = self.src();
        let base = s.split('.').next().unwrap_or_default().to_string();
        format!("{base}.{}", self.pick(&["x", "y", "z", "w"]))
    }
    fn dst(&mut self) -> String {
        format!("r{}{}", self.below(6), self.mask())
    }
    fn sat(&mut self) -> &'static str {
        if self.below(5) == 0 { "_sat" } else { "" }
    }
    fn inst(&mut self, out: &mut Vec<String>, depth: usize) {
        let pred = if self.below(6) == 0 {
            format!(
                "({}p0{}) ",
                if self.below(2) == 0 { "!" } else { "" },
                self.swizzle()
            )
        } else {
            String::new()
        };
        let line = match self.below(28) {
            0 => format!("mov{} {}, {}", self.sat(), self.dst(), self.src()),
            1 => format!(
                "add{} {}, {}, {}",
                self.sat(),
                self.dst(),
                self.src(),
                self.src()
            ),
            2 => format!("sub {}, {}, {}", self.dst(), self.src(), self.src()),
            3 => format!(
                "mul{} {}, {}, {}",
                self.sat(),
                self.dst(),
                self.src(),
                self.src()
            ),
            4 => format!(
                "mad {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.src()
            ),
            5 => format!("min {}, {}, {}", self.dst(), self.src(), self.src()),
            6 => format!(
                "max{} {}, {}, {}",
                self.sat(),
                self.dst(),
                self.src(),
                self.src()
            ),
            7 => format!(
                "cmp {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.src()
            ),
            8 => format!(
                "cnd {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.src()
            ),
            9 => format!("frc {}, {}", self.dst(), self.src()),
            10 => format!("slt {}, {}, {}", self.dst(), self.src(), self.src()),
            11 => format!("sge {}, {}, {}", self.dst(), self.src(), self.src()),
            12 => format!("dp3 {}, {}, {}", self.dst(), self.src(), self.src()),
            13 => format!(
                "dp4{} {}, {}, {}",
                self.sat(),
                self.dst(),
                self.src(),
                self.src()
            ),
            14 => format!(
                "dp2add {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.scalar()
            ),
            15 => format!(
                "{} {}, {}",
                self.pick(&["rcp", "rsq", "exp", "log"]),
                self.dst(),
                self.scalar()
            ),
            16 => format!("pow {}, {}, {}", self.dst(), self.scalar(), self.scalar()),
            17 => format!(
                "lrp {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.src()
            ),
            18 => format!("nrm {}, {}", self.dst(), self.src()),
            19 => format!(
                "crs r{}.{}, {}, {}",
                self.below(6),
                self.pick(&["x", "xy", "xyz", "yz", "z"]),
                self.src(),
                self.src()
            ),
            20 => format!(
                "sincos r{}.{}, {}",
                self.below(6),
                self.pick(&["x", "y", "xy"]),
                self.scalar()
            ),
            21 => format!(
                "{} {}, {}, c{}",
                self.pick(&["m4x4", "m3x3", "m3x4", "m4x3", "m3x2"]),
                self.dst(),
                self.src(),
                self.below(4)
            ),
            22 => format!("abs {}, {}", self.dst(), self.src()),
            23 | 24 => format!(
                "setp_{} p0{}, {}, {}",
                self.pick(&["gt", "lt", "ge", "le", "eq", "ne"]),
                self.mask(),
                self.src(),
                self.src()
            ),
            25 if depth < 2 => {
                out.push(format!(
                    "if_{} {}, {}",
                    self.pick(&["gt", "lt", "ge", "le", "eq", "ne"]),
                    self.scalar(),
                    self.scalar()
                ));
                for _ in 0..1 + self.below(3) {
                    self.inst(out, depth + 1);
                }
                if self.below(2) == 0 {
                    out.push("else".into());
                    for _ in 0..1 + self.below(3) {
                        self.inst(out, depth + 1);
                    }
                }
                "endif".into()
            }
            26 if depth < 2 => {
                out.push(if self.below(2) == 0 {
                    "if b0".into()
                } else {
                    "rep i0".into()
                });
                let rep = out.last().is_some_and(|l| l.starts_with("rep"));
                for _ in 0..1 + self.below(3) {
                    self.inst(out, depth + 1);
                }
                if rep {
                    match self.below(3) {
                        0 => out.push(format!(
                            "break_{} {}, {}",
                            self.pick(&["gt", "lt", "ge", "ne"]),
                            self.scalar(),
                            self.scalar()
                        )),
                        1 => out.push(format!(
                            "breakp {}p0.{}",
                            if self.below(2) == 0 { "!" } else { "" },
                            self.pick(&["x", "y", "z", "w"])
                        )),
                        _ => {}
                    }
                    "endrep".into()
                } else {
                    "endif".into()
                }
            }
            _ => format!(
                "mad {}, {}, {}, {}",
                self.dst(),
                self.src(),
                self.src(),
                self.src()
            ),
        };
        let predicable = !["if", "else", "endif", "rep", "endrep", "break", "setp"]
            .iter()
            .any(|p| line.starts_with(p));
        out.push(if predicable {
            format!("{pred}{line}")
        } else {
            line
        });
    }
    fn shader(&mut self) -> String {
        let mut lines = vec![
            "ps_3_0".to_string(),
            "dcl_texcoord0 v0".into(),
            "dcl_texcoord1 v1".into(),
        ];
        for c in 0..4 {
            let v: Vec<String> = (0..4).map(|_| format!("{:#010x}", self.value())).collect();
            lines.push(format!("def c{c}, {}", v.join(", ")));
        }
        for _ in 0..1 + self.below(12) {
            self.inst(&mut lines, 0);
        }
        lines.push(format!("mov oC0, r{}", self.below(6)));
        lines.push(format!("mov oC1{}, {}", self.mask(), self.src()));
        lines.join("\n")
    }
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut g = Gen(Rng::new(seed));
    let src = g.shader();
    let shader = d3d9::assemble(&src).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
    let k = kernel(&src);
    let w = 8usize;
    let pixels: Vec<[[u32; 4]; 2]> = (0..w)
        .map(|_| [0; 2].map(|_: u32| [0; 4].map(|_: u32| g.value())))
        .collect();
    let host: Vec<[u32; 4]> = (0..4).map(|_| [0; 4].map(|_: u32| g.value())).collect();
    let (count, b0) = (g.below(4) as u8, g.below(2) == 0);
    let row =
        |n: usize| -> Vec<[f32; 4]> { pixels.iter().map(|p| p[n].map(f32::from_bits)).collect() };
    let mut job = Job::new(w as u32, 1).int(0, count, 0, 1).boolean(0, b0);
    for (c, v) in host.iter().enumerate() {
        job = job.constant(4 + c as u8, v.map(f32::from_bits));
    }
    job = bind(&k, job, "v0", &[row(0)]);
    job = bind(&k, job, "v1", &[row(1)]);
    job = with_output(&k, with_output(&k, job, "oC0"), "oC1");
    let out = run(&k, &job);
    let got0 = output(&k, &out, "oC0");
    let got1 = output(&k, &out, "oC1");
    for (x, p) in pixels.iter().enumerate() {
        let mut px = Pixel::default();
        px.inputs[0] = p[0];
        px.inputs[1] = p[1];
        px.consts = vec![[0; 4]; 256];
        for (c, v) in host.iter().enumerate() {
            px.consts[4 + c] = *v;
        }
        px.ints[0] = [i32::from(count), 0, 1];
        px.bools[0] = b0;
        eval(&shader, &mut px).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        for (n, got) in [&got0, &got1].into_iter().enumerate() {
            let g = got[x].map(f32::to_bits);
            prop_assert_eq!(
                g,
                px.out[n],
                "pixel {}, oC{}\n{}\nDPP:\n{}",
                x,
                n,
                src,
                d3d9::compile(&shader).unwrap().listing
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::d3d9_cases()))]

    #[test]
    fn compiled_shaders_agree_with_the_reference(seed in any::<u64>()) {
        check(seed)?;
    }
}
