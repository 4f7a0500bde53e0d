//! The compiler's instructions in the assembly syntax of `docs/asm.md`:
//! the listing `ctm compile --listing` prints.

use super::*;

fn input_text(v: &Val, slot: usize, alpha: bool) -> String {
    let chans: String = if alpha {
        SWZ[usize::from(v.swz[3])].to_string()
    } else {
        v.swz[..3].iter().map(|&c| SWZ[usize::from(c)]).collect()
    };
    let inner = format!("s{slot}.{chans}");
    let inner = if v.abs {
        format!("abs({inner})")
    } else {
        inner
    };
    if v.neg { format!("-{inner}") } else { inner }
}

impl Alu {
    /// The assembly line.
    pub fn text(&self) -> Result<String, String> {
        let slots = self.slots()?;
        let unit = |u: &Option<Unit>, alpha: bool| -> Result<String, String> {
            let Some(u) = u else {
                return Ok("max.off(s0, s0)".to_string());
            };
            let mut args = Vec::new();
            for v in &u.inputs {
                let slot = match v.opnd {
                    Some(o) if !v.is_constant() => {
                        slots.iter().position(|s| *s == o).expect("in the slots")
                    }
                    _ => 0,
                };
                args.push(input_text(v, slot, alpha));
            }
            let mut m = String::new();
            if u.omod != 0 {
                let k = [1, 2, 3, -1, -2, -3]
                    .iter()
                    .position(|&x| x == u.omod)
                    .ok_or_else(|| format!("output scale 2^{} does not exist", u.omod))?;
                m.push('.');
                m.push_str(["x2", "x4", "x8", "d2", "d4", "d8"][k]);
            }
            if u.off {
                m.push_str(".off");
            }
            if u.sat {
                m.push_str(".sat");
            }
            Ok(format!("{}{m}({})", u.op.name(), args.join(", ")))
        };
        let rgb = unit(&self.rgb, false)?;
        let alpha = unit(&self.alpha, true)?;
        let dsts = |d: &[Dst], alpha: bool| {
            if d.is_empty() {
                return "_".to_string();
            }
            let t: Vec<String> = d
                .iter()
                .map(|d| match *d {
                    // The alpha unit writes channel a whatever the mask.
                    Dst::Temp(n, _) if alpha => Dst::Temp(n, 8).to_string(),
                    Dst::Target(k, _) if alpha => Dst::Target(k, 8).to_string(),
                    Dst::Pred(_, t) if alpha => Dst::Pred(8, t).to_string(),
                    d => d.to_string(),
                })
                .collect();
            t.join(" ")
        };
        let mut s = format!(
            "{} {} = {rgb} | {} = {alpha}",
            if self.out { "out" } else { "alu" },
            dsts(&self.rgb_dst, false),
            dsts(&self.alpha_dst, true)
        );
        for (k, o) in slots.iter().enumerate() {
            let _ = write!(s, " src{k}={o}");
        }
        if let Some(r) = self.res {
            let _ = write!(s, " res=a{r}");
        }
        if let Some(p) = &self.pred {
            let _ = write!(s, " pred={p}");
        }
        if let Some(p) = &self.apred {
            let _ = write!(s, " apred={p}");
        }
        if self.wait {
            s.push_str(" wait");
        }
        if self.nop {
            s.push_str(" nop");
        }
        if self.last {
            s.push_str(" last");
        }
        Ok(s)
    }
}

impl fmt::Display for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chan: String = self.chan.iter().map(|&c| SWZ[usize::from(c)]).collect();
        write!(
            f,
            "tex {} r{}.{}, in{}.{chan}, r{}.rgba",
            if self.kill { "kill" } else { "ld" },
            self.dst,
            mask_letters(self.mask),
            self.input,
            self.coord
        )?;
        if self.unscaled {
            f.write_str(" unscaled")?;
        }
        if self.acquire {
            f.write_str(" acquire")?;
        }
        if self.wait {
            f.write_str(" wait")?;
        }
        if let Some(p) = &self.pred {
            write!(f, " pred={p}")?;
        }
        if let Some(p) = &self.apred {
            write!(f, " apred={p}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Fc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.flow.parts();
        f.write_str(p.name)?;
        if let Some(n) = p.int {
            write!(f, " i{n}")?;
        }
        if let Some(c) = p.cond {
            write!(f, " {c}")?;
        }
        if let Some(t) = p.target {
            write!(f, " -> {t}")?;
        }
        if let Some(n) = p.pop {
            write!(f, " pop={n}")?;
        }
        if p.jump_incr {
            f.write_str(" jump=incr")?;
        }
        if self.wait {
            f.write_str(" wait")?;
        }
        if self.nop {
            f.write_str(" nop")?;
        }
        Ok(())
    }
}

/// The program text of `code`.
pub fn program_text(code: &[Dpp]) -> Result<String, String> {
    let mut out = String::new();
    for d in code {
        let _ = match d {
            Dpp::Label(l) => writeln!(out, "{l}:"),
            Dpp::Alu(a) => writeln!(out, "    {}", a.text()?),
            Dpp::Tex(t) => writeln!(out, "    {t}"),
            Dpp::Fc(f) => writeln!(out, "    {f}"),
        };
    }
    Ok(out)
}
