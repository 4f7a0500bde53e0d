//! The constant table a shader compiler leaves in a comment block (`CTAB`):
//! the names of the shader's constants and samplers, so that a host can
//! bind `--const scale=…` instead of `--const c3=…`.
//!
//! Layout (`D3DXSHADER_CONSTANTTABLE`, offsets from the start of the data
//! after the `CTAB` tag): size, creator offset, version, constant count,
//! constant-info offset, flags, target offset; each constant info is name
//! offset, register set (u16: 0 bool, 1 int4, 2 float4, 3 sampler),
//! register index (u16), register count (u16), reserved (u16), type-info
//! offset, default-value offset. Names are NUL-terminated. A table that
//! does not parse is ignored (names are a convenience, never required).

use super::{Item, RegKind, Shader};

/// `CTAB` as the first word of a comment.
pub const CTAB: u32 = u32::from_le_bytes(*b"CTAB");

/// One named constant: its name, the register file, first register and
/// how many it spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The name as the shader's source gave it.
    pub name: String,
    /// `ConstBool`, `ConstInt`, `Const` or `Sampler`.
    pub kind: RegKind,
    /// First register.
    pub index: u16,
    /// Registers it spans.
    pub count: u16,
}

/// The named constants of the shader's first `CTAB` comment (empty when
/// there is none or it does not parse).
pub fn constant_table(shader: &Shader) -> Vec<Named> {
    shader
        .items
        .iter()
        .find_map(|i| match i {
            Item::Comment(w) if w.first() == Some(&CTAB) => Some(parse(&w[1..])),
            _ => None,
        })
        .flatten()
        .unwrap_or_default()
}

fn parse(words: &[u32]) -> Option<Vec<Named>> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    let count = u32_at(12)? as usize;
    let info = u32_at(16)? as usize;
    if count > 4096 {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        let at = info.checked_add(k * 20)?;
        let name_at = u32_at(at)? as usize;
        let kind = match u16_at(at + 4)? {
            0 => RegKind::ConstBool,
            1 => RegKind::ConstInt,
            2 => RegKind::Const,
            3 => RegKind::Sampler,
            _ => return None,
        };
        let name_bytes = bytes.get(name_at..)?;
        let end = name_bytes.iter().position(|&b| b == 0)?;
        let name = std::str::from_utf8(&name_bytes[..end]).ok()?.to_string();
        out.push(Named {
            name,
            kind,
            index: u16_at(at + 6)?,
            count: u16_at(at + 8)?,
        });
    }
    Some(out)
}

/// A constant table for `names` (the layout above, no type information),
/// as the payload of a comment: what a shader compiler would leave.
pub fn table_comment(names: &[Named]) -> Vec<u32> {
    let header = 28usize;
    let infos = header;
    let mut strings = infos + 20 * names.len();
    let mut body = vec![0u8; strings];
    let put = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut body, 0, header as u32);
    put(&mut body, 12, names.len() as u32);
    put(&mut body, 16, infos as u32);
    for (k, n) in names.iter().enumerate() {
        let at = infos + 20 * k;
        put(&mut body, at, strings as u32);
        let set: u16 = match n.kind {
            RegKind::ConstBool => 0,
            RegKind::ConstInt => 1,
            RegKind::Sampler => 3,
            _ => 2,
        };
        body[at + 4..at + 6].copy_from_slice(&set.to_le_bytes());
        body[at + 6..at + 8].copy_from_slice(&n.index.to_le_bytes());
        body[at + 8..at + 10].copy_from_slice(&n.count.to_le_bytes());
        body.extend_from_slice(n.name.as_bytes());
        body.push(0);
        strings = body.len();
    }
    body.resize(body.len().next_multiple_of(4), 0);
    let mut words = vec![CTAB];
    words.extend(
        body.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    words
}
