//! Shader limits checked before anything is lowered (`docs/d3d9.md` §3.3):
//! the nesting the shader model allows, through calls as well as in the
//! text, so that every program that compiles also runs without a stack
//! overflow. The DPP's stacks are 32 deep (`docs/isa.md` §6.8); Direct3D 9's
//! own limits are smaller and are the ones checked:
//!
//! | construct | deepest |
//! |---|---|
//! | `rep`/`loop` | 4 |
//! | `if` | 24 |
//! | `call`/`callnz` chain | 4 |
//!
//! A loop or `if` inside a subroutine counts at the depth of the call that
//! reaches it; a subroutine that reaches itself is an error, and so is a
//! call to a label the shader does not define.

use super::CompileError;
use crate::d3d9::{Item, Opcode, Shader};
use std::collections::{BTreeMap, BTreeSet};

/// Deepest `rep`/`loop` nesting.
pub const MAX_LOOPS: usize = 4;
/// Deepest `if` nesting.
pub const MAX_IFS: usize = 24;
/// Deepest chain of calls.
pub const MAX_CALLS: usize = 4;

/// What one function (main or a subroutine) needs, relative to where it is
/// called: its deepest loops, ifs and call chain, and the item that
/// reaches each.
#[derive(Clone, Copy, Default)]
struct Depth {
    loops: (usize, usize),
    ifs: (usize, usize),
    calls: (usize, usize),
}

/// A call site: the depths where it stands and the label it calls.
struct Site {
    item: usize,
    loops: usize,
    ifs: usize,
    label: u16,
}

/// Per function (None: main): its own deepest nesting and its call sites.
#[derive(Default)]
struct Function {
    own: Depth,
    sites: Vec<Site>,
}

fn error(shader: &Shader, item: usize, message: String) -> CompileError {
    CompileError {
        item: Some(item),
        text: crate::d3d9::disasm::item_text(&shader.items[item]),
        message,
    }
}

/// Checks the limits of the table above.
pub fn check(shader: &Shader) -> Result<(), CompileError> {
    let mut functions: BTreeMap<Option<u16>, Function> = BTreeMap::new();
    let mut labels = BTreeSet::new();
    let mut current = None;
    let (mut loops, mut ifs) = (0usize, 0usize);
    for (k, item) in shader.items.iter().enumerate() {
        let Item::Inst(i) = item else { continue };
        let f = functions.entry(current).or_default();
        match i.op {
            Opcode::Label => {
                current = Some(i.src[0].reg.num);
                labels.insert(i.src[0].reg.num);
                (loops, ifs) = (0, 0);
            }
            Opcode::Rep | Opcode::Loop => {
                loops += 1;
                if loops > f.own.loops.0 {
                    f.own.loops = (loops, k);
                }
            }
            Opcode::If | Opcode::Ifc => {
                ifs += 1;
                if ifs > f.own.ifs.0 {
                    f.own.ifs = (ifs, k);
                }
            }
            Opcode::Endrep | Opcode::Endloop => loops = loops.saturating_sub(1),
            Opcode::Endif => ifs = ifs.saturating_sub(1),
            Opcode::Call | Opcode::Callnz => f.sites.push(Site {
                item: k,
                loops,
                ifs,
                label: i.src[0].reg.num,
            }),
            _ => {}
        }
    }
    let sites = functions.values().flat_map(|f| &f.sites);
    if let Some(s) = sites
        .filter(|s| !labels.contains(&s.label))
        .min_by_key(|s| s.item)
    {
        let message = format!(
            "l{} is not defined: no `label l{}` in the shader",
            s.label, s.label
        );
        return Err(error(shader, s.item, message));
    }
    let mut done = BTreeMap::new();
    let main = depth(shader, &functions, None, &mut done, &mut Vec::new())?;
    for (what, (d, k), limit) in [
        ("rep/loop", main.loops, MAX_LOOPS),
        ("if", main.ifs, MAX_IFS),
        ("call", main.calls, MAX_CALLS),
    ] {
        if d > limit {
            return Err(error(
                shader,
                k,
                format!(
                    "{what} nested {d} deep here (counting through calls); shader models allow {limit}"
                ),
            ));
        }
    }
    Ok(())
}

/// The depths function `f` reaches, through the functions it calls.
fn depth(
    shader: &Shader,
    functions: &BTreeMap<Option<u16>, Function>,
    f: Option<u16>,
    done: &mut BTreeMap<Option<u16>, Depth>,
    path: &mut Vec<Option<u16>>,
) -> Result<Depth, CompileError> {
    if let Some(d) = done.get(&f) {
        return Ok(*d);
    }
    let Some(func) = functions.get(&f) else {
        return Ok(Depth::default());
    };
    path.push(f);
    let mut d = func.own;
    for s in &func.sites {
        let callee = Some(s.label);
        if path.contains(&callee) {
            return Err(error(
                shader,
                s.item,
                format!("l{} calls itself (recursion cannot be run)", s.label),
            ));
        }
        let c = depth(shader, functions, callee, done, path)?;
        let deeper = |mine: (usize, usize), at: usize, theirs: (usize, usize)| {
            if at + theirs.0 > mine.0 {
                (at + theirs.0, s.item)
            } else {
                mine
            }
        };
        d.loops = deeper(d.loops, s.loops, c.loops);
        d.ifs = deeper(d.ifs, s.ifs, c.ifs);
        d.calls = deeper(d.calls, 1, c.calls);
    }
    path.pop();
    done.insert(f, d);
    Ok(d)
}
