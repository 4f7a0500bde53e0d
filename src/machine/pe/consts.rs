//! The uniforms of a run (`docs/machine.md` §6, step 2): the float,
//! integer and boolean constant files read through their caches, and the
//! interpolation planes from the parameters.

use super::{Pe, PeError, ProgramDesc, params};
use crate::abi::ProgramInfo;
use crate::mc::{CacheId, CacheMode, Mc};
use ctm_jit::ir::{CONSTS, INT_CONSTS};
use ctm_jit::state::{IntConst, Uniforms};

/// A run's uniforms, kept for the next run to fill again (4 KiB that a
/// run would otherwise allocate and clear), and whether their float
/// constants are all zero.
#[derive(Debug)]
pub(super) struct KeptUniforms {
    pub u: Box<Uniforms>,
    /// Every float constant is +0.0: a run without a float constant file
    /// then clears nothing (clearing them took a twelfth of the host
    /// instructions of a re-run of `tiny` at 64²).
    floats_zero: bool,
    /// Room for the float constants a run reads element by element.
    used: Vec<u32>,
}

impl Default for KeptUniforms {
    fn default() -> Self {
        KeptUniforms {
            u: Box::default(),
            floats_zero: true,
            used: Vec::new(),
        }
    }
}

impl Pe {
    /// The uniforms of a run of the program `info` and `desc` describe,
    /// into `kept` (a previous run's, used again: a run that reads its
    /// float constants in place, or has none, allocates and clears nothing
    /// here): its constants from their files (an error where one it uses
    /// is not mapped; those it does not use and no memory holds are zero),
    /// its interpolation planes from the parameters.
    pub(super) fn uniforms(
        &self,
        mc: &Mc,
        info: &ProgramInfo,
        desc: &ProgramDesc,
        offset: usize,
        kept: &mut KeptUniforms,
    ) -> Result<(), PeError> {
        let u = &mut *kept.u;
        u.ints = [IntConst::default(); INT_CONSTS];
        u.bools = 0;
        // Constants that receive interpolation planes come from the
        // parameters, not from constant memory.
        let planes = params::constants(&desc.planes);
        let word = |b: &[u8], k: usize| {
            u32::from_le_bytes(b[k..k + 4].try_into().expect("a constant's 4 bytes"))
        };
        let mut floats = ConstFile {
            base: self.constf,
            size: 16,
            count: CONSTS,
            used: &[],
            what: "float constant",
            cache: CacheId::ConstF,
        };
        if let Some(file) = floats.in_place(mc) {
            // Every constant, as one copy.
            kept.floats_zero = false;
            for (c, b) in u
                .consts
                .as_flattened_mut()
                .iter_mut()
                .zip(file.chunks_exact(4))
            {
                *c = word(b, 0);
            }
        } else {
            let mut from_memory = std::mem::take(&mut kept.used);
            from_memory.clear();
            from_memory.extend(
                info.f32_consts
                    .iter()
                    .copied()
                    .filter(|c| !planes.contains(c)),
            );
            floats.used = &from_memory;
            if !kept.floats_zero {
                u.consts = [[0; 4]; CONSTS];
                kept.floats_zero = true;
            }
            // Elements of a file some memory holds are read (set before
            // reading: an error part-way leaves the flag true of nothing).
            kept.floats_zero &= floats.base.is_none();
            floats.read(mc, offset, |c, b| {
                u.consts[c] = [word(b, 0), word(b, 4), word(b, 8), word(b, 12)]
            })?;
            kept.used = from_memory;
        }
        let ints = ConstFile {
            base: self.consti,
            size: 4,
            count: INT_CONSTS,
            used: &info.i32_consts,
            what: "integer constant",
            cache: CacheId::ConstI,
        };
        ints.read(mc, offset, |c, b| {
            u.ints[c] = IntConst {
                count: b[0],
                init: b[1],
                step: b[2] as i8,
            }
        })?;
        let bools = ConstFile {
            base: self.constb,
            size: 4,
            count: 32,
            used: &[],
            what: "boolean constant",
            cache: CacheId::ConstB,
        };
        bools.read(mc, offset, |c, b| {
            if word(b, 0) != 0 {
                u.bools |= 1 << c;
            }
        })?;
        if !planes.is_empty() {
            kept.floats_zero = false;
            let base = self.params.ok_or_else(|| {
                Self::fail(
                    offset,
                    "the program reads interpolants (v0–v6) but no set_params was given",
                )
            })?;
            let mut bytes = [0u8; 4 * params::PARAM_FLOATS];
            mc.mem
                .read(u64::from(base), &mut bytes)
                .map_err(|e| Self::fail(offset, format!("the parameters (set_params): {e}")))?;
            let floats = std::array::from_fn(|k| {
                f32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().expect("4 bytes"))
            });
            params::apply(&floats, &desc.planes, u)
                .map_err(|e| Self::fail(offset, format!("set_params: {e}")))?;
        }
        Ok(())
    }
}

/// One constant file in memory: where it is, its element size and count,
/// the elements the program uses (an unmapped one of those is an error)
/// and the cache it is read through.
struct ConstFile<'a> {
    base: Option<u32>,
    size: u64,
    count: usize,
    used: &'a [u32],
    what: &'static str,
    cache: CacheId,
}

impl ConstFile<'_> {
    /// The whole file where it can be read in place: coherent caches read
    /// memory as it is, and one arena holds every element (a run of a
    /// small domain spent most of its time reading the 256 float constants
    /// one by one through the cache).
    fn in_place<'m>(&self, mc: &'m Mc) -> Option<&'m [u8]> {
        let span = self.size * self.count as u64;
        let base = self.base.map(u64::from)?;
        if mc.mode() != CacheMode::Coherent {
            return None;
        }
        let k = mc
            .mem
            .arenas()
            .iter()
            .position(|a| a.contains(base, span))?;
        let at = (base - u64::from(mc.mem.arenas()[k].base)) as usize;
        Some(&mc.mem.arena(k)[at..at + span as usize])
    }

    /// Hands each mapped element to `put` (index, bytes).
    fn read(
        &self,
        mc: &Mc,
        offset: usize,
        mut put: impl FnMut(usize, &[u8]),
    ) -> Result<(), PeError> {
        let (what, size) = (self.what, self.size);
        let Some(base) = self.base else {
            // No file: the first element the program uses is the error
            // (looking at every element cost a run of `tiny` at 64² a tenth
            // of its time).
            return match self
                .used
                .iter()
                .filter(|&&c| (c as usize) < self.count)
                .min()
            {
                Some(c) => Err(Pe::fail(
                    offset,
                    format!("{what} {c} is used but no {what} memory is set"),
                )),
                None => Ok(()),
            };
        };
        if let Some(file) = self.in_place(mc) {
            for (c, b) in file.chunks_exact(size as usize).enumerate() {
                put(c, b);
            }
            return Ok(());
        }
        for c in 0..self.count {
            let a = u64::from(base) + size * c as u64;
            if mc.mem.check(a, size).is_ok() {
                let mut b = [0u8; 16];
                mc.read(self.cache, a, &mut b[..size as usize]);
                put(c, &b[..size as usize]);
            } else if self.used.contains(&(c as u32)) {
                return Err(Pe::fail(
                    offset,
                    format!("{what} {c} at {a:#010x} is not in mapped memory"),
                ));
            }
        }
        Ok(())
    }
}
