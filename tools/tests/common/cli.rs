//! Running the `ctm` tool from tests: exit status and output, scratch
//! directories.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The workspace root: the tool runs there, so paths like
/// `examples/saxpy.s` name the bundled files.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The `ctm` tool, to run in the workspace root.
pub fn tool() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ctm"));
    c.current_dir(ROOT);
    c
}

/// out0 = r0 = (i, j, v, 1).
pub const IDENTITY: &str =
    "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";

pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// Runs `ctm`; returns the exit status, standard output and standard error.
pub fn ctm(args: &[&str]) -> (i32, String, String) {
    ctm_in(args, b"")
}

/// [`ctm`] with `input` on standard input.
pub fn ctm_in(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let (code, out, err) = ctm_bytes(args, input);
    (code, String::from_utf8_lossy(&out).to_string(), err)
}

/// [`ctm_in`] with standard output as bytes.
pub fn ctm_bytes(args: &[&str], input: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = tool()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.code().unwrap_or(-1), out.stdout, err)
}

/// A scratch directory, removed when dropped.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("ctm-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, contents).unwrap();
        p.to_str().unwrap().to_string()
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// [`ctm`], also returning the highest resident memory seen (KiB, from
/// `/proc/PID/status` polled every millisecond while it runs; 0 where the
/// system has no such file or it ended first).
pub fn ctm_peak(args: &[&str]) -> (i32, String, u64) {
    let mut child = tool()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.code().unwrap_or(-1), err, peak)
}
