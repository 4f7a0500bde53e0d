//! Compiled Direct3D 9 shaders on both engines: every compiled program
//! must pass the validator with no warning and run with no hazard.

use super::both;
use ctm::d3d9;
use ctm::kernel::{HostSurface, Job, JobResult, Kernel, Resource};
use ctm::mc::Format;

/// Assembles and compiles `src`; the program has no validator warning.
pub fn kernel(src: &str) -> Kernel {
    kernel_in(src, d3d9::Dialect::D3d9)
}

/// [`kernel`] in `dialect`.
pub fn kernel_in(src: &str, dialect: d3d9::Dialect) -> Kernel {
    let shader = d3d9::assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let compiled = d3d9::compile_dialect(&shader, dialect).unwrap_or_else(|e| panic!("{e}\n{src}"));
    // Every DPP instruction knows the shader statements it came from.
    assert_eq!(compiled.origins.len(), compiled.exe.len(), "{src}");
    assert!(
        compiled
            .origins
            .iter()
            .flatten()
            .all(|&k| k < shader.items.len()),
        "{src}"
    );
    // The compiler encodes its instructions itself; its listing, run
    // through the assembler, gives the same words.
    let assembled = ctm::isa::asm::assemble(&compiled.listing).unwrap_or_else(|e| {
        panic!(
            "{src}\nlists as\n{}\nwhich does not assemble: {e}",
            compiled.listing
        )
    });
    assert!(
        assembled == compiled.exe.code,
        "{src}\nencodes differently from its listing\n{}",
        compiled.listing
    );
    let warnings = ctm::isa::validate::validate(&ctm::isa::decode_program(&compiled.exe.code));
    assert!(
        warnings.is_empty(),
        "{src}\ncompiles to\n{}\nwith warnings {warnings:?}",
        compiled.listing
    );
    Kernel::new(compiled.exe)
}

/// Runs on both engines (compiled natively: no hazard checking), then on
/// the interpreter with the hazard checker on, which finds no hazard.
pub fn run(k: &Kernel, job: &Job) -> JobResult {
    let out = both(k, job);
    let checked = job
        .clone()
        .engine(ctm::engine::EngineKind::Interp)
        .check_hazards(true);
    let report = k.run(&checked).unwrap().report;
    assert!(report.hazards.is_empty(), "{:?}", report.hazards);
    out
}

/// Binds `rows` of float32_4 values (one row of pixels each) to the
/// shader register `reg`.
pub fn bind(k: &Kernel, job: Job, reg: &str, rows: &[Vec<[f32; 4]>]) -> Job {
    let Some(Resource::Input(n)) = k.resource(reg) else {
        panic!("{reg} is not an input: {:?}", k.exe.info.bindings)
    };
    let (w, h) = (rows[0].len() as u32, rows.len() as u32);
    let flat: Vec<f32> = rows.iter().flatten().flatten().copied().collect();
    job.input(
        n,
        HostSurface::from_f32(Format::Float32_4, w, h, &flat).unwrap(),
    )
}

/// Output register `reg` (oC#) as float32_4 values per pixel.
pub fn output(k: &Kernel, out: &JobResult, reg: &str) -> Vec<[f32; 4]> {
    let Some(Resource::Output(n)) = k.resource(reg) else {
        panic!("{reg} is not an output")
    };
    out.output(n)
        .unwrap()
        .to_f32()
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect()
}

/// Binds output register `reg` as float32_4.
pub fn with_output(k: &Kernel, job: Job, reg: &str) -> Job {
    let Some(Resource::Output(n)) = k.resource(reg) else {
        panic!("{reg} is not an output")
    };
    job.output(n, Format::Float32_4)
}
