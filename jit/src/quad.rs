//! The 2×2 quad: the unit both engines execute (`docs/design.md`, "Quads").
//!
//! A quad is the pixels {(2x,2y), (2x+1,2y), (2x,2y+1), (2x+1,2y+1)} of the
//! domain, held in the four lanes of one vector in that order: top-left,
//! top-right, bottom-left, bottom-right. MDH/MDV and the 2×2 input gather read
//! across these lanes.

/// Lanes per quad (and per F32X4 vector).
pub const LANES: usize = 4;

/// Lane of the top-left pixel (2x, 2y).
pub const TOP_LEFT: usize = 0;
/// Lane of the top-right pixel (2x+1, 2y).
pub const TOP_RIGHT: usize = 1;
/// Lane of the bottom-left pixel (2x, 2y+1).
pub const BOTTOM_LEFT: usize = 2;
/// Lane of the bottom-right pixel (2x+1, 2y+1).
pub const BOTTOM_RIGHT: usize = 3;

/// The (i, j) pair of `lane` in the quad whose top-left pixel is (`qx`·2, `qy`·2).
///
/// ```
/// use ctm_jit::quad::{pixel_of_lane, BOTTOM_LEFT};
/// assert_eq!(pixel_of_lane(3, 5, BOTTOM_LEFT), (6, 11));
/// ```
pub const fn pixel_of_lane(qx: u32, qy: u32, lane: usize) -> (u32, u32) {
    (qx * 2 + (lane as u32 & 1), qy * 2 + (lane as u32 >> 1))
}

/// The lane holding pixel (i, j) within its quad.
///
/// ```
/// use ctm_jit::quad::{lane_of_pixel, pixel_of_lane};
/// for lane in 0..4 {
///     let (i, j) = pixel_of_lane(7, 2, lane);
///     assert_eq!(lane_of_pixel(i, j), lane);
/// }
/// ```
pub const fn lane_of_pixel(i: u32, j: u32) -> usize {
    ((i & 1) | ((j & 1) << 1)) as usize
}
