//! The shader corpus (`tests/shaders/*.psh`): every file compiles with no
//! validator warning, runs on both engines bit-identically with no hazard,
//! reads back from its bytecode unchanged, and — wherever the reference
//! evaluator knows every instruction (all but derivatives) — gives the
//! evaluator's results for every pixel. Prints the quality of the output
//! (DPP instructions per shader instruction, co-issue rate).

use crate::common;

use common::d3d9_ref::{Pixel, eval};
use common::shader::{kernel, run};
use ctm::co::{CondLoc, CondTest};
use ctm::d3d9;
use ctm::kernel::{CondSetup, HostSurface, Job, JobResult, Kernel, Resource};
use ctm::mc::Format;

const W: u32 = 8;
const H: u32 = 4;
const TEX: u32 = 4;

const VALUES: [f32; 11] = [0.0, 0.5, -0.25, 1.5, 2.0, -1.0, 0.125, 3.0, -0.0, 0.75, 0.3];

/// Input register n at pixel (i, j).
fn input(n: u32, i: u32, j: u32) -> [f32; 4] {
    let k = (n * 37 + j * 11 + i * 3) as usize;
    [0, 1, 2, 3].map(|c| VALUES[(k + c * 5) % VALUES.len()])
}

fn texel(s: u32, x: u32, y: u32) -> [f32; 4] {
    let t = (s * 100 + y * TEX + x) as f32;
    [t, t * 0.5, -t, 0.0625 * t]
}

fn constant(n: usize) -> [f32; 4] {
    [0, 1, 2, 3].map(|c| VALUES[(n * 3 + c) % VALUES.len()] + 0.25 * n as f32)
}

#[test]
fn the_corpus_compiles_runs_and_agrees_with_the_reference() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shaders");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "psh"))
        .collect();
    files.sort();
    assert!(files.len() >= 70, "{} shaders", files.len());
    let (mut shader_insts, mut dpp, mut co, mut alu, mut paired, mut compared) = (0, 0, 0, 0, 0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(path).unwrap();
        let shader = d3d9::assemble(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            d3d9::read(&d3d9::write(&shader)).as_ref(),
            Ok(&shader),
            "{name}"
        );
        let compiled = d3d9::compile(&shader).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = compiled.stats;
        (shader_insts, dpp, co, alu, paired) = (
            shader_insts + s.shader_insts,
            dpp + s.dpp_insts,
            co + s.coissued,
            alu + s.alu_insts,
            paired + s.paired,
        );
        let k = kernel(&src);
        let bound = bind(&k);
        let out = run(&k, &bound.job);
        let case = Case {
            name: &name,
            shader: &shader,
            kernel: &k,
            listing: &compiled.listing,
        };
        compared += case.compare(&bound, &out);
    }
    assert!(
        compared > 60 * (W * H) as usize,
        "{compared} pixels compared"
    );
    println!(
        "corpus: {} shaders, {shader_insts} shader instructions → {dpp} DPP instructions ({:.2} each); {co} of {alu} ALU instructions use both units ({:.0}%), {paired} by pairing two shader operations",
        files.len(),
        dpp as f64 / shader_insts as f64,
        100.0 * co as f64 / alu as f64
    );
}

/// A shader's job and what the reference needs to know of it.
struct Bound {
    job: Job,
    /// Sampler numbers and their texels.
    textures: Vec<(u32, Vec<f32>)>,
    /// ps_1_x bump-environment values by name (after `bumpenv`).
    bump: Vec<(String, [u32; 4])>,
}

/// The job of kernel `k`: the constants, its inputs, textures and
/// outputs bound by name.
fn bind(k: &Kernel) -> Bound {
    let mut job = Job::new(W, H);
    for n in 0..32 {
        job = job.constant(n, constant(usize::from(n)));
    }
    for n in 0..16 {
        job = job.int(n, 3, 3, -1).boolean(n, n % 2 == 0);
    }
    let mut textures = Vec::new();
    let mut bump = Vec::new();
    for (reg, res) in &k.exe.info.bindings {
        // ps_1_x bump-environment values: a matrix that turns and
        // scales, a luminance of 0.5·b + 0.25.
        if let (Some(rest), Some(Resource::Float(c))) =
            (reg.strip_prefix("bumpenv"), k.resource(reg))
        {
            let v = if rest.starts_with('l') {
                [0.5, 0.25, 0.0, 0.0]
            } else {
                [0.5, -0.25, 0.125, 1.5]
            };
            job = job.constant(c, v);
            bump.push((rest.to_string(), v.map(f32::to_bits)));
            continue;
        }
        let num: u32 = reg[1..].parse().unwrap_or(0);
        match (reg.chars().next(), k.resource(reg)) {
            (Some(first @ ('v' | 't')), Some(Resource::Input(n))) => {
                // Texture coordinates differ from colour inputs.
                let num = if first == 't' { num + 10 } else { num };
                let flat: Vec<f32> = (0..H)
                    .flat_map(|j| (0..W).flat_map(move |i| input(num, i, j)))
                    .collect();
                job = job.input(
                    n,
                    HostSurface::from_f32(Format::Float32_4, W, H, &flat).unwrap(),
                );
            }
            (Some('s'), Some(Resource::Input(n))) if !reg.contains('.') => {
                let flat: Vec<f32> = (0..TEX)
                    .flat_map(|y| (0..TEX).flat_map(move |x| texel(num, x, y)))
                    .collect();
                job = job.input(
                    n,
                    HostSurface::from_f32(Format::Float32_4, TEX, TEX, &flat).unwrap(),
                );
                textures.push((num, flat));
            }
            (Some('o'), Some(Resource::Output(n))) => job = job.output(n, Format::Float32_4),
            (Some('o'), Some(Resource::Cond)) => {
                job = job.cond(CondSetup {
                    test: CondTest::Always,
                    loc: CondLoc::Dpp,
                    write: true,
                    buffer: HostSurface::filled(Format::Float32_1, W, H, 0.0),
                })
            }
            _ => {
                let _ = res;
            }
        }
    }
    Bound {
        job,
        textures,
        bump,
    }
}

/// One shader of the corpus.
struct Case<'a> {
    name: &'a str,
    shader: &'a d3d9::Shader,
    kernel: &'a Kernel,
    listing: &'a str,
}

impl Case<'_> {
    /// Compares every pixel the reference evaluates with `out`; returns
    /// how many it evaluated.
    fn compare(&self, b: &Bound, out: &JobResult) -> usize {
        let (name, k) = (self.name, self.kernel);
        let mut compared = 0;
        for j in 0..H {
            for i in 0..W {
                let mut px = reference_pixel(i, j, b);
                if eval(self.shader, &mut px).is_err() {
                    continue;
                }
                compared += 1;
                let at = (j * W + i) as usize;
                for n in 0..4u8 {
                    if let Some(Resource::Output(o)) = k.resource(&format!("oC{n}")) {
                        let got: Vec<u32> = out.output(o).unwrap().to_f32()[4 * at..4 * at + 4]
                            .iter()
                            .map(|x| x.to_bits())
                            .collect();
                        assert_eq!(
                            got,
                            px.out[usize::from(n)],
                            "{name}: oC{n} at ({i}, {j})\n{}",
                            self.listing
                        );
                    }
                }
                if let Some(cond) = &out.cond {
                    let got = cond.to_f32()[at].to_bits();
                    assert_eq!(got, px.depth.unwrap_or(0), "{name}: oDepth at ({i}, {j})");
                }
            }
        }
        compared
    }
}

/// The reference's pixel (i, j) with `b`'s constants, inputs and textures.
fn reference_pixel(i: u32, j: u32, b: &Bound) -> Pixel {
    let (textures, bump) = (&b.textures, &b.bump);
    let mut px = Pixel {
        pos: (i, j),
        consts: (0..256)
            .map(|n| {
                if n < 32 {
                    constant(n).map(f32::to_bits)
                } else {
                    [0; 4]
                }
            })
            .collect(),
        ints: [[3, 3, -1]; 16],
        ..Pixel::default()
    };
    for n in 0..16 {
        px.bools[n] = n % 2 == 0;
    }
    for n in 0..10 {
        px.inputs[n] = input(n as u32, i, j).map(f32::to_bits);
    }
    for n in 0..8 {
        px.texcoords[n] = input(n as u32 + 10, i, j).map(f32::to_bits);
    }
    for (rest, v) in bump {
        match rest.strip_prefix('l') {
            Some(n) => px.bumpenvl[n.parse::<usize>().unwrap()] = [v[0], v[1]],
            None => px.bumpenv[rest.parse::<usize>().unwrap()] = *v,
        }
    }
    px.textures = vec![(0, 0, Vec::new()); 16];
    for (num, flat) in textures {
        px.textures[*num as usize] = (
            TEX,
            TEX,
            flat.chunks(4)
                .map(|c| [c[0], c[1], c[2], c[3]].map(f32::to_bits))
                .collect(),
        );
    }
    px
}
