//! The documentation runs as written: every `sh` block of
//! `docs/commands.md` and of the README's examples, in a scratch directory
//! with `ctm` on the `PATH`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `sh` code blocks of a Markdown file, in order.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_start() == "```sh" => current = Some(String::new()),
            Some(b) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// A scratch directory with a `bin/ctm` link to the built tool.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ctm-docs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ctm"), dir.join("bin/ctm")).unwrap();
        Scratch { dir }
    }

    /// Runs `script` with `sh -e` in the scratch directory.
    fn sh(&self, script: &str, cwd: &Path) {
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("sh")
            .arg("-ec")
            .arg(script)
            .current_dir(cwd)
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}\nfailed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn the_command_stream_guide_runs_as_written() {
    let text =
        std::fs::read_to_string(Path::new(common::cli::ROOT).join("docs/commands.md")).unwrap();
    let blocks = sh_blocks(&text);
    assert!(blocks.len() >= 4, "the guide's steps");
    let s = Scratch::new("commands");
    let work = s.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    s.sh(&blocks.concat(), &work);
    // Element (3, 1) of the 8 × 2 output: (2i, 2j, 2v, 2) with v = 0.5.
    let out = f32s(&std::fs::read(work.join("out.f32")).unwrap());
    assert_eq!(&out[(8 + 3) * 4..(8 + 3) * 4 + 4], &[6.0, 2.0, 1.0, 2.0]);
    // The listing is the text form: it assembles back to the same stream.
    let listing = std::fs::read_to_string(work.join("listing.txt")).unwrap();
    let again = ctm::pe::assemble_stream(&listing).unwrap();
    let original =
        ctm::pe::assemble_stream(&std::fs::read_to_string(work.join("stream.txt")).unwrap())
            .unwrap();
    assert_eq!(again, original);
    // The header words the guide quotes.
    assert!(text.contains(&format!("{:08X}", original[0])));
}

fn npy_f32(path: &Path) -> Vec<f32> {
    let b = std::fs::read(path).unwrap();
    assert!(b.starts_with(b"\x93NUMPY"), "{}", path.display());
    let header = 10 + u16::from_le_bytes([b[8], b[9]]) as usize;
    f32s(&b[header..])
}

#[test]
fn the_readme_examples_run_as_written() {
    let root = Path::new(common::cli::ROOT);
    let text = std::fs::read_to_string(root.join("README.md")).unwrap();
    // Every sh block; `cargo run --release --` is the tool itself, the test
    // command is this very run.
    let script: String = sh_blocks(&text)
        .concat()
        .lines()
        .filter(|l| !l.trim_start().starts_with("cargo test"))
        .map(|l| match l.strip_prefix("cargo run --release -- ") {
            Some(rest) => format!("ctm {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    assert!(script.contains("ctm run examples/zbuffer.s"), "{script}");
    let s = Scratch::new("readme");
    let work = s.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(root.join("examples"), work.join("examples")).unwrap();
    s.sh(&script, &work);
    // SAXPY: 2·x + y at (3, 1): x = (3/8, 1/8, 4/16, 1), y = (1, −1, ½, 3/256).
    let saxpy = npy_f32(&work.join("saxpy.npy"));
    let at = (32 + 3) * 4;
    assert_eq!(
        &saxpy[at..at + 4],
        &[
            2.0 * 0.375 + 1.0,
            2.0 * 0.125 - 1.0,
            2.0 * 0.25 + 0.5,
            2.0 + 3.0 / 256.0
        ]
    );
    // C = A·B: A[r][c] = (r+1)/2 + c/4, B[r][c] = (r == c) + r/8.
    let c = npy_f32(&work.join("c.npy"));
    for (k, &got) in c.iter().enumerate() {
        let (i, j) = (k % 4, k / 4);
        let want: f32 = (0..8)
            .map(|q| {
                let a = (j as f32 + 1.0) * 0.5 + q as f32 * 0.25;
                let b = f32::from(u8::from(q == i)) + q as f32 * 0.125;
                (a, b)
            })
            .fold(0.0f32, |acc, (a, b)| a * b + acc);
        assert!(
            (got - want).abs() < 1e-4,
            "C[{j}][{i}] = {got}, want {want}"
        );
    }
    // The transpose: element (i, j) = 16i + j.
    let t = npy_f32(&work.join("transposed.npy"));
    assert_eq!(t[3 * 16 + 5], (5 * 16 + 3) as f32);
    // The composite: the first plane on the left, the second on the right.
    let frame = f32s(&std::fs::read(work.join("frame.f32")).unwrap());
    assert_eq!(&frame[(10 * 64 + 2) * 4..][..3], &[1.0, 0.3, 0.1]);
    assert_eq!(&frame[(10 * 64 + 60) * 4..][..3], &[0.1, 0.4, 1.0]);
    // The shader examples compute what their DPP versions do, bit for bit.
    assert_eq!(npy_f32(&work.join("saxpy-psh.npy")), saxpy);
    assert_eq!(npy_f32(&work.join("c-psh.npy")), c);
    assert_eq!(
        std::fs::read(work.join("mandelbrot-psh.png")).unwrap(),
        std::fs::read(work.join("mandelbrot.png")).unwrap()
    );
    assert!(work.join("mandelbrot-psh.elf").exists());
    for pic in ["blur.png", "zbuffer.png", "mandelbrot.png"] {
        let b = std::fs::read(work.join(pic)).unwrap();
        assert!(b.starts_with(b"\x89PNG"), "{pic}");
    }
    assert!(work.join("abs2.elf").exists());
}
