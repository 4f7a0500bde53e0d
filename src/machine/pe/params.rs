//! Interpolation parameters (`docs/machine.md` §6.1): what `set_params`
//! points at and how its values reach a program.
//!
//! The parameters are three vertices of 32 floats each: slot 0 of a vertex
//! is its position (x, y, z, w), slots 1–7 are interpolants (four floats
//! each). An interpolant is the plane through its three vertex values over
//! the vertices' (x, y): v(x, y) = A + B·x + C·y, evaluated at the pixel's
//! centre (i + ½, j + ½). The PE computes each plane in double precision,
//! folds the half-pixel into A (A' = A + B/2 + C/2) and hands A', B, C to
//! the program as three consecutive float constants that the program's
//! notes name (`vN.plane=cK`, `docs/abi.md` §5.5); the program evaluates
//! A' + i·B + j·C itself. Constants are uniforms, so both engines and the
//! tracer see the same values.

use ctm_jit::state::Uniforms;

/// Floats in the parameter block: three vertices of 32.
pub const PARAM_FLOATS: usize = 96;

/// Interpolant slots (slot 0 is the position).
pub const SLOTS: usize = 8;

/// The constant that receives the plane of each slot, from a program's
/// bindings: `v0.plane=c248` puts slot 1's A', B, C into c248–c250; `vN`
/// is slot N + 1, and a ps_1_x shader's texture coordinates `tN` are slot
/// N + 3 (after its two colours).
pub fn planes(bindings: &[(String, String)]) -> [Option<u8>; SLOTS] {
    let mut out = [None; SLOTS];
    for (name, res) in bindings {
        let slot = name.strip_suffix(".plane").and_then(|n| {
            let (first, offset) = match n.strip_prefix('v') {
                Some(num) => (num, 0),
                None => (n.strip_prefix('t')?, 2),
            };
            first
                .parse::<usize>()
                .ok()
                .map(|k| k + offset)
                .filter(|&k| k + 1 < SLOTS)
        });
        let cst = res
            .strip_prefix('c')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|&c| c <= 253);
        if let (Some(s), Some(c)) = (slot, cst) {
            out[s + 1] = Some(c);
        }
    }
    out
}

/// Every float constant that `planes` fills (three per slot).
pub fn constants(planes: &[Option<u8>; SLOTS]) -> Vec<u32> {
    planes
        .iter()
        .flatten()
        .flat_map(|&c| [0, 1, 2].map(|d| u32::from(c) + d))
        .collect()
}

/// The planes of `params` for every slot in `planes`, written into the
/// uniforms' float constants.
pub fn apply(
    params: &[f32; PARAM_FLOATS],
    planes: &[Option<u8>; SLOTS],
    u: &mut Uniforms,
) -> Result<(), String> {
    let pos = |v: usize| (f64::from(params[32 * v]), f64::from(params[32 * v + 1]));
    let (p0, p1, p2) = (pos(0), pos(1), pos(2));
    let (ex, ey) = ((p1.0 - p0.0, p1.1 - p0.1), (p2.0 - p0.0, p2.1 - p0.1));
    let det = ex.0 * ey.1 - ey.0 * ex.1;
    for (slot, c) in planes.iter().enumerate() {
        let Some(c) = *c else { continue };
        if !det.is_finite() || det == 0.0 {
            return Err(format!(
                "the parameters' three vertices ({}, {}), ({}, {}), ({}, {}) span no area: slot {slot} cannot be interpolated",
                p0.0, p0.1, p1.0, p1.1, p2.0, p2.1
            ));
        }
        let c = usize::from(c);
        for k in 0..4 {
            let a = |v: usize| f64::from(params[32 * v + 4 * slot + k]);
            let (d1, d2) = (a(1) - a(0), a(2) - a(0));
            let b = (d1 * ey.1 - d2 * ex.1) / det;
            let cy = (ex.0 * d2 - ey.0 * d1) / det;
            let a0 = a(0) - b * p0.0 - cy * p0.1 + 0.5 * (b + cy);
            u.consts[c][k] = (a0 as f32).to_bits();
            u.consts[c + 1][k] = (b as f32).to_bits();
            u.consts[c + 2][k] = (cy as f32).to_bits();
        }
    }
    Ok(())
}

/// Parameters that make every interpolant the pixel's centre: position and
/// every slot (x, y, 0, 1) over a triangle with vertices (0, 0), (1, 0),
/// (0, 1). What `ctm run` and `Kernel::run` use unless given others.
pub fn identity() -> [f32; PARAM_FLOATS] {
    let mut p = [0.0; PARAM_FLOATS];
    for (v, (x, y)) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)].into_iter().enumerate() {
        for slot in 0..SLOTS {
            p[32 * v + 4 * slot..32 * v + 4 * slot + 4].copy_from_slice(&[x, y, 0.0, 1.0]);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane(u: &Uniforms, c: usize, k: usize) -> [f32; 3] {
        [0, 1, 2].map(|d| f32::from_bits(u.consts[c + d][k]))
    }

    #[test]
    fn the_identity_interpolates_pixel_centres() {
        let mut u = Uniforms::default();
        let mut planes = [None; SLOTS];
        planes[1] = Some(10);
        apply(&identity(), &planes, &mut u).unwrap();
        // x = ½ + i, y = ½ + j, 0, 1.
        assert_eq!(plane(&u, 10, 0), [0.5, 1.0, 0.0]);
        assert_eq!(plane(&u, 10, 1), [0.5, 0.0, 1.0]);
        assert_eq!(plane(&u, 10, 2), [0.0, 0.0, 0.0]);
        assert_eq!(plane(&u, 10, 3), [1.0, 0.0, 0.0]);
    }

    #[test]
    fn a_client_triangle_three_times_the_domain() {
        // Vertices at (0, 0), (3w, 0), (0, 3h) carrying a texel coordinate
        // biased by −0.45: pixel i reads i + 0.05.
        let (w, h) = (16.0f32, 8.0f32);
        let mut p = [0.0; PARAM_FLOATS];
        let verts = [(0.0, 0.0), (3.0 * w, 0.0), (0.0, 3.0 * h)];
        for (v, (x, y)) in verts.into_iter().enumerate() {
            p[32 * v..32 * v + 4].copy_from_slice(&[x, y, 0.0, 1.0]);
            p[32 * v + 4..32 * v + 8].copy_from_slice(&[x - 0.45, y - 0.45, 0.0, 1.0]);
        }
        let mut u = Uniforms::default();
        let mut planes = [None; SLOTS];
        planes[1] = Some(0);
        apply(&p, &planes, &mut u).unwrap();
        let [a, b, c] = plane(&u, 0, 0);
        assert!(
            (a - 0.05).abs() < 1e-6 && b == 1.0 && c == 0.0,
            "{a} {b} {c}"
        );
        // A triangle of no area is an error.
        p[32..34].copy_from_slice(&[0.0, 0.0]);
        assert!(apply(&p, &planes, &mut u).unwrap_err().contains("no area"));
    }

    #[test]
    fn planes_come_from_the_bindings() {
        let b = |n: &str, r: &str| (n.to_string(), r.to_string());
        let p = planes(&[
            b("v0.plane", "c248"),
            b("v6.plane", "c10"),
            b("v7.plane", "c1"),
            b("v0", "in0"),
            b("t0.plane", "c20"),
            b("t4.plane", "c30"),
            b("t5.plane", "c40"),
        ]);
        assert_eq!(p[1], Some(248));
        assert_eq!(p[7], Some(30), "t4 is slot 7 (v6's)");
        assert_eq!(p[3], Some(20));
        assert_eq!(p.iter().flatten().count(), 3);
    }
}
