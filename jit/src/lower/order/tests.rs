//! The order strips lower straight clauses in ([`super::grouped`]).

use super::grouped;
use crate::ir::{Clause, Gate, Index, Node, Op, Term, V};

/// `n` chains per channel of all four channels, `rounds` MADs each,
/// in the program's order (every channel of every chain, round by
/// round), each chain read from its register and each channel's chains
/// summed into register 1; `fixed` puts an output write of channel 0's
/// first chain after the first round.
fn chains(n: u8, rounds: u16, fixed: bool) -> Clause {
    let mut nodes = Vec::new();
    let mut next = 0u32;
    let mut new = |nodes: &mut Vec<Node>, pc: u16, op: &dyn Fn(V) -> Op| {
        let v = V(next);
        next += 1;
        nodes.push(Node { pc, op: op(v) });
        v
    };
    let reg = |k: u8| Index {
        base: 1 + k,
        rel: false,
    };
    let c = new(&mut nodes, 0, &|dst| Op::Const {
        dst,
        index: Index {
            base: 0,
            rel: false,
        },
        chan: 0,
    });
    let mut cur: Vec<V> = Vec::new();
    for k in 0..n {
        for ch in 0..4 {
            cur.push(new(&mut nodes, 0, &|dst| Op::Temp {
                dst,
                index: reg(k),
                chan: ch,
            }));
        }
    }
    for round in 0..rounds {
        for (i, v) in cur.iter_mut().enumerate() {
            let a = *v;
            *v = new(&mut nodes, round, &|dst| Op::Mad { dst, a, b: c, c });
            if fixed && round == 0 && i == 0 {
                let v = *v;
                nodes.push(Node {
                    pc: round,
                    op: Op::SetOut {
                        target: 0,
                        chan: 0,
                        v,
                        gate: Gate::ACTIVE,
                    },
                });
            }
        }
    }
    // Each channel's chains summed (the channel is then one
    // computation), and the sums written back.
    for ch in 0..4usize {
        let mut acc = cur[ch];
        for k in 1..usize::from(n) {
            let b = cur[4 * k + ch];
            acc = new(&mut nodes, rounds, &|dst| Op::Mad {
                dst,
                a: acc,
                b: c,
                c: b,
            });
        }
        nodes.push(Node {
            pc: rounds,
            op: Op::SetTemp {
                index: reg(0),
                chan: ch as u8,
                v: acc,
                gate: Gate::ACTIVE,
                fetched: false,
            },
        });
    }
    Clause {
        start: 0,
        len: rounds + 1,
        nodes,
        values: next,
        term: Term::End,
    }
}

/// The channel each MAD of `clause` works on (its chain's first read).
fn channels(clause: &Clause) -> Vec<u8> {
    let mut chan = std::collections::HashMap::new();
    let mut out = Vec::new();
    for node in &clause.nodes {
        match &node.op {
            Op::Temp { dst, chan: ch, .. } => {
                chan.insert(dst.0, *ch);
            }
            Op::Mad { dst, a, .. } => {
                let ch = chan[&a.0];
                chan.insert(dst.0, ch);
                out.push(ch);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn independent_channels_are_lowered_a_group_at_a_time() {
    // Eight chains a channel: one channel fills a one-quad group.
    let c = chains(8, 4, false);
    let g = grouped(&c, 1).expect("reordered");
    let got = channels(&g);
    let mut want = channels(&c);
    want.sort_unstable();
    assert_eq!(got, want, "channel after channel");
    assert_eq!(g.nodes.len(), c.nodes.len());
    // Four chains a channel at two quads: the same.
    assert_eq!(channels(&grouped(&chains(4, 4, false), 2).unwrap()), {
        let mut w = channels(&chains(4, 4, false));
        w.sort_unstable();
        w
    });
    // Four chains a channel at one quad: two channels a group.
    let g = channels(&grouped(&chains(4, 3, false), 1).unwrap());
    let half = g.len() / 2;
    assert!(g[..half].iter().all(|&ch| ch < 2) && g[half..].iter().all(|&ch| ch >= 2));
    // One chain a channel at two quads: all four fit one group.
    assert!(grouped(&chains(1, 8, false), 2).is_none());
}

#[test]
fn nothing_moves_across_what_does_not_commute() {
    let c = chains(8, 3, true);
    let g = grouped(&c, 1).expect("the runs on either side reorder");
    let at = |cl: &Clause| {
        cl.nodes
            .iter()
            .position(|n| matches!(n.op, Op::SetOut { .. }))
    };
    assert_eq!(at(&g), at(&c), "the output write keeps its place");
    // Every value is defined before it is used.
    let mut defined = std::collections::HashSet::new();
    for node in &g.nodes {
        for v in node.op.uses() {
            assert!(defined.contains(&v.0), "{v:?} used before defined");
        }
        defined.extend(node.op.defs().into_iter().map(|v| v.0));
    }
}

/// Register `base`, channel 0, read into `dst` at `pc`.
fn read(pc: u16, dst: u32, base: u8) -> Node {
    let index = Index { base, rel: false };
    Node {
        pc,
        op: Op::Temp {
            dst: V(dst),
            index,
            chan: 0,
        },
    }
}

/// Register `base`, channel 0, written with `v` at `pc`.
fn write(pc: u16, base: u8, v: u32) -> Node {
    let (index, gate) = (Index { base, rel: false }, Gate::ACTIVE);
    Node {
        pc,
        op: Op::SetTemp {
            index,
            chan: 0,
            v: V(v),
            gate,
            fetched: false,
        },
    }
}

/// `dst` = `a` · `b` + c0 at `pc` (value 0 is c0).
fn mad(pc: u16, dst: u32, a: u32, b: u32) -> Node {
    Node {
        pc,
        op: Op::Mad {
            dst: V(dst),
            a: V(a),
            b: V(b),
            c: V(0),
        },
    }
}

/// Where r5 is read and where it is written once `nodes` (c0 first) are
/// grouped for batches of eight quads, where every computation would be a
/// group of its own.
fn r5_read_and_write(mut nodes: Vec<Node>) -> (Option<usize>, Option<usize>) {
    let c0 = Op::Const {
        dst: V(0),
        index: Index {
            base: 0,
            rel: false,
        },
        chan: 0,
    };
    nodes.insert(0, Node { pc: 0, op: c0 });
    let values = nodes
        .iter()
        .flat_map(|n| n.op.defs())
        .map(|v| v.0 + 1)
        .max()
        .unwrap_or(0);
    let clause = Clause {
        start: 0,
        len: 3,
        nodes,
        values,
        term: Term::End,
    };
    let g = grouped(&clause, 8).unwrap_or(clause);
    let at = |write: bool| {
        g.nodes.iter().position(|n| match n.op {
            Op::Temp { index, .. } => !write && index.base == 5,
            Op::SetTemp { index, .. } => write && index.base == 5,
            _ => false,
        })
    };
    (at(false), at(true))
}

#[test]
fn a_register_is_read_before_a_later_write_to_it() {
    // Chain B starts first; chain A reads r5, which B then overwrites,
    // and goes on: the read and the write join A and B, so that the read
    // stays before the write.
    let (read_at, write_at) = r5_read_and_write(vec![
        read(0, 1, 6),
        mad(0, 2, 1, 0),
        read(0, 3, 5),
        write(1, 5, 2),
        mad(1, 4, 3, 0),
        write(2, 7, 4),
    ]);
    assert!(read_at < write_at);
}

#[test]
fn a_register_is_read_after_an_earlier_write_to_it() {
    // Chain R starts first; chain W writes r5, which R then reads: the
    // write and the read join them, so that the read stays after the
    // write.
    let (read_at, write_at) = r5_read_and_write(vec![
        read(0, 1, 9),
        mad(0, 2, 1, 0),
        read(0, 3, 6),
        mad(0, 4, 3, 0),
        write(1, 5, 4),
        read(2, 5, 5),
        mad(2, 6, 2, 5),
        write(2, 7, 6),
    ]);
    assert!(write_at < read_at);
}
