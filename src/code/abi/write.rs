//! Writing executables in the layout of docs/abi.md §8.

use super::*;

fn note_record(out: &mut Vec<u8>, ty: u32, words: &[u32]) {
    named_record(out, NOTE_NAME, ty, words);
}

fn named_record(out: &mut Vec<u8>, name: &[u8], ty: u32, words: &[u32]) {
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(&((words.len() * 4) as u32).to_le_bytes());
    out.extend_from_slice(&ty.to_le_bytes());
    out.extend_from_slice(name);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// ctm's notes (§5.5), only where there is something to say.
fn ctm_notes(out: &mut Vec<u8>, i: &ProgramInfo) {
    let v = &i.values;
    let mut note = |ty: u32, words: Vec<u32>| {
        if !words.is_empty() {
            named_record(out, CTM_NOTE_NAME, ty, &words);
        }
    };
    let floats = |list: &[(u32, [u32; 4])]| -> Vec<u32> {
        list.iter()
            .flat_map(|(n, x)| [*n, x[0], x[1], x[2], x[3]])
            .collect()
    };
    note(ctm_note::FLOATS, floats(&v.floats));
    note(
        ctm_note::INTS,
        v.ints
            .iter()
            .flat_map(|(n, x)| [*n, u32::from_le_bytes([x[0], x[1], x[2], 0])])
            .collect(),
    );
    note(
        ctm_note::BOOLS,
        v.bools
            .iter()
            .flat_map(|(n, b)| [*n, u32::from(*b)])
            .collect(),
    );
    note(ctm_note::DEFAULTS, floats(&v.defaults));
    if !i.bindings.is_empty() {
        let mut text = String::new();
        for (a, b) in &i.bindings {
            text.push_str(a);
            text.push('=');
            text.push_str(b);
            text.push('\n');
        }
        let mut bytes = text.into_bytes();
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        named_record(out, CTM_NOTE_NAME, ctm_note::BINDINGS, &words);
    }
}

/// Writes an executable in the layout of `docs/abi.md` §8: ELF header,
/// program headers (PT_NOTE, PT_LOAD), the seven notes in type order,
/// `.text`, `.shstrtab`, section headers.
pub fn write(exe: &Executable) -> Vec<u8> {
    let i = &exe.info;
    let mut notes = Vec::new();
    let mut proginfo = vec![i.proginfo_reserved, i.fg_depth_src];
    proginfo.extend_from_slice(&i.proginfo_extra);
    note_record(&mut notes, note::PROGINFO, &proginfo);
    note_record(&mut notes, note::INPUTS, &i.inputs);
    note_record(&mut notes, note::OUTPUTS, &i.outputs);
    note_record(&mut notes, note::CONDOUT, &[u32::from(i.cond_out)]);
    note_record(&mut notes, note::FLOAT32CONSTS, &i.f32_consts);
    note_record(&mut notes, note::INT32CONSTS, &i.i32_consts);
    note_record(&mut notes, note::EARLYEXIT, &[u32::from(i.early_exit)]);
    ctm_notes(&mut notes, i);

    let shstrtab = b"\0.note\0.text\0.shstrtab\0";
    let notes_at = 52 + 2 * 32;
    let text_at = notes_at + notes.len();
    let text_len = exe.code.len() * 4;
    let strtab_at = text_at + text_len;
    let sh_at = (strtab_at + shstrtab.len()).div_ceil(4) * 4;

    let mut out = Vec::with_capacity(sh_at + 4 * 40);
    // ELF header.
    out.extend_from_slice(b"\x7fELF");
    out.extend_from_slice(&[1, 1, 1, ELFOSABI_ATI, ABI_VERSION, 0, 0, 0, 0, 0, 0, 0]);
    let h16 = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());
    let h32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    h16(&mut out, ET_EXEC);
    h16(&mut out, EM_ATI_R5XX);
    h32(&mut out, 1); // e_version
    h32(&mut out, 0); // e_entry
    h32(&mut out, 52); // e_phoff
    h32(&mut out, sh_at as u32); // e_shoff
    h32(&mut out, EF_ATI_DPP);
    for v in [52u16, 32, 2, 40, 4, 3] {
        h16(&mut out, v); // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
    }
    // Program headers: PT_NOTE (PF_R), PT_LOAD (PF_R | PF_X).
    for (ty, offset, size, flags) in [
        (PT_NOTE, notes_at, notes.len(), 4u32),
        (PT_LOAD, text_at, text_len, 5),
    ] {
        for v in [ty, offset as u32, 0, 0, size as u32, size as u32, flags, 4] {
            h32(&mut out, v);
        }
    }
    out.extend_from_slice(&notes);
    for w in &exe.code {
        h32(&mut out, *w);
    }
    out.extend_from_slice(shstrtab);
    out.resize(sh_at, 0);
    // Section headers: NULL, .note, .text, .shstrtab.
    let sections: [[u32; 10]; 4] = [
        [0; 10],
        [1, 7, 0, 0, notes_at as u32, notes.len() as u32, 0, 0, 4, 0],
        [7, 1, 6, 0, text_at as u32, text_len as u32, 0, 0, 4, 0],
        [
            13,
            3,
            0,
            0,
            strtab_at as u32,
            shstrtab.len() as u32,
            0,
            0,
            1,
            0,
        ],
    ];
    for s in sections {
        for v in s {
            h32(&mut out, v);
        }
    }
    out
}
