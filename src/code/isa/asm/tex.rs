//! TEX statements: `tex OP DST, inN.SWZ, SRC.STRQ items` (§5).

use super::*;

impl Parser<'_> {
    // --- TEX ----------------------------------------------------------------

    pub(super) fn tex(&mut self) -> R<Inst> {
        let mut inst = Inst::zeroed(InstType::Tex);
        let mut tex = Tex::default();
        tex.inst.op = self.enum_ident(
            "a texture operation",
            TexOp::from_mnemonic,
            &names(TexOp::ALL),
        )?;
        self.tex_operands(&mut inst, &mut tex)?;
        let raw_items = self.tex_options(&mut inst, &mut tex)?;
        inst.body = Body::Tex(tex);
        self.apply_raw(&mut inst, raw_items)?;
        Ok(inst)
    }

    /// `DST, inN.SWZ, SRC.STRQ` (optional as a group).
    fn tex_operands(&mut self, inst: &mut Inst, tex: &mut Tex) -> R<()> {
        if matches!(self.peek(), Some(Tok::Ident(s)) if s.starts_with('r') || s == "_") {
            let col = self.col();
            if !self.eat("_") {
                let (index, rel, suffix) =
                    self.temp_register("a destination", "the destination is a temporary r0..r127")?;
                let m = match suffix.as_deref() {
                    None => 0xF,
                    Some("_") => 0,
                    Some(s) => mask_bits(s, &['r', 'g', 'b', 'a']).ok_or_else(|| {
                        err(
                            self.line,
                            col,
                            format!("bad write mask `.{s}`"),
                            Some("channels r g b a in order".into()),
                        )
                    })?,
                };
                (inst.cmn.rgb_wmask, inst.cmn.alpha_wmask) = (m & 7, m & 8 != 0);
                (tex.addr.dst_addr, tex.addr.dst_addr_rel) = (index, rel);
            }
            self.expect(",", "after the destination")?;
            let col = self.col();
            let name = self.ident("an input (in0..in15)")?;
            let (id, swz) = name.split_once('.').unwrap_or((&name, "rgba"));
            let id = id
                .strip_prefix("in")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|&n| n < 16);
            let Some(id) = id else {
                return Err(err(
                    self.line,
                    col,
                    format!("expected an input in0..in15, found `{name}`"),
                    None,
                ));
            };
            tex.inst.tex_id = id;
            let [r, g, b, a] = self.chan_swizzle(swz, col)?;
            (
                tex.addr.dst_r_swiz,
                tex.addr.dst_g_swiz,
                tex.addr.dst_b_swiz,
                tex.addr.dst_a_swiz,
            ) = (r, g, b, a);
            self.expect(",", "after the input")?;
            let (index, rel, [s, t, r, q]) = self.tex_reg()?;
            (tex.addr.src_addr, tex.addr.src_addr_rel) = (index, rel);
            (
                tex.addr.src_s_swiz,
                tex.addr.src_t_swiz,
                tex.addr.src_r_swiz,
                tex.addr.src_q_swiz,
            ) = (s, t, r, q);
        }
        Ok(())
    }

    /// The items after the operands (`unscaled`, `acquire`, gradients,
    /// common items); raw fields are returned by position.
    fn tex_options(&mut self, inst: &mut Inst, tex: &mut Tex) -> R<Vec<usize>> {
        let mut raw_items = Vec::new();
        while !self.at_end() {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return self.unknown_item();
            };
            match name.to_ascii_lowercase().as_str() {
                "unscaled" => (tex.inst.unscaled, self.pos) = (true, self.pos + 1),
                "acquire" => (tex.inst.sem_acquire, self.pos) = (true, self.pos + 1),
                "ignore_uncovered" => (tex.inst.ignore_uncovered, self.pos) = (true, self.pos + 1),
                "dx" | "dy" => {
                    self.pos += 1;
                    self.expect("=", "after dx/dy")?;
                    let (index, rel, [s, t, r, q]) = self.tex_reg()?;
                    let d = &mut tex.dxdy;
                    if name.eq_ignore_ascii_case("dx") {
                        (
                            d.dx_addr,
                            d.dx_addr_rel,
                            d.dx_s_swiz,
                            d.dx_t_swiz,
                            d.dx_r_swiz,
                            d.dx_q_swiz,
                        ) = (index, rel, s, t, r, q);
                    } else {
                        (
                            d.dy_addr,
                            d.dy_addr_rel,
                            d.dy_s_swiz,
                            d.dy_t_swiz,
                            d.dy_r_swiz,
                            d.dy_q_swiz,
                        ) = (index, rel, s, t, r, q);
                    }
                }
                _ if self.is_raw_field(inst, &name) => {
                    raw_items.push(self.pos);
                    self.pos += 3;
                }
                _ => {
                    if !self.common_item(inst)? {
                        return self.unknown_item();
                    }
                }
            }
        }
        Ok(raw_items)
    }

    /// `rN.xxxx` with a 4-channel swizzle (default rgba).
    pub(super) fn tex_reg(&mut self) -> R<(u8, bool, [Chan; 4])> {
        let col = self.col();
        let (index, rel, suffix) = self.temp_register(
            "a temporary",
            "texture coordinates come from a temporary r0..r127",
        )?;
        let swz = self.chan_swizzle(suffix.as_deref().unwrap_or("rgba"), col)?;
        Ok((index, rel, swz))
    }

    pub(super) fn chan_swizzle(&self, text: &str, col: usize) -> R<[Chan; 4]> {
        let v: Vec<Chan> = text
            .chars()
            .filter_map(|c| Chan::from_mnemonic(&c.to_string()))
            .collect();
        match v.as_slice() {
            [a, b, c, d] if text.chars().count() == 4 => Ok([*a, *b, *c, *d]),
            _ => Err(err(
                self.line,
                col,
                format!("bad swizzle `.{text}`"),
                Some("four of r g b a".into()),
            )),
        }
    }
}
