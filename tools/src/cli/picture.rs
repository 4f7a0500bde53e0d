//! PNG pictures as surfaces (`docs/cli.md`): decoding with the declared
//! size checked first, encoding over a value range. Behind the `png`
//! feature; without it the tool says so and takes raw or `.npy` data.

use super::Error;
use ctm::kernel::HostSurface;
use ctm::mc::Format;

#[cfg(feature = "png")]
use super::data::check_declared;
use super::usage;

/// Decodes a PNG into `format`: `uint8_4` and `float32_4` take the RGBA
/// channels (alpha 1 where the picture has none), `float32_1` and
/// `uint16_1` a grey value (Rec. 709 luma of colour pictures). The size in
/// its header is checked ([`check_declared`]) before any pixel is
/// decoded, and the decoder may allocate no more than that size needs.
#[cfg(feature = "png")]
pub fn read_png(
    bytes: &[u8],
    name: &str,
    format: Format,
    dims: Option<(u32, u32)>,
) -> Result<HostSurface, Error> {
    if matches!(format, Format::Float32_2) {
        return usage(format!(
            "{name}: a picture becomes uint8_4, float32_4, float32_1 or uint16_1, not float32_2"
        ));
    }
    // The header alone first: nothing is allocated for a size the job
    // cannot take.
    let header = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_header_info()
        .map_err(|e| format!("{name}: {e}"))?
        .size();
    check_declared(
        name,
        (u64::from(header.0), u64::from(header.1)),
        format,
        dims,
    )?;
    // RGBA at 16 bits is the most the expanded picture takes per pixel.
    let limit = u64::from(header.0) * u64::from(header.1) * 8 + (1 << 20);
    let mut dec = png::Decoder::new_with_limits(
        std::io::Cursor::new(bytes),
        png::Limits {
            bytes: limit as usize,
        },
    );
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().map_err(|e| format!("{name}: {e}"))?;
    let size = reader
        .output_buffer_size()
        .filter(|&n| n as u64 <= limit)
        .ok_or_else(|| format!("{name}: picture too large"))?;
    let mut buf = vec![0u8; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("{name}: {e}"))?;
    let (w, h) = (info.width, info.height);
    let wide = info.bit_depth == png::BitDepth::Sixteen;
    let channels = info.color_type.samples();
    let sample = |row: &[u8], k: usize| -> f32 {
        if wide {
            f32::from(u16::from_be_bytes([row[2 * k], row[2 * k + 1]])) / 65535.0
        } else {
            f32::from(row[k]) / 255.0
        }
    };
    let mut values = Vec::with_capacity(w as usize * h as usize * format.channels());
    for row in buf.chunks(info.line_size).take(h as usize) {
        for x in 0..w as usize {
            let px: Vec<f32> = (0..channels)
                .map(|c| sample(row, x * channels + c))
                .collect();
            let rgba = match channels {
                1 => [px[0], px[0], px[0], 1.0],
                2 => [px[0], px[0], px[0], px[1]],
                3 => [px[0], px[1], px[2], 1.0],
                _ => [px[0], px[1], px[2], px[3]],
            };
            match format.channels() {
                1 if channels <= 2 => values.push(rgba[0]),
                1 => values.push(0.2126 * rgba[0] + 0.7152 * rgba[1] + 0.0722 * rgba[2]),
                _ => values.extend_from_slice(&rgba),
            }
        }
    }
    HostSurface::from_f32(format, w, h, &values).map_err(|e| format!("{name}: {e}").into())
}

/// Encodes a surface as a PNG: four channels as RGBA, two as RGB with
/// blue 0, one as grey; values mapped from `range` to 0..255 (clamped,
/// NaN black).
#[cfg(feature = "png")]
pub fn png_bytes(s: &HostSurface, range: (f32, f32)) -> Result<Vec<u8>, Error> {
    let (lo, hi) = range;
    let scale = |v: f32| -> u8 {
        let t = (v - lo) / (hi - lo);
        if t.is_nan() {
            0
        } else {
            (t.clamp(0.0, 1.0) * 255.0).round() as u8
        }
    };
    let values = s.to_f32();
    let (color, pixels): (png::ColorType, Vec<u8>) = match s.format.channels() {
        1 => (
            png::ColorType::Grayscale,
            values.iter().map(|&v| scale(v)).collect(),
        ),
        2 => (
            png::ColorType::Rgb,
            values
                .chunks_exact(2)
                .flat_map(|p| [scale(p[0]), scale(p[1]), 0])
                .collect(),
        ),
        _ => (
            png::ColorType::Rgba,
            values.iter().map(|&v| scale(v)).collect(),
        ),
    };
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, s.width, s.height);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header()?;
    w.write_image_data(&pixels)?;
    w.finish()?;
    Ok(out)
}

/// Without the `png` feature: pictures are refused by name.
#[cfg(not(feature = "png"))]
pub fn read_png(
    _bytes: &[u8],
    name: &str,
    _format: Format,
    _dims: Option<(u32, u32)>,
) -> Result<HostSurface, Error> {
    usage(without(name))
}

/// Without the `png` feature: pictures are refused by name.
#[cfg(not(feature = "png"))]
pub fn png_bytes(_s: &HostSurface, _range: (f32, f32)) -> Result<Vec<u8>, Error> {
    usage(without("a .png output"))
}

/// Why a picture is refused by a tool built without the `png` feature.
pub fn without(name: &str) -> String {
    format!(
        "{name}: this ctm was built without PNG pictures (the `png` feature); use raw or .npy data, or rebuild with default features"
    )
}
