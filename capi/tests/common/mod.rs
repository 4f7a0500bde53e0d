//! Building and running C programs against libctm, for the tests and the
//! benchmark of the C interface.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Builds the C library in this test's profile and returns its folder.
pub fn library() -> PathBuf {
    let release = !cfg!(debug_assertions);
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["build", "--quiet", "-p", "ctm-capi"])
        .current_dir(root());
    if release {
        cargo.arg("--release");
    }
    let status = cargo.status().expect("running cargo");
    assert!(status.success(), "building the C library failed");
    let exe = std::env::current_exe().unwrap();
    // target/PROFILE/deps/this-test → target/PROFILE
    let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(
        dir.join("libctm.so").exists() && dir.join("libctm.a").exists(),
        "no libctm.so / libctm.a in {}",
        dir.display()
    );
    dir
}

pub fn tool(name: &str) -> &str {
    let ok = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "`{name}` is not installed: the C-interface tests need the system C and C++ compilers"
    );
    name
}

/// A scratch folder for test `name` of this process.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ctm-c-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles `source` (C or C++ by `std`) against libctm in `lib`.
pub fn build(lib: &Path, source: &Path, std: &str, out: &Path) {
    let compiler = if std.starts_with("c++") {
        tool("c++")
    } else {
        tool("cc")
    };
    let o = Command::new(compiler)
        .arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-Werror", "-ffp-contract=off", "-O1"])
        .arg(source)
        .arg(format!("-I{}", root().join("include").display()))
        .arg(format!("-L{}", lib.display()))
        .arg("-lctm")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{compiler} -std={std} {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `exe` with `args` on `engine`; its standard output.
pub fn run(exe: &Path, args: &[&str], engine: &str) -> String {
    let o = Command::new(exe)
        .args(args)
        .env("CTM_ENGINE", engine)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{} on {engine}: {}\n{stdout}{}",
        exe.display(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}
