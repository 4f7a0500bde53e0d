//! The tracer: one pixel or its quad, instruction by instruction, with
//! every write (also of unchanged values), lookups, flow state and hazards.

use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::Format;
use ctm::trace::{TraceOptions, Write, trace};

fn examples(name: &str) -> Kernel {
    Kernel::from_path(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name),
    )
    .unwrap()
}

#[test]
fn writes_lookups_and_loops_of_one_pixel() {
    // Horner: the loop register walks 3, 2, 1, 0; c[aL+0] the coefficients.
    let x: Vec<f32> = (0..16 * 4)
        .flat_map(|k| [k as f32 / 8.0, 0.5, -1.0, 2.0])
        .collect();
    let job = Job::new(16, 4)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_4, 16, 4, &x).unwrap(),
        )
        .constant(0, [1.0; 4])
        .constant(1, [-1.0; 4])
        .constant(2, [0.5; 4])
        .constant(3, [0.25; 4])
        .int(0, 4, 3, -1)
        .output(0, Format::Float32_4);
    let t = trace(&examples("horner.s"), &job, &TraceOptions::pixel(5, 2)).unwrap();
    assert!(t.error.is_none());
    let pcs: Vec<u16> = t.steps.iter().map(|s| s.pc).collect();
    // tex, acc = 0, LOOP, then 4 × (MAD, ENDLOOP), out.
    assert_eq!(pcs, [0, 1, 2, 3, 4, 3, 4, 3, 4, 3, 4, 5]);
    let first = &t.steps[0].lanes[0];
    assert_eq!(first.fetches.len(), 1);
    let x0 = (2 * 16 + 5) as f32 / 8.0;
    assert_eq!(
        first.fetches[0].coords[..2],
        [5.0f32.to_bits(), 2.0f32.to_bits()]
    );
    assert_eq!(f32::from_bits(first.fetches[0].texel[0]), x0);
    // acc = 0 is a write although r2 was already 0.
    assert!(
        t.steps[1].lanes[0].writes.contains(&Write::Temp {
            reg: 2,
            chan: 0,
            bits: 0
        }),
        "{:?}",
        t.steps[1]
    );
    // aL inside the loop: 3, 2, 1, 0 at the four MADs.
    let als: Vec<Option<i32>> = t
        .steps
        .iter()
        .filter(|s| s.pc == 3)
        .map(|s| s.lanes[0].state.al)
        .collect();
    assert_eq!(als, [Some(3), Some(2), Some(1), Some(0)]);
    assert_eq!(t.steps[2].lanes[0].state.loops, [(4, true)]);
    // The output: p(x0) per channel, r first.
    let last = &t.steps.last().unwrap().lanes[0];
    let Some(Write::Output {
        target: 0,
        chan: 0,
        bits,
    }) = last.writes.first().copied()
    else {
        panic!("{last:?}");
    };
    let p = ((0.25f32 * x0 + 0.5) * x0 - 1.0) * x0 + 1.0;
    assert!((f32::from_bits(bits) - p).abs() < 1e-6);
    let text = t.to_string();
    assert!(
        text.contains("@3    alu r2.rgb = mad(") && text.contains("aL 2"),
        "{text}"
    );
    // --from/--until.
    let only = TraceOptions {
        from: Some(3),
        until: Some(3),
        ..TraceOptions::pixel(5, 2)
    };
    let t = trace(&examples("horner.s"), &job, &only).unwrap();
    assert_eq!(t.steps.len(), 4);
}

#[test]
fn a_divergent_quad_side_by_side() {
    // abs2: x >= 0 ? 2x : -x on red; the quad (2..3, 0..1) straddles zero.
    let x: Vec<f32> = (0..4 * 2)
        .flat_map(|k| {
            let v = if k % 4 == 3 { -1.0 } else { 1.0 };
            [v, 0.0, 0.0, 1.0]
        })
        .collect();
    let job = Job::new(4, 2)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_4, 4, 2, &x).unwrap(),
        )
        .output(0, Format::Float32_4);
    let opts = TraceOptions {
        quad: true,
        ..TraceOptions::pixel(3, 0)
    };
    let t = trace(&examples("abs2.s"), &job, &opts).unwrap();
    assert_eq!(t.pixels, [(2, 0), (3, 0), (2, 1), (3, 1)]);
    // Both sides run: after the IF, (3, 0) and (3, 1) (x < 0) are inactive
    // while the others double, then the ELSE swaps.
    let after_if = t.steps.iter().find(|s| s.text.starts_with("IF")).unwrap();
    let active: Vec<bool> = after_if.lanes.iter().map(|l| l.state.active).collect();
    assert_eq!(active, [true, false, true, false]);
    let text = t.to_string();
    assert!(text.contains("inactive, branch counter 0"), "{text}");
    assert!(text.contains(" | "), "{text}");
}

#[test]
fn hazards_kills_and_errors_as_they_happen() {
    let k = Kernel::assemble(
        "    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    tex kill r1.r, in0.rgba, r1.rgba
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    let v: Vec<f32> = (0..4).map(|k| if k == 1 { -1.0 } else { 1.0 }).collect();
    let job = Job::new(2, 2)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, 2, 2, &v).unwrap(),
        )
        .output(0, Format::Float32_4);
    let t = trace(&k, &job, &TraceOptions::pixel(1, 0)).unwrap();
    // @1 reads r1 before any wait: a hazard, at that instruction.
    assert!(
        t.steps[1]
            .hazards
            .iter()
            .any(|h| h.contains("before a TEX_SEM_WAIT")),
        "{t}"
    );
    assert!(t.steps[1].lanes[0].writes.contains(&Write::Killed), "{t}");
    // A program that never ends: the trace so far and the error.
    let endless = Kernel::assemble(
        "top:
    JUMP -> top
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let job = Job::new(2, 2).output(0, Format::Float32_4).budget(50);
    let t = trace(&endless, &job, &TraceOptions::pixel(0, 0)).unwrap();
    assert!(t.error.as_deref().is_some_and(|e| e.contains("never ends")));
    assert!(!t.steps.is_empty() && t.steps.iter().all(|s| s.pc == 0));
    // A pixel outside the domain.
    assert!(trace(&endless, &job, &TraceOptions::pixel(2, 0)).is_err());
}
