//! A reference evaluator of Direct3D 9 pixel shaders, one pixel at a time,
//! straight from the parsed shader: the instruction definitions of
//! Microsoft's reference with the choices `docs/d3d9.md` §4 documents and
//! the DPP's float rules (`ctm::fp`: denormals are zero, NaN standardised
//! where arithmetic produces it, MAD rounded twice). It knows arithmetic,
//! predication, flow control, subroutines, point-sampled lookups with
//! wrapping, texkill, vPos and vFace, and ps_1_x's modifiers, clamps,
//! co-issue and texture instructions (`docs/d3d9.md` §6); derivatives are
//! not its business (`Err` says so).

use ctm::d3d9::{
    Compare, Def, Dst, Inst, Item, Opcode, RegKind, Shader, Src, SrcMod, swizzle_channel,
};
use ctm::fp;

mod addressing;
mod ops;

use ops::{arith, texture, transcendental};

const ONE: u32 = 0x3F80_0000;
const NEG_ONE: u32 = 0xBF80_0000;
const HALF: u32 = 0x3F00_0000;
const TWO: u32 = 0x4000_0000;
const NEG_ZERO: u32 = 0x8000_0000;

/// What one pixel sees and writes.
#[derive(Clone, Debug, Default)]
pub struct Pixel {
    /// v0–v9.
    pub inputs: [[u32; 4]; 10],
    /// t0–t7 (texture coordinates).
    pub texcoords: [[u32; 4]; 8],
    /// Float constants c0–c255 (defs applied on top).
    pub consts: Vec<[u32; 4]>,
    /// Integer constants (count, init, step).
    pub ints: [[i32; 3]; 16],
    /// Boolean constants.
    pub bools: [bool; 16],
    /// oC0–oC3 as written (unwritten channels stay 0).
    pub out: [[u32; 4]; 4],
    /// oDepth as written.
    pub depth: Option<u32>,
    /// The pixel's (i, j).
    pub pos: (u32, u32),
    /// Textures by sampler: width, height, texels by row.
    pub textures: Vec<(u32, u32, Vec<[u32; 4]>)>,
    /// Killed by texkill (then nothing it wrote counts).
    pub killed: bool,
    /// ps_1_x: each stage's bump-environment matrix (m00, m01, m10, m11).
    pub bumpenv: [[u32; 4]; 8],
    /// ps_1_x: each stage's luminance scale and offset.
    pub bumpenvl: [[u32; 2]; 8],
}

/// r# and t#.
type Registers = ([[u32; 4]; 32], [[u32; 4]; 8]);

struct State<'a> {
    px: &'a mut Pixel,
    r: [[u32; 4]; 32],
    /// t# (written by ps_1_x's texture and arithmetic instructions).
    t: [[u32; 4]; 8],
    one_x: bool,
    /// While a co-issued instruction runs: r# and t# before the
    /// instruction it pairs with wrote.
    before: Option<Registers>,
    p: [bool; 4],
    al: i32,
    steps: u64,
}

fn canon(x: u32) -> u32 {
    fp::canon(x)
}

impl State<'_> {
    fn read(&self, s: &Src) -> Result<[u32; 4], String> {
        let (r, t) = match &self.before {
            Some((r, t)) => (r, t),
            None => (&self.r, &self.t),
        };
        let base = match s.reg.kind {
            RegKind::Temp => r[usize::from(s.reg.num)],
            RegKind::Texture => t[usize::from(s.reg.num)],
            RegKind::Input => {
                let n = usize::from(s.reg.num) + if s.rel.is_some() { self.al as usize } else { 0 };
                let v = *self.px.inputs.get(n).ok_or("input index out of range")?;
                // ps_1_x colour inputs are in [0, 1].
                if self.one_x {
                    v.map(|x| fp::clamp(canon(x)))
                } else {
                    v
                }
            }
            RegKind::Const => {
                let n = (i32::from(s.reg.num) + if s.rel.is_some() { self.al } else { 0 })
                    .rem_euclid(256);
                let c = self.px.consts[n as usize];
                // ps_1_x constants are in [−1, 1].
                if self.one_x {
                    c.map(|x| fp::min(fp::max(x, NEG_ONE), ONE))
                } else {
                    c
                }
            }
            k => return Err(format!("{k:?} is not readable by the evaluator")),
        };
        let mad = |x: u32, b: u32, c: u32| canon(fp::mad(x, b, c));
        let full: [u32; 4] = each(|c| {
            let b = base[c];
            match s.modifier {
                SrcMod::None | SrcMod::Not | SrcMod::Dz | SrcMod::Dw => b,
                SrcMod::Neg => fp::neg(b),
                SrcMod::Abs => fp::abs(b),
                SrcMod::AbsNeg => fp::nab(b),
                SrcMod::Bias => mad(b, ONE, fp::neg(HALF)),
                SrcMod::BiasNeg => mad(b, fp::neg(ONE), HALF),
                SrcMod::Bx2 => mad(b, TWO, fp::neg(ONE)),
                SrcMod::Bx2Neg => mad(b, fp::neg(TWO), ONE),
                SrcMod::Comp => mad(b, fp::neg(ONE), ONE),
                SrcMod::X2 => mad(b, TWO, NEG_ZERO),
                SrcMod::X2Neg => mad(b, fp::neg(TWO), NEG_ZERO),
            }
        });
        Ok(each(|c| full[swizzle_channel(s.swizzle, c)]))
    }

    /// ps_1_4's coordinates: the source, or with `_dz`/`_dw`
    /// (x/z, y/z, 1, 1), 1 for x and y where the divisor is ±0.
    fn coordinates(&self, s: &Src) -> Result<[u32; 4], String> {
        let v = self.read(s)?;
        let k = match s.modifier {
            SrcMod::Dz => 2,
            SrcMod::Dw => 3,
            _ => return Ok(v),
        };
        let r = canon(fp::rcp(v[k]));
        let q = |x: u32| fp::cmp(fp::nab(v[k]), ONE, canon(fp::mad(x, r, NEG_ZERO)));
        Ok([q(v[0]), q(v[1]), ONE, ONE])
    }

    /// Texture `n` at (u, v): point sampled, wrapped.
    fn sample(&self, n: u16, u: u32, v: u32) -> Result<[u32; 4], String> {
        let (w, h, texels) = self
            .px
            .textures
            .get(usize::from(n))
            .ok_or("no texture bound")?;
        let at = |x: u32, size: u32| -> Option<u32> {
            let s = canon(fp::mad(
                canon(fp::frc(x)),
                (size as f32).to_bits(),
                NEG_ZERO,
            ));
            let f = fp::daz(s).floor();
            (f >= 0.0 && f < size as f32).then_some(f as u32)
        };
        Ok(match (at(u, *w), at(v, *h)) {
            (Some(x), Some(y)) => texels[(y * w + x) as usize],
            _ => [0; 4],
        })
    }

    fn pred(&self, i: &Inst, c: usize) -> bool {
        match &i.predicate {
            None => true,
            Some(p) => self.p[swizzle_channel(p.swizzle, c)] ^ (p.modifier == SrcMod::Not),
        }
    }

    /// Writes `v` (already through the output modifier) to `d`'s channels.
    fn write(&mut self, i: &Inst, d: &Dst, v: [u32; 4]) -> Result<(), String> {
        for (c, &raw) in v.iter().enumerate() {
            if d.mask & (1 << c) == 0 || !self.pred(i, c) {
                continue;
            }
            let scaled = if d.shift != 0 {
                fp::omod(raw, d.shift)
            } else {
                raw
            };
            let x = if d.sat {
                fp::clamp(canon(scaled))
            } else {
                scaled
            };
            match d.reg.kind {
                RegKind::Temp => self.r[usize::from(d.reg.num)][c] = x,
                RegKind::Texture => self.t[usize::from(d.reg.num)][c] = x,
                RegKind::ColorOut => self.px.out[usize::from(d.reg.num)][c] = x,
                RegKind::DepthOut if c == 0 => self.px.depth = Some(x),
                RegKind::DepthOut => {}
                k => return Err(format!("{k:?} is not writable by the evaluator")),
            }
        }
        Ok(())
    }

    fn compare(&self, i: &Inst, a: u32, b: u32) -> Result<bool, String> {
        let cmp = Compare::from_code(i.control).ok_or("no comparison")?;
        let diff = |x: u32, y: u32| canon(fp::mad(x, ONE, fp::neg(y)));
        Ok(match cmp {
            Compare::Gt => fp::test_zero(1, diff(b, a)),
            Compare::Lt => fp::test_zero(1, diff(a, b)),
            Compare::Ge => fp::test_zero(2, diff(a, b)),
            Compare::Le => fp::test_zero(2, diff(b, a)),
            Compare::Eq => fp::test_zero(0, diff(a, b)),
            Compare::Ne => fp::test_zero(3, diff(a, b)),
        })
    }
}

/// Per channel.
fn each(f: impl Fn(usize) -> u32) -> [u32; 4] {
    [f(0), f(1), f(2), f(3)]
}

fn dot(a: &[u32; 4], b: &[u32; 4], n: usize) -> u32 {
    let pairs: Vec<(u32, u32)> = (0..n).map(|c| (a[c], b[c])).collect();
    canon(fp::dot(&pairs, None))
}

/// The body of a structured construct: the index of its matching end
/// (and of its `else`).
fn matching(insts: &[&Inst], at: usize) -> (Option<usize>, usize) {
    let mut depth = 0;
    let mut els = None;
    for (k, i) in insts.iter().enumerate().skip(at + 1) {
        match i.op {
            Opcode::If | Opcode::Ifc | Opcode::Rep | Opcode::Loop => depth += 1,
            Opcode::Else if depth == 0 => els = Some(k),
            Opcode::Endif | Opcode::Endrep | Opcode::Endloop => {
                if depth == 0 {
                    return (els, k);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    (els, insts.len())
}

enum Flow {
    Next,
    Break,
    /// `ret`, or the end of the main program at a label.
    Return,
    Kill,
}

/// Runs the shader for one pixel.
pub fn eval(shader: &Shader, px: &mut Pixel) -> Result<(), String> {
    px.consts.resize(256, [0; 4]);
    for item in &shader.items {
        match *item {
            Item::Def(Def::Float(n, v)) => px.consts[usize::from(n)] = v,
            Item::Def(Def::Int(n, v)) => px.ints[usize::from(n)] = [v[0], v[1], v[2]],
            Item::Def(Def::Bool(n, b)) => px.bools[usize::from(n)] = b,
            _ => {}
        }
    }
    let insts: Vec<&Inst> = shader.insts().collect();
    let t = px.texcoords;
    let mut st = State {
        px,
        r: [[0; 4]; 32],
        t,
        one_x: shader.version.is_1x(),
        before: None,
        p: [false; 4],
        al: 0,
        steps: 0,
    };
    run(&mut st, &insts, 0, insts.len())?;
    if st.one_x {
        // The result is r0, in oC0.
        st.px.out[0] = st.r[0];
    }
    if st.px.killed {
        st.px.out = [[0; 4]; 4];
        st.px.depth = None;
    }
    Ok(())
}

/// Runs subroutine `l`.
fn call(st: &mut State, insts: &[&Inst], l: u16) -> Result<Flow, String> {
    let at = insts
        .iter()
        .position(|i| i.op == Opcode::Label && i.src[0].reg.num == l)
        .ok_or("no such label")?;
    match run(st, insts, at + 1, insts.len())? {
        Flow::Kill => Ok(Flow::Kill),
        _ => Ok(Flow::Next),
    }
}

fn run(st: &mut State, insts: &[&Inst], from: usize, to: usize) -> Result<Flow, String> {
    let mut k = from;
    while k < to {
        st.steps += 1;
        if st.steps > 1_000_000 {
            return Err("too many steps".into());
        }
        let i = insts[k];
        match i.op {
            Opcode::If | Opcode::Ifc => {
                let (els, end) = matching(insts, k);
                let taken = if i.op == Opcode::If {
                    st.px.bools[usize::from(i.src[0].reg.num)]
                } else {
                    let a = st.read(&i.src[0])?[0];
                    let b = st.read(&i.src[1])?[0];
                    st.compare(i, a, b)?
                };
                let flow = match (taken, els) {
                    (true, Some(e)) => run(st, insts, k + 1, e)?,
                    (true, None) => run(st, insts, k + 1, end)?,
                    (false, Some(e)) => run(st, insts, e + 1, end)?,
                    (false, None) => Flow::Next,
                };
                if !matches!(flow, Flow::Next) {
                    return Ok(flow);
                }
                k = end + 1;
            }
            Opcode::Rep | Opcode::Loop => {
                if let Some(flow) = repeat(st, insts, k)? {
                    return Ok(flow);
                }
                k = matching(insts, k).1 + 1;
            }
            Opcode::Break => return Ok(Flow::Break),
            Opcode::Breakc => {
                let a = st.read(&i.src[0])?[0];
                let b = st.read(&i.src[1])?[0];
                if st.compare(i, a, b)? {
                    return Ok(Flow::Break);
                }
                k += 1;
            }
            Opcode::Breakp => {
                let p = &i.src[0];
                if st.p[swizzle_channel(p.swizzle, 0)] ^ (p.modifier == SrcMod::Not) {
                    return Ok(Flow::Break);
                }
                k += 1;
            }
            Opcode::Else | Opcode::Endif | Opcode::Endrep | Opcode::Endloop => k += 1,
            Opcode::Ret | Opcode::Label => return Ok(Flow::Return),
            Opcode::Call | Opcode::Callnz => {
                let go = match i.src.get(1) {
                    None => true,
                    Some(c) if c.reg.kind == RegKind::ConstBool => {
                        st.px.bools[usize::from(c.reg.num)]
                    }
                    Some(p) => st.p[swizzle_channel(p.swizzle, 0)] ^ (p.modifier == SrcMod::Not),
                };
                if go && let Flow::Kill = call(st, insts, i.src[0].reg.num)? {
                    return Ok(Flow::Kill);
                }
                k += 1;
            }
            Opcode::Texkill => {
                let d = i.dst.ok_or("texkill without register")?;
                let v = st.read(&Src::plain(d.reg))?;
                // ps_1_x tests x, y and z.
                let mask = if st.one_x { d.mask & 7 } else { d.mask };
                if (0..4).any(|c| mask & (1 << c) != 0 && fp::test_zero(1, v[c])) {
                    st.px.killed = true;
                    return Ok(Flow::Kill);
                }
                k += 1;
            }
            Opcode::Phase => k += 1,
            _ => {
                // A co-issued instruction reads what the registers held
                // before the instruction it pairs with.
                let pairs = insts.get(k + 1).is_some_and(|n| n.coissue);
                let before = pairs.then_some((st.r, st.t));
                step(st, i)?;
                if pairs {
                    st.before = before;
                    step(st, insts[k + 1])?;
                    st.before = None;
                    k += 1;
                }
                k += 1;
            }
        }
    }
    Ok(Flow::Next)
}

/// `rep`/`loop` at `k`: the body its count of times (aL from the
/// constant for `loop`); `Some` when the body returns or kills.
fn repeat(st: &mut State, insts: &[&Inst], k: usize) -> Result<Option<Flow>, String> {
    let i = insts[k];
    let (_, end) = matching(insts, k);
    let n = usize::from(i.src[if i.op == Opcode::Loop { 1 } else { 0 }].reg.num);
    let [count, init, step] = st.px.ints[n];
    let saved = st.al;
    if i.op == Opcode::Loop {
        st.al = init;
    }
    for _ in 0..count {
        match run(st, insts, k + 1, end)? {
            Flow::Break => break,
            Flow::Next => {}
            other => return Ok(Some(other)),
        }
        if i.op == Opcode::Loop {
            st.al += step;
        }
    }
    st.al = saved;
    Ok(None)
}

fn step(st: &mut State, i: &Inst) -> Result<(), String> {
    use Opcode::*;
    if i.op == Nop {
        return Ok(());
    }
    let d = i.dst.ok_or("no destination")?;
    let v: [u32; 4] = match i.op {
        Texbem | Texbeml | Texreg2ar | Texreg2gb | Texreg2rgb | Texm3x2pad | Texm3x3pad
        | Texdp3 | Texdp3tex | Texm3x2tex | Texm3x2depth | Texm3x3tex | Texm3x3 | Texm3x3spec
        | Texm3x3vspec | Texdepth | Bem => return addressing::addressing(st, i, d),
        Tex | Texcoord | Texldl | Texldd => {
            let (v, d) = texture(st, i, d)?;
            return st.write(i, &d, v);
        }
        Setp => {
            let (a, b) = (st.read(&i.src[0])?, st.read(&i.src[1])?);
            for c in 0..4 {
                if d.mask & (1 << c) != 0 && st.pred(i, c) {
                    st.p[c] = st.compare(i, a[c], b[c])?;
                }
            }
            return Ok(());
        }
        M4x4 | M4x3 | M3x4 | M3x3 | M3x2 => {
            let (dims, rows) = i.op.matrix().ok_or("not a matrix")?;
            let a = st.read(&i.src[0])?;
            let mut v = [0; 4];
            for (row, x) in v.iter_mut().enumerate().take(rows) {
                let mut s = i.src[1];
                s.reg.num += row as u16;
                *x = dot(&a, &st.read(&s)?, dims);
            }
            v
        }
        Rcp | Rsq | Exp | Log | Pow | Lrp | Nrm | Crs | Sincos => transcendental(st, i)?,
        _ => arith(st, i)?,
    };
    let mask = match i.op {
        Crs | M4x3 | M3x3 => d.mask & 7,
        M3x2 => d.mask & 3,
        _ => d.mask,
    };
    st.write(i, &Dst { mask, ..d }, v)
}
