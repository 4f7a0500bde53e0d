//! The bundled benchmark kernels (`ctm_tools::bench::suite`) run alike on both
//! engines, and do the work their names say: every chain of the MAD-chain
//! shapes reaches the output, so no compiler may fold one into another, and
//! no two quads of a row compute the same values.

use crate::common;

use common::both;
use ctm_tools::bench::suite;

/// A case on a small domain (the kernels' work per pixel is unchanged).
fn small(name: &str) -> suite::Case {
    let mut c = suite::case(name).unwrap();
    let (w, h) = c.job.size();
    c.job = c.job.domain(w.min(24), h.min(16));
    c
}

#[test]
fn every_case_runs_alike_on_both_engines() {
    assert_eq!(suite::suite().len(), suite::NAMES.len());
    for name in suite::NAMES {
        let c = small(name);
        let r = both(&c.kernel, &c.job);
        assert!(r.report.pixel_instructions > 0, "{name}");
    }
}

#[test]
fn every_chain_is_observed() {
    for (name, chains) in [
        ("chains8", 8u8),
        ("chains4", 4),
        ("chains2", 2),
        ("chains1", 1),
        ("dotmix", 4),
        ("transcend", 4),
    ] {
        let c = small(name);
        let base = both(&c.kernel, &c.job).outputs;
        for k in 0..chains {
            // Chain k starts from c(3+k) and c(11+k): change one of them
            // and the output must change.
            let job = c.job.clone().constant(11 + k, [0.5, 0.25, 0.125, 0.0625]);
            let moved = both(&c.kernel, &job).outputs;
            assert_ne!(moved, base, "{name}: chain {k} does not reach the output");
        }
    }
}

/// The ALU-bound kernels' work per quad is the quad's own: every channel
/// of every chain starts from the pixel's column, so no two quads of a row
/// (which a batch runs together) compute one value, which would let a
/// compiler compute it once for the batch. Their outputs differ between
/// the first two quads of every row, in every channel; so do those of
/// `divergent`, whose arms once started from a constant and gave every
/// pixel of one parity the same value.
#[test]
fn no_two_quads_of_a_row_compute_the_same_values() {
    let alu = suite::NAMES.iter().filter(|n| small(n).alu_bound);
    assert_eq!(alu.clone().count(), 6);
    for name in alu.chain(&["divergent"]) {
        let c = small(name);
        let r = both(&c.kernel, &c.job);
        let (_, out) = &r.outputs[0];
        let px = out.to_f32();
        let w = out.width as usize;
        for j in 0..out.height as usize {
            for ch in 0..4 {
                let at = |i: usize| px[(j * w + i) * 4 + ch].to_bits();
                assert_ne!(at(0), at(2), "{name}: row {j}, channel {ch}");
            }
        }
    }
}

/// The kernels that look up inputs read their surfaces, not the zeros
/// outside them: at their full size, at most 1% of their lookups fall
/// outside (the taps of a stencil at the border). `texture` once looked
/// up a 64 × 64 surface over a 256² domain, and 94% of its lookups read
/// zeros.
#[test]
fn lookups_read_inside_their_surfaces() {
    // Lookups per pixel: `matmul` two per step of its 64, `conv3x3` nine.
    for (name, per_pixel) in [
        ("texture", 5u64),
        ("saxpy", 2),
        ("matmul", 128),
        ("conv3x3", 9),
        ("scatter", 1),
    ] {
        let c = suite::case(name).unwrap();
        let r = c.kernel.run(&c.job).unwrap();
        let lookups = r.report.pixels * per_pixel;
        let outside = r.report.diagnostics.out_of_bounds_reads;
        assert!(
            outside * 100 <= lookups,
            "{name}: {outside} of {lookups} lookups outside their surface"
        );
    }
}

#[test]
fn unknown_names_are_none() {
    assert!(suite::case("madchain").is_none());
}

/// Optimised strips run an ALU shape two quads at a time where the order
/// the strip lowers it in keeps few values live per quad (`chains4`,
/// `chains2`, `transcend`), and one at a time where it does not
/// (`chains8`, `dotmix`); quick strips, which must compile fast, run one.
/// Either way the job gives the interpreter's bits.
#[test]
fn optimised_strips_take_two_quads_where_the_grouped_order_allows() {
    use ctm::{JitOptions, Tier};
    if !common::jit_available() {
        return;
    }
    for (name, optimised) in [
        ("chains4", 2),
        ("chains2", 2),
        ("transcend", 2),
        ("chains8", 1),
        ("dotmix", 1),
    ] {
        let c = small(name);
        let program = ctm_tools::bench::program_for(&c.kernel, &c.job);
        for (tier, want) in [(Tier::Quick, 1), (Tier::Optimised, optimised)] {
            let opts = JitOptions {
                tier,
                ..JitOptions::default()
            };
            let code = ctm_jit::compile::compile(&program, opts).unwrap();
            let (strip, _) = code.strip(&program, 0).expect("a straight program");
            let (_, _, batch) = strip.expect("its strip compiles");
            assert_eq!(batch, want, "{name}, {tier:?}");
            let mut job = c.job.clone();
            job.settings_mut().jit = opts;
            both(&c.kernel, &job);
        }
    }
}
