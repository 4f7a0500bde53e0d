//! Throughput of the instruction codec and the text forms: decode, encode,
//! disassemble and assemble over a fixed set of generated instructions.
//! Prints a table; run with `cargo bench --bench codec`.

use std::hint::black_box;
use std::time::Instant;

use ctm::isa::asm::assemble;
use ctm::isa::disasm::{Options, disassemble_program};
use ctm::isa::random::random_inst;
use ctm::isa::{Inst, decode_program};

fn rate(label: &str, items: usize, mut f: impl FnMut()) {
    f(); // warm up
    let mut runs = 0u32;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.5 {
        f();
        runs += 1;
    }
    let per_item = start.elapsed().as_secs_f64() / f64::from(runs) / items as f64;
    println!(
        "{label:<14} {:>12.0} inst/s   {:>9.1} ns/inst",
        1.0 / per_item,
        per_item * 1e9
    );
}

fn main() {
    let mut state = 0x2545_F491u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let insts: Vec<Inst> = (0..512).map(|_| random_inst(&mut next)).collect();
    let words: Vec<u32> = insts
        .iter()
        .flat_map(|i| i.encode().expect("valid"))
        .collect();
    let text = disassemble_program(&words, Options::default());
    let n = insts.len();
    println!("{n} random instructions");
    rate("decode", n, || {
        black_box(decode_program(black_box(&words)));
    });
    rate("encode", n, || {
        for i in &insts {
            black_box(i.encode().expect("valid"));
        }
    });
    rate("disassemble", n, || {
        black_box(disassemble_program(black_box(&words), Options::default()));
    });
    rate("assemble", n, || {
        black_box(assemble(black_box(&text)).expect("valid"));
    });
}
