//! A fast hash for the lowering's own maps (memoised values, register
//! files, operation orders): their keys are small integers and entity
//! numbers made by ctm itself, so a multiply-rotate hash serves them, where
//! the standard library's keyed hash took about 4% of the instructions of
//! a quick compile of a straight kernel (`docs/compile.md`, "Counted in
//! instructions").

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hash over machine words (the scheme of rustc's own
/// `FxHasher`): not resistant to chosen keys, which the lowering's keys
/// never are.
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl WordHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed with [`WordHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// A hash set keyed with [`WordHasher`].
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_find_what_they_hold() {
        let mut m: FastMap<(u8, u32, u128), usize> = FastMap::default();
        for k in 0..1000u32 {
            m.insert(((k % 7) as u8, k, u128::from(k) << 70), k as usize);
        }
        assert_eq!(m.len(), 1000);
        for k in 0..1000u32 {
            assert_eq!(m[&((k % 7) as u8, k, u128::from(k) << 70)], k as usize);
        }
        assert!(!m.contains_key(&(0, 1, 0)));
    }

    #[test]
    fn unequal_words_hash_apart() {
        let h = |w: &[u8]| {
            let mut s = WordHasher::default();
            s.write(w);
            s.finish()
        };
        assert_ne!(h(&[1, 0, 0]), h(&[2, 0, 0]));
        assert_ne!(h(&[0; 9]), h(&[0, 0, 0, 0, 0, 0, 0, 0, 1]));
    }
}
