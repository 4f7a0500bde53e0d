//! What a run reads and where its results go: the texture-unit interface
//! the DPP's lookups and uncached writes talk to (docs/isa.md §5), the
//! domain, and the sinks that receive finished groups.

use ctm_jit::branch::each;
use ctm_jit::ir::FetchKind;
use ctm_jit::state::{GROUP_LANES, Lanes, Mask, TexTable, UmrtLog};

/// A fetch request from a group (`docs/isa.md` §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchRequest {
    /// Lookup or uncached read.
    pub kind: FetchKind,
    /// Input 0–15.
    pub input: u8,
    /// Coordinates in texel units (else scaled by the input's size).
    pub unscaled: bool,
    /// Which of the fetching lanes (same bits as the fetch's mask) are
    /// helpers (`Lanes::helper`): their lookups read like any other but are
    /// not counted as reads outside a surface (docs/machine.md §5.5).
    pub helpers: Mask,
}

/// A fault raised by the texture unit; the run stops with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TexFault(pub String);

/// What the DPP's texture instructions and uncached writes talk to (the
/// memory controller implements it).
pub trait TextureUnit {
    /// Fetches for every lane whose bit is set in `mask`: `coords[lane]` holds
    /// S, T, R, Q as f32 patterns (any NaN payload is insignificant); the four
    /// returned channels go to `out[lane]`. `pixels[lane]` is the lane's
    /// (i, j).
    fn fetch(
        &mut self,
        req: FetchRequest,
        coords: &[[u32; 4]],
        mask: Mask,
        pixels: &[(u32, u32)],
        out: &mut [[u32; 4]],
    ) -> Result<(), TexFault>;

    /// One uncached (UMRT) write of `value` at (x, y), given as f32
    /// patterns; like lookup coordinates, x and y are read with denormals
    /// as zeros, and any NaN payload is insignificant (they may come
    /// uncanonicalised: `Program::drop_dead_writes`).
    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), TexFault>;

    /// The inputs compiled code may read from memory itself while this
    /// unit serves a run, bypassing [`TextureUnit::fetch`] for lookups
    /// (see [`TexDesc`](ctm_jit::state::TexDesc)): the pages must stay
    /// valid and unwritten for as long as the unit is borrowed. Default:
    /// none.
    fn direct(&self) -> &TexTable {
        &TexTable::NONE
    }

    /// Counts `n` lookups outside their surface that compiled code made
    /// through [`TextureUnit::direct`] (a unit that offers direct inputs
    /// counts them as [`TextureUnit::fetch`] would).
    fn count_out_of_bounds(&mut self, n: u64) {
        let _ = n;
    }

    /// Room for `n` uncached writes that compiled code appends itself
    /// instead of calling [`TextureUnit::uncached_write`] (see
    /// [`UmrtLog`]): each entry must be what `uncached_write` would have
    /// made of that lane's write, and the unit must take the entries over
    /// in [`TextureUnit::uncached_logged`]. Default: [`UmrtLog::NONE`],
    /// every write through `uncached_write`.
    fn uncached_log(&mut self, n: usize) -> UmrtLog {
        let _ = n;
        UmrtLog::NONE
    }

    /// Takes over the `n` entries compiled code appended to the log
    /// [`TextureUnit::uncached_log`] last handed out, as if they had been
    /// written through [`TextureUnit::uncached_write`] in that order.
    ///
    /// # Safety
    /// The first `n` entries from the log's start were written, and `n` is
    /// at most the room that was asked for.
    unsafe fn uncached_logged(&mut self, n: usize) {
        let _ = n;
    }
}

/// A texture unit with nothing bound: every fetch is a fault.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTextures;

impl TextureUnit for NoTextures {
    fn fetch(
        &mut self,
        req: FetchRequest,
        _: &[[u32; 4]],
        _: Mask,
        _: &[(u32, u32)],
        _: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        Err(TexFault(format!("input {} is not bound", req.input)))
    }

    fn uncached_write(&mut self, _: u32, _: u32, _: u32) -> Result<(), TexFault> {
        Err(TexFault("no memory bound for uncached writes".into()))
    }
}

/// The rectangle of (i, j) pairs a run covers, inclusive (`docs/machine.md`
/// `set_domain`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Domain {
    /// First column.
    pub i0: u32,
    /// First row.
    pub j0: u32,
    /// Last column (inclusive).
    pub i1: u32,
    /// Last row (inclusive).
    pub j1: u32,
}

impl Domain {
    /// The domain 0..w × 0..h.
    pub fn new(w: u32, h: u32) -> Domain {
        Domain {
            i0: 0,
            j0: 0,
            i1: w.wrapping_sub(1),
            j1: h.wrapping_sub(1),
        }
    }

    /// No pairs at all.
    pub fn is_empty(&self) -> bool {
        self.i0 > self.i1 || self.j0 > self.j1
    }

    /// Whether (i, j) is inside.
    pub fn contains(&self, i: u32, j: u32) -> bool {
        (self.i0..=self.i1).contains(&i) && (self.j0..=self.j1).contains(&j)
    }
}

/// What one pixel produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PixelOut {
    /// Render targets A–D, channel by channel; `None` = never written.
    pub targets: [[Option<u32>; 4]; 4],
    /// The conditional value the program wrote, if it did.
    pub depth: Option<u32>,
}

/// The end of one group: its lane state and which lanes finished.
pub struct GroupOut<'a> {
    /// The group's state after its last clause.
    pub lanes: &'a Lanes,
    /// (i, j) of every lane.
    pub pixels: &'a [(u32, u32); GROUP_LANES],
    /// Lanes of the domain that ended normally (not killed, not helpers).
    pub done: Mask,
}

impl GroupOut<'_> {
    /// The lanes of [`GroupOut::done`], in lane order.
    pub fn lanes_done(&self) -> impl Iterator<Item = usize> + use<> {
        each(self.done)
    }

    /// What lane `lane` produced.
    pub fn pixel(&self, lane: usize) -> PixelOut {
        let bit = 1 << lane;
        let mut out = PixelOut::default();
        for (t, target) in out.targets.iter_mut().enumerate() {
            for (c, slot) in target.iter_mut().enumerate() {
                if self.lanes.out_written[t][c] & bit != 0 {
                    *slot = Some(self.lanes.out[t][c][lane]);
                }
            }
        }
        if self.lanes.depth_written & bit != 0 {
            out.depth = Some(self.lanes.depth[lane]);
        }
        out
    }
}

/// Receives the finished pixels of every group. A closure
/// `FnMut(i, j, &PixelOut)` is a sink that sees them one by one.
pub trait Sink {
    /// A group finished.
    fn group(&mut self, g: &GroupOut<'_>);

    /// Whether [`Sink::group`] only moves bits (no floating-point
    /// arithmetic or comparison), so that it may run while compiled code's
    /// float mode (MXCSR.DAZ) is set. Default: no.
    fn bits_only(&self) -> bool {
        false
    }
}

impl<F: FnMut(u32, u32, &PixelOut)> Sink for F {
    fn group(&mut self, g: &GroupOut<'_>) {
        for lane in g.lanes_done() {
            let (i, j) = g.pixels[lane];
            self(i, j, &g.pixel(lane))
        }
    }
}
