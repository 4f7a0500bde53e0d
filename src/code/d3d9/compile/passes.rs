//! The passes over a compiled program: RGB/alpha pairing, the texture
//! semaphore (`docs/isa.md` §5.3), the NOP before derivatives (§8.2).

use super::emit::{Alu, Dpp, Reg};

/// The passes over the finished code: co-issue, the texture semaphore,
/// the NOP before derivatives.
/// `origin` (the shader items of each entry) follows the code.
pub(super) fn run(code: &mut Vec<Dpp>, origin: &mut Vec<Vec<usize>>) -> usize {
    let paired = coissue(code, origin);
    semaphore(code);
    for k in 1..code.len() {
        if matches!(&code[k], Dpp::Alu(a) if a.has_derivative()) {
            let mut p = k - 1;
            while p > 0 && matches!(code[p], Dpp::Label(_)) {
                p -= 1;
            }
            code[p].set_nop();
        }
    }
    paired
}

/// The registers an ALU instruction reads and writes; None when relative
/// addressing makes it any.
fn reads_writes(a: &Alu) -> Option<(Vec<Reg>, Vec<Reg>)> {
    let mut reads = Vec::new();
    for u in a.rgb.iter().chain(a.alpha.iter()) {
        for v in &u.inputs {
            if let Some(o) = v.opnd {
                reads.extend(o.reg()?);
            }
        }
    }
    if a.pred.is_some() || a.apred.is_some() {
        reads.push(Reg::Pred);
    }
    let writes = a
        .rgb_dst
        .iter()
        .chain(a.alpha_dst.iter())
        .map(|d| d.reg())
        .collect();
    Some((reads, writes))
}

/// How far ahead an alpha-only (or RGB-only) partner is looked for.
const WINDOW: usize = 8;

/// Pairs an instruction that uses only the RGB unit with one that uses
/// only the alpha unit (or the reverse) within a few ALU instructions,
/// when moving the second up breaks no dependency and the operands fit
/// the three source slots.
fn coissue(code: &mut Vec<Dpp>, origin: &mut Vec<Vec<usize>>) -> usize {
    let mut paired = 0;
    let mut k = 0;
    while k < code.len() {
        let mut found = None;
        if let Dpp::Alu(a) = &code[k] {
            let mut between: Vec<(Vec<Reg>, Vec<Reg>)> = Vec::new();
            let Some(first) = reads_writes(a) else {
                k += 1;
                continue;
            };
            for (j, next) in code.iter().enumerate().skip(k + 1).take(WINDOW) {
                let Dpp::Alu(b) = next else {
                    break;
                };
                let Some((b_reads, b_writes)) = reads_writes(b) else {
                    break;
                };
                // b moves up past `between`: no read of what they (or a)
                // write, no write of what they read or write.
                let free = b_reads
                    .iter()
                    .all(|r| !first.1.contains(r) && between.iter().all(|(_, w)| !w.contains(r)))
                    && b_writes.iter().all(|w| {
                        between
                            .iter()
                            .all(|(r, ww)| !r.contains(w) && !ww.contains(w))
                    });
                if free && let Some(m) = merge(a, b) {
                    found = Some((j, m));
                    break;
                }
                between.push((b_reads, b_writes));
            }
        }
        match found {
            Some((j, m)) => {
                code[k] = Dpp::Alu(m);
                code.remove(j);
                let moved = origin.remove(j);
                origin[k].extend(moved);
                origin[k].sort_unstable();
                origin[k].dedup();
                paired += 1;
            }
            None => k += 1,
        }
    }
    paired
}

fn merge(a: &Alu, b: &Alu) -> Option<Alu> {
    let plain = |x: &Alu| {
        x.res.is_none()
            && !x.last
            && !x.nop
            && !x.has_derivative()
            && !x
                .rgb_dst
                .iter()
                .chain(x.alpha_dst.iter())
                .any(|d| d.is_pred())
    };
    if !plain(a) || !plain(b) {
        return None;
    }
    // A temporary-only ALU instruction may join an OUTPUT one.
    if a.out != b.out
        && [a, b]
            .iter()
            .any(|x| !x.out && x.pred.is_some() && x.apred.is_some())
    {
        return None;
    }
    let (rgb, alpha) = match (
        a.rgb.is_some(),
        a.alpha.is_some(),
        b.rgb.is_some(),
        b.alpha.is_some(),
    ) {
        (true, false, false, true) => (a, b),
        (false, true, true, false) => (b, a),
        _ => return None,
    };
    let m = Alu {
        out: a.out || b.out,
        rgb: rgb.rgb.clone(),
        alpha: alpha.alpha.clone(),
        rgb_dst: rgb.rgb_dst.clone(),
        alpha_dst: alpha.alpha_dst.clone(),
        res: None,
        pred: rgb.pred,
        apred: alpha.apred,
        wait: a.wait || b.wait,
        nop: false,
        last: false,
    };
    // The operands must fit the three shared slots.
    m.slots().ok().map(|_| m)
}

/// The registers an instruction reads or writes (None: any, through
/// relative addressing).
fn touched(d: &Dpp) -> Option<Vec<Reg>> {
    match d {
        Dpp::Alu(a) => reads_writes(a).map(|(mut r, w)| {
            r.extend(w);
            r
        }),
        Dpp::Tex(t) => Some(vec![Reg::Temp(t.dst), Reg::Temp(t.coord)]),
        _ => Some(Vec::new()),
    }
}

/// Places the texture semaphore: lookups run without acquiring until an
/// instruction touches a pending result (or flow control or a label
/// comes); then the last pending lookup acquires and that instruction
/// waits (`docs/isa.md` §5.3).
fn semaphore(code: &mut [Dpp]) {
    let mut pending: Vec<usize> = Vec::new();
    let mut regs: Vec<Reg> = Vec::new();
    for k in 0..code.len() {
        let boundary = matches!(code[k], Dpp::Label(_) | Dpp::Fc(_));
        let hits = match touched(&code[k]) {
            None => !pending.is_empty(),
            Some(t) => t.iter().any(|r| regs.contains(r)),
        };
        let last = k + 1 == code.len();
        if !pending.is_empty() && (boundary || hits || last) {
            let j = *pending.last().expect("pending");
            if let Dpp::Tex(t) = &mut code[j] {
                t.acquire = true;
                t.wait = true;
            }
            // The waiting instruction: this one, or for a label the next
            // real instruction after it.
            let mut w = k;
            while w < code.len() && matches!(code[w], Dpp::Label(_)) {
                w += 1;
            }
            if w < code.len() {
                code[w].set_wait();
            }
            pending.clear();
            regs.clear();
        }
        if let Dpp::Tex(t) = &code[k]
            && !t.kill
        {
            pending.push(k);
            regs.push(Reg::Temp(t.dst));
        }
    }
}
