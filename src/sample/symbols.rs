//! Naming an address: which module maps it (`/proc/<pid>/maps`; a module's .bss continues into the
//! anonymous mapping right after its file mappings) and the nearest ELF symbol, demangled:
//! `scalescope::probes::lock::GLOBAL_LOCK+0x0`, `libfoo.so!g_pool_lock+0x0`. Heap and stack
//! addresses are named as such.

use object::{Object, ObjectSegment, ObjectSymbol};
use std::collections::HashMap;

/// One line of /proc/<pid>/maps.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// File path, `[heap]`/`[stack]`…, or empty for anonymous memory.
    pub path: String,
}

/// Parses /proc/<pid>/maps.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            let (start, end) = f.next()?.split_once('-')?;
            let _perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.collect::<Vec<_>>().join(" ");
            Some(Mapping {
                start: u64::from_str_radix(start, 16).ok()?,
                end: u64::from_str_radix(end, 16).ok()?,
                offset,
                path,
            })
        })
        .collect()
}

/// Where an address lives, resolved while the process is alive.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    /// In a file-backed module (or its .bss): the file and the address where file offset 0 is mapped.
    Module {
        /// Path of the ELF file.
        path: String,
        /// Address of file offset 0.
        base: u64,
        /// The address.
        addr: u64,
    },
    /// In anonymous memory (a lock allocated in a malloc arena or an mmap).
    Heap(u64),
    /// In the program's `[heap]` (brk) area, at this offset from its start: the same lock gets
    /// the same name in every run of a deterministic program, whatever address randomisation did.
    BrkHeap(u64),
    /// On the main thread's stack, this many bytes below its top (stable across runs, unlike
    /// the randomised address).
    Stack(u64),
    /// In a special mapping such as `[vdso]`.
    Special(String),
    /// Not mapped (the process changed its maps).
    Unknown(u64),
}

/// Finds the mapping of `addr`.
pub fn locate(maps: &[Mapping], addr: u64) -> Place {
    let Some(i) = maps.iter().position(|m| m.start <= addr && addr < m.end) else { return Place::Unknown(addr) };
    let m = &maps[i];
    let module = if m.path.starts_with('/') {
        Some(&m.path)
    } else if m.path.is_empty() && i > 0 && maps[i - 1].end == m.start && maps[i - 1].path.starts_with('/') {
        Some(&maps[i - 1].path)
    } else {
        None
    };
    match module {
        Some(path) => {
            let base = maps.iter().filter(|x| &x.path == path && x.offset == 0).map(|x| x.start).min();
            match base {
                Some(base) => Place::Module { path: path.clone(), base, addr },
                None => Place::Unknown(addr),
            }
        }
        None if m.path.starts_with("[stack") => Place::Stack(m.end - addr),
        None if m.path == "[heap]" => Place::BrkHeap(addr - m.start),
        None if m.path.starts_with('[') && m.path != "[heap]" => Place::Special(m.path.clone()),
        None => Place::Heap(addr),
    }
}

/// Symbols of one ELF file, sorted by address, and the address its offset-0 segment expects.
struct Symbols {
    first_vaddr: u64,
    by_addr: Vec<(u64, u64, String)>,
}

/// Names places, reading each ELF file once.
#[derive(Default)]
pub struct Namer {
    files: HashMap<String, Option<Symbols>>,
}

impl Namer {
    /// A readable name for a place.
    pub fn name(&mut self, place: &Place) -> String {
        match place {
            Place::Module { path, base, addr } => {
                let module = path.rsplit('/').next().unwrap_or(path).to_string();
                let syms = self.files.entry(path.clone()).or_insert_with(|| load(path));
                match syms.as_ref().and_then(|s| s.lookup(addr - base + s.first_vaddr)) {
                    Some((sym, off)) if sym.contains("::") => format!("{sym}+{off:#x}"),
                    Some((sym, off)) => format!("{module}!{sym}+{off:#x}"),
                    None => format!("{module}+{:#x}", addr - base),
                }
            }
            Place::Heap(a) => format!("heap {a:#x}"),
            Place::BrkHeap(off) => format!("heap+{off:#x}"),
            Place::Stack(below) => format!("stack top-{below:#x}"),
            Place::Special(name) => name.clone(),
            Place::Unknown(a) => format!("{a:#x}"),
        }
    }
}

impl Symbols {
    fn lookup(&self, vaddr: u64) -> Option<(&str, u64)> {
        let i = self.by_addr.partition_point(|(a, _, _)| *a <= vaddr).checked_sub(1)?;
        let (a, size, name) = &self.by_addr[i];
        let off = vaddr - a;
        (off < (*size).max(1) || (*size == 0 && off < 4096)).then_some((name.as_str(), off))
    }
}

fn load(path: &str) -> Option<Symbols> {
    // Mapped, not read: only the headers and symbol tables are touched, so a large binary does
    // not inflate scalescope's resident memory (which a spawned child's max RSS would inherit).
    let map = crate::mapped::Mapped::open(std::path::Path::new(path)).ok()?;
    parse(map.bytes())
}

fn parse(data: &[u8]) -> Option<Symbols> {
    let file = object::File::parse(data).ok()?;
    let first_vaddr = file.segments().find(|s| s.file_range().0 == 0).map_or(0, |s| s.address() & !0xfff);
    let mut by_addr: Vec<(u64, u64, String)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.address() != 0 && s.is_definition())
        .filter_map(|s| {
            let name = s.name().ok()?;
            Some((s.address(), s.size(), format!("{:#}", rustc_demangle::demangle(name))))
        })
        .collect();
    by_addr.sort();
    by_addr.dedup_by_key(|(a, _, _)| *a);
    Some(Symbols { first_vaddr, by_addr })
}

#[cfg(test)]
mod tests {
    use super::*;

    static NAMED_FOR_TEST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(7);

    #[test]
    fn names_a_static_of_this_test_binary_by_its_symbol() {
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let addr = &NAMED_FOR_TEST as *const _ as u64;
        let place = locate(&maps, addr);
        assert!(matches!(place, Place::Module { .. }), "{place:?}");
        let name = Namer::default().name(&place);
        assert!(name.ends_with("NAMED_FOR_TEST+0x0"), "{name}");
        let heap = Box::new(5u64);
        let place = locate(&maps, &*heap as *const u64 as u64);
        assert!(matches!(place, Place::Heap(_) | Place::BrkHeap(_) | Place::Module { .. }), "{place:?}");
    }

    #[test]
    fn bss_continues_into_the_anonymous_mapping_after_the_file() {
        let maps = parse_maps(
            "1000-2000 r-xp 00000000 08:01 5 /bin/prog\n2000-3000 rw-p 00001000 08:01 5 /bin/prog\n3000-5000 rw-p 00000000 00:00 0 \n9000-a000 rw-p 00000000 00:00 0 [heap]\n",
        );
        assert_eq!(locate(&maps, 0x4000), Place::Module { path: "/bin/prog".into(), base: 0x1000, addr: 0x4000 });
        assert_eq!(locate(&maps, 0x9100), Place::BrkHeap(0x100));
        let vdso = parse_maps("7ffc0000-7ffc2000 r-xp 00000000 00:00 0 [vdso]\n");
        assert_eq!(locate(&vdso, 0x7ffc0100), Place::Special("[vdso]".into()));
        assert_eq!(locate(&maps, 0xb000), Place::Unknown(0xb000));
    }
}
