//! The C interface from C and C++ (`docs/c-api.md`): the headers compile on
//! their own, warning-free, as C99 and C++98 through C++20; the programs in
//! `examples/c` build against `libctm`, run on both engines with identical
//! results, and agree with the same kernels run through the Rust API;
//! misuse gives error codes and messages.
//!
//! Needs the system's C and C++ compilers (`cc`, `c++`): without them the
//! test fails and says so.

mod common;

use common::{build, library, root, run, scratch, tool};
use std::process::Command;

#[test]
fn headers_compile_alone_in_every_language_version() {
    let dir = scratch("headers");
    for h in std::fs::read_dir(root().join("include")).unwrap() {
        let h = h.unwrap().path();
        let name = h.file_name().unwrap().to_str().unwrap().to_string();
        let src = dir.join("h.c");
        std::fs::write(
            &src,
            format!("#include \"{name}\"\nint main(void) {{ return 0; }}\n"),
        )
        .unwrap();
        let cpp = dir.join("h.cpp");
        std::fs::copy(&src, &cpp).unwrap();
        for std in ["c99", "c11", "c++98", "c++11", "c++14", "c++17", "c++20"] {
            let (compiler, file) = if std.starts_with("c++") {
                (tool("c++"), &cpp)
            } else {
                (tool("cc"), &src)
            };
            let o = Command::new(compiler)
                .arg(format!("-std={std}"))
                .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"])
                .arg(format!("-I{}", root().join("include").display()))
                .arg(file)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{name} as {std}:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

#[test]
fn the_pkg_config_file_names_the_headers_and_the_library() {
    let Ok(o) = Command::new("pkg-config")
        .args(["--cflags", "--libs", "ctm"])
        .env("PKG_CONFIG_PATH", root().join("pkgconfig"))
        .output()
    else {
        eprintln!("pkg-config is not installed: ctm.pc not checked");
        return;
    };
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("/include") && text.contains("target/release") && text.contains("-lctm"),
        "{text}"
    );
}

/// The examples' scratch folder `name`, with the library built.
fn setup(name: &str) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    (library(), scratch(name), root().join("examples/c"))
}

#[test]
fn saxpy_from_c_agrees_across_engines_and_with_the_rust_api() {
    let (lib, dir, ex) = setup("saxpy");
    // SAXPY: C99, the pack's C functions, an assembled program.
    let saxpy = dir.join("saxpy");
    build(&lib, &ex.join("saxpy.c"), "c99", &saxpy);
    let mut outs = Vec::new();
    for engine in ["interp", "jit"] {
        let path = dir.join(format!("saxpy-{engine}.f32"));
        let text = run(&saxpy, &[path.to_str().unwrap()], engine);
        assert!(
            text.contains(&format!("on {engine}: 0 of 16384 values differ")),
            "{text}"
        );
        outs.push(std::fs::read(path).unwrap());
    }
    assert!(outs[0] == outs[1], "SAXPY differs between the engines");
    // examples/saxpy.s through the Rust API on the same data.
    let data = |f: &dyn Fn(usize) -> f32| {
        let v: Vec<f32> = (0..64 * 64 * 4).map(f).collect();
        ctm_rs::kernel::HostSurface::from_f32(ctm_rs::mc::Format::Float32_4, 64, 64, &v).unwrap()
    };
    let kernel = ctm_rs::kernel::Kernel::from_path(root().join("examples/saxpy.s")).unwrap();
    let job = ctm_rs::kernel::Job::new(64, 64)
        .input(0, data(&|k| k as f32 * 0.25 - 100.0))
        .input(1, data(&|k| 1.0 / (k + 1) as f32))
        .constant(0, [2.5, 0.0, 0.0, 0.0])
        .output(0, ctm_rs::mc::Format::Float32_4);
    assert!(
        kernel.run(&job).unwrap().output(0).unwrap().data == outs[0],
        "SAXPY through C differs from Kernel::run"
    );

    // The same program linked statically, and through the SDK's library
    // names (linker scripts in lib/ naming libctm).
    let libs = root().join("lib");
    let linkings: [(&str, Vec<String>); 2] = [
        (
            "static",
            vec![
                lib.join("libctm.a").display().to_string(),
                "-lpthread".into(),
                "-ldl".into(),
                "-lm".into(),
            ],
        ),
        (
            "sdk",
            [
                format!("-L{}", libs.display()),
                format!("-L{}", lib.display()),
                format!("-Wl,-rpath,{}", lib.display()),
            ]
            .into_iter()
            .chain(["amucbuf", "amuisa", "amuAsm", "amucomp", "atictm"].map(|l| format!("-l{l}")))
            .collect(),
        ),
    ];
    for (how, args) in linkings {
        let exe = dir.join(format!("saxpy-{how}"));
        let o = Command::new(tool("cc"))
            .args(["-std=c99", "-ffp-contract=off"])
            .arg(ex.join("saxpy.c"))
            .arg(format!("-I{}", root().join("include").display()))
            .args(&args)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = run(&exe, &[], "jit");
        assert!(text.contains("0 of 16384"), "{how}: {text}");
    }

    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn mandelbrot_from_cpp_agrees_across_engines_and_with_the_rust_api() {
    let (lib, dir, ex) = setup("mandelbrot");
    // Mandelbrot: C++98 with the class, checked against Kernel::run.
    let mandel = dir.join("mandelbrot");
    build(&lib, &ex.join("mandelbrot.cpp"), "c++98", &mandel);
    build(
        &lib,
        &ex.join("mandelbrot.cpp"),
        "c++20",
        &dir.join("mandelbrot20"),
    );
    let (w, h) = (96u32, 64u32);
    let mut outs = Vec::new();
    for engine in ["interp", "jit"] {
        let path = dir.join(format!("mandel-{engine}.f32"));
        let text = run(
            &mandel,
            &[
                "examples/mandelbrot.s",
                path.to_str().unwrap(),
                &w.to_string(),
                &h.to_string(),
            ],
            engine,
        );
        assert!(text.contains("14 instructions"), "{text}");
        outs.push(std::fs::read(path).unwrap());
    }
    assert!(outs[0] == outs[1], "Mandelbrot differs between the engines");
    let kernel = ctm_rs::kernel::Kernel::from_path(root().join("examples/mandelbrot.s")).unwrap();
    let job = ctm_rs::kernel::Job::new(w, h)
        .constant(0, [0.00390625, 0.0048828125, 0.0, 0.0])
        .constant(1, [-2.25, -1.25, 0.0, 0.0])
        .constant(2, [0.031, 0.047, 0.071, 0.0])
        .int(0, 255, 0, 0)
        .output(0, ctm_rs::mc::Format::Float32_4)
        .engine(ctm_rs::engine::EngineKind::Interp);
    let result = kernel.run(&job).unwrap();
    let want = &result.output(0).unwrap().data;
    assert!(
        want == &outs[0],
        "Mandelbrot through C differs from Kernel::run"
    );

    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_ps_3_0_kernel_through_amucomp_agrees_across_engines_sources_and_the_rust_api() {
    let (lib, dir, ex) = setup("shader");
    // A ps_3_0 kernel through amuComp: bytecode whose constant table names
    // c3 "scale" (set by name), and text that defines c3 itself (a literal).
    let body = "dcl_texcoord0 v0.xy\ndcl vPos.xy\ndcl_2d s0\ndef c0, 0.5, 0, 0, 0\n\
                texld r0, v0, s0\ntexld r1, vPos, s0\nmad r2, r0, c3, r1\nadd oC0, r2, c0.x\n";
    let mut named = ctm_rs::d3d9::assemble(&format!("ps_3_0\n{body}")).unwrap();
    let table = [ctm_rs::d3d9::ctab::Named {
        name: "scale".into(),
        kind: ctm_rs::d3d9::RegKind::Const,
        index: 3,
        count: 1,
    }];
    named.items.insert(
        0,
        ctm_rs::d3d9::Item::Comment(ctm_rs::d3d9::ctab::table_comment(&table)),
    );
    let tokens: Vec<u8> = ctm_rs::d3d9::write(&named)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    std::fs::write(dir.join("named.pso"), &tokens).unwrap();
    std::fs::write(
        dir.join("literal.psh"),
        format!("ps_3_0\ndef c3, 2, 2, 2, 2\n{body}"),
    )
    .unwrap();
    let shader = dir.join("shader");
    build(&lib, &ex.join("shader.c"), "c99", &shader);
    let mut outs = Vec::new();
    for (file, counts) in [
        ("named.pso", "1 user and 1 literal"),
        ("literal.psh", "0 user and 2 literal"),
    ] {
        for engine in ["interp", "jit"] {
            let path = dir.join(format!("{file}-{engine}.f32"));
            let text = run(
                &shader,
                &[dir.join(file).to_str().unwrap(), path.to_str().unwrap()],
                engine,
            );
            assert!(text.contains(counts), "{file}: {text}");
            outs.push(std::fs::read(path).unwrap());
        }
    }
    assert!(
        outs.iter().all(|o| *o == outs[0]),
        "the kernel differs between engines or sources"
    );
    assert!(
        shader_through_rust(&named) == outs[0],
        "the kernel through C differs from Kernel::run"
    );
    check_shader_pixels(&outs[0]);
    let _ = std::fs::remove_dir_all(dir);
}

/// The ps_3_0 kernel `named` run through the Rust API on the C example's
/// texels and interpolants: output 0's bytes.
fn shader_through_rust(named: &ctm_rs::d3d9::Shader) -> Vec<u8> {
    // The same kernel through the Rust API: the same bytes.
    let k = ctm_rs::kernel::Kernel::new(
        ctm_rs::d3d9::compile_dialect(named, ctm_rs::d3d9::Dialect::Ctm)
            .unwrap()
            .exe,
    );
    let Some(ctm_rs::kernel::Resource::Input(s0)) = k.resource("s0") else {
        panic!("s0 is no input")
    };
    let texels: Vec<f32> = (0..8u32)
        .flat_map(|y| (0..16u32).flat_map(move |x| [x as f32, y as f32, (x + y) as f32, 1.0]))
        .collect();
    let mut params = [0.0f32; 96];
    for (v, (x, y)) in [(0.0, 0.0), (48.0, 0.0), (0.0, 24.0)]
        .into_iter()
        .enumerate()
    {
        params[32 * v..32 * v + 8].copy_from_slice(&[
            x,
            y,
            0.0,
            1.0,
            x + 1.0 - 0.45,
            y - 0.45,
            0.0,
            1.0,
        ]);
    }
    let job = ctm_rs::kernel::Job::new(16, 8)
        .input(
            s0,
            ctm_rs::kernel::HostSurface::from_f32(ctm_rs::mc::Format::Float32_4, 16, 8, &texels)
                .unwrap(),
        )
        .constant(3, [2.0; 4])
        .params(params)
        .output(0, ctm_rs::mc::Format::Float32_4);
    k.run(&job).unwrap().output(0).unwrap().data.clone()
}

/// Output 0 of the ps_3_0 kernel: 2 · texel(i + 1, j) + texel(i, j) + 0.5.
fn check_shader_pixels(out: &[u8]) {
    let got: Vec<f32> = out
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let texel = |x: u32, y: u32| -> [f32; 4] {
        if x < 16 {
            [x as f32, y as f32, (x + y) as f32, 1.0]
        } else {
            [0.0; 4]
        }
    };
    for j in 0..8 {
        for i in 0..16 {
            let (a, b) = (texel(i + 1, j), texel(i, j));
            let want: Vec<f32> = (0..4).map(|c| 2.0 * a[c] + b[c] + 0.5).collect();
            let at = 4 * (j * 16 + i) as usize;
            assert_eq!(&got[at..at + 4], &want[..], "pixel ({i}, {j})");
        }
    }
}

#[test]
fn the_stream_runtime_runs_and_reads_its_environment() {
    let (lib, dir, ex) = setup("streams");
    // A stream runtime in the style of 2007 clients: uploads, a kernel,
    // read-backs, all through the SDK's compiler and the local arena.
    let streams = dir.join("streams");
    build(&lib, &ex.join("streams.cpp"), "c++98", &streams);
    for engine in ["interp", "jit"] {
        let text = run(&streams, &[], engine);
        assert!(
            text.contains(&format!("on {engine}: 0 of 3108 values wrong")),
            "{text}"
        );
    }

    // The environment: the uncached arena follows the cached one's size,
    // and a malformed setting names its variable.
    let with_env = |exe: &std::path::Path, var: &str, value: &str| {
        Command::new(exe)
            .env(var, value)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = with_env(&streams, "CTM_ARENA_SYSC", "300");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("SYS 300MB, SYSc 300MB") && text.contains(": 0 of"),
        "{text}"
    );
    let saxpy = dir.join("saxpy");
    build(&lib, &ex.join("saxpy.c"), "c99", &saxpy);
    let o = with_env(&saxpy, "CTM_THREADS", "many");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("CTM_THREADS=many: expected a whole number"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_interface_benchmark_and_the_misuse_checks_run() {
    let (lib, dir, ex) = setup("bench");
    // The benchmark of the interface, a few rounds (its figures come from
    // `cargo bench -p ctm-capi`).
    let bench = dir.join("submit_bench");
    build(&lib, &ex.join("submit_bench.c"), "c99", &bench);
    for engine in ["interp", "jit"] {
        let text = run(&bench, &["3"], engine);
        assert!(
            text.contains("round trip 64x64") && text.contains(&format!("on {engine}")),
            "{text}"
        );
    }

    // Misuse: every check holds.
    let misuse = dir.join("misuse");
    build(&lib, &ex.join("misuse.c"), "c99", &misuse);
    let text = run(&misuse, &[], "jit");
    assert!(text.contains("0 misuse checks failed"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}
