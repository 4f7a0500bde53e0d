//! Straight random programs (`Case::straight`, `Case::straight_uncached`):
//! what a compiled strip runs — no flow control, predicates or relative
//! operands, every render target written whole, or one uncached write —
//! and programs that are one loop around such code (`Case::looped`).

use super::{Case, Rng};
use ctm::runtime::Domain;

impl Case {
    /// A straight program: no flow control, predicates, relative operands
    /// or uncached memory — 3 to 24 random ALU instructions of every
    /// operation, modifier, swizzle and operand kind, and lookups of inputs
    /// 0 and 1 (scaled or not, waited for or not), between the seeding
    /// ones and the outputs, every target written in all four channels
    /// (what a compiled strip serves), with the constants and inputs of
    /// [`Case::random`]`(seed)` and a domain of up to 21 × 12.
    pub fn straight(seed: u64) -> Case {
        let mut case = Case::random(seed);
        let mut rng = Rng::new(seed ^ 0x0053_5452_4950);
        let mut lines = vec![
            "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1".into(),
            "alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=c2 src1=c3 src2=c4".into(),
        ];
        for _ in 0..3 + rng.below(22) {
            let line = if rng.percent(20) {
                let (d, s) = (1 + rng.below(5), rng.below(6));
                let input = rng.pick(&["in0.rgba", "in1.rgba", "in0.abgr", "in1.rrgg"]);
                let scale = rng.pick(&[" unscaled", ""]);
                let wait = rng.pick(&[" acquire wait", " acquire", ""]);
                format!("tex ld r{d}.rgba, {input}, r{s}.rgba{scale}{wait}")
            } else {
                straight_alu(&mut rng)
            };
            lines.push(line);
        }
        for (t, r) in ["rtB", "rtC", "rtD", "rtA"].iter().zip(2..) {
            let last = if *t == "rtA" { " last" } else { "" };
            lines.push(format!(
                "out {t}.rgb = max.off(s0, s0) | {t}.a = max.off(s0, s0) src0=r{} wait{last}",
                r % 6
            ));
        }
        case.asm = lines.join("\n") + "\n";
        case.uncached = false;
        case.domain = Domain::new(1 + rng.below(21), 1 + rng.below(12));
        case
    }

    /// A straight uncached program of one write, which compiled strips
    /// run: [`Case::straight`]'s random body, then one uncached write (in
    /// a random index mode) of a random register's R channel at (i, j),
    /// (i, j) plus a random register's G and B channels (NaNs, infinities
    /// and denormals included), or (i / 2, j) (two pixels to an element).
    pub fn straight_uncached(seed: u64) -> Case {
        let mut case = Case::straight(seed);
        let mut rng = Rng::new(seed ^ 0x0055_4d52_5400);
        let body: Vec<&str> = case
            .asm
            .lines()
            .filter(|l| !l.trim_start().starts_with("out "))
            .collect();
        let mut lines = vec![".uncached".to_string()];
        lines.extend(body.iter().map(|l| l.to_string()));
        let (v, o) = (rng.below(6), rng.below(6));
        lines.push(format!(
            "alu r7.rgb = mad(s0.r00, s1.111, s2.0rg) | r7.a = max.off(s0.0, s0.0) src0=r{v} src1=r0 src2=r0"
        ));
        match rng.below(3) {
            0 => {}
            1 => lines.push(format!(
                "alu r7.gb = mad(s0.0gb, s1.111, s2.0gb) | _ = max.off(s0.0, s0.0) src0=r{o} src1=r0 src2=r7"
            )),
            _ => lines.push(
                "alu r7.g = mad(s0.0g0, s1.0r0, s2.000) | _ = max.off(s0.0, s0.0) src0=r7 src1=0.5 src2=r0"
                    .into(),
            ),
        }
        let rt = rng.pick(&["rtA", "rtB", "rtC", "rtD"]);
        lines.push(format!(
            "out {rt}.rgb = max.off(s0, s0) | {rt}.a = max.off(s0, s0) src0=r7 wait last"
        ));
        case.asm = lines.join("\n") + "\n";
        case.uncached = true;
        case
    }
}

impl Case {
    /// A program that is one loop, what a compiled strip runs too:
    /// [`Case::straight`]'s instructions (lookups included) before a LOOP
    /// or REP on `i0`, inside its body around one or two breaks on the ALU
    /// result of a random register (every test and both senses), and after
    /// it before the outputs. `i0` (in the case's uniforms) counts 1 to 12
    /// iterations from a random aL with a random step; the domain is up
    /// to 21 × 12, most often a multiple of 4 wide.
    pub fn looped(seed: u64) -> Case {
        let mut case = Case::straight(seed);
        let mut rng = Rng::new(seed ^ 0x004c_4f4f_5000);
        let lines: Vec<String> = case.asm.lines().map(str::to_string).collect();
        let outs = lines
            .iter()
            .position(|l| l.starts_with("out "))
            .unwrap_or(lines.len());
        let (body, outs) = lines.split_at(outs);
        // The seeding instructions and the random ones, split in three.
        let (a, b) = (2 + rng.below(3) as usize, 2 + rng.below(4) as usize);
        let (before, rest) = body.split_at(a.min(body.len()));
        let (inside, after) = rest.split_at(b.min(rest.len()));
        let is_loop = rng.percent(50);
        let (op, brk, end) = if is_loop {
            ("LOOP", "BREAKLOOP", "ENDLOOP")
        } else {
            ("REP", "BREAKREP", "ENDREP")
        };
        let mut out: Vec<String> = before.to_vec();
        out.push(format!("{op} i0 -> done"));
        out.push("body:".into());
        let breaks = 1 + rng.below(2) as usize;
        let at: Vec<usize> = (0..breaks)
            .map(|_| rng.below(inside.len() as u32 + 1) as usize)
            .collect();
        for (k, line) in inside
            .iter()
            .enumerate()
            .chain([(inside.len(), &String::new())])
        {
            for _ in at.iter().filter(|&&p| p == k) {
                let test = rng.pick(&["r<0", "r>=0", "r==0", "r!=0", "a<0", "a>=0"]);
                let (r, c) = (rng.below(6), rng.below(8));
                out.push(format!(
                    "alu _ = mad(s0, s1.111, -s2) | _ = mad(s0, s1.1, -s2) src0=r{r} src1=r0 src2=c{c} res={test}"
                ));
                let sense = rng.pick(&["!= 0", "== 0"]);
                out.push(format!("{brk} alu_result {sense} -> done"));
            }
            if !line.is_empty() {
                out.push(line.clone());
            }
        }
        out.push(format!("{end} i0 -> body"));
        out.push("done:".into());
        out.extend(after.iter().cloned());
        out.extend(outs.iter().cloned());
        case.asm = out.join("\n") + "\n";
        // Mostly whole rows of batches of two quads, which a loop's strip
        // needs.
        let width = if rng.percent(80) {
            4 * (1 + rng.below(5))
        } else {
            1 + rng.below(21)
        };
        case.domain = Domain::new(width, 1 + rng.below(12));
        case.uniforms.ints[0] = ctm_jit::state::IntConst {
            count: 1 + rng.below(12) as u8,
            init: rng.below(8) as u8,
            step: rng.pick(&[1i8, -1, 2, 0]),
        };
        case
    }
}

/// One random unpredicated ALU instruction on r0–r5, c0–c7 and
/// immediates (see [`Case::straight`]).
fn straight_alu(rng: &mut Rng) -> String {
    // (operation, inputs, whether OMOD may be disabled)
    const RGB: [(&str, usize, bool); 8] = [
        ("mad", 3, false),
        ("dp3", 2, false),
        ("dp4", 2, false),
        ("min", 2, true),
        ("max", 2, true),
        ("cnd", 3, true),
        ("cmp", 3, true),
        ("frc", 1, false),
    ];
    const ALPHA: [(&str, usize, bool); 12] = [
        ("mad", 3, false),
        ("min", 2, true),
        ("max", 2, true),
        ("cnd", 3, true),
        ("cmp", 3, true),
        ("frc", 1, false),
        ("ex2", 1, false),
        ("ln2", 1, false),
        ("rcp", 1, false),
        ("rsq", 1, false),
        ("sin", 1, false),
        ("cos", 1, false),
    ];
    let (op, n, off) = rng.pick(&RGB);
    let (aop, an, aoff) = rng.pick(&ALPHA);
    let modifier = |rng: &mut Rng, off: bool| {
        let m = if off {
            rng.pick(&["", ".x2", ".d2", ".off", ".x4"])
        } else {
            rng.pick(&["", ".x2", ".d2", ".x4", ".d4"])
        };
        let sat = if rng.percent(25) { ".sat" } else { "" };
        format!("{m}{sat}")
    };
    let (m, am) = (modifier(rng, off), modifier(rng, aoff));
    let input = |rng: &mut Rng, k: usize, swz: &[&str]| {
        let s = format!("s{k}{}", rng.pick(swz));
        match rng.below(4) {
            0 => format!("-{s}"),
            1 => format!("abs({s})"),
            2 => format!("-abs({s})"),
            _ => s,
        }
    };
    let rgb: Vec<String> = (0..n)
        .map(|k| {
            input(
                rng,
                k,
                &["", ".rrr", ".gba", ".bgr", ".111", ".0ga", ".hhh"],
            )
        })
        .collect();
    let alpha: Vec<String> = (0..an)
        .map(|k| input(rng, k, &[".r", ".g", ".b", ".a", ".1", ".h"]))
        .collect();
    let srcs: Vec<String> = (0..3)
        .map(|k| {
            let v = match rng.below(3) {
                0 => format!("r{}", rng.below(6)),
                1 => format!("c{}", rng.below(8)),
                _ => rng
                    .pick(&["0.5", "2.0", "1.0", "0.0625", "48.0"])
                    .to_string(),
            };
            format!("src{k}={v}")
        })
        .collect();
    let (d, ad) = (1 + rng.below(5), 1 + rng.below(5));
    let mask = rng.pick(&["rgb", "rg", "b", "gb"]);
    format!(
        "alu r{d}.{mask} = {op}{m}({}) | r{ad}.a = {aop}{am}({}) {}",
        rgb.join(", "),
        alpha.join(", "),
        srcs.join(" ")
    )
}
