//! `scalescope gen text`: English-like text for `wordcount`, deterministic for a seed. Word ranks
//! follow Zipf's law over a vocabulary of 50,000 made-up words (short words frequent, as in real
//! text); lines hold 8–16 words, start with a capital and end with a full stop.

use crate::stats::Rng;
use std::collections::HashSet;
use std::io::Write;

/// Distinct words in the vocabulary.
pub const VOCABULARY: usize = 50_000;

/// Writes whole lines of text to `out` until at least `size` bytes (and one line) are written;
/// returns the bytes written.
pub fn write(out: &mut impl Write, size: u64, seed: u64) -> std::io::Result<u64> {
    let mut rng = Rng::new(seed);
    let words = vocabulary(&mut rng);
    let pick = Alias::zipf(words.len());
    let mut line = Vec::with_capacity(256);
    let mut written = 0u64;
    while written < size {
        line.clear();
        let n = 8 + rng.below(9);
        for i in 0..n {
            let w = &words[pick.sample(&mut rng)];
            let start = line.len();
            line.extend_from_slice(w);
            if i == 0 {
                line[start] = line[start].to_ascii_uppercase();
            }
            if i + 1 < n {
                if rng.below(12) == 0 {
                    line.push(b',');
                }
                line.push(b' ');
            }
        }
        line.extend_from_slice(b".\n");
        out.write_all(&line)?;
        written += line.len() as u64;
    }
    out.flush()?;
    Ok(written)
}

/// The vocabulary, most frequent first: lengths grow with rank (1–3 letters at the top, 8–12 in
/// the tail), letters drawn uniformly, no word twice.
fn vocabulary(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut seen = HashSet::with_capacity(VOCABULARY);
    let mut words = Vec::with_capacity(VOCABULARY);
    for rank in 0..VOCABULARY {
        let base = 1.0 + 1.45 * ((rank + 1) as f64).log10();
        let mut len = (base + rng.below(3) as f64 - 0.5).round().max(1.0) as usize;
        loop {
            let w: Vec<u8> = (0..len).map(|_| b'a' + rng.below(26) as u8).collect();
            if seen.insert(w.clone()) {
                words.push(w);
                break;
            }
            if rng.below(8) == 0 {
                len += 1;
            }
        }
    }
    words
}

/// Walker's alias table: draws an index with given weights in constant time.
struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    /// Weights 1/(rank+1) over `n` ranks (Zipf with exponent 1).
    fn zipf(n: usize) -> Alias {
        let total: f64 = (1..=n).map(|r| 1.0 / r as f64).sum();
        let mut scaled: Vec<f64> = (1..=n).map(|r| n as f64 / r as f64 / total).collect();
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in large.into_iter().chain(small) {
            scaled[i] = 1.0;
        }
        Alias { prob: scaled, alias }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let x = rng.next_u64();
        let i = ((x >> 32) as usize * self.prob.len()) >> 32;
        let u = (x & 0xFFFF_FFFF) as f64 / 4_294_967_296.0;
        if u < self.prob[i] { i } else { self.alias[i] as usize }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    fn text(size: u64, seed: u64) -> Vec<u8> {
        let mut v = Vec::new();
        super::write(&mut v, size, seed).unwrap();
        v
    }

    #[test]
    fn text_is_deterministic_zipf_like_and_sized() {
        let a = text(4_000_000, 42);
        assert_eq!(a, text(4_000_000, 42));
        assert_ne!(a[..1000], text(1000, 43)[..]);
        assert!(a.len() as u64 >= 4_000_000 && a.len() < 4_000_200, "{}", a.len());
        let mut counts: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut letters = 0;
        for w in a.split(|b| !b.is_ascii_alphabetic()).filter(|w| !w.is_empty()) {
            letters += w.len();
            *counts.entry(w.to_ascii_lowercase()).or_default() += 1;
        }
        let total: u64 = counts.values().sum();
        let mean = letters as f64 / total as f64;
        assert!((4.0..=5.0).contains(&mean), "mean word length {mean}");
        assert!(counts.len() > 30_000, "{} distinct words", counts.len());
        let mut top: Vec<u64> = counts.values().copied().collect();
        top.sort_unstable_by(|a, b| b.cmp(a));
        let ratio = top[0] as f64 / top[9] as f64;
        assert!((6.0..16.0).contains(&ratio), "first/tenth = {ratio}");
        for line in a.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let n = line.split(|&b| b == b' ').count();
            assert!((8..=16).contains(&n) || line.len() < 20, "{n} words");
        }
    }

    #[test]
    fn a_tiny_size_still_gives_one_whole_line() {
        let t = text(1, 1);
        assert!(t.ends_with(b".\n") && t.len() > 10);
    }
}
