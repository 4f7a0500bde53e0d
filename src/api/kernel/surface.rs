//! Host surfaces and their way to and from device memory.
//!
//! A [`HostSurface`] is a tightly packed row-major array of elements in the
//! memory layout of `docs/machine.md` §5.1; on the device each row is
//! padded to a pitch that is a multiple of 4 elements.

use super::{KernelError, MAX_PITCH, MAX_ROWS};
use crate::device::{Device, DeviceError};
use crate::mc::{ArenaKind, Format, SurfaceFormat};
use std::mem::MaybeUninit;

/// A host-side surface: `width × height` elements of `format`, tightly
/// packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSurface {
    /// Element format.
    pub format: Format,
    /// Elements per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width · height · bytes per element` bytes.
    pub data: Vec<u8>,
}

/// Data that does not fill the surface it is meant for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{got} {unit} for {width}×{height} elements of {format} ({want} expected)")]
pub struct SizeMismatch {
    /// What was given.
    pub got: usize,
    /// What the surface needs (exact: never wraps, however large the
    /// sides).
    pub want: u128,
    /// `bytes` or `values`.
    pub unit: &'static str,
    /// The surface's format.
    pub format: Format,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
}

impl HostSurface {
    /// A surface over `data`, which must hold exactly `width · height`
    /// elements of `format`.
    ///
    /// ```
    /// use ctm::kernel::HostSurface;
    /// use ctm::mc::Format;
    /// assert!(HostSurface::new(Format::Float32_1, 2, 2, vec![0; 16]).is_ok());
    /// let e = HostSurface::new(Format::Float32_1, 2, 2, vec![0; 12]).unwrap_err();
    /// assert_eq!(e.to_string(), "12 bytes for 2×2 elements of float32_1 (16 expected)");
    /// ```
    pub fn new(
        format: Format,
        width: u32,
        height: u32,
        data: Vec<u8>,
    ) -> Result<HostSurface, SizeMismatch> {
        let want = u128::from(width) * u128::from(height) * format.bytes() as u128;
        if data.len() as u128 != want {
            return Err(SizeMismatch {
                got: data.len(),
                want,
                unit: "bytes",
                format,
                width,
                height,
            });
        }
        Ok(HostSurface {
            format,
            width,
            height,
            data,
        })
    }

    /// A zero-filled surface.
    pub fn zeroed(format: Format, width: u32, height: u32) -> HostSurface {
        HostSurface {
            format,
            width,
            height,
            data: vec![0; width as usize * height as usize * format.bytes()],
        }
    }

    /// A surface from shader values: exactly `channels` values per element
    /// (1, 2 or 4 for the format), row-major. Integer formats store the
    /// values converted as a program's output would be.
    pub fn from_f32(
        format: Format,
        width: u32,
        height: u32,
        values: &[f32],
    ) -> Result<HostSurface, SizeMismatch> {
        let ch = format.channels();
        let want = u128::from(width) * u128::from(height) * ch as u128;
        if values.len() as u128 != want {
            return Err(SizeMismatch {
                got: values.len(),
                want,
                unit: "values",
                format,
                width,
                height,
            });
        }
        let mut s = HostSurface::zeroed(format, width, height);
        for (e, v) in s
            .data
            .chunks_exact_mut(format.bytes())
            .zip(values.chunks_exact(ch))
        {
            let mut c = [0u32; 4];
            for (k, x) in v.iter().enumerate() {
                c[k] = x.to_bits();
            }
            format.write(e, c, 0xF);
        }
        Ok(s)
    }

    /// A surface of `width × height` elements all equal to `value` in every
    /// channel.
    pub fn filled(format: Format, width: u32, height: u32, value: f32) -> HostSurface {
        let n = width as usize * height as usize * format.channels();
        HostSurface::from_f32(format, width, height, &vec![value; n])
            .expect("the value count follows from the size")
    }

    /// The elements as shader values, channels the format has, row-major.
    pub fn to_f32(&self) -> Vec<f32> {
        let ch = self.format.channels();
        self.data
            .chunks_exact(self.format.bytes())
            .flat_map(|e| self.format.read(e)[..ch].to_vec())
            .map(f32::from_bits)
            .collect()
    }

    /// Bytes the surface takes in device memory (rows padded to the pitch,
    /// rounded up to the allocation granule).
    pub(super) fn device_bytes(format: Format, width: u32, height: u32) -> u64 {
        let fmt = SurfaceFormat::linear(format, width.max(1));
        (u64::from(fmt.pitch) * format.bytes() as u64 * u64::from(height))
            .next_multiple_of(u64::from(crate::mc::BASE_ALIGN))
    }

    /// Checks the surface can exist on the device.
    pub(super) fn check(&self, what: &str) -> Result<(), KernelError> {
        check_size(what, self.width, self.height)?;
        let want = u128::from(self.width) * u128::from(self.height) * self.format.bytes() as u128;
        if self.data.len() as u128 != want {
            let e = SizeMismatch {
                got: self.data.len(),
                want,
                unit: "bytes",
                format: self.format,
                width: self.width,
                height: self.height,
            };
            return Err(KernelError::Job(format!("{what}: {e}")));
        }
        Ok(())
    }
}

/// Checks a surface's size against the format dword's fields.
pub(super) fn check_size(what: &str, width: u32, height: u32) -> Result<(), KernelError> {
    if width == 0 || height == 0 {
        return Err(KernelError::Job(format!(
            "{what} is {width}×{height}: a surface holds at least one element"
        )));
    }
    if width > MAX_PITCH || height > MAX_ROWS {
        return Err(KernelError::Job(format!(
            "{what} is {width}×{height}; surfaces hold at most {MAX_PITCH} elements per row and {MAX_ROWS} rows"
        )));
    }
    Ok(())
}

/// Copies a host surface into new device memory with a padded pitch, on up
/// to `threads` threads.
pub(super) fn place(
    dev: &mut Device,
    s: &HostSurface,
    what: &str,
    threads: usize,
) -> Result<(u32, SurfaceFormat), KernelError> {
    s.check(what)?;
    let (base, fmt) = reserve(dev, s.format, s.width, s.height, true, what)?;
    write_rows(dev, s, base, fmt, threads)?;
    Ok((base, fmt))
}

/// Writes `s`'s rows to a device surface at `base` (rows `fmt.pitch`
/// elements apart), a large one in bands of rows on up to `threads`
/// threads.
pub(super) fn write_rows(
    dev: &mut Device,
    s: &HostSurface,
    base: u32,
    fmt: SurfaceFormat,
    threads: usize,
) -> Result<(), KernelError> {
    let bpe = s.format.bytes();
    let row = fmt.pitch as usize * bpe;
    let line = s.width as usize * bpe;
    let rows = s.height as usize;
    // The surface's bytes in the cached system arena, where `reserve` puts
    // every surface: from its first row to the end of its last.
    let arena = dev.info().base_address_sys_c;
    let span = row * rows.saturating_sub(1) + line;
    let at = base.wrapping_sub(arena) as usize;
    let threads = if s.data.len() >= 1 << 20 {
        threads.clamp(1, 64).min(rows.max(1))
    } else {
        1
    };
    let bytes = dev
        .arena_mut(ArenaKind::SystemCached)
        .get_mut(at..)
        .and_then(|b| b.get_mut(..span));
    let (Some(bytes), true) = (bytes, threads > 1 && line > 0) else {
        for (y, chunk) in s.data.chunks_exact(line.max(1)).enumerate() {
            dev.write(base + (y * row) as u32, chunk)?;
        }
        return Ok(());
    };
    let band = rows.div_ceil(threads).max(1);
    let parts = bytes.chunks_mut(row * band).zip(s.data.chunks(line * band));
    in_bands(parts, threads, |(dst, src)| {
        for (d, s) in dst.chunks_mut(row).zip(src.chunks_exact(line)) {
            d[..line].copy_from_slice(s);
        }
        Ok(())
    })
}

/// Allocates device memory (zero) for a `width × height` surface of
/// `format` with a padded pitch. With `whole` (every element is written
/// before anything reads it), memory with no padding is not zeroed first.
pub(super) fn reserve(
    dev: &mut Device,
    format: Format,
    width: u32,
    height: u32,
    whole: bool,
    what: &str,
) -> Result<(u32, SurfaceFormat), KernelError> {
    check_size(what, width, height)?;
    let fmt = SurfaceFormat::linear(format, width);
    let row = fmt.pitch as usize * format.bytes();
    let bytes = row * height as usize;
    let base = if whole && fmt.pitch == width {
        dev.alloc_written(ArenaKind::SystemCached, bytes)?
    } else {
        dev.alloc(ArenaKind::SystemCached, bytes)?
    };
    Ok((base, fmt))
}

/// Reads a device surface back, tightly packed, on up to `threads` threads.
pub(super) fn fetch(
    dev: &Device,
    base: u32,
    fmt: SurfaceFormat,
    width: u32,
    height: u32,
    threads: usize,
) -> Result<HostSurface, KernelError> {
    let bpe = fmt.format.bytes();
    let row = fmt.pitch as usize * bpe;
    let line = width as usize * bpe;
    let len = line * height as usize;
    // Every byte is copied from the device: no zeroing first (on one thread,
    // before the copy could start).
    let mut data: Vec<u8> = Vec::with_capacity(len);
    let out = &mut data.spare_capacity_mut()[..len];
    // Large surfaces are copied by several threads, a band of rows each
    // (the copy and the fresh pages' faults then scale with the run).
    let threads = if len >= 1 << 20 {
        threads.clamp(1, 64).min(height.max(1) as usize)
    } else {
        1
    };
    let band = (height as usize).div_ceil(threads).max(1);
    let copy = |first: usize, part: &mut [MaybeUninit<u8>]| -> Result<(), KernelError> {
        for (y, chunk) in part.chunks_mut(line).enumerate() {
            let addr = base + ((first + y) * row) as u32;
            dev.mc()
                .mem
                .read_uninit(u64::from(addr), chunk)
                .map_err(DeviceError::from)?;
        }
        Ok(())
    };
    in_bands(
        out.chunks_mut((line * band).max(1)).enumerate(),
        threads,
        |(k, part)| copy(k * band, part),
    )?;
    // SAFETY: every band's rows were read in full (an error returned above
    // before this), so the first `len` bytes are initialised.
    unsafe { data.set_len(len) };
    Ok(HostSurface {
        format: fmt.format,
        width,
        height,
        data,
    })
}

/// Runs `f` on every band of `bands`, on the process's worker threads for
/// `threads` threads (of N threads used, at most one per band, the calling
/// thread takes the first band and every N-th after it, each helper thread
/// its own share of the rest; no thread is started for it), or one after
/// another on one thread; the first error any band met is returned.
pub(super) fn in_bands<T: Send>(
    bands: impl Iterator<Item = T>,
    threads: usize,
    f: impl Fn(T) -> Result<(), KernelError> + Sync,
) -> Result<(), KernelError> {
    let failed = std::sync::Mutex::new(None);
    let run = |band: T| {
        if let Err(e) = f(band) {
            failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        }
    };
    match crate::pe::pool(threads) {
        Some(pool) => {
            let bands: Vec<_> = bands.map(|b| std::sync::Mutex::new(Some(b))).collect();
            let count = threads.min(bands.len()).max(1);
            crate::pe::on_threads(&pool, count, &|k| {
                for band in bands.iter().skip(k).step_by(count) {
                    if let Some(b) = band.lock().unwrap_or_else(|p| p.into_inner()).take() {
                        run(b);
                    }
                }
            });
        }
        None => bands.for_each(run),
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
