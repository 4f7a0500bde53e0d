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
            25 if depth < 2 => self.if_cmp(out, depth),
            26 if depth < 2 => self.if_bool_or_rep(out, depth),
            k => self.alu(k),
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
    /// `name[_sat] dst, src` (`_sat` sometimes, where `sat`).
    fn unary(&mut self, name: &str, sat: bool) -> String {
        let s = if sat { self.sat() } else { "" };
        format!("{name}{s} {}, {}", self.dst(), self.src())
    }
    /// `name[_sat] dst, src, src`.
    fn binary(&mut self, name: &str, sat: bool) -> String {
        let s = if sat { self.sat() } else { "" };
        format!("{name}{s} {}, {}, {}", self.dst(), self.src(), self.src())
    }
    /// `name dst, src, src, src`.
    fn ternary(&mut self, name: &str) -> String {
        let (d, a, b, c) = (self.dst(), self.src(), self.src(), self.src());
        format!("{name} {d}, {a}, {b}, {c}")
    }
    /// Arithmetic instruction `k` (of the 28 kinds; flow control elsewhere).
    fn alu(&mut self, k: usize) -> String {
        match k {
            0 => self.unary("mov", true),
            1 => self.binary("add", true),
            2 => self.binary("sub", false),
            3 => self.binary("mul", true),
            5 => self.binary("min", false),
            6 => self.binary("max", true),
            7 => self.ternary("cmp"),
            8 => self.ternary("cnd"),
            9 => self.unary("frc", false),
            10 => self.binary("slt", false),
            11 => self.binary("sge", false),
            12 => self.binary("dp3", false),
            13 => self.binary("dp4", true),
            14 => {
                let (d, a, b, c) = (self.dst(), self.src(), self.src(), self.scalar());
                format!("dp2add {d}, {a}, {b}, {c}")
            }
            15 => {
                let op = self.pick(&["rcp", "rsq", "exp", "log"]);
                format!("{op} {}, {}", self.dst(), self.scalar())
            }
            16 => format!("pow {}, {}, {}", self.dst(), self.scalar(), self.scalar()),
            17 => self.ternary("lrp"),
            18 => self.unary("nrm", false),
            19 => {
                let (r, m) = (self.below(6), self.pick(&["x", "xy", "xyz", "yz", "z"]));
                format!("crs r{r}.{m}, {}, {}", self.src(), self.src())
            }
            20 => {
                let (r, m) = (self.below(6), self.pick(&["x", "y", "xy"]));
                format!("sincos r{r}.{m}, {}", self.scalar())
            }
            21 => {
                let op = self.pick(&["m4x4", "m3x3", "m3x4", "m4x3", "m3x2"]);
                let (d, a) = (self.dst(), self.src());
                format!("{op} {d}, {a}, c{}", self.below(4))
            }
            22 => self.unary("abs", false),
            23 | 24 => {
                let op = self.pick(&["gt", "lt", "ge", "le", "eq", "ne"]);
                let (m, a, b) = (self.mask(), self.src(), self.src());
                format!("setp_{op} p0{m}, {a}, {b}")
            }
            _ => self.ternary("mad"),
        }
    }
    /// `if_cmp` with a body and sometimes an `else`; returns the `endif`.
    fn if_cmp(&mut self, out: &mut Vec<String>, depth: usize) -> String {
        let op = self.pick(&["gt", "lt", "ge", "le", "eq", "ne"]);
        out.push(format!("if_{op} {}, {}", self.scalar(), self.scalar()));
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
    /// `if b0` or `rep i0` (with sometimes a break) around a body; returns
    /// its end.
    fn if_bool_or_rep(&mut self, out: &mut Vec<String>, depth: usize) -> String {
        let rep = self.below(2) != 0;
        out.push(if rep { "rep i0" } else { "if b0" }.into());
        for _ in 0..1 + self.below(3) {
            self.inst(out, depth + 1);
        }
        if !rep {
            return "endif".into();
        }
        match self.below(3) {
            0 => {
                let op = self.pick(&["gt", "lt", "ge", "ne"]);
                out.push(format!("break_{op} {}, {}", self.scalar(), self.scalar()));
            }
            1 => {
                let not = if self.below(2) == 0 { "!" } else { "" };
                out.push(format!(
                    "breakp {not}p0.{}",
                    self.pick(&["x", "y", "z", "w"])
                ));
            }
            _ => {}
        }
        "endrep".into()
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
