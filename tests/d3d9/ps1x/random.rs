//! Random ps_1_x shaders of every version, as text, for the differential
//! test of `ps1x.rs`.

use ctm_tools::diff::Rng;

pub struct Gen(pub Rng);

impl Gen {
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u32) as usize
    }
    pub fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
    pub fn flip(&mut self) -> bool {
        self.below(2) == 0
    }
    /// A float: mostly small, sometimes out of [−1, 1], sometimes special.
    pub fn value(&mut self) -> u32 {
        const SPECIAL: [u32; 10] = [
            0,
            0x8000_0000,
            0x3F80_0000,
            0xBF80_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0001,
            0x0000_0001,
            0x3F00_0000,
            0x4080_0000,
        ];
        match self.below(8) {
            0 => SPECIAL[self.below(SPECIAL.len())],
            1 => self.0.next_u32(),
            2 => ((self.below(2001) as f32 - 1000.0) / 64.0).to_bits(),
            _ => ((self.below(257) as f32 - 128.0) / 100.0).to_bits(),
        }
    }
}

/// One random ps_1_x shader as text.
pub struct Shader1x<'g> {
    pub g: &'g mut Gen,
    pub version: u8,
    /// t# the shader has.
    pub textures: usize,
    pub temps: usize,
    /// ps_1_4's phase 2 (dependent reads, colour inputs).
    pub phase2: bool,
}

impl Shader1x<'_> {
    fn ps14(&self) -> bool {
        self.version == 4
    }
    fn src(&mut self) -> String {
        let ps14 = self.ps14();
        let reg = match self.g.below(5) {
            0 | 1 => format!("r{}", self.g.below(self.temps)),
            2 if !ps14 || self.phase2 => format!("v{}", self.g.below(2)),
            3 if !ps14 => format!("t{}", self.g.below(self.textures)),
            _ => format!("c{}", self.g.below(8)),
        };
        let mods: &[(&str, &str)] = if ps14 {
            &[
                ("-", ""),
                ("", "_bias"),
                ("-", "_bias"),
                ("", "_bx2"),
                ("-", "_bx2"),
                ("1-", ""),
                ("", "_x2"),
                ("-", "_x2"),
            ]
        } else {
            &[
                ("-", ""),
                ("", "_bias"),
                ("-", "_bias"),
                ("", "_bx2"),
                ("-", "_bx2"),
                ("1-", ""),
            ]
        };
        let (pre, post) = if self.g.below(3) == 0 {
            mods[self.g.below(mods.len())]
        } else {
            ("", "")
        };
        let swz = match self.g.below(6) {
            0 => format!(".{}", self.g.pick(&["r", "g", "b", "a"])),
            1 if ps14 => format!(".{}", self.g.pick(&["x", "y", "z", "w"])),
            _ => String::new(),
        };
        format!("{pre}{reg}{post}{swz}")
    }
    fn shift(&mut self) -> &'static str {
        if self.g.below(4) != 0 {
            return "";
        }
        if self.ps14() {
            self.g.pick(&["_x2", "_x4", "_x8", "_d2", "_d4", "_d8"])
        } else {
            self.g.pick(&["_x2", "_x4", "_d2"])
        }
    }
    fn sat(&mut self) -> &'static str {
        if self.g.below(4) == 0 { "_sat" } else { "" }
    }
    fn dst_reg(&mut self) -> String {
        if !self.ps14() && self.g.below(5) == 0 {
            format!("t{}", self.g.below(self.textures))
        } else {
            format!("r{}", self.g.below(self.temps))
        }
    }
    /// An arithmetic operation writing `dst`.
    fn arith(&mut self, dst: &str) -> String {
        let m = format!("{}{}", self.shift(), self.sat());
        let ops = if self.version == 1 { 9 } else { 11 };
        match self.g.below(ops) {
            0 => format!("mov{m} {dst}, {}", self.src()),
            1 => format!("add{m} {dst}, {}, {}", self.src(), self.src()),
            2 => format!("sub{m} {dst}, {}, {}", self.src(), self.src()),
            3 => format!("mul{m} {dst}, {}, {}", self.src(), self.src()),
            4 => format!(
                "mad{m} {dst}, {}, {}, {}",
                self.src(),
                self.src(),
                self.src()
            ),
            5 => format!(
                "lrp{m} {dst}, {}, {}, {}",
                self.src(),
                self.src(),
                self.src()
            ),
            6 => format!("dp3{m} {dst}, {}, {}", self.src(), self.src()),
            7 if self.ps14() => format!(
                "cnd{m} {dst}, {}, {}, {}",
                self.src(),
                self.src(),
                self.src()
            ),
            7 => format!("cnd{m} {dst}, r0.a, {}, {}", self.src(), self.src()),
            8 => "nop".to_string(),
            9 => format!("dp4{m} {dst}, {}, {}", self.src(), self.src()),
            _ => format!(
                "cmp{m} {dst}, {}, {}, {}",
                self.src(),
                self.src(),
                self.src()
            ),
        }
    }
    /// An arithmetic instruction, or a co-issued pair (.rgb, then .a).
    fn arith_line(&mut self, out: &mut Vec<String>) {
        let reg = self.dst_reg();
        if self.g.below(3) == 0 {
            let first = self.arith(&format!("{reg}.rgb"));
            let other = self.dst_reg();
            let second = self.arith(&format!("{other}.a"));
            if first != "nop" && second != "nop" && !second.starts_with("dp3") {
                out.push(first);
                out.push(format!("+{second}"));
                return;
            }
        }
        let mask = if self.ps14() {
            self.g
                .pick(&["", "", ".rgb", ".a", ".r", ".gb", ".rga", ".xw"])
        } else {
            self.g.pick(&["", "", ".rgb", ".a"])
        };
        let line = self.arith(&format!("{reg}{mask}"));
        out.push(line);
    }
    /// ps_1_1–1_3 texture instructions writing t`t` (and maybe the next
    /// ones: matrix rows); how many registers they took.
    pub fn texture_line(&mut self, t: usize, out: &mut Vec<String>) -> usize {
        let v = self.version;
        let src = |g: &mut Gen| {
            format!(
                "t{}{}",
                g.below(t.max(1)),
                if g.flip() { "_bx2" } else { "" }
            )
        };
        match self.g.below(8) {
            0 => out.push(format!("tex t{t}")),
            1 => out.push(format!("texcoord t{t}")),
            2 if self.g.flip() => out.push(format!("texkill t{t}")),
            3 if t > 0 => {
                let ops: &[&str] = if v == 1 {
                    &["texbem", "texbeml", "texreg2ar", "texreg2gb"]
                } else {
                    &[
                        "texbem",
                        "texbeml",
                        "texreg2ar",
                        "texreg2gb",
                        "texreg2rgb",
                        "texdp3",
                        "texdp3tex",
                    ]
                };
                let op = self.g.pick(ops);
                let s = if op.starts_with("texbem") {
                    format!("t{}", self.g.below(t))
                } else {
                    src(self.g)
                };
                out.push(format!("{op} t{t}, {s}"));
            }
            4 if t > 0 && t + 1 < self.textures => {
                let s = src(self.g);
                out.push(format!("texm3x2pad t{t}, {s}"));
                let last = if v == 3 && self.g.flip() {
                    "texm3x2depth"
                } else {
                    "texm3x2tex"
                };
                out.push(format!("{last} t{}, {s}", t + 1));
                return 2;
            }
            5 if t > 0 && t + 2 < self.textures => {
                let s = src(self.g);
                out.push(format!("texm3x3pad t{t}, {s}"));
                out.push(format!("texm3x3pad t{}, {s}", t + 1));
                let ops: &[&str] = if v == 1 {
                    &["texm3x3tex", "texm3x3spec", "texm3x3vspec"]
                } else {
                    &["texm3x3tex", "texm3x3spec", "texm3x3vspec", "texm3x3"]
                };
                let last = self.g.pick(ops);
                if last == "texm3x3spec" {
                    out.push(format!("{last} t{}, {s}, c{}", t + 2, self.g.below(8)));
                } else {
                    out.push(format!("{last} t{}, {s}", t + 2));
                }
                return 3;
            }
            _ => {}
        }
        1
    }
    pub fn text(&mut self) -> String {
        let mut out = vec![format!("ps_1_{}", self.version)];
        for c in 0..4 {
            let v: Vec<String> = (0..4)
                .map(|_| format!("{:#010x}", self.g.value()))
                .collect();
            out.push(format!("def c{c}, {}", v.join(", ")));
        }
        if self.ps14() {
            // Phase 1: lookups and coordinates.
            for n in 0..self.g.below(4) {
                let t = self.g.below(self.textures);
                let m = self.g.pick(&["", "", "_dz", "_dw"]);
                if self.g.flip() {
                    out.push(format!("texld r{n}, t{t}{m}"));
                } else {
                    out.push(format!("texcrd r{n}.rgb, t{t}{m}"));
                }
            }
            for _ in 0..self.g.below(3) {
                self.arith_line(&mut out);
            }
            if self.g.below(3) == 0 {
                let (a, b) = (self.src(), self.src());
                out.push(format!(
                    "bem{} r{}.rg, {a}, {b}",
                    self.shift(),
                    self.g.below(self.temps)
                ));
            }
            out.push("phase".into());
            self.phase2 = true;
            for n in 4..4 + self.g.below(2) {
                let r = self.g.below(self.temps);
                out.push(format!("texld r{n}, r{r}{}", self.g.pick(&["", "_dz"])));
            }
            if self.g.below(4) == 0 {
                out.push(format!("texkill r{}", self.g.below(self.temps)));
            }
            if self.g.below(4) == 0 {
                out.push("texdepth r5".into());
            }
        } else {
            let mut t = 0;
            while t < self.textures {
                t += self.texture_line(t, &mut out);
            }
        }
        for _ in 0..1 + self.g.below(8) {
            self.arith_line(&mut out);
        }
        out.join("\n")
    }
}
