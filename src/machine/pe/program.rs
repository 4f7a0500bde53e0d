//! The program of a run: what `start_program` finds at the instruction
//! base (`docs/machine.md` §3.4, `docs/abi.md` §10) and its clause IR,
//! built once per content and build options.
//!
//! An executable image there (an ELF file's bytes) is read in place,
//! bounded by its arena and by the lengths its headers give; otherwise the
//! loader's record of that base says how many raw instruction words follow.
//! Built programs are found by their words, never by address, so a new
//! program copied over an old one at the same base is built anew.

use super::{Pe, PeError, ProgramDesc};
use crate::abi::{self, ImageLen, ProgramInfo};
use crate::mc::{CacheId, Mc};
use crate::{frontend, isa};
use ctm_jit::ir::Program;
use std::sync::Arc;

impl Pe {
    /// The program at the instruction base, built for runs with `options`
    /// (kept for later runs).
    pub(super) fn program(
        &mut self,
        mc: &Mc,
        offset: usize,
        options: crate::runtime::RunOptions,
    ) -> Result<(Arc<Program>, Arc<ProgramInfo>, ProgramDesc), PeError> {
        let base = self
            .inst
            .ok_or_else(|| Self::fail(offset, "no instruction memory set (set_inst_fmt)"))?;
        let (words, desc) = match self.image(mc, base) {
            Some(Ok(found)) => found,
            image => {
                let Some(&desc) = self.programs.get(&base) else {
                    return Err(Self::fail(
                        offset,
                        match image {
                            Some(Err(e)) => format!("the executable image at {base:#010x}: {e}"),
                            _ => format!(
                                "no program at {base:#010x}: neither an executable image (docs/abi.md §10) nor words the loader placed"
                            ),
                        },
                    ));
                };
                let n = usize::from(desc.len) * isa::INST_BYTES;
                mc.mem
                    .check(u64::from(base), n as u64)
                    .map_err(|e| Self::fail(offset, format!("instructions: {e}")))?;
                let bytes = &mut self.image_bytes;
                bytes.clear();
                bytes.resize(n, 0);
                mc.read(CacheId::Inst, u64::from(base), bytes);
                let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                // The last program's words again (a re-run) are shared,
                // not collected anew.
                let last = self.last.as_ref().map(|l| &l.key.0).filter(|w| {
                    w.len() * 4 == n
                        && w.iter()
                            .zip(bytes.chunks_exact(4))
                            .all(|(&w, c)| w == word(c))
                });
                let words = match last {
                    Some(words) => words.clone(),
                    None => bytes.chunks_exact(4).map(word).collect(),
                };
                (words, desc)
            }
        };
        // The hazard checker and the tracer must see every register write.
        let o = options;
        let checked = o.check_hazards || o.single_step;
        // Compiled code reads each bound input in its format's one way.
        let forms = self.inputs.map(|s| {
            s.map(|s| crate::mc::input_form(s.fmt.format))
                .unwrap_or_default()
        });
        // And quantises uncached writes, or not, as output 0's format says.
        let uncached_unorm = desc
            .uncached
            .then(|| self.outputs[0].map(|s| crate::mc::input_form(s.fmt.format).unorm))
            .flatten();
        // And stores each render target as its format says.
        let narrow = crate::mc::narrow_targets(self.outputs.map(|s| s.map(|s| s.fmt.format)));
        let key = (
            words,
            desc.uncached,
            checked,
            o.single_step,
            forms,
            uncached_unorm,
            narrow,
        );
        self.tick += 1;
        // A re-run of the last program compares its words, no more: no
        // hashing, no decoding. Its entry's tick catches up when another
        // program becomes the last.
        if let Some(last) = &self.last
            && last.key == key
        {
            return Ok((last.program.clone(), last.info.clone(), desc));
        }
        if let Some(old) = self.last.take()
            && let Some(entry) = self.compiled.get_mut(&old.key)
        {
            entry.2 = self.tick - 1;
        }
        let (program, info) = match self.compiled.get_mut(&key) {
            Some((p, info, used)) => {
                *used = self.tick;
                (p.clone(), info.clone())
            }
            None => {
                let opts = frontend::Options {
                    drop_dead_writes: !checked,
                    single_step: o.single_step,
                    narrow: Some(key.6),
                    ..frontend::Options::loaded(desc.uncached)
                };
                self.build(&key, opts)
            }
        };
        self.last = Some(super::LastProgram {
            key,
            program: program.clone(),
            info: info.clone(),
        });
        Ok((program, info, desc))
    }

    /// The words and loader record of the executable image at `base`
    /// ([`image_at`]). The same bytes as the last image read at that base
    /// are that image again, found by comparing them (a buffer submitted
    /// again parses nothing and allocates nothing here): the image's
    /// length and contents follow from its own bytes alone, and one arena
    /// must still hold them all.
    fn image(&mut self, mc: &Mc, base: u32) -> Option<Result<Found, String>> {
        if let Some(last) = &self.last_image
            && last.base == base
            && mc
                .mem
                .check(u64::from(base), last.bytes.len() as u64)
                .is_ok()
        {
            let buf = &mut self.image_bytes;
            buf.clear();
            buf.resize(last.bytes.len(), 0);
            mc.read(CacheId::Inst, u64::from(base), buf);
            if *buf == last.bytes {
                return Some(Ok((last.words.clone(), last.desc)));
            }
        }
        Some(image_at(mc, base)?.map(|(exe, bytes)| {
            let desc = ProgramDesc::of(&exe);
            let words: Arc<[u32]> = exe.code.into();
            self.last_image = Some(super::LastImage {
                base,
                bytes,
                words: words.clone(),
                desc,
            });
            (words, desc)
        }))
    }

    /// Builds the program `key` names with `opts` and keeps it (the least
    /// recently used one goes where [`super::MAX_BUILT`] are kept).
    fn build(
        &mut self,
        key: &super::BuildKey,
        opts: frontend::Options,
    ) -> (Arc<Program>, Arc<ProgramInfo>) {
        let slots = isa::decode_program(&key.0);
        let insts: Vec<isa::Inst> = slots
            .iter()
            .filter_map(|s| s.as_ref().ok().cloned())
            .collect();
        let info = Arc::new(ProgramInfo::from_code(&insts));
        let program = Arc::new(ctm_jit::ir::Program {
            forms: key.4,
            uncached_unorm: key.5,
            ..frontend::build(&slots, opts)
        });
        if self.compiled.len() >= super::MAX_BUILT
            && let Some(oldest) = self
                .compiled
                .iter()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(k, _)| k.clone())
        {
            self.compiled.remove(&oldest);
        }
        self.compiled
            .insert(key.clone(), (program.clone(), info.clone(), self.tick));
        (program, info)
    }
}

/// An executable image's words and loader record.
type Found = (Arc<[u32]>, ProgramDesc);

/// The executable image at `base` (`docs/abi.md` §10), read through the
/// instruction cache, and its bytes: `None` when the bytes there do not
/// start with the ELF magic, an error when they do but are no valid DPP
/// executable.
fn image_at(mc: &Mc, base: u32) -> Option<Result<(abi::Executable, Vec<u8>), String>> {
    let arena = mc
        .mem
        .arenas()
        .iter()
        .find(|a| a.contains(base.into(), 4))?;
    let room = u64::from(arena.base) + u64::from(arena.size) - u64::from(base);
    let read = |n: u64| {
        let mut b = vec![0u8; n.min(room) as usize];
        mc.read(CacheId::Inst, u64::from(base), &mut b);
        b
    };
    // The arena holds these four bytes (found so).
    let mut magic = [0u8; 4];
    mc.read(CacheId::Inst, u64::from(base), &mut magic);
    if !abi::is_elf(&magic) {
        return None;
    }
    let mut bytes = read(52);
    loop {
        match abi::image_len(&bytes) {
            Ok(ImageLen::Needs(n)) if (bytes.len() as u64) < n.min(room) => bytes = read(n),
            Ok(ImageLen::Len(n)) if n <= room => {
                let bytes = read(n);
                let exe = abi::load(&bytes).map(|l| l.exe);
                return Some(exe.map_err(|e| e.to_string()).and_then(|exe| {
                    if exe.len() > isa::MAX_INSTS {
                        Err(format!(
                            "{} instructions; the store holds {}",
                            exe.len(),
                            isa::MAX_INSTS
                        ))
                    } else {
                        Ok((exe, bytes))
                    }
                }));
            }
            Ok(_) => {
                return Some(Err(format!(
                    "it runs past the end of its arena ({room} bytes from its start)"
                )));
            }
            Err(e) => return Some(Err(e.to_string())),
        }
    }
}
