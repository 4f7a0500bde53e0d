//! Reading the ATI notes of `PT_NOTE` segments (docs/abi.md §5–§6) and
//! cross-checking the optional section headers (§7 step 7).

use super::*;

/// Parses the records of every PT_NOTE segment (§5).
pub(super) fn parse_notes(
    bytes: &[u8],
    segments: &[(u64, u64)],
    phoff: u64,
    warnings: &mut Vec<AbiWarning>,
) -> Result<ProgramInfo, AbiError> {
    let mut info = ProgramInfo::default();
    let mut seen: [Option<u64>; 8] = [None; 8];
    for &(start, size) in segments {
        let end = start + size;
        let mut at = start;
        while at < end {
            let Record {
                name,
                desc_at,
                desc,
                ty,
                needed,
            } = record_at(bytes, at, end)?;
            let descsz = desc.len() as u32;
            let record = at;
            at += needed;
            if name == CTM_NOTE_NAME {
                if !descsz.is_multiple_of(4) {
                    return Err(AbiError::BadNoteSize {
                        offset: record,
                        note: "ctm",
                        descsz,
                        expected: "a multiple of 4",
                    });
                }
                ctm_note(ty, desc, desc_at, record, &mut info, warnings)?;
                continue;
            }
            if name != NOTE_NAME {
                warnings.push(AbiWarning {
                    offset: record,
                    message: "note not named \"ATI DPP\" skipped".into(),
                });
                continue;
            }
            let kind = note::name(ty);
            if !(1..=7).contains(&ty) {
                warnings.push(AbiWarning {
                    offset: record,
                    message: format!("unknown ATI DPP note type {ty} ignored"),
                });
                continue;
            }
            if let Some(first) = seen[ty as usize] {
                return Err(AbiError::DuplicateNote {
                    offset: record,
                    first,
                    note: kind,
                });
            }
            seen[ty as usize] = Some(record);
            if !descsz.is_multiple_of(4) {
                return Err(AbiError::BadNoteSize {
                    offset: record,
                    note: kind,
                    descsz,
                    expected: "a multiple of 4",
                });
            }
            let words: Vec<u32> = desc
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect();
            let note = AtiNote {
                ty,
                kind,
                record,
                desc_at,
                descsz,
                words,
            };
            note.apply(&mut info, warnings)?;
        }
    }
    let Some(proginfo_at) = seen[note::PROGINFO as usize] else {
        return Err(AbiError::MissingProgInfo { offset: phoff });
    };
    if (info.fg_depth_src & 1 != 0) != info.cond_out {
        warnings.push(AbiWarning {
            offset: proginfo_at,
            message: format!(
                "FG_DEPTH_SRC bit 0 is {} but CONDOUT says {}; CONDOUT wins",
                info.fg_depth_src & 1,
                u8::from(info.cond_out)
            ),
        });
    }
    Ok(info)
}

/// A note record's header and payload.
struct Record<'a> {
    /// Its name.
    name: &'a [u8],
    /// Where its description starts.
    desc_at: u64,
    /// The description.
    desc: &'a [u8],
    /// Its type.
    ty: u32,
    /// The record's size with padding.
    needed: u64,
}

/// The note record at `at` of a segment ending at `end`.
fn record_at(bytes: &[u8], at: u64, end: u64) -> Result<Record<'_>, AbiError> {
    if end - at < 12 {
        return Err(AbiError::NotePastSegment {
            offset: at,
            needed: 12,
            end,
        });
    }
    let o = at as usize;
    let (namesz, descsz, ty) = (u32_at(bytes, o), u32_at(bytes, o + 4), u32_at(bytes, o + 8));
    let name_pad = u64::from(namesz).div_ceil(4) * 4;
    let desc_pad = u64::from(descsz).div_ceil(4) * 4;
    let needed = 12 + name_pad + desc_pad;
    if needed > end - at {
        return Err(AbiError::NotePastSegment {
            offset: at,
            needed,
            end,
        });
    }
    let name = &bytes[o + 12..o + 12 + namesz as usize];
    let desc_at = at + 12 + name_pad;
    let desc = &bytes[desc_at as usize..(desc_at + u64::from(descsz)) as usize];
    Ok(Record {
        name,
        desc_at,
        desc,
        ty,
        needed,
    })
}

/// One of ctm's notes (§5.5): constant values and bindings.
fn ctm_note(
    ty: u32,
    desc: &[u8],
    desc_at: u64,
    record: u64,
    info: &mut ProgramInfo,
    warnings: &mut Vec<AbiWarning>,
) -> Result<(), AbiError> {
    let words: Vec<u32> = desc
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    let records = |size: usize, note: &'static str, limit: u32| {
        if !words.len().is_multiple_of(size) {
            return Err(AbiError::BadNoteSize {
                offset: record,
                note,
                descsz: desc.len() as u32,
                expected: if size == 5 {
                    "a multiple of 20 (index and four words)"
                } else {
                    "a multiple of 8 (index and value)"
                },
            });
        }
        let mut out = Vec::new();
        for (k, r) in words.chunks_exact(size).enumerate() {
            if r[0] >= limit {
                return Err(AbiError::IndexOutOfRange {
                    offset: desc_at + (k * size * 4) as u64,
                    note,
                    index: r[0],
                    limit,
                });
            }
            out.push((k, r));
        }
        Ok(out)
    };
    match ty {
        ctm_note::FLOATS => {
            for (_, r) in records(5, "ctm FLOATS", 256)? {
                info.values.floats.push((r[0], [r[1], r[2], r[3], r[4]]));
            }
        }
        ctm_note::DEFAULTS => {
            for (_, r) in records(5, "ctm DEFAULTS", 256)? {
                info.values.defaults.push((r[0], [r[1], r[2], r[3], r[4]]));
            }
        }
        ctm_note::INTS => {
            for (_, r) in records(2, "ctm INTS", 32)? {
                let b = r[1].to_le_bytes();
                info.values.ints.push((r[0], [b[0], b[1], b[2]]));
            }
        }
        ctm_note::BOOLS => {
            for (_, r) in records(2, "ctm BOOLS", 32)? {
                info.values.bools.push((r[0], r[1] != 0));
            }
        }
        ctm_note::BINDINGS => {
            let text = std::str::from_utf8(desc).map_err(|_| AbiError::BadNoteSize {
                offset: record,
                note: "ctm BINDINGS",
                descsz: desc.len() as u32,
                expected: "UTF-8 text",
            })?;
            for line in text.trim_end_matches('\0').lines() {
                match line.split_once('=') {
                    Some((a, b)) => info.bindings.push((a.to_string(), b.to_string())),
                    None => warnings.push(AbiWarning {
                        offset: desc_at,
                        message: format!("ctm binding `{line}` has no `=`; ignored"),
                    }),
                }
            }
        }
        _ => warnings.push(AbiWarning {
            offset: record,
            message: format!("unknown ctm note type {ty} ignored"),
        }),
    }
    Ok(())
}

/// Optional cross-check of the section headers against the program headers
/// (§7 step 7); problems are warnings, the program headers are authoritative.
pub(super) fn check_sections(
    bytes: &[u8],
    header: &Header,
    text: (u64, u64),
    warnings: &mut Vec<AbiWarning>,
) {
    let shnum = usize::from(header.e_shnum);
    if shnum == 0 || header.e_shoff == 0 {
        return;
    }
    let ctx = Ctx::new(Container::Little, Endian::Little);
    let in_file = header
        .e_shoff
        .checked_add(40 * shnum as u64)
        .is_some_and(|end| end <= bytes.len() as u64);
    let sections = if in_file && header.e_shentsize == 40 {
        SectionHeader::parse(bytes, header.e_shoff as usize, shnum, ctx).ok()
    } else {
        None
    };
    let Some(sections) = sections else {
        warnings.push(AbiWarning {
            offset: 32,
            message: "section header table unreadable; ignored".into(),
        });
        return;
    };
    let covers = sections
        .iter()
        .any(|s| s.sh_type == 1 && s.sh_flags == 6 && s.sh_offset == text.0 && s.sh_size == text.1);
    if !covers {
        warnings.push(AbiWarning {
            offset: header.e_shoff,
            message:
                "no SHT_PROGBITS section with flags ALLOC|EXECINSTR matches the PT_LOAD segment"
                    .into(),
        });
    }
}

/// One "ATI DPP" note record (§5): its type, where it and its description
/// start, and the description's words.
struct AtiNote {
    ty: u32,
    kind: &'static str,
    record: u64,
    desc_at: u64,
    descsz: u32,
    words: Vec<u32>,
}

impl AtiNote {
    /// A note holding one flag word.
    fn flag(&self, warnings: &mut Vec<AbiWarning>) -> Result<bool, AbiError> {
        match self.words.as_slice() {
            [v] => {
                if *v > 1 {
                    warnings.push(AbiWarning {
                        offset: self.desc_at,
                        message: format!("{} flag {v} treated as 1", self.kind),
                    });
                }
                Ok(*v != 0)
            }
            _ => Err(AbiError::BadNoteSize {
                offset: self.record,
                note: self.kind,
                descsz: self.descsz,
                expected: "exactly 4 (one flag word)",
            }),
        }
    }

    /// A note listing indices below `limit` (a repeated one is a warning).
    fn list(&self, limit: u32, warnings: &mut Vec<AbiWarning>) -> Result<Vec<u32>, AbiError> {
        let mut out: Vec<u32> = Vec::with_capacity(self.words.len());
        for (k, &index) in self.words.iter().enumerate() {
            let offset = self.desc_at + 4 * k as u64;
            if index >= limit {
                return Err(AbiError::IndexOutOfRange {
                    offset,
                    note: self.kind,
                    index,
                    limit,
                });
            }
            if out.contains(&index) {
                warnings.push(AbiWarning {
                    offset,
                    message: format!("{} lists {index} twice", self.kind),
                });
            }
            out.push(index);
        }
        Ok(out)
    }

    /// What the note says, into `info`.
    fn apply(
        &self,
        info: &mut ProgramInfo,
        warnings: &mut Vec<AbiWarning>,
    ) -> Result<(), AbiError> {
        let words = &self.words;
        match self.ty {
            note::PROGINFO => {
                if words.len() < 2 {
                    return Err(AbiError::BadNoteSize {
                        offset: self.record,
                        note: self.kind,
                        descsz: self.descsz,
                        expected: "at least 8 (reserved word and FG_DEPTH_SRC)",
                    });
                }
                if words[0] != 1 {
                    warnings.push(AbiWarning {
                        offset: self.desc_at,
                        message: format!("dpp_proginfo word 0 is {}, expected 1", words[0]),
                    });
                }
                info.proginfo_reserved = words[0];
                info.fg_depth_src = words[1];
                info.proginfo_extra = words[2..].to_vec();
            }
            note::INPUTS => info.inputs = self.list(16, warnings)?,
            note::OUTPUTS => info.outputs = self.list(4, warnings)?,
            note::CONDOUT => info.cond_out = self.flag(warnings)?,
            note::FLOAT32CONSTS => info.f32_consts = self.list(256, warnings)?,
            note::INT32CONSTS => info.i32_consts = self.list(32, warnings)?,
            note::EARLYEXIT => info.early_exit = self.flag(warnings)?,
            _ => unreachable!("types 1..=7 handled"),
        }
        Ok(())
    }
}
