//! Rewrites of the clause IR that both engines run: register writes that
//! nothing observes are dropped when a program is loaded.

use ctm::{frontend, isa};
use ctm_jit::ir::{Op, Program};

fn build(path: &str, drop_dead_writes: bool) -> Program {
    let src = std::fs::read_to_string(path).unwrap();
    let words = isa::asm::assemble(&src).unwrap();
    let opts = frontend::Options {
        drop_dead_writes,
        ..frontend::Options::loaded(false)
    };
    let p = frontend::build(&isa::decode_program(&words), opts);
    p.verify().unwrap();
    p
}

/// The temporaries written in each clause.
fn writes(p: &Program) -> Vec<Vec<u8>> {
    p.clauses
        .iter()
        .map(|c| {
            let mut regs: Vec<u8> = c
                .nodes
                .iter()
                .filter_map(|n| match &n.op {
                    Op::SetTemp { index, .. } => Some(index.base),
                    _ => None,
                })
                .collect();
            regs.dedup();
            regs
        })
        .collect()
}

#[test]
fn mandelbrot_keeps_only_the_registers_a_later_clause_reads() {
    let all = build("examples/mandelbrot.s", false);
    let lean = build("examples/mandelbrot.s", true);
    // Clause 1 computes t (r3, read after the BREAKLOOP) and m (r4, read
    // only inside clause 1); clause 2 computes r5 (read only inside
    // clause 2) and z, n (r2, read by the next iteration).
    assert_eq!(writes(&all)[1..3], [vec![3, 4], vec![5, 2]]);
    assert_eq!(writes(&lean)[1..3], [vec![3], vec![2]]);
    // The reads of r4 and r5 now take the written values directly.
    let reads = |c: usize, r: u8| {
        lean.clauses[c]
            .nodes
            .iter()
            .any(|n| matches!(&n.op, Op::Temp { index, .. } if index.base == r))
    };
    assert!(!reads(1, 4) && !reads(2, 5));
    assert!(
        reads(2, 3) && reads(1, 2),
        "values from other clauses are read"
    );
    // Fewer operations, same instructions.
    let ops = |p: &Program| p.clauses.iter().map(|c| c.nodes.len()).sum::<usize>();
    assert!(ops(&lean) < ops(&all));
    assert_eq!(
        lean.clauses.iter().map(|c| c.len).collect::<Vec<_>>(),
        all.clauses.iter().map(|c| c.len).collect::<Vec<_>>()
    );
}
