//! Parsing the values of command-line flags. Every error here is a usage
//! error (exit status 2) that quotes the flag's value.

use super::{Error, usage};
use ctm::co::{CondLoc, CondTest};
use ctm::engine::EngineKind;
use ctm::kernel::Resource;
use ctm::mc::Format;
use ctm::{JitOptions, OptLevel, Tier};
use std::path::PathBuf;

/// `WxH` (also `×` or `X` between).
pub fn parse_dims(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| format!("`{s}`: expected WxH, e.g. 256x256"))?;
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{s}`: `{t}` is not a number"))
    };
    Ok((n(w)?, n(h)?))
}

/// `N=REST` or `NAME=REST`: NAME is a register of the program's source
/// (a shader's `v0`, `oC1`, `c3`, `vFace`) that its `bindings` map to
/// `PREFIXn`, or `PREFIXn` itself; n at most `max`.
pub fn split_named<'a>(
    s: &'a str,
    what: &str,
    max: usize,
    prefix: &str,
    bindings: &[(String, String)],
) -> Result<(usize, &'a str), Error> {
    let Some((name, rest)) = s.split_once('=') else {
        return usage(format!("{what} `{s}`: expected N=… or REGISTER=…"));
    };
    let name = name.trim();
    if name.chars().all(|c| c.is_ascii_digit()) {
        return split_id(s, what, max);
    }
    let n = match (prefix, Resource::resolve(bindings, name)) {
        ("in", Some(Resource::Input(n))) => Some(usize::from(n)),
        ("out", Some(Resource::Output(n))) => Some(usize::from(n)),
        ("c", Some(Resource::Float(n))) => Some(usize::from(n)),
        ("i", Some(Resource::Int(n))) => Some(usize::from(n)),
        ("b", Some(Resource::Bool(n))) => Some(usize::from(n)),
        _ => None,
    }
    .filter(|&n| n <= max);
    match n {
        Some(n) => Ok((n, rest)),
        None => {
            let known: Vec<String> = bindings.iter().map(|(a, b)| format!("{a}={b}")).collect();
            usage(format!(
                "{what} `{s}`: `{name}` is not {} of this program{}",
                match prefix {
                    "in" => "an input",
                    "out" => "an output",
                    "c" => "a float constant",
                    "i" => "an integer constant",
                    _ => "a boolean constant",
                },
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" (its registers: {})", known.join(", "))
                }
            ))
        }
    }
}

/// `N=REST` with N at most `max`.
pub fn split_id<'a>(s: &'a str, what: &str, max: usize) -> Result<(usize, &'a str), Error> {
    let Some((n, rest)) = s.split_once('=') else {
        return usage(format!("{what} `{s}`: expected N=…"));
    };
    let Ok(n) = n.trim().parse::<usize>() else {
        return usage(format!("{what} `{s}`: `{n}` is not a number"));
    };
    if n > max {
        return usage(format!("{what} `{s}`: {n} is out of range (0–{max})"));
    }
    Ok((n, rest))
}

/// A format name.
pub fn format_of(s: &str, spec: &str) -> Result<Format, Error> {
    match Format::parse(s) {
        Some(f) => Ok(f),
        None => usage(format!(
            "`{spec}`: unknown format `{s}` (uint16_1 uint8_4 float32_1 float32_2 float32_4)"
        )),
    }
}

/// `PATH:FORMAT`, splitting at the last colon.
pub fn path_format(s: &str, spec: &str) -> Result<(PathBuf, Format), Error> {
    let Some((p, f)) = s.rsplit_once(':') else {
        return usage(format!("`{spec}`: expected PATH:FORMAT"));
    };
    Ok((PathBuf::from(p), format_of(f, spec)?))
}

/// `PATH[:FORMAT][:WxH]`: the optional parts are recognised from the right.
pub fn path_format_dims(s: &str) -> (PathBuf, Option<Format>, Option<(u32, u32)>) {
    let mut path = s;
    let mut dims = None;
    let mut format = None;
    if let Some((p, d)) = path.rsplit_once(':')
        && let Ok(d) = parse_dims(d)
    {
        dims = Some(d);
        path = p;
    }
    if let Some((p, f)) = path.rsplit_once(':')
        && let Some(f) = Format::parse(f)
    {
        format = Some(f);
        path = p;
    }
    (PathBuf::from(path), format, dims)
}

/// Exactly `n` comma-separated numbers.
pub fn numbers<T: std::str::FromStr>(s: &str, n: usize, spec: &str) -> Result<Vec<T>, Error> {
    let Ok(v) = s
        .split(',')
        .map(|t| t.trim().parse::<T>())
        .collect::<Result<Vec<T>, _>>()
    else {
        return usage(format!("`{spec}`: expected {n} comma-separated numbers"));
    };
    if v.len() != n {
        return usage(format!("`{spec}`: expected {n} numbers, got {}", v.len()));
    }
    Ok(v)
}

/// An integer constant `count,init,step`.
pub fn int_const(s: &str, spec: &str) -> Result<(u8, u8, i8), Error> {
    let v = numbers::<i32>(s, 3, spec)?;
    let (Ok(count), Ok(init), Ok(step)) =
        (u8::try_from(v[0]), u8::try_from(v[1]), i8::try_from(v[2]))
    else {
        return usage(format!(
            "`{spec}`: count and init must be 0–255, step -128–127"
        ));
    };
    Ok((count, init, step))
}

/// An address: `0x…` or decimal, `_` allowed.
pub fn parse_addr(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    r.map_err(|_| format!("`{s}` is not an address (0x… or decimal)"))
}

/// A size: bytes, or with a `K`, `M` or `G` suffix (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((k, _)) => t.split_at(k),
        None => (t, ""),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a size such as 256M"))?;
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (K, M or G)")),
    };
    n.checked_shl(shift)
        .filter(|v| v >> shift == n)
        .ok_or_else(|| format!("`{s}` is too large"))
}

/// A value range `LO..HI` (for pictures).
pub fn parse_range(s: &str) -> Option<(f32, f32)> {
    let (lo, hi) = s.split_once("..")?;
    let (lo, hi) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
    (lo < hi).then_some((lo, hi))
}

/// `--engine`: which engine runs clauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The JIT where the host CPU supports it, else the interpreter.
    Auto,
    /// The reference interpreter.
    Interp,
    /// The JIT.
    Jit,
}

impl EngineArg {
    /// The engine this names on this host.
    pub fn kind(self) -> EngineKind {
        match self {
            EngineArg::Auto => EngineKind::best(),
            EngineArg::Interp => EngineKind::Interp,
            EngineArg::Jit => EngineKind::Jit,
        }
    }
}

/// `--opt-level`: Cranelift's optimisation level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OptArg {
    /// Chosen per program.
    Auto,
    /// No optimisation passes.
    None,
    /// The e-graph pass.
    Speed,
}

/// `--tier`: which code the JIT runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TierArg {
    /// Quick code first, optimised code once the program proves hot.
    Tiered,
    /// Quick code only.
    Quick,
    /// Optimised code only.
    Optimised,
}

/// `--cond-loc`: where the conditional test applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CondLocArg {
    /// Outputs of failing pairs are dropped.
    Dpp,
    /// Failing pairs do not run.
    Pe,
}

impl From<CondLocArg> for CondLoc {
    fn from(a: CondLocArg) -> CondLoc {
        match a {
            CondLocArg::Dpp => CondLoc::Dpp,
            CondLocArg::Pe => CondLoc::Pe,
        }
    }
}

/// `--cond-test`: the conditional test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CondTestArg {
    /// Never passes.
    Never,
    /// v < b.
    Less,
    /// v ≤ b.
    Lequal,
    /// v == b.
    Equal,
    /// v ≥ b.
    Gequal,
    /// v > b.
    Greater,
    /// v ≠ b.
    Notequal,
    /// Always passes.
    Always,
}

impl From<CondTestArg> for CondTest {
    fn from(a: CondTestArg) -> CondTest {
        match a {
            CondTestArg::Never => CondTest::Never,
            CondTestArg::Less => CondTest::Less,
            CondTestArg::Lequal => CondTest::LessEqual,
            CondTestArg::Equal => CondTest::Equal,
            CondTestArg::Gequal => CondTest::GreaterEqual,
            CondTestArg::Greater => CondTest::Greater,
            CondTestArg::Notequal => CondTest::NotEqual,
            CondTestArg::Always => CondTest::Always,
        }
    }
}

/// `--opt-level`, `--quads` and `--tier` as JIT options (`quads` 0: chosen
/// per clause).
pub fn jit_options(opt_level: OptArg, quads: u8, tier: TierArg) -> Result<JitOptions, Error> {
    let opt_level = match opt_level {
        OptArg::Auto => OptLevel::Auto,
        OptArg::None => OptLevel::None,
        OptArg::Speed => OptLevel::Speed,
    };
    if !matches!(quads, 0 | 1 | 2 | 4) {
        return usage(format!(
            "--quads {quads}: expected 1, 2 or 4 (0: chosen per clause)"
        ));
    }
    Ok(JitOptions {
        opt_level,
        quads_per_iter: quads,
        tier: match tier {
            TierArg::Tiered => Tier::Tiered,
            TierArg::Quick => Tier::Quick,
            TierArg::Optimised => Tier::Optimised,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("3T").is_err());
    }

    #[test]
    fn specs() {
        let (p, f, d) = path_format_dims("a:b.f32:float32_4:4x2");
        assert_eq!(
            (p, f, d),
            (
                PathBuf::from("a:b.f32"),
                Some(Format::Float32_4),
                Some((4, 2))
            )
        );
        let (p, f, d) = path_format_dims("pic.png");
        assert_eq!((p, f, d), (PathBuf::from("pic.png"), None, None));
        assert_eq!(parse_range("-1..1"), Some((-1.0, 1.0)));
        assert_eq!(parse_range("1..1"), None);
    }
}
