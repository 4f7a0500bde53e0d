//! Records what `ctm --version` reports about the build: the commit (when
//! built from a git checkout), the profile and the target.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CTM_COMMIT={commit}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=CTM_PROFILE={profile}");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=CTM_TARGET={target}");
    // Rebuild the line when the checkout moves (only paths that exist, so
    // a tree without git does not rebuild every time).
    for p in ["../.git/HEAD", "../.git/refs/heads"] {
        if Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
