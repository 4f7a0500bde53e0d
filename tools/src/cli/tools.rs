//! The commands on program files: `asm`, `disasm`, `ir`, `info`, `clif`.

use super::{EXIT_OK, EXIT_USAGE, Error, Verbosity, print, say, usage, warn};
use clap::{Args, Subcommand};
use ctm::abi::{self, note};
use ctm::isa::disasm::{self, Options};
use ctm::isa::{self, InstType};
use ctm::kernel::Kernel;
use ctm::program::{self, Origin};
use std::path::{Path, PathBuf};

/// Commands on program files.
#[derive(Subcommand)]
pub enum Tool {
    /// Assemble a program (syntax: docs/asm.md) into a DPP executable.
    Asm {
        /// Assembly source (`-`: standard input).
        input: PathBuf,
        /// Output file (default: the input with extension .elf, or .bin
        /// with --raw; `-`: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Write raw little-endian instruction words instead of an ELF file.
        #[arg(long)]
        raw: bool,
    },
    /// Disassemble a program: ELF executable, assembly text, or raw words.
    Disasm {
        /// The program (`-`: standard input).
        input: PathBuf,
        /// The input is raw little-endian instruction words (6 per instruction).
        #[arg(long)]
        raw: bool,
        /// Write the listing here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a program's clause IR (the form both engines execute), after
    /// checking it with the IR verifier.
    Ir {
        /// The program (`-`: standard input).
        input: PathBuf,
        /// The input is raw little-endian instruction words.
        #[arg(long)]
        raw: bool,
        /// Build for uncached (UMRT) output writes (also implied by the file).
        #[arg(long)]
        uncached: bool,
        /// Treat LAST as a hint only (no early exit).
        #[arg(long)]
        no_early_exit: bool,
    },
    /// Show a program's header, what it reads and writes, instruction
    /// counts and validation warnings.
    Info {
        /// The program (`-`: standard input).
        input: PathBuf,
        /// The input is raw little-endian instruction words.
        #[arg(long)]
        raw: bool,
    },
    /// Print each clause's Cranelift IR with the source instructions as
    /// comments.
    Clif(ClifArgs),
}

/// Arguments of `ctm clif`.
#[derive(Args)]
pub struct ClifArgs {
    /// The program: ELF executable, DPP assembly or a Direct3D 9 pixel shader.
    program: PathBuf,
    /// Cranelift optimisation level the code is built for.
    #[arg(long, value_name = "auto|none|speed", default_value = "auto")]
    opt_level: super::args::OptArg,
    /// Quads per loop iteration (0: chosen per clause).
    #[arg(long, value_name = "0|1|2|4", default_value_t = 0)]
    quads: u8,
}

/// Runs a command on program files.
/// Every error of these commands is about the program file or the flags
/// (exit status 2), except writing standard output.
pub fn run(command: Tool, v: Verbosity) -> Result<u8, Error> {
    run_tool(command, v).map_err(super::as_usage)
}

fn run_tool(command: Tool, v: Verbosity) -> Result<u8, Error> {
    match command {
        Tool::Asm { input, output, raw } => asm(&input, output, raw, v),
        Tool::Disasm { input, raw, output } => {
            let bytes = super::data::read_program(&input)?;
            let options = Options { verbose: v.verbose };
            let text = if !raw
                && (program::is_shader_bytecode(&bytes) || program::is_shader_text(&bytes))
            {
                shader_listing(&bytes, options)?
            } else {
                let loaded = program::load_bytes(&bytes, &input, raw)?;
                disasm::disassemble_program(&loaded.exe.code, options)
            };
            match output {
                Some(path) => super::data::write_to(&path, text.as_bytes())?,
                None => print(&text)?,
            }
            Ok(EXIT_OK)
        }
        Tool::Info { input, raw } => info(&input, raw),
        Tool::Ir {
            input,
            raw,
            uncached,
            no_early_exit,
        } => {
            let loaded = program::load(&input, raw)?;
            let opts = ctm::frontend::Options {
                early_exit: !no_early_exit,
                ..ctm::frontend::Options::loaded(uncached || loaded.exe.info.uncached())
            };
            let ir = ctm::frontend::build(&isa::decode_program(&loaded.exe.code), opts);
            ir.verify()?;
            print(&ir.to_string())?;
            Ok(EXIT_OK)
        }
        Tool::Clif(a) => clif(a),
    }
}

fn asm(input: &Path, output: Option<PathBuf>, raw: bool, v: Verbosity) -> Result<u8, Error> {
    let bytes = super::data::read_program(input)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{}: assembly source is text (UTF-8)", input.display()))?;
    let src = isa::asm::assemble_source(&text).map_err(|e| format!("{}:{e}", input.display()))?;
    if src.words.is_empty() {
        return Err(format!("{}: no instructions", input.display()).into());
    }
    let mut exe = abi::Executable::from_code(src.words);
    exe.info.set_uncached(src.uncached);
    let output = match output {
        Some(o) => o,
        None if input == Path::new("-") => {
            return usage(
                "assembling standard input: name the output with -o (`-o -`: standard output)",
            );
        }
        None => input.with_extension(if raw { "bin" } else { "elf" }),
    };
    let slots = isa::decode_program(&exe.code);
    for w in program::validate(&exe.code, exe.info.uncached()) {
        warn(v, format_args!("{}: {w}", input.display()));
    }
    let bytes = if raw {
        exe.code.iter().flat_map(|w| w.to_le_bytes()).collect()
    } else {
        abi::write(&exe)
    };
    super::data::write_to(&output, &bytes)?;
    let errors = slots.iter().filter(|s| s.is_err()).count();
    if !v.quiet {
        say(format_args!(
            "{}: {} instructions{}",
            output.display(),
            exe.len(),
            if errors > 0 {
                format!(" ({errors} raw .words that do not decode)")
            } else {
                String::new()
            }
        ));
    }
    Ok(EXIT_OK)
}

fn list(v: &[u32], prefix: &str) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter()
            .map(|n| format!("{prefix}{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn info(path: &Path, raw: bool) -> Result<u8, Error> {
    let loaded = program::load(path, raw)?;
    let exe = &loaded.exe;
    let form = match loaded.origin {
        Origin::Elf => format!(
            "ELF32 LSB executable, OSABI {} (ATI), ABI version {}, machine {} (ATI R5xx), .text at {:#x}",
            abi::ELFOSABI_ATI,
            abi::ABI_VERSION,
            abi::EM_ATI_R5XX,
            exe.text_offset
        ),
        Origin::Assembly => "assembly source (notes derived from the code)".into(),
        Origin::Raw => "raw instruction words (notes derived from the code)".into(),
        Origin::Shader => "Direct3D 9 pixel shader, compiled (docs/d3d9.md)".into(),
    };
    let mut out = format!(
        "file:              {}\nformat:            {form}\n",
        path.display()
    );
    let slots = isa::decode_program(&exe.code);
    let mut counts = [0usize; 4];
    for inst in slots.iter().flatten() {
        counts[inst.ty() as usize] += 1;
    }
    let bad = slots.iter().filter(|s| s.is_err()).count();
    out += &format!(
        "instructions:      {} (alu {}, out {}, fc {}, tex {}{})\n",
        exe.len(),
        counts[InstType::Alu as usize],
        counts[InstType::Out as usize],
        counts[InstType::Fc as usize],
        counts[InstType::Tex as usize],
        if bad > 0 {
            format!(", {bad} undecodable")
        } else {
            String::new()
        }
    );
    out += &notes_text(&exe.info);
    out += &carried(&exe.info);
    out += &findings(&loaded, &slots);
    print(&out)?;
    // Nothing to run is what the user pointed at, as for `run` and `asm`.
    Ok(if exe.is_empty() { EXIT_USAGE } else { EXIT_OK })
}

/// The output mode and what the notes say, one line each.
fn notes_text(i: &abi::ProgramInfo) -> String {
    let mut out = String::new();
    let yes = |b: bool| if b { "yes" } else { "no" };
    out += &format!(
        "output mode:       {}\n",
        if i.uncached() {
            "uncached (UMRT): writes address output 0 (docs/isa.md §5.4)"
        } else {
            "render targets"
        }
    );
    out += "what the notes say (docs/abi.md §5):\n";
    out += &format!(
        "  reads inputs:    {}   [{}]\n",
        list(&i.inputs, ""),
        note::name(note::INPUTS)
    );
    out += &format!(
        "  writes outputs:  {}   [{}]\n",
        list(&i.outputs, ""),
        note::name(note::OUTPUTS)
    );
    out += &format!(
        "  writes the conditional value: {}   [{} {}, FG_DEPTH_SRC {}]\n",
        yes(i.cond_out),
        note::name(note::CONDOUT),
        u8::from(i.cond_out),
        i.fg_depth_src
    );
    out += &format!(
        "  float constants: {}   [{}]\n",
        list(&i.f32_consts, "c"),
        note::name(note::FLOAT32CONSTS)
    );
    out += &format!(
        "  loop constants:  {}   [{}]\n",
        list(&i.i32_consts, "i"),
        note::name(note::INT32CONSTS)
    );
    out += &format!(
        "  ends early (LAST before the end): {}   [{}]\n",
        yes(i.early_exit),
        note::name(note::EARLYEXIT)
    );
    if !i.proginfo_extra.is_empty() || i.proginfo_reserved != 1 {
        out += &format!(
            "  [{}] word 0 = {}, {} further word(s) kept as they are\n",
            note::name(note::PROGINFO),
            i.proginfo_reserved,
            i.proginfo_extra.len()
        );
    }
    out
}

/// The loader's warnings, undecodable instructions and the validator's
/// findings, or that there are none.
fn findings(loaded: &program::Loaded, slots: &[Result<isa::Inst, isa::DecodeError>]) -> String {
    let exe = &loaded.exe;
    let mut out = String::new();
    let mut findings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| format!("offset {:#x}: {}", w.offset, w.message))
        .collect();
    findings.extend(
        slots
            .iter()
            .filter_map(|s| s.as_ref().err())
            .map(|e| format!("error: {e}")),
    );
    // (The validator reports an empty program itself.)
    findings.extend(
        program::validate(&exe.code, exe.info.uncached())
            .iter()
            .map(|w| w.to_string()),
    );
    if findings.is_empty() {
        out += "validation:        no warnings\n";
    } else {
        out += &format!("validation:        {} finding(s)\n", findings.len());
        for f in findings {
            out += &format!("  {f}\n");
        }
    }
    out
}

/// `ctm clif`: each clause's Cranelift IR, annotated with the source.
fn clif(a: ClifArgs) -> Result<u8, Error> {
    let loaded = program::load(&a.program, false)?;
    let kernel = Kernel::new(loaded.exe);
    let program = ctm_tools::bench::program_of(&kernel);
    let slots = isa::decode_program(&kernel.exe.code);
    let describe = |pc: u16| match slots.get(usize::from(pc)) {
        Some(Ok(inst)) => disasm::disassemble(inst),
        Some(Err(e)) => format!("(undecodable: {e})"),
        None => String::new(),
    };
    let text = ctm_jit::compile::clif(
        &program,
        // The optimised code's lowering (quick code's differs only in
        // its lane-wise loops' batches, two quads wide).
        super::args::jit_options(a.opt_level, a.quads, super::args::TierArg::Optimised)?,
        &describe,
    )?;
    print(&text)?;
    Ok(EXIT_OK)
}

/// ctm's notes (docs/abi.md §5.5): constant values and register names.
fn carried(i: &abi::ProgramInfo) -> String {
    let mut out = String::new();
    let floats = |v: &[u32; 4]| {
        v.iter()
            .map(|b| format!("{:?}", f32::from_bits(*b)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let v = &i.values;
    if !v.is_empty() {
        out += "constant values it carries (docs/abi.md §5.5):
";
        for (n, x) in &v.floats {
            out += &format!("  c{n} = {}\n", floats(x));
        }
        for (n, x) in &v.ints {
            out += &format!("  i{n} = {}, {}, {}\n", x[0], x[1], x[2] as i8);
        }
        for (n, b) in &v.bools {
            out += &format!("  b{n} = {}\n", u8::from(*b));
        }
        for (n, x) in &v.defaults {
            out += &format!("  c{n} = {} unless the host sets it\n", floats(x));
        }
    }
    if !i.bindings.is_empty() {
        let names: Vec<String> = i.bindings.iter().map(|(a, b)| format!("{a}={b}")).collect();
        out += &format!("source registers:  {}\n", names.join(" "));
    }
    out
}

/// For each DPP instruction of the shader in `bytes`, the shader
/// statements it came from as comment lines (`; 4:1: texld r0, v0, s0`, or
/// `; token 12: …` in bytecode); and the compiled code.
pub(super) fn shader_statements(bytes: &[u8]) -> Result<(Vec<Vec<String>>, Vec<u32>), Error> {
    let shader = program::read_shader(bytes)?;
    let compiled = ctm::d3d9::compile(&shader).map_err(|e| program::compile_error_at(bytes, &e))?;
    let at: Vec<String> = if program::is_shader_bytecode(bytes) {
        ctm::d3d9::item_offsets(&shader)
            .iter()
            .map(|t| format!("token {t}"))
            .collect()
    } else {
        let text = String::from_utf8_lossy(bytes);
        ctm::d3d9::assemble_with_lines(&text)
            .map(|(_, lines)| lines.iter().map(|(l, c)| format!("{l}:{c}")).collect())
            .unwrap_or_default()
    };
    let statements = compiled
        .origins
        .iter()
        .map(|origin| {
            origin
                .iter()
                .map(|&k| {
                    let item = ctm::d3d9::item_text(&shader.items[k]);
                    match at.get(k) {
                        Some(p) => format!("; {p}: {item}"),
                        None => format!("; {item}"),
                    }
                })
                .collect()
        })
        .collect();
    Ok((statements, compiled.exe.code))
}

/// Puts each instruction's shader statements above the lines of `text`
/// that start with its `@pc`, where they change from the line before.
pub(super) fn annotate(text: &str, statements: &[Vec<String>]) -> String {
    let mut out = String::new();
    let mut previous: Option<&Vec<String>> = None;
    for line in text.lines() {
        let pc = line
            .strip_prefix('@')
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(s) = pc.and_then(|pc| statements.get(pc))
            && previous != Some(s)
        {
            for l in s {
                out += l;
                out.push('\n');
            }
            previous = Some(s);
        }
        out += line;
        out.push('\n');
    }
    out
}

/// A shader's DPP code with the shader statements each instruction came
/// from above it.
fn shader_listing(bytes: &[u8], options: Options) -> Result<String, Error> {
    let (statements, code) = shader_statements(bytes)?;
    Ok(annotate(
        &disasm::disassemble_program(&code, options),
        &statements,
    ))
}
