//! `ctm run --emit-cmdbuf DIR`: the command stream and memory images a run
//! built, written so that `ctm exec` replays it (`docs/commands.md`).

use super::Error;
use ctm::abi::{self, Executable};
use ctm::kernel::{Job, Staged};
use ctm::mc::CacheMode;
use std::fmt::Write;
use std::path::Path;

/// Writes `commands.bin`, `commands.txt`, `memory.bin`, `program.elf`,
/// `exec.args` (the `ctm exec` arguments, one per line, paths relative to
/// `dir`) and `replay.sh` into `dir`.
pub fn emit(dir: &Path, staged: &Staged, exe: &Executable, job: &Job) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| -> Result<(), Error> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()).into())
    };
    let words = staged.commands.words();
    write("commands.bin", &staged.commands.to_bytes())?;
    let mut text = String::from(
        "# The command stream of a `ctm run`, in the text form of docs/commands.md.\n# Replay: sh replay.sh (or `ctm exec` with the arguments in exec.args).\n",
    );
    text += &ctm::pe::disassemble_stream(words);
    write("commands.txt", text.as_bytes())?;
    let (base, image) = staged.memory_image()?;
    write("memory.bin", &image)?;
    write("program.elf", &abi::write(exe))?;
    let info = staged.dev.info();
    let mut args = vec![
        "exec".to_string(),
        "commands.bin".into(),
        "--memory".into(),
        format!("sys-cached={}", info.arena_size_sys_c),
        "--mem".into(),
        format!("{base:#010x}=memory.bin"),
        "--program".into(),
        format!("{:#010x}=program.elf", staged.program_base),
    ];
    for &(n, obase, fmt) in &staged.outputs {
        args.push("--dump".into());
        args.push(format!(
            "{obase:#010x}:{}=output{n}.bin",
            staged.surface_bytes(fmt)
        ));
    }
    if let Some((cbase, fmt)) = staged.cond {
        args.push("--dump".into());
        args.push(format!(
            "{cbase:#010x}:{}=cond.bin",
            staged.surface_bytes(fmt)
        ));
    }
    let o = &job.settings().options;
    if o.budget != ctm::runtime::DEFAULT_BUDGET {
        args.push("--budget".into());
        args.push(o.budget.to_string());
    }
    if o.check_hazards {
        args.push("--check-hazards".into());
    }
    if job.caches() == CacheMode::Strict {
        args.push("--strict-caches".into());
    }
    write("exec.args", (args.join("\n") + "\n").as_bytes())?;
    let mut sh = String::from(
        "#!/bin/sh\n# Replays the run with ctm exec; outputs land in output<N>.bin (rows padded to\n# the pitch the run used, docs/commands.md).\nset -e\ncd \"$(dirname \"$0\")\"\n${CTM:-ctm}",
    );
    for a in &args {
        let _ = write!(sh, " {a}");
    }
    sh.push_str(" \"$@\"\n");
    write("replay.sh", sh.as_bytes())?;
    Ok(())
}
