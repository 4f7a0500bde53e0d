//! ALU and OUTPUT statements: `alu|out RGB-UNIT | ALPHA-UNIT items` (§4), and
//! the operand helpers (registers, sources, comparisons, raw fields) that the
//! TEX and flow-control parsers share.

use super::*;

impl Parser<'_> {
    // --- ALU / OUTPUT -------------------------------------------------------

    pub(super) fn alu(&mut self, ty: InstType) -> R<Inst> {
        let mut inst = Inst::zeroed(ty);
        let mut alu = Alu::default();
        self.unit(&mut inst, &mut alu, true)?;
        self.expect("|", "between the RGB and the alpha unit")?;
        self.unit(&mut inst, &mut alu, false)?;
        let mut raw_items = Vec::new();
        while !self.at_end() {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return self.unknown_item();
            };
            let lower = name.to_ascii_lowercase();
            if let Some(k) = ["src0", "src1", "src2"].iter().position(|s| *s == lower) {
                self.pos += 1;
                self.expect("=", "after a source")?;
                let rgb = self.src_value()?;
                let alpha = if self.eat("/") {
                    self.src_value()?
                } else {
                    rgb
                };
                alu.rgb_addr.set_src(k, rgb);
                alu.alpha_addr.set_src(k, alpha);
            } else if lower == "srcp" {
                self.pos += 1;
                self.expect("=", "after srcp")?;
                let rgb = self.enum_ident::<SrcpOp>(
                    "a presubtract operation",
                    SrcpOp::from_mnemonic,
                    "bias, sub, add, inv",
                )?;
                let alpha = if self.eat("/") {
                    self.enum_ident::<SrcpOp>(
                        "a presubtract operation",
                        SrcpOp::from_mnemonic,
                        "bias, sub, add, inv",
                    )?
                } else {
                    rgb
                };
                (alu.rgb_addr.srcp_op, alu.alpha_addr.srcp_op) = (rgb, alpha);
            } else if lower == "res" {
                self.pos += 1;
                self.expect("=", "after res")?;
                let ch = self.ident("`r` or `a`")?;
                inst.cmn.alu_result_sel = match ch.as_str() {
                    "r" => ResultSel::Red,
                    "a" => ResultSel::Alpha,
                    _ => {
                        self.pos -= 1;
                        return self.error("the ALU result comes from `r` or `a`", None);
                    }
                };
                inst.cmn.alu_result_op = self.compare_zero()?;
                alu.rgb.alu_wmask = true;
            } else if self.is_raw_field(&inst, &name) {
                // Raw fields of words 1-5 apply after the body is complete.
                raw_items.push(self.pos);
                self.pos += 3;
            } else if !self.common_item(&mut inst)? {
                return self.unknown_item();
            }
        }
        inst.body = Body::Alu(alu);
        self.apply_raw(&mut inst, raw_items)?;
        Ok(inst)
    }

    pub(super) fn is_raw_field(&self, inst: &Inst, name: &str) -> bool {
        inst.find_field(name).is_some_and(|(word, _)| word != 0)
    }

    /// Applies raw `WORD.FIELD=value` items recorded at token positions.
    pub(super) fn apply_raw(&mut self, inst: &mut Inst, positions: Vec<usize>) -> R<()> {
        let end = self.pos;
        for p in positions {
            self.pos = p;
            let applied = self.common_item(inst)?;
            debug_assert!(applied);
        }
        self.pos = end;
        Ok(())
    }

    pub(super) fn enum_ident<T>(
        &mut self,
        what: &str,
        f: fn(&str) -> Option<T>,
        hint: &str,
    ) -> R<T> {
        let name = self.ident(what)?;
        match f(&name) {
            Some(v) => Ok(v),
            None => {
                self.pos -= 1;
                self.error(format!("unknown {what} `{name}`"), Some(hint))
            }
        }
    }

    /// Looks up `text` among the mnemonics of `all`; the error lists them.
    pub(super) fn named<T: Copy + fmt::Display>(
        &self,
        text: &str,
        col: usize,
        what: &str,
        all: &[T],
        lookup: fn(&str) -> Option<T>,
    ) -> R<T> {
        lookup(text).ok_or_else(|| {
            err(
                self.line,
                col,
                format!("unknown {what} `{text}`"),
                Some(names(all)),
            )
        })
    }

    /// `== 0`, `< 0`, `>= 0`, `!= 0`.
    pub(super) fn compare_zero(&mut self) -> R<CmpOp> {
        let op = match self.peek() {
            Some(Tok::Punct("==")) => CmpOp::Eq,
            Some(Tok::Punct("<")) => CmpOp::Lt,
            Some(Tok::Punct(">=")) => CmpOp::Ge,
            Some(Tok::Punct("!=")) => CmpOp::Ne,
            _ => {
                return self.error(
                    "expected a comparison with zero",
                    Some("== 0, < 0, >= 0 or != 0"),
                );
            }
        };
        self.pos += 1;
        self.number("zero", 0)?;
        Ok(op)
    }

    /// A source value: `rN`, `cN`, `r[aL+N]`, `c[aL+N]` or an inline constant.
    pub(super) fn src_value(&mut self) -> R<Src> {
        let col = self.col();
        match self.peek().cloned() {
            Some(Tok::Num(text)) => {
                self.pos += 1;
                let value: f32 = text
                    .parse()
                    .map_err(|_| err(self.line, col, format!("bad number `{text}`"), None))?;
                match inline_code(value) {
                    Some(code) => Ok(Src {
                        kind: SrcKind::Inline(code),
                        rel: false,
                    }),
                    None => Err(err(
                        self.line,
                        col,
                        format!("{text} is not an inline constant"),
                        Some(nearest_inline(value)),
                    )),
                }
            }
            Some(Tok::Ident(_)) => {
                let (file, index, rel, suffix) = self.register_with_suffix("r or c")?;
                if let Some(suffix) = suffix {
                    return Err(err(
                        self.line,
                        col,
                        format!("a source takes no `.{suffix}`"),
                        Some("swizzles belong to the inputs: mad(s0.rrr, …)".into()),
                    ));
                }
                match file {
                    'r' if index < 128 => Ok(Src {
                        kind: SrcKind::Temp(index as u8),
                        rel,
                    }),
                    'c' if index < 256 => Ok(Src {
                        kind: SrcKind::Const(index as u8),
                        rel,
                    }),
                    'r' => Err(err(
                        self.line,
                        col,
                        format!("temporary r{index} out of range"),
                        Some("r0..r127".into()),
                    )),
                    'c' => Err(err(
                        self.line,
                        col,
                        format!("constant c{index} out of range"),
                        Some("c0..c255".into()),
                    )),
                    _ => Err(err(
                        self.line,
                        col,
                        "a source is a temporary (rN), a constant (cN) or an inline number".into(),
                        None,
                    )),
                }
            }
            _ => self.error(
                "expected a source",
                Some("rN, cN, r[aL+N], c[aL+N] or an inline constant such as 0.5"),
            ),
        }
    }

    /// A temporary `rN` / `r[aL+N]` with an optional `.suffix`; any other
    /// register file or an index past r127 is an error saying `message`.
    pub(super) fn temp_register(
        &mut self,
        what: &str,
        message: &str,
    ) -> R<(u8, bool, Option<String>)> {
        let col = self.col();
        let (file, index, rel, suffix) = self.register_with_suffix(what)?;
        if file != 'r' || index > 127 {
            return Err(err(self.line, col, message.into(), Some("r0..r127".into())));
        }
        Ok((index as u8, rel, suffix))
    }

    /// `rN` / `cN` / `r[aL+N]` / `c[aL+N]` with an optional `.suffix`:
    /// returns (file letter, index, relative, suffix).
    pub(super) fn register_with_suffix(
        &mut self,
        what: &str,
    ) -> R<(char, u32, bool, Option<String>)> {
        let col = self.col();
        let name = self.ident(what)?;
        let (base, suffix) = match name.split_once('.') {
            Some((b, s)) => (b.to_string(), Some(s.to_string())),
            None => (name.clone(), None),
        };
        let mut chars = base.chars();
        let file = chars.next().unwrap_or(' ');
        let rest: String = chars.collect();
        if rest.is_empty() && suffix.is_none() && self.eat("[") {
            let al = self.ident("aL")?;
            if !al.eq_ignore_ascii_case("al") {
                self.pos -= 1;
                return self.error("relative addressing is written [aL+N]", None);
            }
            let index = if self.eat("+") {
                self.number("an index", 255)?
            } else {
                0
            };
            self.expect("]", "after a relative address")?;
            let suffix = match self.peek() {
                Some(Tok::Ident(s)) if s.starts_with('.') => {
                    let s = s[1..].to_string();
                    self.pos += 1;
                    Some(s)
                }
                _ => None,
            };
            return Ok((file, index, true, suffix));
        }
        match rest.parse::<u32>() {
            Ok(index) if !rest.starts_with('+') => Ok((file, index, false, suffix)),
            _ => Err(err(
                self.line,
                col,
                format!("expected {what}, found `{name}`"),
                None,
            )),
        }
    }

    /// One unit: `dests = op.mods(args)`.
    pub(super) fn unit(&mut self, inst: &mut Inst, alu: &mut Alu, rgb: bool) -> R<()> {
        let unit = if rgb { "RGB" } else { "alpha" };
        // Destinations.
        if !self.eat("_") {
            loop {
                if matches!(self.peek(), Some(Tok::Punct("="))) {
                    break;
                }
                self.dest(inst, alu, rgb)?;
            }
        } else if !matches!(self.peek(), Some(Tok::Punct("="))) {
            return self.error("expected `=` after `_`", None);
        }
        self.expect("=", &format!("after the {unit} destinations"))?;
        // Operation and modifiers.
        let col = self.col();
        let name = self.ident("an operation")?;
        let mut parts = name.split('.');
        let op_name = parts.next().unwrap_or_default();
        let arity = if rgb {
            alu.rgba.op = self.named(
                op_name,
                col,
                "RGB operation",
                RgbOp::ALL,
                RgbOp::from_mnemonic,
            )?;
            alu.rgba.op.arity()
        } else {
            alu.alpha.op = self.named(
                op_name,
                col,
                "alpha operation",
                AlphaOp::ALL,
                AlphaOp::from_mnemonic,
            )?;
            alu.alpha_arity()
        };
        let (clamp, omod) = if rgb {
            (&mut inst.cmn.rgb_clamp, &mut alu.rgb.omod)
        } else {
            (&mut inst.cmn.alpha_clamp, &mut alu.alpha.omod)
        };
        for m in parts {
            if m.eq_ignore_ascii_case("sat") {
                *clamp = true;
            } else if let Some(o) = Omod::from_mnemonic(m) {
                *omod = o;
            } else {
                return Err(err(
                    self.line,
                    col,
                    format!("unknown modifier `.{m}`"),
                    Some(".sat, .x2 .x4 .x8 .d2 .d4 .d8, .off".into()),
                ));
            }
        }
        // Inputs.
        self.expect("(", "after the operation")?;
        let mut n = 0;
        if !self.eat(")") {
            loop {
                if n == 3 {
                    return self.error("at most three inputs (A, B, C)", None);
                }
                self.input(alu, rgb, n)?;
                n += 1;
                if self.eat(")") {
                    break;
                }
                self.expect(",", "between inputs")?;
            }
        }
        if n < arity {
            let beside_dp4 = !rgb && alu.alpha.op == AlphaOp::Dp;
            return self.error(
                if beside_dp4 {
                    format!(
                        "alpha `dp` beside `dp4` takes 2 inputs (the fourth pair of factors, docs/isa.md §4.5), found {n}"
                    )
                } else {
                    format!("`{op_name}` takes {arity} input(s), found {n}")
                },
                beside_dp4.then_some("write the pair, e.g. `dp(s0, s1)` for s0.a·s1.a"),
            );
        }
        Ok(())
    }

    pub(super) fn dest(&mut self, inst: &mut Inst, alu: &mut Alu, rgb: bool) -> R<()> {
        let col = self.col();
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return self.error(
                "expected a destination or `=`",
                Some("rN.mask, rtA.mask (out), p.mask<0 (alu), depth"),
            );
        };
        let lower = name.to_ascii_lowercase();
        let chans: &[char] = if rgb { &['r', 'g', 'b'] } else { &['a'] };
        let mask_of = |this: &Self, s: &str| -> R<u8> {
            if s == "_" {
                return Ok(0);
            }
            mask_bits(s, chans).ok_or_else(|| {
                err(
                    this.line,
                    col,
                    format!("bad write mask `.{s}`"),
                    Some(format!("channels {chans:?} in order")),
                )
            })
        };
        if lower == "depth" {
            if rgb {
                return self.error("`depth` is written by the alpha unit", None);
            }
            self.pos += 1;
            alu.alpha.w_omask = true;
        } else if let Some(rest) = lower.strip_prefix("rt") {
            let (t, m) = rest.split_once('.').unwrap_or((rest, ""));
            let target = match t {
                "a" => 0,
                "b" => 1,
                "c" => 2,
                "d" => 3,
                _ => {
                    return self.error(
                        format!("unknown render target `rt{t}`"),
                        Some("rtA, rtB, rtC, rtD"),
                    );
                }
            };
            if inst.cmn.ty != InstType::Out {
                return self.error(
                    "only `out` instructions write render targets",
                    Some("use `out` (docs/isa.md §2.2)"),
                );
            }
            self.pos += 1;
            let m = mask_of(self, m)?;
            if rgb {
                (inst.cmn.rgb_omask, alu.rgb.target) = (m, target);
            } else {
                (inst.cmn.alpha_omask, alu.alpha.target) = (m != 0, target);
            }
        } else if let Some(m) = lower.strip_prefix("p.") {
            if inst.cmn.ty != InstType::Alu {
                return self.error(
                    "only `alu` instructions set predicate bits",
                    Some("use `alu` (docs/isa.md §2.2)"),
                );
            }
            self.pos += 1;
            let m = mask_of(self, m)?;
            let cmp = self.compare_zero()? as u8;
            if rgb {
                (inst.cmn.rgb_omask, alu.rgb.target) = (m, cmp);
            } else {
                (inst.cmn.alpha_omask, alu.alpha.target) = (m != 0, cmp);
            }
        } else {
            let (index, rel, suffix) = self.temp_register(
                "a destination",
                "only temporaries r0..r127 can be destinations",
            )?;
            let m = mask_of(
                self,
                suffix.as_deref().unwrap_or(if rgb { "rgb" } else { "a" }),
            )?;
            if rgb {
                inst.cmn.rgb_wmask = m;
                (alu.rgba.addrd, alu.rgba.addrd_rel) = (index, rel);
            } else {
                inst.cmn.alpha_wmask = m != 0;
                (alu.alpha.addrd, alu.alpha.addrd_rel) = (index, rel);
            }
        }
        Ok(())
    }

    pub(super) fn input(&mut self, alu: &mut Alu, rgb: bool, n: usize) -> R<()> {
        let neg = self.eat("-");
        let abs = matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case("abs"));
        if abs {
            self.pos += 1;
            self.expect("(", "after abs")?;
        }
        let col = self.col();
        let name = self.ident("an input (s0, s1, s2, sp)")?;
        if abs {
            self.expect(")", "after the abs input")?;
        }
        let modifier = match (neg, abs) {
            (false, false) => Mod::Nop,
            (true, false) => Mod::Neg,
            (false, true) => Mod::Abs,
            (true, true) => Mod::Nab,
        };
        let (sel_name, swz_text) = name
            .split_once('.')
            .unwrap_or((&name, if rgb { "rgb" } else { "a" }));
        let Some(sel) = Sel::from_mnemonic(sel_name) else {
            return Err(err(
                self.line,
                col,
                format!("unknown input `{sel_name}`"),
                Some("s0, s1, s2, sp".into()),
            ));
        };
        let swz: Vec<Swz> = swz_text
            .chars()
            .filter_map(|c| Swz::from_mnemonic(&c.to_string()))
            .collect();
        let want = if rgb { 3 } else { 1 };
        if swz.len() != want || swz_text.chars().count() != want {
            return Err(err(
                self.line,
                col,
                format!("bad swizzle `.{swz_text}`"),
                Some(format!("{want} of r g b a 0 h(0.5) 1")),
            ));
        }
        if rgb {
            alu.set_rgb_input(
                n,
                RgbInput {
                    sel,
                    swz: [swz[0], swz[1], swz[2]],
                    modifier,
                },
            );
        } else {
            alu.set_alpha_input(
                n,
                AlphaInput {
                    sel,
                    swz: swz[0],
                    modifier,
                },
            );
        }
        Ok(())
    }
}
