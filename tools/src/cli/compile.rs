//! `ctm compile`: a Direct3D 9 pixel shader (text or bytecode) to a DPP
//! executable, with the register map and the generated assembly on request.

use super::{EXIT_OK, Error, Verbosity, print, say, usage};
use clap::Args;
use ctm::{abi, d3d9};
use std::path::{Path, PathBuf};

const ABOUT: &str = "\
How registers map (ctm's choices, docs/d3d9.md §3): each input v#/t# the
shader reads is an input surface read at the pixel's own position; sampler
s# is an input surface sampled at point with wrapped coordinates (its size
in a float constant ctm fills from the bound surface); oC0-oC3 are outputs
0-3 (render targets A-D), oDepth the conditional value; c#, i#, b# are the
constant files at the same numbers, def/defi/defb values carried in the
executable (they override the host's); vPos is (i, j); vFace is +1 unless
the host sets it (--const vFace=-1,0,0,0). ctm run and ctm bench take
shader files directly and bind by register: --input v0=…, --sampler s0=…,
--output oC0=…, --const c3=…, --const-int i0=…, --const-bool b0=….

--dialect ctm compiles the CTM SDK compiler's ps_3_0 (docs/d3d9.md §5):
texld takes texel coordinates (texel (floor u, floor v), no wrapping) and
v0-v6 are interpolants the command processor computes from set_params
(pixel centres (i + 0.5, j + 0.5, 0, 1) when ctm run gives none).";

/// Arguments of `ctm compile`.
#[derive(Args, Debug)]
#[command(after_help = ABOUT)]
pub struct CompileArgs {
    /// The shader: assembly text (`ps_3_0` …) or bytecode, detected by
    /// content (`-`: standard input).
    shader: PathBuf,
    /// Output executable (default: the shader with extension .elf; `-`:
    /// standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print which surface, output and constant each shader register
    /// became.
    #[arg(long)]
    map: bool,
    /// Print the generated DPP assembly.
    #[arg(long)]
    listing: bool,
    /// Which meaning inputs and texture reads have: `d3d9` (Direct3D 9) or
    /// `ctm` (the CTM SDK compiler's: texel coordinates, interpolants).
    #[arg(long, value_enum, default_value_t = DialectArg::D3d9)]
    dialect: DialectArg,
    /// What to write: `elf` (the DPP executable), or the shader itself as
    /// `bytecode` (Direct3D 9 tokens) or `text` (its assembly) — text to
    /// bytecode and back without compiling.
    #[arg(long, value_enum, default_value_t = ToArg::Elf)]
    to: ToArg,
}

/// `--dialect`: what inputs and texture reads mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum DialectArg {
    /// Direct3D 9's.
    D3d9,
    /// The CTM SDK compiler's.
    Ctm,
}

/// `--to`: what `ctm compile` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ToArg {
    /// The DPP executable.
    Elf,
    /// Direct3D 9 tokens.
    Bytecode,
    /// Shader assembly.
    Text,
}

/// `ctm compile`: every error is about the shader or the flags (status 2).
pub fn compile(a: CompileArgs, v: Verbosity) -> Result<u8, Error> {
    compile_shader(a, v).map_err(super::as_usage)
}

fn compile_shader(a: CompileArgs, v: Verbosity) -> Result<u8, Error> {
    let bytes = super::data::read_program(&a.shader)?;
    // Errors that start with a position (LINE:COL) follow the path as
    // `path:LINE:COL`.
    let at_path = |e: String| {
        let sep = if e.starts_with(|c: char| c.is_ascii_digit()) {
            ":"
        } else {
            ": "
        };
        format!("{}{sep}{e}", a.shader.display())
    };
    let shader = ctm::program::read_shader(&bytes).map_err(at_path)?;
    if a.to != ToArg::Elf {
        let (bytes, ext): (Vec<u8>, _) = if a.to == ToArg::Text {
            (d3d9::disassemble(&shader).into_bytes(), "psh")
        } else {
            let tokens = d3d9::write(&shader);
            (tokens.iter().flat_map(|t| t.to_le_bytes()).collect(), "pso")
        };
        let output = match &a.output {
            Some(o) => o.clone(),
            None if a.shader == Path::new("-") => {
                return usage("converting standard input: name the output with -o");
            }
            None => a.shader.with_extension(ext),
        };
        if output == a.shader {
            return usage(format!(
                "{}: converting a shader onto itself; name another output with -o",
                output.display()
            ));
        }
        super::data::write_to(&output, &bytes)?;
        return Ok(EXIT_OK);
    }
    let dialect = match a.dialect {
        DialectArg::D3d9 => d3d9::Dialect::D3d9,
        DialectArg::Ctm => d3d9::Dialect::Ctm,
    };
    let compiled = d3d9::compile_dialect(&shader, dialect)
        .map_err(|e| at_path(ctm::program::compile_error_at(&bytes, &e)))?;
    let output = match a.output {
        Some(o) => o,
        None if a.shader == Path::new("-") => {
            return usage(
                "compiling standard input: name the output with -o (`-o -`: standard output)",
            );
        }
        None => a.shader.with_extension("elf"),
    };
    super::data::write_to(&output, &abi::write(&compiled.exe))?;
    if a.map {
        let mut text = String::new();
        for (reg, res) in &compiled.bindings {
            text.push_str(&format!("{reg:<10} {res}\n"));
        }
        let values = &compiled.exe.info.values;
        if !values.floats.is_empty() || !values.ints.is_empty() || !values.bools.is_empty() {
            let mut carried: Vec<String> =
                values.floats.iter().map(|(n, _)| format!("c{n}")).collect();
            carried.extend(values.ints.iter().map(|(n, _)| format!("i{n}")));
            carried.extend(values.bools.iter().map(|(n, _)| format!("b{n}")));
            text.push_str(&format!("carried    {}\n", carried.join(" ")));
        }
        print(&text)?;
    }
    if a.listing {
        print(&compiled.listing)?;
    }
    if !v.quiet && output != Path::new("-") {
        let s = compiled.stats;
        say(format_args!(
            "{}: {} DPP instructions for {} shader instructions ({:.2} each); {} of {} ALU instructions use both units, {} of them pairing two shader operations",
            output.display(),
            s.dpp_insts,
            s.shader_insts,
            s.dpp_insts as f64 / s.shader_insts.max(1) as f64,
            s.coissued,
            s.alu_insts,
            s.paired
        ));
    }
    Ok(EXIT_OK)
}
