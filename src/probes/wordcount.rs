//! `wordcount`: the map-reduce word count. Threads take chunks of the input as they become free
//! (map: count words into a private table), then merge the tables in parallel, each thread one
//! slice of the hash space (reduce), and the top words are picked. Words are runs of ASCII
//! letters, case-folded; every other byte (digits, punctuation, UTF-8 sequences) ends a word.

use super::chunks::Chunks;
use super::wordtable::{BATCH, FOLD, Key, Table};
use crate::mapped::Mapped;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// What to count and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads.
    pub threads: usize,
    /// Bytes per chunk handed to a thread.
    pub chunk: usize,
    /// How many of the most frequent words to report.
    pub top: usize,
}

/// What a count found.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Input bytes.
    pub bytes: u64,
    /// Words in all.
    pub words: u64,
    /// Distinct words.
    pub distinct: u64,
    /// The most frequent words with their counts, most frequent first (ties: alphabetical).
    pub top: Vec<(String, u64)>,
    /// Wall time of map, reduce and top-K (files already mapped).
    pub seconds: f64,
}

/// Counts the words of `files`.
pub fn run(files: &[PathBuf], o: &Options) -> std::io::Result<Outcome> {
    let maps = files
        .iter()
        .map(|p| Mapped::open(p).map(Mapped::sequential))
        .collect::<std::io::Result<Vec<_>>>()?;
    let inputs: Vec<&[u8]> = maps.iter().map(Mapped::bytes).collect();
    Ok(count(&inputs, o))
}

/// Counts the words of in-memory inputs (each input is a separate text: words never span two).
pub fn count(inputs: &[&[u8]], o: &Options) -> Outcome {
    let threads = o.threads.max(1);
    let chunk = o.chunk.max(1);
    let chunks = Chunks::new(inputs.iter().map(|d| d.len() as u64), chunk as u64);
    let start = Instant::now();
    let (tables, words): (Vec<Table>, Vec<u64>) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut table = Table::default();
                    let mut words = 0;
                    while let Some((i, at)) = chunks.take() {
                        let at = at as usize;
                        let d = inputs[i];
                        populate(&d[at..(at + chunk).min(d.len())]);
                        words += map_chunk(d, at, (at + chunk).min(d.len()), &mut table);
                    }
                    (table, words)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).unzip()
    });
    let parts: Vec<(u64, Vec<(String, u64)>)> = std::thread::scope(|s| {
        let tables = &tables;
        let handles: Vec<_> =
            (0..threads).map(|p| s.spawn(move || reduce(tables, p, threads, o.top))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let distinct = parts.iter().map(|(n, _)| n).sum();
    let mut top: Vec<(String, u64)> = parts.into_iter().flat_map(|(_, t)| t).collect();
    rank(&mut top, o.top);
    Outcome {
        bytes: inputs.iter().map(|d| d.len() as u64).sum(),
        words: words.iter().sum(),
        distinct,
        top,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Prints the result: a line for people, the top words, and metric lines for the harness.
pub fn print(o: &Options, r: &Outcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let rate = if r.seconds > 0.0 { r.bytes as f64 / r.seconds } else { 0.0 };
    writeln!(
        out,
        "wordcount: {} threads, {} bytes, {} words, {} distinct, {:.3} s = {:.1} MB/s (1 MB = 10^6 bytes)",
        o.threads,
        r.bytes,
        r.words,
        r.distinct,
        r.seconds,
        rate / 1e6
    )?;
    if !r.top.is_empty() {
        let top: Vec<String> = r.top.iter().map(|(w, c)| format!("{w} {c}")).collect();
        writeln!(out, "top: {}", top.join(", "))?;
    }
    super::print_metrics(
        &mut out,
        &[
            ("throughput", rate, "B/s"),
            ("words", r.words as f64, ""),
            ("distinct", r.distinct as f64, ""),
        ],
    )?;
    out.flush()
}

/// Counts the words that start in `data[start..end]` (a word running past `end` is finished
/// here; one running into `start` belongs to the chunk before). Returns the number of words.
///
/// Works 64 bytes at a time: a bit mask of the letters gives the starts and ends of words without
/// a branch per byte, and a word's first 16 letters are read as two integers.
fn map_chunk(data: &[u8], start: usize, end: usize, table: &mut Table) -> u64 {
    let mut base = start;
    if base > 0 && FOLD[data[base - 1] as usize] != 0 {
        while base < end && FOLD[data[base] as usize] != 0 {
            base += 1;
        }
    }
    let mut words = 0;
    let mut batch = [(0usize, 0usize); BATCH];
    let mut queued = 0;
    let mut prev = 0u64;
    let mut word_start = None;
    while base < end || word_start.is_some() {
        let m = match data.get(base..base + 64) {
            Some(block) => letters(block.try_into().unwrap_or(&[0; 64])),
            None => {
                let mut pad = [0u8; 64];
                let tail = &data[base.min(data.len())..];
                pad[..tail.len()].copy_from_slice(tail);
                letters(&pad)
            }
        };
        let shifted = m << 1 | prev;
        let starts = m & !shifted;
        let ends = !m & shifted;
        let mut bits = starts | ends;
        while bits != 0 {
            let p = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if starts >> p & 1 == 1 {
                if base + p < end {
                    word_start = Some(base + p);
                }
            } else if let Some(w) = word_start.take() {
                batch[queued] = (w, base + p);
                queued += 1;
                words += 1;
                if queued == BATCH {
                    add_words(data, &batch, table);
                    queued = 0;
                }
            }
        }
        prev = m >> 63;
        base += 64;
        if base >= data.len() + 64 {
            break;
        }
    }
    add_words(data, &batch[..queued], table);
    words
}

/// Maps a chunk's pages in one call instead of one page fault per few pages (Linux 5.14+;
/// elsewhere a no-op, the faults happen as before).
fn populate(bytes: &[u8]) {
    const MADV_POPULATE_READ: libc::c_int = 22;
    let page = 4096;
    let start = bytes.as_ptr() as usize / page * page;
    let end = bytes.as_ptr() as usize + bytes.len();
    if end > start {
        // SAFETY: advice on pages of a live read-only mapping; it only faults them in.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, MADV_POPULATE_READ) };
    }
}

/// Adds the words at `spans` (start, end) of `data` to `table`. Their keys are all made before
/// the first is looked up, which keeps the CPU from reloading a key it has just stored.
fn add_words(data: &[u8], spans: &[(usize, usize)], table: &mut Table) {
    let mut keys = [Key::default(); BATCH];
    let mut rests: [&[u8]; BATCH] = [&[]; BATCH];
    for ((k, r), &(w, e)) in keys.iter_mut().zip(rests.iter_mut()).zip(spans) {
        *k = key(data, w, e);
        *r = data.get(w + 16..e).unwrap_or(&[]);
    }
    table.add_batch(&keys[..spans.len()], &rests[..spans.len()]);
}

/// The key of the word `data[w..e]` (all letters).
#[inline]
fn key(data: &[u8], w: usize, e: usize) -> Key {
    let len = e - w;
    let Some(bytes) = data.get(w..w + 16) else { return Key::of(&data[w..e]) };
    let load = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
    let lower = 0x2020_2020_2020_2020u64;
    let first = u64::MAX >> (64 - 8 * len.min(8));
    let second = if len > 8 { u64::MAX >> (64 - 8 * (len - 8).min(8)) } else { 0 };
    let mut k =
        Key { len, head: [(load(0) | lower) & first, (load(8) | lower) & second], tail_hash: 0 };
    if len > 16 {
        for (n, &b) in data[w + 16..e].iter().enumerate() {
            k.push(16 + n, FOLD[b as usize]);
        }
    }
    k
}

/// Bit i is set when byte i of `block` is an ASCII letter.
#[inline]
fn letters(block: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut m = 0u64;
        for (i, part) in block.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of the x86_64 baseline; the load reads the 16 bytes of `part`.
            let bits = unsafe {
                let v = _mm_loadu_si128(part.as_ptr() as *const __m128i);
                let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
                let off = _mm_xor_si128(
                    _mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)),
                    _mm_set1_epi8(-128),
                );
                _mm_movemask_epi8(_mm_cmplt_epi8(off, _mm_set1_epi8(-128 + 26))) as u16
            };
            m |= u64::from(bits) << (16 * i);
        }
        m
    }
    #[cfg(not(target_arch = "x86_64"))]
    block.iter().enumerate().fold(0u64, |m, (i, &b)| m | u64::from(FOLD[b as usize] != 0) << i)
}

/// Merges the words of slice `part` of `parts` of the hash space from every table; returns the
/// number of distinct words there and their top `k`.
fn reduce(tables: &[Table], part: usize, parts: usize, k: usize) -> (u64, Vec<(String, u64)>) {
    let mut merged = Table::default();
    for t in tables {
        for (key, rest, count) in t.entries() {
            if ((key.hash() & 0xFFFF_FFFF) as usize * parts) >> 32 == part {
                merged.add(key, rest, count);
            }
        }
    }
    let mut top: Vec<(String, u64)> =
        merged.entries().map(|(k, r, c)| (Table::word(k, r), c)).collect();
    rank(&mut top, k);
    (merged.len() as u64, top)
}

/// Keeps the `k` most frequent words, most frequent first, ties alphabetical.
fn rank(words: &mut Vec<(String, u64)>, k: usize) {
    let order = |a: &(String, u64), b: &(String, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0));
    if words.len() > k && k > 0 {
        words.select_nth_unstable_by(k - 1, order);
    }
    words.truncate(k);
    words.sort_unstable_by(order);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An independent count: split on non-letters, lower-case, count in a std HashMap.
    fn reference(inputs: &[&[u8]]) -> (u64, HashMap<Vec<u8>, u64>) {
        let mut m: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut n = 0;
        for d in inputs {
            for w in d.split(|b| !b.is_ascii_alphabetic()).filter(|w| !w.is_empty()) {
                *m.entry(w.to_ascii_lowercase()).or_default() += 1;
                n += 1;
            }
        }
        (n, m)
    }

    fn check(inputs: &[&[u8]], threads: usize, chunk: usize) {
        let (words, m) = reference(inputs);
        let got = count(inputs, &Options { threads, chunk, top: 5 });
        assert_eq!(
            (got.words, got.distinct),
            (words, m.len() as u64),
            "threads {threads} chunk {chunk}"
        );
        let mut want: Vec<(String, u64)> =
            m.iter().map(|(w, c)| (String::from_utf8(w.clone()).unwrap(), *c)).collect();
        rank(&mut want, 5);
        assert_eq!(got.top, want);
    }

    #[test]
    fn counts_equal_an_independent_count_on_tricky_text() {
        let cases: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"no trailing newline".to_vec(),
            b"The the THE tHe, a-b a\tb\n\n  x".to_vec(),
            "naïve café über straße Ünïcode ÆØÅ \u{fffd} don't".as_bytes().to_vec(),
            vec![0xff, 0xfe, b'a', 0x80, b'b', 0xc3],
            "word ".repeat(100_000).into_bytes(),
            "a".repeat(300_000).into_bytes(),
            (0..=255u8).cycle().take(100_000).collect(),
        ];
        for c in &cases {
            for (threads, chunk) in [(1, 1 << 20), (3, 7), (2, 1), (4, 4096)] {
                check(&[c.as_slice()], threads, chunk);
            }
        }
        check(&[b"split", b"word"], 2, 3);
    }

    #[test]
    fn counts_equal_an_independent_count_on_generated_text() {
        let mut text = Vec::new();
        super::super::textgen::write(&mut text, 3_000_000, 5).unwrap();
        check(&[&text], 1, 1 << 20);
        check(&[&text], 3, 65_537);
    }
}
