//! A self-contained [`TextureUnit`]: inputs as in-memory images of texels and
//! a grid for uncached writes. Handy for tests and for embedding ctm without
//! the memory controller.
//!
//! Addressing rule (shared with the memory controller, [`texel`]): an
//! unscaled coordinate c names texel ⌊c⌋; a scaled one names ⌊c · size⌋.
//! Coordinates that are NaN or fall outside 0..size read as (0, 0, 0, 0)
//! (`docs/machine.md` §5.5). Uncached reads return (value, 0, 0, 1.0) — a
//! one-channel float surface (§5.1 missing channels).

use super::{FetchRequest, TexFault, TextureUnit};
use ctm_jit::ir::FetchKind;
use ctm_jit::state::Mask;
use std::collections::HashMap;

/// The texel index a coordinate names, if inside `0..size`.
///
/// ```
/// use ctm::runtime::texture::texel;
/// assert_eq!(texel(2.7f32.to_bits(), 4, true), Some(2));
/// assert_eq!(texel(0.5f32.to_bits(), 4, false), Some(2));
/// assert_eq!(texel((-0.5f32).to_bits(), 4, true), None);
/// assert_eq!(texel(f32::NAN.to_bits(), 4, true), None);
/// ```
pub fn texel(coord: u32, size: u32, unscaled: bool) -> Option<u32> {
    texel_floor(coord, size, unscaled)
        .filter(|&t| t < i64::from(size))
        .and_then(|t| u32::try_from(t).ok())
}

/// The unbounded texel index a coordinate names: ⌊c⌋ or ⌊c · size⌋, or
/// `None` for NaN and values beyond ±2^31.
///
/// ```
/// use ctm::runtime::texture::texel_floor;
/// assert_eq!(texel_floor((-0.5f32).to_bits(), 4, true), Some(-1));
/// assert_eq!(texel_floor(f32::INFINITY.to_bits(), 4, true), None);
/// ```
pub fn texel_floor(coord: u32, size: u32, unscaled: bool) -> Option<i64> {
    let c = ctm_jit::fp::daz(coord);
    let c = if unscaled { c } else { c * size as f32 };
    // floor(c) without a libm call (the host build may lack SSE4.1's
    // rounding instruction): NaN and |c| ≥ 2^31 have no texel, else
    // truncate and step down below zero. Above 2^24 every f32 is an
    // integer, so the comparison is exact where it matters.
    if c.is_nan() || c.abs() >= 2147483648.0 {
        return None;
    }
    let t = c as i64;
    Some(if (t as f32) > c { t - 1 } else { t })
}

/// One input: `width × height` texels of four raw 32-bit channels, row-major.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Image {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Texels, `texels[y * width + x]`.
    pub texels: Vec<[u32; 4]>,
}

impl Image {
    /// An image of f32 texels computed by `f(x, y)`.
    pub fn from_fn(width: u32, height: u32, mut f: impl FnMut(u32, u32) -> [f32; 4]) -> Image {
        let texels = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| f(x, y).map(f32::to_bits))
            .collect();
        Image {
            width,
            height,
            texels,
        }
    }

    fn at(&self, x: u32, y: u32) -> [u32; 4] {
        self.texels
            .get((y as usize) * (self.width as usize) + x as usize)
            .copied()
            .unwrap_or([0; 4])
    }
}

/// Inputs 0–15 as images plus uncached memory as a sparse grid.
#[derive(Clone, Debug, Default)]
pub struct Images {
    /// Bound inputs.
    pub inputs: [Option<Image>; 16],
    /// Uncached memory, (x, y) → pattern.
    pub uncached: HashMap<(u32, u32), u32>,
    /// Width and height of the uncached surface (writes outside are dropped).
    pub uncached_size: (u32, u32),
}

impl Images {
    /// Binds `image` as input `n`.
    pub fn with_input(mut self, n: usize, image: Image) -> Images {
        self.inputs[n] = Some(image);
        self
    }
}

impl TextureUnit for Images {
    fn fetch(
        &mut self,
        req: FetchRequest,
        coords: &[[u32; 4]],
        mask: Mask,
        _pixels: &[(u32, u32)],
        out: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        for (lane, (c, o)) in coords.iter().zip(out.iter_mut()).enumerate() {
            if mask & (1 << lane) == 0 {
                continue;
            }
            *o = match req.kind {
                FetchKind::Lookup => {
                    let img = self.inputs[usize::from(req.input & 15)]
                        .as_ref()
                        .ok_or_else(|| TexFault(format!("input {} is not bound", req.input)))?;
                    match (
                        texel(c[0], img.width, req.unscaled),
                        texel(c[1], img.height, req.unscaled),
                    ) {
                        (Some(x), Some(y)) => img.at(x, y),
                        _ => [0; 4],
                    }
                }
                FetchKind::Uncached => {
                    let (w, h) = self.uncached_size;
                    match (texel(c[0], w, req.unscaled), texel(c[1], h, req.unscaled)) {
                        (Some(x), Some(y)) => {
                            let v = self.uncached.get(&(x, y)).copied().unwrap_or(0);
                            [v, 0, 0, ctm_jit::fp::ONE]
                        }
                        _ => [0; 4],
                    }
                }
            };
        }
        Ok(())
    }

    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), TexFault> {
        let (w, h) = self.uncached_size;
        if let (Some(x), Some(y)) = (texel(x, w, true), texel(y, h, true)) {
            self.uncached.insert((x, y), value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::texel_floor;

    /// The definition `texel_floor` implements without a libm call.
    fn reference(coord: u32, size: u32, unscaled: bool) -> Option<i64> {
        let c = ctm_jit::fp::daz(coord);
        let c = if unscaled { c } else { c * size as f32 };
        let f = c.floor();
        (f.abs() < 2147483648.0).then_some(f as i64)
    }

    #[test]
    fn texel_floor_is_floor_for_every_kind_of_value() {
        let edges = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            0.999_999_94,
            -0.999_999_94,
            2147483520.0,
            -2147483520.0,
            2147483648.0,
            -2147483648.0,
            16777217.0,
            -16777215.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
        ];
        let sweep = (0..=u32::MAX).step_by(65_521).map(f32::from_bits);
        for c in edges.into_iter().chain(sweep) {
            for (size, unscaled) in [(1, true), (64, false), (8191, false)] {
                let bits = c.to_bits();
                assert_eq!(
                    texel_floor(bits, size, unscaled),
                    reference(bits, size, unscaled),
                    "{c:e} size {size}"
                );
            }
        }
    }
}
