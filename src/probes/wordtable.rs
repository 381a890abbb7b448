//! The hash table of `wordcount`: case-folded words to counts. An index of (hash tag, entry)
//! pairs with linear probing points into a dense entry array in insertion order, so the frequent
//! words (met first) share a few cache lines. The first 16 letters of a word live in its entry as
//! two integers; only longer words keep their rest in a byte arena.

/// Folded letter of each byte (`a`–`z`), or 0 for bytes that end a word.
pub static FOLD: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 26 {
        t[b'a' as usize + c] = b'a' + c as u8;
        t[b'A' as usize + c] = b'a' + c as u8;
        c += 1;
    }
    t
};

/// A word as the table compares it: its length, first 16 folded letters packed little-endian,
/// and a running hash of the letters after those.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Key {
    /// Letters.
    pub len: usize,
    /// Letters 0–7 and 8–15, zero-padded.
    pub head: [u64; 2],
    /// Rotate-xor hash of letters 16 and on.
    pub tail_hash: u64,
}

impl Key {
    /// The key of a word given as raw bytes, all letters (any case).
    pub fn of(raw: &[u8]) -> Key {
        let mut k = Key { len: raw.len(), ..Key::default() };
        for (n, &b) in raw.iter().enumerate() {
            k.push(n, FOLD[b as usize]);
        }
        k
    }

    /// Adds folded letter `c` at position `n`.
    #[inline]
    pub fn push(&mut self, n: usize, c: u8) {
        if n < 16 {
            self.head[n >> 3] |= u64::from(c) << ((n & 7) * 8);
        } else {
            self.tail_hash = self.tail_hash.rotate_left(5) ^ u64::from(c);
        }
    }

    /// A well-mixed 64-bit hash.
    #[inline]
    pub fn hash(&self) -> u64 {
        let a = (self.head[0] ^ self.tail_hash).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let b = (self.head[1] ^ self.len as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let x = a.rotate_left(31) ^ b;
        x ^ (x >> 32)
    }
}

#[derive(Clone, Copy)]
struct Entry {
    key: Key,
    count: u64,
    rest: usize,
}

/// Word counts.
pub struct Table {
    index: Vec<u64>,
    shift: u32,
    entries: Vec<Entry>,
    arena: Vec<u8>,
}

impl Default for Table {
    fn default() -> Table {
        Table { index: vec![0; 1 << 12], shift: 64 - 12, entries: Vec::new(), arena: Vec::new() }
    }
}

impl Table {
    /// Adds `count` to the word with key `key`, whose letters after the 16th are `rest` (raw
    /// bytes, any case).
    #[inline]
    pub fn add(&mut self, key: &Key, rest: &[u8], count: u64) {
        self.add_hashed(key.hash(), key, rest, count);
    }

    /// Adds one to each word of a batch: `keys[i]`, with letters after the 16th `rests[i]`. The
    /// index slots and then the entries of the whole batch are prefetched first, so that their
    /// cache misses overlap instead of following one another.
    pub fn add_batch(&mut self, keys: &[Key], rests: &[&[u8]]) {
        let mut hashes = [0u64; BATCH];
        for (h, k) in hashes.iter_mut().zip(keys) {
            *h = k.hash();
            prefetch(&self.index[(*h >> self.shift) as usize]);
        }
        for &h in &hashes[..keys.len()] {
            let slot = self.index[(h >> self.shift) as usize];
            if slot != 0 {
                prefetch(&self.entries[(slot as u32 - 1) as usize]);
            }
        }
        for ((&h, k), rest) in hashes.iter().zip(keys).zip(rests) {
            self.add_hashed(h, k, rest, 1);
        }
    }

    #[inline]
    fn add_hashed(&mut self, hash: u64, key: &Key, rest: &[u8], count: u64) {
        let tag = hash >> 32;
        let mask = self.index.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        loop {
            let slot = self.index[i];
            if slot == 0 {
                break;
            }
            if slot >> 32 == tag {
                let e = &mut self.entries[(slot as u32 - 1) as usize];
                if e.key == *key
                    && (key.len <= 16
                        || folded_eq(&self.arena[e.rest..e.rest + key.len - 16], rest))
                {
                    e.count += count;
                    return;
                }
            }
            i = (i + 1) & mask;
        }
        let at = self.arena.len();
        if key.len > 16 {
            self.arena.extend(rest.iter().map(|&b| FOLD[b as usize]));
        }
        self.entries.push(Entry { key: *key, count, rest: at });
        self.index[i] = tag << 32 | self.entries.len() as u64;
        if self.entries.len() * 2 > self.index.len() {
            self.grow();
        }
    }

    /// Distinct words.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every (key, folded letters after the 16th, count).
    pub fn entries(&self) -> impl Iterator<Item = (&Key, &[u8], u64)> {
        self.entries
            .iter()
            .map(|e| (&e.key, &self.arena[e.rest..e.rest + e.key.len.saturating_sub(16)], e.count))
    }

    /// The word of a key and its rest, as text.
    pub fn word(key: &Key, rest: &[u8]) -> String {
        let head: Vec<u8> =
            key.head.iter().flat_map(|w| w.to_le_bytes()).take(key.len.min(16)).collect();
        String::from_utf8_lossy(&[head.as_slice(), rest].concat()).into_owned()
    }

    fn grow(&mut self) {
        self.index = vec![0; self.index.len() * 2];
        self.shift -= 1;
        let mask = self.index.len() - 1;
        for (n, e) in self.entries.iter().enumerate() {
            let hash = e.key.hash();
            let mut i = (hash >> self.shift) as usize;
            while self.index[i] != 0 {
                i = (i + 1) & mask;
            }
            self.index[i] = (hash >> 32) << 32 | (n as u64 + 1);
        }
    }
}

/// Words per [`Table::add_batch`].
pub const BATCH: usize = 32;

/// Asks the CPU to start loading the cache line of `v` (a hint; nothing on other CPUs).
#[inline(always)]
fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid reference's address has no observable effect but timing.
    unsafe {
        std::arch::x86_64::_mm_prefetch(v as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

#[inline]
fn folded_eq(key: &[u8], raw: &[u8]) -> bool {
    key.len() == raw.len() && key.iter().zip(raw).all(|(&k, &r)| k == FOLD[r as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_that_differ_only_past_sixteen_letters_stay_apart() {
        let mut t = Table::default();
        let a = b"abcdefghijklmnopqrstuvwxyz";
        let b = b"ABCDEFGHIJKLMNOPqrstuvwxyZ";
        let c = b"abcdefghijklmnopqrstuvwxya";
        for w in [&a[..], b, c, b"Short", b"short"] {
            t.add(&Key::of(w), w.get(16..).unwrap_or(&[]), 1);
        }
        let mut got: Vec<(String, u64)> =
            t.entries().map(|(k, r, n)| (Table::word(k, r), n)).collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("abcdefghijklmnopqrstuvwxya".into(), 1),
                ("abcdefghijklmnopqrstuvwxyz".into(), 2),
                ("short".into(), 2)
            ]
        );
    }
}
