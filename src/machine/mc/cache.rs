//! The MC's caches (`docs/machine.md` §5.6): in [`CacheMode::Strict`],
//! 256-byte lines that reads fill and keep until the matching invalidate,
//! and that hold writes (the bytes written marked dirty) until the
//! matching flush, which writes those bytes alone.

use super::memory::Memory;
use super::view::AddrHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// How the caches behave (§5.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// Reads and writes go straight to memory.
    #[default]
    Coherent,
    /// Writes wait for a flush, reads keep what they saw until an invalidate.
    Strict,
}

/// The MC's caches (§5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheId {
    /// Program instructions.
    Inst,
    /// Float constants.
    ConstF,
    /// Integer constants.
    ConstI,
    /// Boolean constants.
    ConstB,
    /// Inputs.
    Input,
    /// The output write cache shared by outputs 0–3.
    Output,
    /// The conditional output buffer.
    Cond,
}

pub(super) const CACHES: usize = 7;
/// Bytes a strict cache's line holds.
pub(super) const LINE: usize = 256;

#[derive(Clone, Debug)]
struct Line {
    data: [u8; LINE],
    dirty: [u64; LINE / 64],
}

impl Line {
    fn is_dirty(&self) -> bool {
        self.dirty.iter().any(|&d| d != 0)
    }
}

/// A cache's lines by tag (address / [`LINE`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Cache {
    lines: HashMap<u64, Line, BuildHasherDefault<AddrHasher>>,
}

impl Cache {
    fn line(&mut self, mem: &Memory, tag: u64) -> &mut Line {
        self.lines.entry(tag).or_insert_with(|| {
            let mut data = [0; LINE];
            // Lines of unmapped memory read as zero (accesses are checked
            // before they reach the cache).
            let _ = mem.read(tag * LINE as u64, &mut data);
            Line {
                data,
                dirty: [0; LINE / 64],
            }
        })
    }

    /// Calls `each` with each line `[addr, addr + len)` touches (filled
    /// from `mem` where missing), the offset in the line and in the range,
    /// and the bytes of the range in the line.
    fn lines_of(
        &mut self,
        mem: &Memory,
        addr: u64,
        len: usize,
        mut each: impl FnMut(&mut Line, usize, usize, usize),
    ) {
        let mut done = 0;
        while done < len {
            let a = addr + done as u64;
            let off = (a % LINE as u64) as usize;
            let n = (LINE - off).min(len - done);
            each(self.line(mem, a / LINE as u64), off, done, n);
            done += n;
        }
    }

    pub(super) fn read(&mut self, mem: &Memory, addr: u64, buf: &mut [u8]) {
        self.lines_of(mem, addr, buf.len(), |line, off, at, n| {
            buf[at..at + n].copy_from_slice(&line.data[off..off + n]);
        });
    }

    pub(super) fn write(&mut self, mem: &Memory, addr: u64, data: &[u8]) {
        self.lines_of(mem, addr, data.len(), |line, off, at, n| {
            line.data[off..off + n].copy_from_slice(&data[at..at + n]);
            mark_dirty(&mut line.dirty, off, off + n);
        });
    }

    /// Whether every line of `[addr, addr + len)` is here.
    pub(super) fn holds(&self, addr: u64, len: u64) -> bool {
        (addr / LINE as u64..(addr + len).div_ceil(LINE as u64))
            .all(|tag| self.lines.contains_key(&tag))
    }

    /// Copies the bytes `[addr, addr + out.len())` as this cache holds
    /// them into `out`, if every line they touch is here: reading them
    /// would return these bytes and fill no line. False (and `out` partly
    /// written) where a line is missing.
    pub(super) fn copy_into(&self, addr: u64, out: &mut [u8]) -> bool {
        let len = out.len() as u64;
        let (first, last) = (addr / LINE as u64, (addr + len).div_ceil(LINE as u64));
        for tag in first..last {
            let Some(line) = self.lines.get(&tag) else {
                return false;
            };
            let start = tag * LINE as u64;
            let from = addr.max(start) - start;
            let to = (addr + len).min(start + LINE as u64) - start;
            let at = (start + from - addr) as usize;
            out[at..at + (to - from) as usize]
                .copy_from_slice(&line.data[from as usize..to as usize]);
        }
        true
    }

    pub(super) fn flush(&mut self, mem: &mut Memory) {
        for (&tag, line) in &mut self.lines {
            dirty_runs(&line.dirty, |from, to| {
                let _ = mem.write(tag * LINE as u64 + from as u64, &line.data[from..to]);
            });
            line.dirty = [0; LINE / 64];
        }
    }

    /// Drops clean lines; lines holding unflushed writes stay.
    pub(super) fn invalidate(&mut self) {
        self.lines.retain(|_, l| l.is_dirty());
    }
}

/// Marks the bytes `[from, to)` of a line dirty (`dirty`: a bit per
/// byte), a word at a time: a write marked each byte on its own, and a
/// run of whole elements through a strict cache spent most of its time
/// there.
fn mark_dirty(dirty: &mut [u64; LINE / 64], from: usize, to: usize) {
    let mut o = from;
    while o < to {
        let (w, s) = (o / 64, o % 64);
        let e = (to - 64 * w).min(64);
        dirty[w] |= (u64::MAX >> (64 - (e - s))) << s;
        o = 64 * w + e;
    }
}

/// Calls `each` with the start and end of every run of dirty bytes of a
/// line (`dirty`: a bit per byte), in order: a flush writes each run at
/// once instead of byte by byte (half of a strict-cache re-run of `tiny`).
fn dirty_runs(dirty: &[u64; LINE / 64], mut each: impl FnMut(usize, usize)) {
    let mut off = 0;
    while off < LINE {
        let s = off % 64;
        let w = dirty[off / 64] >> s;
        if w == 0 {
            off += 64 - s;
            continue;
        }
        off += w.trailing_zeros() as usize;
        let start = off;
        loop {
            let s = off % 64;
            // Shifted in from the top, ones: the run stops at the word's end.
            let run = ((!(dirty[off / 64] >> s)).trailing_zeros() as usize).min(64 - s);
            off += run;
            if run < 64 - s || off >= LINE {
                break;
            }
        }
        each(start, off);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs of dirty bytes are the bits' runs, across words too.
    #[test]
    fn dirty_runs_are_the_runs_of_set_bits() {
        let runs = |dirty: [u64; 4]| {
            let mut v = Vec::new();
            dirty_runs(&dirty, |a, b| v.push((a, b)));
            v
        };
        assert_eq!(runs([0; 4]), []);
        assert_eq!(runs([u64::MAX; 4]), [(0, 256)]);
        assert_eq!(runs([1 << 63, 1, 0, 1 << 63]), [(63, 65), (255, 256)]);
        assert_eq!(runs([0b1011, 0, u64::MAX, 1]), [(0, 2), (3, 4), (128, 193)]);
        // Every pattern of one word against a bit by bit scan.
        for k in 0..2000u64 {
            let w = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (k << 7);
            let dirty = [w, !w, w.rotate_left(13), w & !1];
            let mut want = Vec::new();
            let mut at = None;
            for o in 0..=LINE {
                let set = o < LINE && dirty[o / 64] & (1 << (o % 64)) != 0;
                match (set, at) {
                    (true, None) => at = Some(o),
                    (false, Some(a)) => {
                        want.push((a, o));
                        at = None;
                    }
                    _ => {}
                }
            }
            assert_eq!(runs(dirty), want, "{dirty:x?}");
        }
    }

    /// Marking a range sets its bits and no other, across words too.
    #[test]
    fn a_range_marks_its_own_bytes_dirty() {
        for from in 0..LINE {
            for to in [from, from + 1, from + 7, from + 64, from + 65, LINE] {
                let to = to.min(LINE);
                let mut dirty = [0; LINE / 64];
                mark_dirty(&mut dirty, from, to);
                let mut want = [0u64; LINE / 64];
                for o in from..to {
                    want[o / 64] |= 1 << (o % 64);
                }
                assert_eq!(dirty, want, "{from}..{to}");
            }
        }
    }
}
