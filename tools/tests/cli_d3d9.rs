//! The tool on Direct3D 9 shaders: `ctm compile`, shader files (text and
//! bytecode) given to `run`, `disasm` and `info`, binding by register.

mod common;

use common::cli::{Dir, bytes, ctm, f32s};

const SHADER: &str = "ps_3_0
dcl_texcoord0 v0
def c1, 1, 2, 3, 4
mad oC0, v0, c0.x, c1
mov oDepth, v0.x
";

#[test]
fn compile_writes_an_executable_and_shows_the_map() {
    let d = Dir::new("d3d9-compile");
    let src = d.file("a.psh", SHADER.as_bytes());
    let (code, out, err) = ctm(&["compile", &src, "--map", "--listing"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("v0         in0") && out.contains("oDepth     cond"),
        "{out}"
    );
    assert!(out.contains("carried    c1"), "{out}");
    assert!(out.contains("out rtA"), "{out}");
    assert!(
        err.contains("DPP instructions for 2 shader instructions"),
        "{err}"
    );
    let elf = d.0.join("a.elf");
    let (code, out, err) = ctm(&["info", elf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("v0=in0") && out.contains("c1 ="), "{out}");
    // The executable binds by register too, and the def wins.
    let x = d.file("x.f32", bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
    let o = d.0.join("o.f32");
    let depth = d.0.join("depth.f32");
    let (code, _, err) = ctm(&[
        "run",
        elf.to_str().unwrap(),
        "--domain",
        "2x1",
        "--input",
        &format!("v0={x}:float32_4:2x1"),
        "--const",
        "c0=2,0,0,0",
        "--const",
        "c1=9,9,9,9",
        "--output",
        &format!("oC0={}:float32_4", o.display()),
        "--cond-test",
        "always",
        "--cond-write",
        "--cond-clear",
        "0",
        "--cond-buffer",
        &format!("{}:float32_1", depth.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        f32s(&std::fs::read(&o).unwrap()),
        [3.0, 6.0, 9.0, 12.0, 11.0, 14.0, 17.0, 20.0]
    );
    assert_eq!(f32s(&std::fs::read(&depth).unwrap()), [1.0, 5.0]);
}

#[test]
fn shader_bytecode_and_text_run_alike() {
    let d = Dir::new("d3d9-bytecode");
    let shader = ctm::d3d9::assemble(SHADER).unwrap();
    let tokens: Vec<u8> = ctm::d3d9::write(&shader)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    let text = d.file("a.psh", SHADER.as_bytes());
    let bin = d.file("a.pso", &tokens);
    let x = d.file("x.f32", bytes(&[1.0, 2.0, 3.0, 4.0]));
    let mut outs = Vec::new();
    for (k, prog) in [&text, &bin].into_iter().enumerate() {
        let o = d.0.join(format!("o{k}.f32"));
        let (code, _, err) = ctm(&[
            "run",
            prog,
            "--domain",
            "1x1",
            "--input",
            &format!("v0={x}:float32_4:1x1"),
            "--const",
            "c0=3,0,0,0",
            "--output",
            &format!("oC0={}:float32_4", o.display()),
            "--cond-test",
            "always",
            "--cond-buffer",
            &format!("{}:float32_1", d.0.join("z.f32").display()),
            "--cond-clear",
            "0",
        ]);
        assert_eq!(code, 0, "{err}");
        outs.push(std::fs::read(&o).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    assert_eq!(f32s(&outs[0]), [4.0, 8.0, 12.0, 16.0]);
    // The same DPP code from both forms (the statements above it say
    // where they stand: line and column, or token offset).
    let code_of = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with(';'))
            .map(String::from)
            .collect()
    };
    let (code, a, _) = ctm(&["disasm", &text]);
    let (_, b, _) = ctm(&["disasm", &bin]);
    assert_eq!((code, code_of(&a)), (0, code_of(&b)));
    assert!(a.contains("tex ld") && a.contains("; 4:1: mad oC0"), "{a}");
    assert!(b.contains("; token "), "{b}");
}

#[test]
fn bad_shaders_and_bindings_are_clear_errors() {
    let d = Dir::new("d3d9-errors");
    let bad = d.file("bad.psh", b"ps_3_0\nmov r0, q1\n");
    let (code, _, err) = ctm(&["compile", &bad]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.psh:2:9") && err.contains("`q1` is not a register"),
        "{err}"
    );
    let truncated = d.file("t.pso", [0x00, 0x03, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x02]);
    let (code, _, err) = ctm(&["run", &truncated, "--domain", "1x1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("token 1") && err.contains("end inside an item"),
        "{err}"
    );
    let unsupported = d.file("ret.psh", b"ps_3_0\nif b0\nret\nendif\nmov oC0, c0\n");
    let (code, _, err) = ctm(&["compile", &unsupported]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`ret`") && err.contains("not supported"),
        "{err}"
    );
    let good = d.file("a.psh", SHADER.as_bytes());
    let (code, _, err) = ctm(&[
        "run",
        &good,
        "--domain",
        "1x1",
        "--input",
        "v7=x.f32:float32_4:1x1",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`v7` is not an input") && err.contains("v0=in0"),
        "{err}"
    );
    let (code, _, err) = ctm(&["run", &good, "--domain", "1x1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--input"), "{err}");
    let (code, out, _) = ctm(&["compile", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("vFace is +1") && out.contains("--sampler"),
        "{out}"
    );
}

#[test]
fn constant_table_names_bind_too() {
    use ctm::d3d9::ctab::{Named, constant_table, table_comment};
    use ctm::d3d9::{Item, RegKind};
    let names = vec![
        Named {
            name: "scale".into(),
            kind: RegKind::Const,
            index: 3,
            count: 1,
        },
        Named {
            name: "picture".into(),
            kind: RegKind::Sampler,
            index: 0,
            count: 1,
        },
    ];
    let mut shader = ctm::d3d9::assemble(
        "ps_3_0\ndcl_texcoord0 v0\ndcl_2d s0\ntexld r0, v0, s0\nmul oC0, r0, c3\n",
    )
    .unwrap();
    shader.items.insert(0, Item::Comment(table_comment(&names)));
    assert_eq!(constant_table(&shader), names);
    let d = Dir::new("d3d9-ctab");
    let tokens: Vec<u8> = ctm::d3d9::write(&shader)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    let prog = d.file("named.pso", tokens);
    let (code, out, err) = ctm(&["compile", &prog, "--map", "-o", &d.path("named.elf")]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("scale      c3") && out.contains("picture    in"),
        "{out}"
    );
    let uv = d.file("uv.f32", bytes(&[0.75, 0.0, 0.0, 0.0]));
    let tex = d.file("tex.f32", bytes(&[1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]));
    let o = d.path("o.f32");
    let (code, _, err) = ctm(&[
        "run",
        &prog,
        "--domain",
        "1x1",
        "--input",
        &format!("v0={uv}:float32_4:1x1"),
        "--sampler",
        &format!("picture={tex}:float32_4:2x1"),
        "--const",
        "scale=3,3,3,3",
        "--output",
        &format!("oC0={o}:float32_4"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(f32s(&std::fs::read(&o).unwrap()), [6.0; 4]);
}

#[test]
fn the_ctm_dialect_compiles_and_runs_with_pixel_centres_as_interpolants() {
    let d = Dir::new("d3d9-ctm-dialect");
    let src = d.file("c.psh", b"ps_3_0\ndcl_texcoord0 v0.xy\nmov oC0, v0\n");
    let elf = d.path("c.elf");
    let (code, out, err) = ctm(&["compile", "--dialect", "ctm", &src, "--map", "-o", &elf]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("v0.plane   c253"), "{out}");
    let o = d.path("o.f32");
    let (code, _, err) = ctm(&[
        "run",
        &elf,
        "--domain",
        "4x2",
        "--output",
        &format!("oC0={o}:float32_4"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let v = f32s(&std::fs::read(&o).unwrap());
    assert_eq!(&v[4 * 5..4 * 6], &[1.5, 1.5, 0.0, 1.0]);
    let (code, _, err) = ctm(&["compile", "--dialect", "hlsl", &src]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn messages_about_shaders_name_shader_registers() {
    let d = Dir::new("d3d9-names");
    let src = d.file(
        "s.psh",
        "ps_3_0\ndcl_texcoord0 v0.xy\ndcl_2d s0\ntexld r0, v0, s0\nmul oC0, r0, c3\n",
    );
    let v0 = d.file("v0.f32", bytes(&[0.0; 16 * 4]));
    let tex = d.file("t.f32", bytes(&[1.0; 4]));
    let out = format!("oC0={}:float32_4", d.path("o.f32"));
    let v0 = format!("v0={v0}:float32_4:4x4");
    let (code, _, err) = ctm(&[
        "run", &src, "--domain", "4x4", "--input", &v0, "--output", &out,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("add --sampler s0=FILE"), "{err}");
    let sampler = format!("s0={tex}:float32_4:1x1");
    let (code, _, err) = ctm(&[
        "run",
        &src,
        "--domain",
        "4x4",
        "--input",
        &v0,
        "--sampler",
        &sampler,
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the shader writes oC0: add --output oC0="),
        "{err}"
    );
    let (code, _, err) = ctm(&[
        "run",
        &src,
        "--domain",
        "4x4",
        "--input",
        &v0,
        "--sampler",
        &sampler,
        "--output",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("add --const c3=x,y,z,w"), "{err}");
}

#[test]
fn compile_converts_shader_text_to_bytecode_and_back() {
    let d = Dir::new("d3d9-convert");
    let src = d.file("a.psh", SHADER.as_bytes());
    let pso = d.path("a.pso");
    let (code, _, err) = ctm(&["compile", "--to", "bytecode", &src, "-o", &pso]);
    assert_eq!(code, 0, "{err}");
    let tokens = std::fs::read(&pso).unwrap();
    let shader = ctm::d3d9::assemble(SHADER).unwrap();
    let want: Vec<u8> = ctm::d3d9::write(&shader)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    assert_eq!(tokens, want);
    let back = d.path("b.psh");
    let (code, _, err) = ctm(&["compile", "--to", "text", &pso, "-o", &back]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&back).unwrap();
    assert_eq!(ctm::d3d9::assemble(&text).unwrap(), shader);
    let (code, _, err) = ctm(&["compile", "--to", "text", &back, "-o", &back]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn disasm_of_a_shader_shows_each_statement_above_its_dpp_code() {
    let (code, out, err) = ctm(&["disasm", "examples/mandelbrot.psh"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.ends_with(": rep i0"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(lines[at].starts_with("; 11:1:"), "{out}");
    assert!(lines[at + 1].contains("REP i0"), "{out}");
    // Two statements paired into one instruction both stand above it.
    assert!(
        lines
            .windows(3)
            .any(|w| w[0].starts_with(';') && w[1].starts_with(';') && w[2].starts_with('@')),
        "{out}"
    );
    // The trace of a shader too.
    let (code, out, err) = ctm(&[
        "trace",
        "examples/mandelbrot.psh",
        "--domain",
        "8x8",
        "--consts",
        "examples/data/mandelbrot.consts",
        "--pixel",
        "1,1",
        "--until",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("; 11:1: rep i0"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        lines[at + 1].starts_with("@2") && lines[at + 1].contains("REP i0"),
        "{out}"
    );
    // Bytecode gives token offsets.
    let d = Dir::new("d3d9-disasm-map");
    let shader = ctm::d3d9::assemble(SHADER).unwrap();
    let tokens: Vec<u8> = ctm::d3d9::write(&shader)
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    let pso = d.file("a.pso", tokens);
    let (code, out, err) = ctm(&["disasm", &pso]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("; token "), "{out}");
}

#[test]
fn constants_read_through_al_are_named_by_their_whole_range() {
    let d = Dir::new("d3d9-relative");
    // aL = 2, 3, 4, 5: c[aL+1] reads c3–c6, never c1.
    let src = d.file(
        "rel.psh",
        "ps_3_0\ndefi i0, 4, 2, 1, 0\ndef c0, 0, 0, 0, 0\nmov r0, c0\nloop aL, i0\nadd r0, r0, c[aL+1]\nendloop\nmov oC0, r0\n",
    );
    let out = format!("oC0={}:float32_4", d.path("o.f32"));
    let (code, _, err) = ctm(&["run", &src, "--domain", "2x2", "--output", &out]);
    assert_eq!(code, 0, "{err}");
    for c in 3..=6 {
        assert!(
            err.contains(&format!("float constant c{c},")),
            "c{c}: {err}"
        );
    }
    assert!(!err.contains("float constant c1,"), "{err}");
    let (code, _, err) = ctm(&[
        "run",
        &src,
        "--domain",
        "2x2",
        "--output",
        &out,
        "--const",
        "c3=1,1,1,1",
        "--const",
        "c4=1,1,1,1",
        "--const",
        "c5=1,1,1,1",
        "--const",
        "c6=1,1,1,1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn constants_read_through_al_in_a_host_set_loop_are_named_by_their_range() {
    let d = Dir::new("d3d9-relative-host");
    // i0 is the host's: with 3, 4, 1 aL takes 4, 5, 6 and c[aL+2] reads c6–c8.
    let src = d.file(
        "rel.psh",
        "ps_3_0\ndef c0, 0, 0, 0, 0\nmov r0, c0\nloop aL, i0\nadd r0, r0, c[aL+2]\nendloop\nmov oC0, r0\n",
    );
    let out = format!("oC0={}:float32_4", d.path("o.f32"));
    let args = ["run", &src, "--domain", "2x2", "--output", &out];
    let (code, _, err) = ctm(&[&args[..], &["--const-int", "i0=3,4,1"]].concat());
    assert_eq!(code, 0, "{err}");
    for c in 6..=8 {
        assert!(
            err.contains(&format!("float constant c{c},")),
            "c{c}: {err}"
        );
    }
    assert!(!err.contains("float constant c2,"), "{err}");
    let (code, _, err) = ctm(&[&args[..], &["--const-int", "i0=1,0,1"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("float constant c2,"), "{err}");
    assert!(!err.contains("float constant c3,"), "{err}");
}

#[test]
fn a_ps_1_x_shader_binds_texture_coordinates_stages_and_bump_values_by_name() {
    let d = Dir::new("d3d9-ps1x");
    let src = d.file(
        "bump.psh",
        b"ps_1_1\ntex t0\ntexbem t1, t0\nmul r0, t1, v0\n",
    );
    let (code, out, err) = ctm(&["compile", &src, "--map"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("bumpenv1") && out.contains("t1 ") && out.contains("s1 "),
        "{out}"
    );
    // t0 holds stage 0's one texel, (du, dv) = (0.25, 0); the matrix
    // halves it, so stage 1 is read at t1 + (0.125, 0).
    let t = d.file("t.f32", bytes(&[0.0, 0.0, 0.0, 1.0]));
    let t1 = d.file("t1.f32", bytes(&[0.25, 0.75, 0.0, 1.0]));
    let v0 = d.file("v.f32", bytes(&[1.0, 2.0, 0.5, -1.0]));
    let bump = d.file("bump.f32", bytes(&[0.25, 0.0, 0.0, 0.0]));
    let tex: Vec<f32> = (0..16).flat_map(|k| [k as f32, 0.0, 0.0, 1.0]).collect();
    let tex = d.file("tex.f32", bytes(&tex));
    let o = d.0.join("o.f32");
    let (code, _, err) = ctm(&[
        "run",
        &src,
        "--domain",
        "1x1",
        "--input",
        &format!("t0={t}:float32_4:1x1"),
        "--input",
        &format!("t1={t1}:float32_4:1x1"),
        "--input",
        &format!("v0={v0}:float32_4:1x1"),
        "--sampler",
        &format!("s0={bump}:float32_4:1x1"),
        "--sampler",
        &format!("s1={tex}:float32_4:4x4"),
        "--const",
        "bumpenv1=0.5,0,0,0.5",
        "--output",
        &format!("oC0={}:float32_4", o.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    // u' = 0.25 + 0.5·0.25 = 0.375 → texel 1; v' = 0.75 → row 3: texel 13;
    // times v0 clamped to [0, 1] = (1, 1, 0.5, 0).
    assert_eq!(f32s(&std::fs::read(&o).unwrap()), [13.0, 0.0, 0.0, 0.0]);
}
