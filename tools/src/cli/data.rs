//! Data in and out of `ctm run`: raw files, PNG pictures and NumPy `.npy`
//! arrays as surfaces, constants from a file, outputs printed as text.
//!
//! Channel order: PNG and `.npy` data are in the shader's channel order
//! (r, g, b, a); a `uint8_4` surface keeps them in memory as B, G, R, A
//! (`docs/machine.md` §5.1), so the conversion swaps them.

use super::{Error, usage};
use ctm::kernel::HostSurface;
use ctm::mc::Format;
use std::path::{Path, PathBuf};

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
const NPY_MAGIC: &[u8] = b"\x93NUMPY";
/// Largest data file read (an 8188 × 8188 float32_4 surface is 1 GiB).
const MAX_DATA: u64 = 1 << 30;

/// Reads a whole data file, or standard input for `-` (at most 1 GiB).
pub fn read_all(path: &Path) -> Result<Vec<u8>, Error> {
    read_capped(path, MAX_DATA, "a data file")
}

/// Reads a program or shader file (at most 16 MiB, as every command that
/// loads programs allows).
pub fn read_program(path: &Path) -> Result<Vec<u8>, Error> {
    read_capped(path, ctm::program::MAX_FILE, "a program or shader file")
}

fn read_capped(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Error> {
    let name = path.display();
    ctm::program::read_file(path, cap).map_err(|e| match e {
        ctm::program::ReadError::Io(e) => format!("{name}: {e}").into(),
        ctm::program::ReadError::TooLarge { cap } => format!(
            "{name}: larger than {} MiB, the most {what} may be",
            cap >> 20
        )
        .into(),
    })
}

/// The file forms of a surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Raw elements in the memory layout of their format.
    Raw,
    /// A PNG picture.
    Png,
    /// A NumPy array.
    Npy,
}

impl Form {
    /// The form an output path asks for, by its extension.
    pub fn of_path(path: &Path) -> Form {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("png") => Form::Png,
            Some(e) if e.eq_ignore_ascii_case("npy") => Form::Npy,
            _ => Form::Raw,
        }
    }

    /// The form of a file's bytes, by their magic.
    pub fn of_bytes(bytes: &[u8]) -> Form {
        if bytes.starts_with(PNG_MAGIC) {
            Form::Png
        } else if bytes.starts_with(NPY_MAGIC) {
            Form::Npy
        } else {
            Form::Raw
        }
    }
}

/// A surface from a file's bytes: PNG and `.npy` carry their size (checked
/// against `dims` if given) and imply a format (`format` chooses among the
/// compatible ones); raw bytes need both.
pub fn decode(
    bytes: &[u8],
    name: &str,
    format: Option<Format>,
    dims: Option<(u32, u32)>,
) -> Result<HostSurface, Error> {
    let s = match Form::of_bytes(bytes) {
        Form::Png => {
            super::picture::read_png(bytes, name, format.unwrap_or(Format::Float32_4), dims)?
        }
        Form::Npy => read_npy(bytes, name, format)?,
        Form::Raw => {
            let (Some(format), Some((w, h))) = (format, dims) else {
                return usage(format!(
                    "{name}: raw data needs its format and size (`PATH:FORMAT:WxH`); PNG and .npy files carry them"
                ));
            };
            return HostSurface::new(format, w, h, bytes.to_vec())
                .map_err(|e| format!("{name}: {e}").into());
        }
    };
    if let Some((w, h)) = dims
        && (w, h) != (s.width, s.height)
    {
        return Err(format!("{name}: the file is {}×{}, not {w}×{h}", s.width, s.height).into());
    }
    Ok(s)
}

/// Checks a file's declared size before anything is allocated for it: the
/// size the job expects (`dims`) if given, the largest surface (8188 ×
/// 8191 elements) and the largest arena (512 MiB) for the surface it
/// becomes in `format`.
pub(super) fn check_declared(
    name: &str,
    (w, h): (u64, u64),
    format: Format,
    dims: Option<(u32, u32)>,
) -> Result<(), Error> {
    if let Some((dw, dh)) = dims
        && (u64::from(dw), u64::from(dh)) != (w, h)
    {
        return Err(format!("{name}: the file is {w}×{h}, not {dw}×{dh}").into());
    }
    let (max_w, max_h) = (
        u64::from(ctm::kernel::MAX_PITCH),
        u64::from(ctm::kernel::MAX_ROWS),
    );
    if w > max_w || h > max_h {
        return Err(format!(
            "{name}: the file is {w}×{h}; a surface has at most {max_w} columns and {max_h} rows"
        )
        .into());
    }
    let bytes = w * h * format.bytes() as u64;
    let arena = u64::from(ctm::kernel::MAX_ARENA);
    if bytes > arena {
        return Err(format!(
            "{name}: {w}×{h} elements of {format} take {} MiB; a surface must fit one arena of {} MiB",
            bytes >> 20,
            arena >> 20
        )
        .into());
    }
    Ok(())
}

/// The dtype and channels of a format as NumPy stores them.
fn npy_descr(format: Format) -> (&'static str, usize) {
    match format {
        Format::Uint16_1 => ("<u2", 1),
        Format::Uint8_4 => ("|u1", 4),
        Format::Float32_1 => ("<f4", 1),
        Format::Float32_2 => ("<f4", 2),
        Format::Float32_4 => ("<f4", 4),
    }
}

/// Encodes a surface as a NumPy array of shape (height, width) for one
/// channel, else (height, width, channels); `uint8_4` as RGBA bytes.
pub fn npy_bytes(s: &HostSurface) -> Vec<u8> {
    let (descr, ch) = npy_descr(s.format);
    let shape = if ch == 1 {
        format!("({}, {})", s.height, s.width)
    } else {
        format!("({}, {}, {ch})", s.height, s.width)
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + s.data.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    if s.format == Format::Uint8_4 {
        out.extend(
            s.data
                .chunks_exact(4)
                .flat_map(|e| [e[2], e[1], e[0], e[3]]),
        );
    } else {
        out.extend_from_slice(&s.data);
    }
    out
}

/// Decodes a NumPy array: `<f4` of shape (H, W) or (H, W, 1|2|4), `|u1` of
/// shape (H, W, 4) (RGBA), `<u2` of shape (H, W) or (H, W, 1).
pub fn read_npy(bytes: &[u8], name: &str, want: Option<Format>) -> Result<HostSurface, Error> {
    let bad =
        |m: &str| -> Error { format!("{name}: not a NumPy array this tool reads: {m}").into() };
    let (len, start) = match bytes.get(6) {
        Some(1) if bytes.len() >= 10 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        Some(2 | 3) if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("unknown version or truncated header")),
    };
    let header = bytes
        .get(start..start + len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad("truncated or non-text header"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = field("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| bad("no 'descr'"))?;
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(bad("Fortran order (save a C-ordered array)"));
    }
    let shape: Vec<usize> = field("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| bad("no 'shape'"))?
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("a shape that is not numbers"))?;
    let (h, w, ch) = match shape[..] {
        [h, w] => (h, w, 1),
        [h, w, c] => (h, w, c),
        _ => {
            return Err(bad(&format!(
                "shape {shape:?}: expected (H, W) or (H, W, C)"
            )));
        }
    };
    let format = match (descr, ch) {
        ("<f4", 1) => Format::Float32_1,
        ("<f4", 2) => Format::Float32_2,
        ("<f4", 4) => Format::Float32_4,
        ("|u1" | "<u1", 4) => Format::Uint8_4,
        ("<u2", 1) => Format::Uint16_1,
        _ => {
            return Err(bad(&format!(
                "dtype {descr} with {ch} channel(s); use float32 with 1, 2 or 4 channels, uint8 with 4 or uint16 with 1"
            )));
        }
    };
    if let Some(f) = want
        && f != format
    {
        return usage(format!(
            "{name}: the array holds {format} elements (dtype {descr}, shape {shape:?}), not {f}"
        ));
    }
    check_declared(name, (w as u64, h as u64), format, None)?;
    let (w, h) = (w as u32, h as u32);
    let need = u64::from(w) * u64::from(h) * format.bytes() as u64;
    let held = (bytes.len() - (start + len)) as u64;
    if held != need {
        return Err(bad(&format!(
            "shape {shape:?} of {descr} needs {need} bytes of data; the file holds {held}"
        )));
    }
    let mut data = bytes[start + len..].to_vec();
    if format == Format::Uint8_4 {
        for e in data.chunks_exact_mut(4) {
            e.swap(0, 2);
        }
    }
    HostSurface::new(format, w, h, data).map_err(|e| format!("{name}: {e}").into())
}

/// Constants read from a file: one `c3 = 1, 2, 3, 4`, `i0 = 255, 0, 1` or
/// `b2 = 1` per line; `#` starts a comment.
#[derive(Default)]
pub struct ConstFile {
    /// Float constants.
    pub floats: Vec<(usize, [f32; 4])>,
    /// Integer constants (count, init, step).
    pub ints: Vec<(usize, (u8, u8, i8))>,
    /// Boolean constants.
    pub bools: Vec<(usize, bool)>,
}

/// Parses a constants file.
pub fn read_consts(path: &Path) -> Result<ConstFile, Error> {
    let text = String::from_utf8(read_capped(
        path,
        ctm::program::MAX_FILE,
        "a constants file",
    )?)
    .map_err(|_| format!("{}: not text", path.display()))?;
    let mut out = ConstFile::default();
    for (k, line) in text.lines().enumerate() {
        let at = |m: String| -> Error { format!("{}:{}: {m}", path.display(), k + 1).into() };
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (name, values) = line
            .split_once('=')
            .ok_or_else(|| at(format!("`{line}`: expected e.g. `c3 = 1, 2, 3, 4`")))?;
        let name = name.trim();
        let (kind, n) = name.split_at(name.len().min(1));
        let n: usize = n
            .parse()
            .map_err(|_| at(format!("`{name}`: expected cN, iN or bN")))?;
        let parts: Vec<&str> = values.split(',').map(str::trim).collect();
        match kind {
            "c" | "C" => {
                let v =
                    super::args::numbers::<f32>(values, 4, name).map_err(|e| at(e.to_string()))?;
                if n > 255 {
                    return Err(at(format!("{name}: float constants are c0–c255")));
                }
                out.floats.push((n, [v[0], v[1], v[2], v[3]]));
            }
            "i" | "I" => {
                if n > 31 {
                    return Err(at(format!("{name}: integer constants are i0–i31")));
                }
                out.ints.push((
                    n,
                    super::args::int_const(values, name).map_err(|e| at(e.to_string()))?,
                ));
            }
            "b" | "B" => {
                if n > 31 {
                    return Err(at(format!("{name}: boolean constants are b0–b31")));
                }
                let b = match parts[..] {
                    ["0"] | ["false"] => false,
                    ["1"] | ["true"] => true,
                    _ => return Err(at(format!("{name}: expected 0 or 1"))),
                };
                out.bools.push((n, b));
            }
            _ => return Err(at(format!("`{name}`: expected cN, iN or bN"))),
        }
    }
    Ok(out)
}

/// Largest surface `--print` shows.
pub const MAX_PRINT: usize = 4096;

/// An output as text: one line per element, `(i, j): values`.
pub fn print_surface(n: u8, s: &HostSurface) -> String {
    let ch = s.format.channels();
    let values = s.to_f32();
    let mut out = format!("output {n} ({}×{} {}):\n", s.width, s.height, s.format);
    for (k, e) in values.chunks_exact(ch).enumerate() {
        let (i, j) = (k % s.width as usize, k / s.width as usize);
        let v: Vec<String> = e.iter().map(|x| ctm::trace::show(x.to_bits())).collect();
        out += &format!("  ({i}, {j}): {}\n", v.join(", "));
    }
    out
}

/// Writes `bytes` to `path`, or standard output for `-`: through a
/// temporary file renamed over `path` once complete ([`temp_beside`]), so
/// a failed write leaves the old file whole; a device or a pipe is
/// written as it is.
pub fn write_to(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if path == Path::new("-") {
        return super::write_stdout(bytes);
    }
    let fail = |e: std::io::Error| -> Error { format!("{}: {e}", path.display()).into() };
    let Some(temp) = temp_beside(path) else {
        return std::fs::write(path, bytes).map_err(fail);
    };
    std::fs::write(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            fail(e)
        })
}

/// The temporary file an output to `path` is written to before it
/// replaces `path`; `None` when `path` exists and is no regular file (a
/// device, a pipe), which is written in place.
pub fn temp_beside(path: &Path) -> Option<PathBuf> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return None;
    }
    let name = path
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy());
    Some(path.with_file_name(format!(".{name}.ctm-{}.tmp", std::process::id())))
}
