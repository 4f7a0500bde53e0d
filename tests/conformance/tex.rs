//! Texture conformance (§5): lookups scaled, unscaled and projected, source
//! and destination swizzles, write masks, KILL_LT_0 (Guide reading: write
//! mask and predication choose the channels), uncached writes and reads, the
//! semaphore example of §5.3 and the hazard checker.

use crate::harness::*;
use ctm::runtime::hazard::HazardKind;
use ctm::runtime::texture::Image;

/// Input 0: texel (x, y) = (x, y, 10x + y, 1).
fn grid(w: u32, h: u32) -> Image {
    Image::from_fn(w, h, |x, y| [x as f32, y as f32, (10 * x + y) as f32, 1.0])
}

/// Expected texel of pixel (i, j).
type Texel = fn(f32, f32) -> [f32; 4];

#[test]
fn unscaled_lookup_with_swizzles_and_write_mask() {
    let s = Setup::new(4, 2).input(0, grid(4, 2));
    let cases: &[(&str, Texel)] = &[
        (
            "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait",
            |i, j| [i, j, 10.0 * i + j, 1.0],
        ),
        (
            "tex ld r1.rgba, in0.abgr, r0.rgba unscaled acquire wait",
            |i, j| [1.0, 10.0 * i + j, j, i],
        ),
        // Source swizzle: S = j, T = i (transposed, so only the 2×2 corner is in range).
        (
            "tex ld r1.rgba, in0.rgba, r0.grba unscaled acquire wait",
            |i, j| {
                if i < 2.0 {
                    [j, i, 10.0 * j + i, 1.0]
                } else {
                    [0.0; 4]
                }
            },
        ),
    ];
    for (tex, want) in cases {
        let o = run(&format!("{tex}\n{OUT_R1}"), &s);
        for j in 0..2 {
            for i in 0..4 {
                assert_eq!(o.af(i, j), want(i as f32, j as f32), "{tex} at ({i}, {j})");
            }
        }
    }
    // Write mask .rb keeps r1.g and r1.a (= 7).
    let asm = format!(
        "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c0\n\
         tex ld r1.rb, in0.rgba, r0.rgba unscaled acquire wait\n{OUT_R1}"
    );
    let o = run(&asm, &s.clone().c(0, [7.0; 4]));
    assert_eq!(o.af(3, 1), [3.0, 7.0, 31.0, 7.0]);
}

#[test]
fn scaled_and_projected_lookups() {
    // Scaled: S = (i + 0.5)/4, T = (j + 0.5)/2 → texel (i, j).
    let s = Setup::new(4, 2)
        .input(0, grid(4, 2))
        .c(0, [0.25, 0.5, 0.0, 0.0])
        .c(1, [0.125, 0.25, 0.0, 2.0]);
    let asm = format!(
        "alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1\n\
         tex ld r1.rgba, in0.rgba, r2.rgba acquire wait\n{OUT_R1}"
    );
    let o = run(&asm, &s);
    assert_eq!(o.af(3, 1), [3.0, 1.0, 31.0, 1.0]);
    // Projected: (2i, 2j, 0, 2) / 2.
    let asm = format!(
        "alu r2.rgb = max.x2(s0, s0) | r2.a = max.x2(s0, s0) src0=r0\n\
         tex proj r1.rgba, in0.rgba, r2.rgba unscaled acquire wait\n{OUT_R1}"
    );
    let o = run(&asm, &s);
    assert_eq!(o.af(2, 1), [2.0, 1.0, 21.0, 1.0]);
}

#[test]
fn kill_uses_write_mask_and_predication_not_swizzles() {
    // r2 = (i − 1, −1, 0, 0): R < 0 only for i = 0; G < 0 everywhere.
    let prep = "alu r2.rgb = mad(s0, s1, -s2) | r2.a = max(s1.0, s1.0) src0=r0 src1=c0 src2=c1";
    let s = Setup::new(4, 1)
        .c(0, [1.0, 0.0, 0.0, 0.0])
        .c(1, [1.0, 1.0, 0.0, 0.0]);
    let out = set_out();
    // Mask .r: only i = 0 dies. The (ignored) source swizzle names G.
    let o = run(
        &format!("{prep}\ntex kill r2.r, in0.rgba, r2.gggg\n{out}"),
        &s,
    );
    assert_eq!(o.pixels.len(), 3);
    assert!(!o.pixels.contains_key(&(0, 0)));
    assert_eq!(o.stats.killed, 1);
    // Mask .g: everyone dies.
    let o = run(
        &format!("{prep}\ntex kill r2.g, in0.rgba, r2.rgba\n{out}"),
        &s,
    );
    assert!(o.pixels.is_empty());
    // Mask .ba: nobody (0 is not < 0).
    let o = run(
        &format!("{prep}\ntex kill r2.ba, in0.rgba, r2.rgba\n{out}"),
        &s,
    );
    assert_eq!(o.pixels.len(), 4);
    // Mask .g under predicate R (set where i >= 2): only i = 2, 3 die; with
    // per-channel predication G is gated by bit G (never set): nobody dies.
    let pred = "alu p.r>=0 = mad(s0, s1, -s2) | _ = max(s0, s0) src0=r0 src1=c0 src2=2.0";
    let o = run(
        &format!("{prep}\n{pred}\ntex kill r2.g, in0.rgba, r2.rgba pred=rrrr\n{out}"),
        &s,
    );
    assert_eq!(
        o.pixels.keys().copied().collect::<Vec<_>>(),
        vec![(0, 0), (1, 0)]
    );
    let o = run(
        &format!("{prep}\n{pred}\ntex kill r2.g, in0.rgba, r2.rgba pred=rgba\n{out}"),
        &s,
    );
    assert_eq!(o.pixels.len(), 4);
}

fn set_out() -> &'static str {
    "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last"
}

/// r5 = (10i + j, j, i, 0): value and address (x = j, y = i) of a UMRT write.
const PACK: &str = "alu r5.r = mad(s0.rrr, s1.rrr, s0.ggg) | _ = max(s0, s0) src0=r0 src1=c0
    alu r5.gb = max.off(s0.rgr, s0.rgr) | r5.a = max.off(s0.0, s0.0) src0=r0";

/// In uncached mode the final OUTPUT writes nothing (mask 0).
const END: &str = "out _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 wait last";

fn umrt_setup() -> Setup {
    let mut s = Setup::new(4, 2)
        .uncached(4, 8)
        .c(0, [10.0, 0.0, 0.0, 0.0])
        .c(1, [1000.0, 4.0, 0.0, 0.0]);
    s.frontend.uncached = true;
    s
}

#[test]
fn uncached_writes_per_processor_then_read_back() {
    // Store 10i + j at (j, i) (TARGET D = per processor + acquire), read it
    // back with an uncached lookup after WAIT, store 1000 + it at (i, j + 4).
    let asm = format!(
        "{PACK}
    out rtD.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r5 wait
    alu r6.rgb = max.off(s0.grb, s0.grb) | _ = max(s0, s0) src0=r0
    tex ld_uncached r1.rgba, in0.rgba, r6.rgba unscaled acquire wait
    alu r7.r = mad(s0.rrr, s0.111, s1.rrr) | _ = max(s0, s0) src0=r1 src1=c1 wait
    alu r7.gb = mad(s0.rrg, s0.111, s1.00g) | r7.a = max.off(s0.0, s0.0) src0=r0 src1=c1
    out rtC.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r7
    {END}"
    );
    let o = run(&asm, &umrt_setup());
    assert!(o.pixels.values().all(|p| p.targets == [[None; 4]; 4]));
    for j in 0..2u32 {
        for i in 0..4u32 {
            let v = (10 * i + j) as f32;
            assert_eq!(
                o.uncached.get(&(j, i)),
                Some(&v.to_bits()),
                "first store ({j}, {i})"
            );
            let back = (1000 + 10 * i + j) as f32;
            assert_eq!(
                o.uncached.get(&(i, j + 4)),
                Some(&back.to_bits()),
                "second ({i}, {j})"
            );
        }
    }
    assert_eq!(o.uncached.len(), 16);
}

#[test]
fn uncached_write_with_shared_index() {
    // TARGET B = shared index + acquire: each quad writes at its first lane's
    // address; the lanes store in order, so the bottom-right value lands.
    let asm = format!(
        "{PACK}
    out rtB.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r5 wait
    {END}"
    );
    let o = run(&asm, &umrt_setup());
    let want: Vec<_> = [((0, 0), 11.0f32), ((0, 2), 31.0)]
        .into_iter()
        .map(|(k, v)| (k, v.to_bits()))
        .collect();
    assert_eq!(o.uncached.into_iter().collect::<Vec<_>>(), want);
}

#[test]
fn partial_output_mask_in_uncached_mode_is_an_error() {
    let asm =
        format!("{PACK}\n    out rtA.rg = max.off(s0, s0) | _ = max(s0, s0) src0=r5 wait\n{END}");
    let err = try_run(&asm, &umrt_setup()).unwrap_err();
    assert!(
        matches!(err, ctm::runtime::RunError::Undefined { pc: 2, .. }),
        "{err}"
    );
}

/// The semaphore example of §5.3: three lookups, ACQUIRE only on the last,
/// WAIT on the first instruction that uses a result.
const SEMAPHORE: &str = "
    tex ld r4.rgba, in0.rgba, r0.rgba unscaled
    tex ld r5.rgba, in1.rgba, r0.rgba unscaled
    tex ld r6.rgba, in2.rgba, r0.rgba unscaled acquire wait
    alu r1.rgb = mad(s0, s0.111, s1) | r1.a = mad(s0, s0.1, s1) src0=r4 src1=r5 WAIT_HERE
    alu r1.rgb = mad(s0, s0.111, s1) | r1.a = mad(s0, s0.1, s1) src0=r1 src1=r6
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

fn semaphore_setup() -> Setup {
    Setup::new(2, 2)
        .input(0, Image::from_fn(2, 2, |x, _| [x as f32; 4]))
        .input(1, Image::from_fn(2, 2, |_, y| [10.0 * y as f32; 4]))
        .input(2, Image::from_fn(2, 2, |_, _| [100.0; 4]))
        .hazards()
}

#[test]
fn semaphore_example_of_5_3_is_clean() {
    let o = run(&SEMAPHORE.replace("WAIT_HERE", "wait"), &semaphore_setup());
    assert_eq!(o.stats.hazards, vec![]);
    assert_eq!(o.af(1, 1), [111.0; 4]);
}

#[test]
fn hazard_checker_reports_unsynchronised_reads() {
    // Without the WAIT the add reads r4 and r5 while their fetches are in flight.
    let o = run(&SEMAPHORE.replace("WAIT_HERE", ""), &semaphore_setup());
    let kinds: Vec<_> = o.stats.hazards.iter().map(|h| (h.pc, h.kind)).collect();
    assert!(
        kinds.contains(&(
            3,
            HazardKind::UnsyncedRead {
                reg: 4,
                chan: 0,
                fetch_pc: 0
            }
        )),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(
            3,
            HazardKind::UnsyncedRead {
                reg: 5,
                chan: 3,
                fetch_pc: 1
            }
        )),
        "{kinds:?}"
    );
    let first = &o.stats.hazards[0];
    assert_eq!(first.pixel, (0, 0));
    assert_eq!(first.count, 4, "all four pixels");
    // The result is still the synchronous one.
    assert_eq!(o.af(1, 1), [111.0; 4]);
}

#[test]
fn hazard_checker_reports_acquire_without_wait_and_final_without_wait() {
    let asm = "
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 last";
    let o = run(asm, &semaphore_setup());
    let kinds: Vec<_> = o.stats.hazards.iter().map(|h| (h.pc, h.kind)).collect();
    assert!(
        kinds.contains(&(0, HazardKind::AcquireWithoutWait)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(1, HazardKind::FinalWithoutWait)),
        "{kinds:?}"
    );
    // Overwriting a register whose fetch is in flight.
    let asm = "
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=r0
    tex nop acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let o = run(asm, &semaphore_setup());
    let kinds: Vec<_> = o.stats.hazards.iter().map(|h| (h.pc, h.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            (
                1,
                HazardKind::OverwriteInFlight {
                    reg: 1,
                    chan: 0,
                    fetch_pc: 0
                }
            ),
            (
                1,
                HazardKind::OverwriteInFlight {
                    reg: 1,
                    chan: 1,
                    fetch_pc: 0
                }
            ),
            (
                1,
                HazardKind::OverwriteInFlight {
                    reg: 1,
                    chan: 2,
                    fetch_pc: 0
                }
            ),
            (
                1,
                HazardKind::OverwriteInFlight {
                    reg: 1,
                    chan: 3,
                    fetch_pc: 0
                }
            )
        ]
    );
}

#[test]
fn predicated_texture_writes() {
    // p.r = i >= 2: only those pixels take the fetched value.
    let asm = format!(
        "alu p.r>=0 = mad(s0, s1, -s2) | _ = max(s0, s0) src0=r0 src1=c0 src2=2.0
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c1
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait pred=rrrr apred=rrrr
    {OUT_R1}"
    );
    let s = Setup::new(4, 1)
        .input(0, grid(4, 1))
        .c(0, [1.0, 0.0, 0.0, 0.0])
        .c(1, [-5.0; 4]);
    let o = run(&asm, &s);
    for i in 0..4 {
        let want = if i >= 2 {
            [i as f32, 0.0, 10.0 * i as f32, 1.0]
        } else {
            [-5.0; 4]
        };
        assert_eq!(o.af(i, 0), want, "i = {i}");
    }
}
