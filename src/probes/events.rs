//! The event-file format of `scalescope gen files` and the `overlap` probe: files cut into 1 MiB
//! blocks (like the baskets of physics file formats), each holding whole events, so that any
//! block-aligned chunk can be decoded on its own.
//!
//! An event is a 16-byte header — magic `SSEV` (u32, little-endian), payload length (u32), event
//! id (u64) — then the payload. Bytes after the last event of a block are zero.

/// Size of a block; chunks handed to readers are multiples of it.
pub const BLOCK: usize = 1 << 20;
/// Bytes of an event header.
pub const HEADER: usize = 16;
/// The first four bytes of every event.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SSEV");
/// Smallest and largest payloads the generator writes.
pub const PAYLOAD: (usize, usize) = (256, 4096);

/// One decoded event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event<'a> {
    /// Unique within a file set: the file's seed stream decides it.
    pub id: u64,
    /// The event's bytes.
    pub payload: &'a [u8],
}

/// Calls `f` for every event in `data`, which starts at a block boundary; returns how many there
/// were, or the offset of the first malformed header.
pub fn for_each(data: &[u8], mut f: impl FnMut(Event)) -> Result<u64, usize> {
    let mut n = 0;
    for (b, block) in data.chunks(BLOCK).enumerate() {
        let mut at = 0;
        while at + HEADER <= block.len() {
            let magic = u32::from_le_bytes(block[at..at + 4].try_into().unwrap_or_default());
            if magic == 0 {
                break;
            }
            let len =
                u32::from_le_bytes(block[at + 4..at + 8].try_into().unwrap_or_default()) as usize;
            let end = at + HEADER + len;
            if magic != MAGIC || end > block.len() {
                return Err(b * BLOCK + at);
            }
            let id = u64::from_le_bytes(block[at + 8..at + 16].try_into().unwrap_or_default());
            f(Event { id, payload: &block[at + HEADER..end] });
            n += 1;
            at = end;
        }
    }
    Ok(n)
}

/// Fills `block` (at most [`BLOCK`] bytes) with events whose payloads come from `next`, numbering
/// them from `*id`; returns the number written.
pub fn fill_block(block: &mut [u8], id: &mut u64, mut next: impl FnMut() -> u64) -> usize {
    let mut at = 0;
    let mut n = 0;
    block.fill(0);
    while block.len() - at >= HEADER + PAYLOAD.0 {
        let span = (PAYLOAD.1 - PAYLOAD.0) as u64;
        let want = PAYLOAD.0 + (next() % span) as usize;
        let len = want.min(block.len() - at - HEADER);
        block[at..at + 4].copy_from_slice(&MAGIC.to_le_bytes());
        block[at + 4..at + 8].copy_from_slice(&(len as u32).to_le_bytes());
        block[at + 8..at + 16].copy_from_slice(&id.to_le_bytes());
        for word in block[at + HEADER..at + HEADER + len].chunks_mut(8) {
            let v = next().to_le_bytes();
            word.copy_from_slice(&v[..word.len()]);
        }
        *id += 1;
        n += 1;
        at += HEADER + len;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_decode_to_what_was_written() {
        let mut data = vec![0u8; BLOCK * 2 + 5000];
        let mut id = 0;
        let mut x = 1u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        };
        let per_block: Vec<usize> =
            data.chunks_mut(BLOCK).map(|b| fill_block(b, &mut id, &mut next)).collect();
        let written: usize = per_block.iter().sum();
        let mut ids = Vec::new();
        let n = for_each(&data, |e| {
            assert!(!e.payload.is_empty() && e.payload.len() < PAYLOAD.1);
            ids.push(e.id)
        })
        .unwrap();
        assert_eq!(n as usize, written);
        assert_eq!(ids, (0..written as u64).collect::<Vec<_>>());
        let mut first = None;
        let rest = for_each(&data[BLOCK..], |e| {
            first.get_or_insert(e.id);
        })
        .unwrap();
        assert_eq!((first, rest as usize), (Some(per_block[0] as u64), written - per_block[0]));
    }

    #[test]
    fn a_corrupt_header_is_reported_at_its_offset() {
        let mut data = vec![0u8; BLOCK];
        let mut id = 0;
        fill_block(&mut data, &mut id, || 7);
        data[0] = b'X';
        assert_eq!(for_each(&data, |_| ()), Err(0));
    }
}
