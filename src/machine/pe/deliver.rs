//! Delivering a run's results (README, "Choices where the record is
//! silent"): the CO test at the DPP (value: the program's depth output, else
//! v), then each output's channels under the output mask, converted to the
//! surface's format.
//!
//! Results go from a finished group's lane state straight to memory; no
//! per-pixel allocation. Two ways:
//!
//! * **direct** — the worker that ran a row writes its pixels to memory at
//!   once, through [`Mc::write_element_shared`]. [`direct_allowed`] admits
//!   it only where no two workers can touch the same byte and nothing the
//!   run reads is written: coherent caches, no uncached (UMRT) mode, no CO
//!   write-back at the DPP, no hazard checking, output surfaces disjoint
//!   from each other, from the inputs the program reads and from the
//!   conditional buffer. Rows then write disjoint elements, so memory is the
//!   same for any thread count and any order.
//! * **ordered** — everything else: a row's pixels are kept as compact
//!   [`Px`] records and the PE delivers rows in row order on one thread.

use super::Pe;
use crate::co::{Co, CondLoc, CondTest};
use crate::mc::{CacheId, CacheMode, Format, Mc, Surface};
use crate::runtime::{GroupOut, Sink};
use ctm_jit::ir::{FetchKind, Op, Program};
use ctm_jit::state::{Lanes, Mask};

/// One finished pixel's results.
#[derive(Clone, Copy, Debug)]
pub(super) struct Px {
    i: u32,
    j: u32,
    values: [[u32; 4]; 4],
    /// Channels to write per output (already under the output mask).
    masks: [u8; 4],
    depth: Option<u32>,
}

/// What a run's results go to; fixed for the run.
#[derive(Clone, Copy)]
pub(super) struct Targets<'a> {
    pub outputs: &'a [Option<Surface>; 4],
    pub out_mask: u8,
    pub co: Co,
    pub v: u32,
}

impl Targets<'_> {
    /// Whether the CO lets every pixel's outputs through: it tests at the
    /// PE (or not at all), or its test at the DPP always passes.
    pub(super) fn co_passes_all(&self) -> bool {
        self.co.loc != CondLoc::Dpp || self.co.test == CondTest::Always
    }

    fn px(&self, lanes: &Lanes, lane: usize, (i, j): (u32, u32)) -> Px {
        let bit = 1 << lane;
        let mut px = Px {
            i,
            j,
            values: [[0; 4]; 4],
            masks: [0; 4],
            depth: (lanes.depth_written & bit != 0).then(|| lanes.depth[lane]),
        };
        for t in 0..4 {
            for c in 0..4 {
                if lanes.out_written[t][c] & bit != 0 {
                    px.masks[t] |= 1 << c;
                    px.values[t][c] = lanes.out[t][c][lane];
                }
            }
            px.masks[t] &= self.out_mask;
        }
        px
    }

    /// The outputs `px` writes, each with its surface (`None`: the output
    /// has no format; the write is counted and dropped).
    fn writes<'p>(&'p self, px: &'p Px) -> impl Iterator<Item = (usize, Option<&'p Surface>)> {
        (0..4)
            .filter(|&k| px.masks[k] != 0)
            .map(|k| (k, self.outputs[k].as_ref()))
    }

    /// The value the CO tests for `px`.
    fn cond_value(&self, px: &Px) -> u32 {
        px.depth.unwrap_or(self.v)
    }
}

/// Whether a run may deliver directly (see the module docs); never while
/// the hazard checker watches (`checked`).
pub(super) fn direct_allowed(
    pe: &Pe,
    mc: &Mc,
    (inputs, outputs): (&[u32], &[u32]),
    uncached: bool,
    checked: bool,
) -> bool {
    if uncached || !uncached_strips(pe, mc, checked) {
        return false;
    }
    let outs = || {
        outputs
            .iter()
            .filter_map(|&k| pe.outputs[k as usize & 3].as_ref().map(extent))
    };
    let buffer = pe
        .co
        .needs_buffer(CondLoc::Dpp)
        .then_some(())
        .and(pe.co.buffer.as_ref());
    let reads = || {
        inputs
            .iter()
            .filter_map(|&k| pe.inputs[k as usize & 15].as_ref().map(extent))
            .chain(buffer.map(extent))
    };
    disjoint(outs()) && outs().all(|o| reads().all(|r| !overlap(o, r)))
}

/// The bytes a surface spans, `[start, end)`.
fn extent(s: &Surface) -> (u64, u64) {
    (u64::from(s.base), u64::from(s.base) + s.span())
}

/// Whether two extents share a byte.
fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether no two of `extents` share a byte.
fn disjoint(extents: impl Iterator<Item = (u64, u64)> + Clone) -> bool {
    extents
        .clone()
        .enumerate()
        .all(|(k, a)| extents.clone().skip(k + 1).all(|b| !overlap(a, b)))
}

/// Whether an uncached run's rows may go through compiled strips (which
/// write no pixels and log their uncached writes in row order): coherent
/// caches, no CO write-back at the DPP, no hazard checking — what
/// [`direct_allowed`] asks first.
pub(super) fn uncached_strips(pe: &Pe, mc: &Mc, checked: bool) -> bool {
    !checked && mc.mode() == CacheMode::Coherent && !pe.co.writes_back(CondLoc::Dpp)
}

/// Output 0 of an uncached run whose rows' writes may be made while later
/// rows run (`overlap.rs`), or `None`. Besides what the run's strips ask
/// ([`uncached_strips`]), nothing the program reads may see output 0: no
/// uncached read, and no input it looks up — the program's own lookups,
/// whatever its information declares — overlapping it. A row then reads
/// the same memory whether the writes of the rows before it are made yet
/// or not; rows that keep pixels (a CO test at the DPP) are still
/// delivered in order on one thread.
pub(super) fn deliver_while_running(
    pe: &Pe,
    mc: &Mc,
    program: &Program,
    checked: bool,
) -> Option<Surface> {
    let out0 = pe.outputs[0]?;
    if !uncached_strips(pe, mc, checked) {
        return None;
    }
    let span = |s: &Surface| (u64::from(s.base), u64::from(s.base) + s.span());
    let (lo, hi) = span(&out0);
    let nodes = program.clauses.iter().flat_map(|c| &c.nodes);
    for n in nodes {
        if let Op::Fetch { kind, input, .. } = n.op {
            if kind == FetchKind::Uncached {
                return None;
            }
            if let Some(s) = &pe.inputs[usize::from(input & 15)] {
                let (a, b) = span(s);
                if a < hi && lo < b {
                    return None;
                }
            }
        }
    }
    Some(out0)
}

/// A worker's sink: writes pixels directly, or keeps them for ordered
/// delivery.
pub(super) struct RowSink<'a> {
    pub targets: Targets<'a>,
    pub mc: &'a Mc,
    pub direct: bool,
    /// Ordered delivery: the pixels of the current row.
    pub pending: Vec<Px>,
    /// Pixels whose outputs the CO discarded (direct delivery).
    pub discarded: u64,
}

impl RowSink<'_> {
    /// Direct delivery of a whole group when every pixel passes the CO
    /// (no test at the DPP): each output is written a pixel row at a time,
    /// runs of neighbouring elements with all channels written in one copy.
    /// Returns false (nothing written) where that shortcut does not apply.
    fn group_spans(&mut self, g: &GroupOut<'_>) -> bool {
        let t = &self.targets;
        if !self.direct || !t.co_passes_all() {
            return false;
        }
        let quads = g.lanes.lane_count() / 4;
        // Every lane present, done and inside the domain, the quads side by
        // side in one quad row: the group is a strip of 2 × 2·quads pixels
        // from (i0, j0).
        let present = ctm_jit::state::lanes_mask(4 * quads);
        let (i0, j0) = g.pixels[0];
        let strip = (g.done == present
            && (0..quads).all(|q| g.pixels[4 * q] == (i0 + 2 * q as u32, j0)))
        .then_some((i0, j0));
        // Per channel, the lanes the output mask lets write.
        let on = [0, 1, 2, 3].map(|c| {
            if t.out_mask & (1 << c) != 0 {
                g.done
            } else {
                0
            }
        });
        for (k, s) in t.outputs.iter().enumerate() {
            let written = &g.lanes.out_written[k];
            if (written[0] | written[1] | written[2] | written[3]) & g.done == 0 {
                continue;
            }
            // Per channel: the lanes that write it.
            let chans = [0, 1, 2, 3].map(|c| written[c] & on[c]);
            let any = chans[0] | chans[1] | chans[2] | chans[3];
            if any == 0 {
                continue;
            }
            let Some(s) = s else {
                for _ in 0..any.count_ones() {
                    self.mc.note_unconfigured_output();
                }
                continue;
            };
            let format = s.fmt.format;
            let n = format.bytes();
            // Lanes that write every channel of the format.
            let full = (0..format.channels()).fold(any, |m, c| m & chans[c]);
            let out = &g.lanes.out[k];
            if let Some((i0, j0)) = strip
                && full == present
            {
                // Every pixel of the strip: two rows of 2·quads elements,
                // encoded where they go when the row lies in one arena.
                for parity in 0..2 {
                    let j = j0 + parity as u32;
                    // SAFETY: as in `write_span`; the slice is dropped
                    // before anything else touches these elements.
                    if let Some(dst) = unsafe { self.mc.span_shared(s, i0, j, 2 * quads) } {
                        encode_row(format, out, parity, dst);
                        continue;
                    }
                    let mut buf = [0u8; 16 * ctm_jit::state::GROUP_LANES / 2];
                    encode_row(format, out, parity, &mut buf[..2 * quads * n]);
                    self.write_span(s, i0, j, &buf[..2 * quads * n], 2 * quads);
                }
                continue;
            }
            self.runs(s, g, k, Written { chans, any, full });
        }
        true
    }

    /// Writes output `k` of the group's lanes that `w` lets write, one
    /// pixel row at a time: runs of neighbouring lanes that write every
    /// channel in one copy, the others element by element.
    fn runs(&self, s: &Surface, g: &GroupOut<'_>, k: usize, w: Written) {
        let Written { chans, any, full } = w;
        let format = s.fmt.format;
        let n = format.bytes();
        let out = &g.lanes.out[k];
        let quads = g.lanes.lane_count() / 4;
        for parity in 0..2 {
            let mut buf = [0u8; 16 * ctm_jit::state::GROUP_LANES / 2];
            // (i, j) of the first element of the run being gathered, and
            // its length.
            let mut run = (0u32, 0u32, 0usize);
            for q in 0..quads {
                for lane in [4 * q + 2 * parity, 4 * q + 2 * parity + 1] {
                    let bit = 1 << lane;
                    if any & bit == 0 {
                        continue;
                    }
                    let (i, j) = g.pixels[lane];
                    let value = [out[0][lane], out[1][lane], out[2][lane], out[3][lane]];
                    if full & bit == 0 {
                        let mask = (0..4).fold(0, |m, c| m | u8::from(chans[c] & bit != 0) << c);
                        // SAFETY: as in `write_span`.
                        unsafe { self.mc.write_element_shared(s, i, j, value, mask) };
                        continue;
                    }
                    let (i0, j0, e) = run;
                    if e > 0 && (j != j0 || i != i0 + e as u32) {
                        self.write_span(s, i0, j0, &buf[..e * n], e);
                        run.2 = 0;
                    }
                    if run.2 == 0 {
                        run = (i, j, 0);
                    }
                    format.write(&mut buf[run.2 * n..(run.2 + 1) * n], value, 0xF);
                    run.2 += 1;
                }
            }
            if run.2 > 0 {
                self.write_span(s, run.0, run.1, &buf[..run.2 * n], run.2);
            }
        }
    }

    /// Writes `count` encoded elements starting at (i, j) of `s`.
    fn write_span(&self, s: &Surface, i: u32, j: u32, bytes: &[u8], count: usize) {
        // SAFETY: `direct_allowed` admitted this run: outputs are disjoint
        // from each other and from everything the run reads, and each pixel
        // is delivered by the one worker that ran it, so no other thread
        // touches these elements.
        let written = unsafe { self.mc.write_encoded_shared(s, i, j, bytes, count) };
        debug_assert!(written, "outputs were checked to lie inside an arena");
    }
}

impl Sink for RowSink<'_> {
    /// Ordered delivery keeps bits for later; direct delivery converts only
    /// where an output has a unorm format or the CO tests at the DPP.
    fn bits_only(&self) -> bool {
        !self.direct
            || ((self.targets.co.loc != CondLoc::Dpp
                || matches!(self.targets.co.test, CondTest::Always | CondTest::Never))
                && self.targets.outputs.iter().flatten().all(|s| {
                    matches!(
                        s.fmt.format,
                        Format::Float32_1 | Format::Float32_2 | Format::Float32_4
                    )
                }))
    }

    fn group(&mut self, g: &GroupOut<'_>) {
        if self.group_spans(g) {
            return;
        }
        // Where the CO neither rejects nor writes back at the DPP, a pixel
        // that writes no output has nothing to deliver (an uncached
        // program's pixels, for one).
        let t = &self.targets;
        let tested = !t.co_passes_all() || t.co.writes_back(CondLoc::Dpp);
        let writes = g.lanes.out_written.iter().flatten().fold(0, |m, w| m | w);
        if !tested && (writes & g.done == 0 || t.out_mask & 0xF == 0) {
            return;
        }
        for lane in g.lanes_done() {
            let px = self.targets.px(g.lanes, lane, g.pixels[lane]);
            if !self.direct {
                if tested || px.masks != [0; 4] {
                    self.pending.push(px);
                }
                continue;
            }
            let t = &self.targets;
            if !t
                .co
                .passes(self.mc, CondLoc::Dpp, px.i, px.j, t.cond_value(&px))
            {
                self.discarded += 1;
                continue;
            }
            for (k, s) in t.writes(&px) {
                let Some(s) = s else {
                    self.mc.note_unconfigured_output();
                    continue;
                };
                // SAFETY: `direct_allowed` admitted this run: outputs are
                // disjoint from each other and from everything the run
                // reads, and each pixel is delivered by the one worker that
                // ran it, so no other thread touches this element.
                let written = unsafe {
                    self.mc
                        .write_element_shared(s, px.i, px.j, px.values[k], px.masks[k])
                };
                debug_assert!(written, "outputs were checked to lie inside an arena");
            }
        }
    }
}

/// One row (`parity` 0 top, 1 bottom) of a strip of quads, every lane's
/// four channels `out[c][lane]`, encoded into `dst` element after element
/// (as many as `dst` holds).
fn encode_row(
    format: Format,
    out: &[[u32; ctm_jit::state::GROUP_LANES]; 4],
    parity: usize,
    dst: &mut [u8],
) {
    let lane = |e: usize| 4 * (e / 2) + 2 * parity + e % 2;
    if format == Format::Float32_4 {
        for (e, d) in dst.chunks_exact_mut(16).enumerate() {
            let l = lane(e);
            for (c, b) in d.chunks_exact_mut(4).enumerate() {
                b.copy_from_slice(&out[c][l].to_le_bytes());
            }
        }
        return;
    }
    let n = format.bytes();
    for (e, d) in dst.chunks_exact_mut(n).enumerate() {
        let l = lane(e);
        format.write(d, [out[0][l], out[1][l], out[2][l], out[3][l]], 0xF);
    }
}

/// Delivers a row's pixels in order on the PE's thread; returns how many
/// the CO discarded.
pub(super) fn deliver_ordered(targets: &Targets<'_>, mc: &mut Mc, pending: &[Px]) -> u64 {
    let mut discarded = 0;
    let mut spans = Spans::allowed(targets, mc).then(Spans::default);
    for px in pending {
        if !targets
            .co
            .test(mc, CondLoc::Dpp, px.i, px.j, targets.cond_value(px))
        {
            discarded += 1;
            continue;
        }
        for (k, s) in targets.writes(px) {
            match (s, &mut spans) {
                (Some(s), Some(spans)) => spans.write(mc, k, s, px),
                (Some(s), None) => {
                    mc.write_element(CacheId::Output, s, px.i, px.j, px.values[k], px.masks[k])
                }
                (None, _) => mc.note_unconfigured_output(),
            }
        }
    }
    if let Some(spans) = &mut spans {
        spans.flush_all(mc);
    }
    discarded
}

/// Bytes a span of neighbouring elements holds before it is written (a
/// strict cache's line).
const SPAN_BYTES: usize = 256;

/// Whole elements of each output, gathered into runs of neighbouring
/// addresses and written through a strict output cache a run at a time:
/// one lock and one lookup per line instead of per element (`tiny` at 64²
/// with strict caches spent 44% of its time writing elements one by one).
/// A strict cache keeps every line it touched until the flush and writes
/// back only the bytes written, so the order of writes to different bytes
/// leaves the same memory; the spans keep the order of writes to the same
/// bytes by being used only where no two outputs share a byte and nothing
/// else in the row's delivery reads or writes through the output cache
/// (the CO at the DPP neither tests nor writes back). Element (x, y) of
/// an output is written once a run, so a partial element written at once
/// (it reads its element first) reads no byte a span holds.
struct Spans {
    /// Per output, per row parity (a group's pixels alternate between two
    /// rows, two at a time): the address of the span's first byte and the
    /// bytes gathered.
    open: [[Option<(u64, usize)>; 2]; 4],
    bytes: [u8; 8 * SPAN_BYTES],
}

impl Default for Spans {
    fn default() -> Spans {
        Spans {
            open: [[None; 2]; 4],
            bytes: [0; 8 * SPAN_BYTES],
        }
    }
}

impl Spans {
    /// Whether ordered delivery may gather spans for `targets`.
    fn allowed(targets: &Targets<'_>, mc: &Mc) -> bool {
        if mc.mode() != CacheMode::Strict
            || !targets.co_passes_all()
            || targets.co.writes_back(CondLoc::Dpp)
        {
            return false;
        }
        disjoint(targets.outputs.iter().flatten().map(extent))
    }

    /// Writes output `k`'s channels of `px` to its surface `s`: gathered
    /// where they are a whole element inside the surface, else at once.
    fn write(&mut self, mc: &mut Mc, k: usize, s: &Surface, px: &Px) {
        let format = s.fmt.format;
        let n = format.bytes();
        let whole = px.masks[k] & format.channel_mask() == format.channel_mask();
        let Some(at) = s.address(px.i, px.j).filter(|_| whole) else {
            mc.write_element(CacheId::Output, s, px.i, px.j, px.values[k], px.masks[k]);
            return;
        };
        let parity = (px.j & 1) as usize;
        let slot = &mut self.open[k][parity];
        let (start, len) = match *slot {
            Some((start, len)) if start + len as u64 == at && len + n <= SPAN_BYTES => (start, len),
            _ => {
                self.flush(mc, k, parity);
                (at, 0)
            }
        };
        let from = (2 * k + parity) * SPAN_BYTES + len;
        format.write(&mut self.bytes[from..from + n], px.values[k], 0xF);
        self.open[k][parity] = Some((start, len + n));
    }

    /// Writes output `k`'s open span of row parity `parity`, if any.
    fn flush(&mut self, mc: &mut Mc, k: usize, parity: usize) {
        if let Some((start, len)) = self.open[k][parity].take() {
            let from = (2 * k + parity) * SPAN_BYTES;
            mc.write(CacheId::Output, start, &self.bytes[from..from + len]);
        }
    }

    fn flush_all(&mut self, mc: &mut Mc) {
        for k in 0..4 {
            for parity in 0..2 {
                self.flush(mc, k, parity);
            }
        }
    }
}

/// Which lanes write an output: per channel, any channel, every channel of
/// its format.
#[derive(Clone, Copy)]
struct Written {
    chans: [Mask; 4],
    any: Mask,
    full: Mask,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::co::CondTest;
    use crate::mc::{Memory, SurfaceFormat, TEST_ARENA};

    fn mc() -> Mc {
        let arena = TEST_ARENA;
        let mut mc = Mc::over_test_arena(CacheMode::Strict);
        // Memory the cache's lines are filled from, so that a byte no
        // write reached is told apart.
        let fill: Vec<u8> = (0..1 << 20).map(|k: u32| (k % 253) as u8).collect();
        mc.mem.write(u64::from(arena.base), &fill).unwrap();
        mc
    }

    fn surface(base: u32, pitch: u32, tiled: bool, format: Format) -> Surface {
        Surface {
            base,
            fmt: SurfaceFormat {
                pitch,
                tiled,
                gather: false,
                format,
            },
            height: 8,
        }
    }

    /// A row of groups' pixels in the order groups deliver them (quad by
    /// quad, two rows), some writing part of an element, some outside
    /// the surface, every value different.
    fn pixels(width: u32) -> Vec<Px> {
        let mut v = Vec::new();
        for q in 0..width.div_ceil(2) {
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (i, j) = (2 * q + dx, 2 + dy);
                let k = v.len() as u32;
                let part = if k % 11 == 5 { 0b0101 } else { 0xF };
                v.push(Px {
                    i,
                    j,
                    values: std::array::from_fn(|t| {
                        std::array::from_fn(|c| 0x3F80_0000 ^ (k << 8) ^ (t as u32) << 4 ^ c as u32)
                    }),
                    masks: [part, 0xF, 0b0011, u8::from(k % 7 == 3)],
                    depth: None,
                });
            }
        }
        v
    }

    /// Whole elements gathered into spans leave memory, and the counts of
    /// writes outside their surface, as writing each element on its own
    /// does: several formats and outputs, tiled and linear surfaces,
    /// partial elements and elements outside the surface among them.
    #[test]
    fn spans_of_whole_elements_leave_what_elements_one_by_one_leave() {
        for (format, tiled) in [
            (Format::Float32_4, false),
            (Format::Float32_1, true),
            (Format::Uint8_4, false),
            (Format::Uint16_1, true),
        ] {
            let outputs = [
                Some(surface(0x1000_0800, 64, tiled, format)),
                Some(surface(0x1004_0000, 32, false, Format::Float32_4)),
                Some(surface(0x1008_0000, 36, tiled, Format::Float32_2)),
                None,
            ];
            let targets = Targets {
                outputs: &outputs,
                out_mask: 0xF,
                co: Co::default(),
                v: 0,
            };
            // Wider than the second and third surfaces: their last pixels
            // fall outside.
            let pending = pixels(40);
            let (mut spans, mut one_by_one) = (mc(), mc());
            assert!(Spans::allowed(&targets, &spans));
            assert_eq!(deliver_ordered(&targets, &mut spans, &pending), 0);
            for px in &pending {
                for (k, s) in targets.writes(px) {
                    let Some(s) = s else {
                        one_by_one.note_unconfigured_output();
                        continue;
                    };
                    one_by_one.write_element(
                        CacheId::Output,
                        s,
                        px.i,
                        px.j,
                        px.values[k],
                        px.masks[k],
                    );
                }
            }
            for mc in [&mut spans, &mut one_by_one] {
                mc.flush(CacheId::Output);
            }
            let read = |mc: &Mc| {
                let mut v = vec![0; 1 << 20];
                mc.mem.read(0x1000_0000, &mut v).unwrap();
                v
            };
            assert!(read(&spans) == read(&one_by_one), "{format}, tiled {tiled}");
            assert_eq!(
                spans.diagnostics.counts(),
                one_by_one.diagnostics.counts(),
                "{format}"
            );
            let counts = spans.diagnostics.counts();
            assert!(counts.out_of_bounds_writes > 0 && counts.unconfigured_outputs > 0);
        }
    }

    /// Spans are gathered only with strict caches, outputs that share no
    /// byte, and a CO that neither tests nor writes back at the DPP.
    #[test]
    fn spans_only_where_no_other_write_can_meet_them() {
        let a = surface(0x1000_0800, 64, false, Format::Float32_4);
        let outputs = [
            Some(a),
            Some(surface(0x1004_0000, 64, false, Format::Float32_4)),
            None,
            None,
        ];
        let mut targets = Targets {
            outputs: &outputs,
            out_mask: 0xF,
            co: Co::default(),
            v: 0,
        };
        let strict = mc();
        assert!(Spans::allowed(&targets, &strict));
        let coherent = Mc::new(Memory::new(vec![]).unwrap(), CacheMode::Coherent);
        assert!(!Spans::allowed(&targets, &coherent));
        targets.co.test = CondTest::Less;
        assert!(!Spans::allowed(&targets, &strict));
        targets.co.test = CondTest::Always;
        targets.co.write = true;
        targets.co.buffer = Some(surface(0x1008_0000, 64, false, Format::Float32_1));
        assert!(!Spans::allowed(&targets, &strict));
        // The second output starts inside the first.
        let overlapping = [
            Some(a),
            Some(surface(0x1000_0800 + 1024, 64, false, Format::Float32_4)),
            None,
            None,
        ];
        let targets = Targets {
            outputs: &overlapping,
            co: Co::default(),
            ..targets
        };
        assert!(!Spans::allowed(&targets, &strict));
    }
}
