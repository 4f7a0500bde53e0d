//! The `ctm` command-line tool: assemble, disassemble and inspect DPP
//! programs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;
use ctm::abi::{self, note};
use ctm::isa::disasm::{self, Options};
use ctm::isa::{self, InstType, validate};
use ctm::program::{self, Origin};

#[derive(Parser)]
#[command(
    name = "ctm",
    version,
    about = "An emulator of the ATI CTM data-parallel processor (DPP)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Tool(Tool),
    /// Run a program over a domain on files: inputs, constants and the
    /// conditional buffer in, outputs (raw files, pictures) out.
    Run(cli::RunArgs),
    /// Execute a raw command stream against memory images.
    Exec(cli::ExecArgs),
    /// Measure a program (same arguments as `run`): interpreter and JIT
    /// rates, their ratio, compile time, thread scaling, share of the FMA peak.
    Bench(cli::BenchArgs),
    /// Print each clause's Cranelift IR with the source instructions as
    /// comments.
    Clif(cli::ClifArgs),
}

/// Commands on program files.
#[derive(Subcommand)]
enum Tool {
    /// Assemble a program (syntax: docs/asm.md) into a DPP executable.
    Asm {
        /// Assembly source.
        input: PathBuf,
        /// Output file (default: the input with extension .elf, or .bin with --raw).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Write raw little-endian instruction words instead of an ELF file.
        #[arg(long)]
        raw: bool,
    },
    /// Disassemble a program: ELF executable, assembly text, or raw words.
    Disasm {
        /// The program.
        input: PathBuf,
        /// The input is raw little-endian instruction words (6 per instruction).
        #[arg(long)]
        raw: bool,
        /// Also print each instruction's words and every field.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Print a program's clause IR (the form both engines execute), after
    /// checking it with the IR verifier.
    Ir {
        /// The program.
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
    /// Show a program's header, notes, instruction counts and validation warnings.
    Info {
        /// The program.
        input: PathBuf,
        /// The input is raw little-endian instruction words.
        #[arg(long)]
        raw: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Run(args) => cli::run(args),
        Command::Exec(args) => cli::exec(args),
        Command::Bench(args) => cli::bench(args),
        Command::Clif(args) => cli::clif(args),
        Command::Tool(command) => run(command).map(|()| 0),
    };
    match status {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Tool) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Tool::Asm { input, output, raw } => {
            let loaded = load_source(&input)?;
            let output =
                output.unwrap_or_else(|| input.with_extension(if raw { "bin" } else { "elf" }));
            let bytes = if raw {
                loaded.code.iter().flat_map(|w| w.to_le_bytes()).collect()
            } else {
                abi::write(&loaded)
            };
            std::fs::write(&output, bytes).map_err(|e| format!("{}: {e}", output.display()))?;
            let errors = isa::decode_program(&loaded.code)
                .iter()
                .filter(|s| s.is_err())
                .count();
            eprintln!(
                "{}: {} instructions{}",
                output.display(),
                loaded.len(),
                if errors > 0 {
                    format!(" ({errors} raw .words that do not decode)")
                } else {
                    String::new()
                }
            );
            Ok(())
        }
        Tool::Disasm {
            input,
            raw,
            verbose,
        } => {
            let loaded = program::load(&input, raw)?;
            print!(
                "{}",
                disasm::disassemble_program(&loaded.exe.code, Options { verbose })
            );
            Ok(())
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
            print!("{ir}");
            Ok(())
        }
    }
}

/// Assembly sources are always text; do not guess their form.
fn load_source(path: &Path) -> Result<abi::Executable, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let src = isa::asm::assemble_source(&text).map_err(|e| format!("{}:{e}", path.display()))?;
    let mut exe = abi::Executable::from_code(src.words);
    exe.info.set_uncached(src.uncached);
    Ok(exe)
}

fn list(v: &[u32]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
    }
}

fn info(path: &Path, raw: bool) -> Result<(), Box<dyn std::error::Error>> {
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
    };
    println!("file:          {}", path.display());
    println!("format:        {form}");
    let slots = isa::decode_program(&exe.code);
    let mut counts = [0usize; 4];
    for inst in slots.iter().flatten() {
        counts[inst.ty() as usize] += 1;
    }
    let bad = slots.iter().filter(|s| s.is_err()).count();
    print!(
        "instructions:  {} (alu {}, out {}, fc {}, tex {}",
        exe.len(),
        counts[InstType::Alu as usize],
        counts[InstType::Out as usize],
        counts[InstType::Fc as usize],
        counts[InstType::Tex as usize]
    );
    if bad > 0 {
        print!(", {bad} undecodable");
    }
    println!(")");
    let i = &exe.info;
    if i.uncached() {
        println!("mode:          uncached (UMRT) outputs");
    }
    println!("notes:");
    let depth = if i.fg_depth_src & 1 != 0 {
        "program supplies the conditional value"
    } else {
        "conditional value from the PE"
    };
    let extra = if i.proginfo_extra.is_empty() {
        String::new()
    } else {
        format!(
            ", {} further words kept opaque (emulator profile)",
            i.proginfo_extra.len()
        )
    };
    println!(
        "  {:<14} reserved={} FG_DEPTH_SRC={} ({depth}){extra}",
        note::name(note::PROGINFO),
        i.proginfo_reserved,
        i.fg_depth_src
    );
    println!("  {:<14} {}", note::name(note::INPUTS), list(&i.inputs));
    println!("  {:<14} {}", note::name(note::OUTPUTS), list(&i.outputs));
    println!(
        "  {:<14} {}",
        note::name(note::CONDOUT),
        u8::from(i.cond_out)
    );
    println!(
        "  {:<14} {}",
        note::name(note::FLOAT32CONSTS),
        list(&i.f32_consts)
    );
    println!(
        "  {:<14} {}",
        note::name(note::INT32CONSTS),
        list(&i.i32_consts)
    );
    println!(
        "  {:<14} {}",
        note::name(note::EARLYEXIT),
        u8::from(i.early_exit)
    );
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
    findings.extend(validate::validate(&slots).iter().map(|w| w.to_string()));
    if findings.is_empty() {
        println!("validation:    no warnings");
    } else {
        println!("validation:    {} finding(s)", findings.len());
        for f in findings {
            println!("  {f}");
        }
    }
    Ok(())
}
