//! Executable images in GPU memory (`docs/abi.md` §10): how many bytes an
//! ELF file placed at an address takes, read from its headers alone, so the
//! PE can take a program from its instruction base without a loader call.

use super::{AbiError, is_elf};

/// The most bytes an image in memory may take (the cap of executable files).
pub const MAX_IMAGE: u64 = 16 << 20;

/// What [`image_len`] needs to say more.
#[derive(Debug, PartialEq, Eq)]
pub enum ImageLen {
    /// The image's length in bytes: its headers, tables, segments and
    /// sections all end within it.
    Len(u64),
    /// Call again with at least this many bytes from the image's start (the
    /// header tables).
    Needs(u64),
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[o], b[o + 1]]))
}

fn u32_at(b: &[u8], o: usize) -> u64 {
    u64::from(super::u32_at(b, o))
}

/// The length of the ELF image that `prefix` starts, from its ELF header
/// (52 bytes), then its program and section header tables: the end of the
/// furthest of them and of every segment and section they describe.
/// [`ImageLen::Needs`] asks for more of the prefix; an error says why the
/// bytes are no image (no ELF magic, a table or extent past [`MAX_IMAGE`]).
pub fn image_len(prefix: &[u8]) -> Result<ImageLen, AbiError> {
    if prefix.len() < 52 {
        return Ok(ImageLen::Needs(52));
    }
    if !is_elf(prefix) {
        return Err(AbiError::BadMagic {
            found: prefix[..4].try_into().expect("4 bytes"),
        });
    }
    let (phoff, shoff) = (u32_at(prefix, 0x1C), u32_at(prefix, 0x20));
    let (phsize, phnum) = (u16_at(prefix, 0x2A), u16_at(prefix, 0x2C));
    let (shsize, shnum) = (u16_at(prefix, 0x2E), u16_at(prefix, 0x30));
    let tables = (phoff + phsize * phnum).max(shoff + shsize * shnum).max(52);
    if tables > MAX_IMAGE {
        return Err(too_large(tables));
    }
    if (prefix.len() as u64) < tables {
        return Ok(ImageLen::Needs(tables));
    }
    let mut end = tables;
    // Program headers: p_offset at +4, p_filesz at +16 (32-byte entries).
    if phsize >= 20 {
        for k in 0..phnum {
            let h = (phoff + k * phsize) as usize;
            end = end.max(u32_at(prefix, h + 4) + u32_at(prefix, h + 16));
        }
    }
    // Section headers: sh_type at +4, sh_offset at +16, sh_size at +20;
    // SHT_NOBITS (8) takes no bytes.
    if shsize >= 24 {
        for k in 0..shnum {
            let h = (shoff + k * shsize) as usize;
            if u32_at(prefix, h + 4) != 8 {
                end = end.max(u32_at(prefix, h + 16) + u32_at(prefix, h + 20));
            }
        }
    }
    if end > MAX_IMAGE {
        return Err(too_large(end));
    }
    Ok(ImageLen::Len(end))
}

fn too_large(len: u64) -> AbiError {
    AbiError::Malformed {
        offset: 0,
        what: "the image's extent",
        message: format!(
            "its headers describe {len} bytes; an image in memory takes at most {MAX_IMAGE}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_exactly_as_long_as_its_file() {
        let exe = crate::abi::Executable::from_code(
            crate::isa::asm::assemble(
                "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
            )
            .unwrap(),
        );
        let file = crate::abi::write(&exe);
        let mut at = 0;
        let len = loop {
            match image_len(&file[..at.min(file.len())]).unwrap() {
                ImageLen::Len(n) => break n,
                ImageLen::Needs(n) => at = n as usize,
            }
        };
        assert_eq!(len, file.len() as u64);
        assert!(matches!(
            image_len(&[0u8; 64]),
            Err(AbiError::BadMagic { .. })
        ));
    }
}
