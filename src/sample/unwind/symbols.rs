//! Naming an address: which module maps it (`/proc/<pid>/maps`; a module's .bss continues into the
//! anonymous mapping right after its file mappings) and the ELF symbol whose extent holds it, demangled:
//! `scalescope::probes::lock::GLOBAL_LOCK+0x0`, `libfoo.so!g_pool_lock+0x0`. Heap and stack
//! addresses are named as such.

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
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
    /// Mapped executable.
    pub exec: bool,
}

/// Parses /proc/<pid>/maps.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            let (start, end) = f.next()?.split_once('-')?;
            let perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.collect::<Vec<_>>().join(" ");
            Some(Mapping {
                start: u64::from_str_radix(start, 16).ok()?,
                end: u64::from_str_radix(end, 16).ok()?,
                offset,
                path,
                exec: perms.contains('x'),
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
    let Some(i) = maps.iter().position(|m| m.start <= addr && addr < m.end) else {
        return Place::Unknown(addr);
    };
    let m = &maps[i];
    // Shared memory (a mapping of /dev/zero, a deleted or memfd file) is anonymous memory too.
    let file = |p: &str| {
        p.starts_with('/')
            && !p.starts_with("/dev/")
            && !p.starts_with("/memfd:")
            && !p.ends_with(" (deleted)")
    };
    let module = if file(&m.path) {
        Some(&m.path)
    } else if m.path.is_empty() && i > 0 && maps[i - 1].end == m.start && file(&maps[i - 1].path) {
        Some(&maps[i - 1].path)
    } else {
        None
    };
    match module {
        Some(path) => {
            let base =
                maps.iter().filter(|x| &x.path == path && x.offset == 0).map(|x| x.start).min();
            match base {
                Some(base) => Place::Module { path: path.clone(), base, addr },
                None => Place::Unknown(addr),
            }
        }
        None if m.path.starts_with("[stack") => Place::Stack(m.end - addr),
        None if m.path == "[heap]" => Place::BrkHeap(addr - m.start),
        None if m.path.starts_with('[') && m.path != "[heap]" => Place::Special(m.path.clone()),
        None if m.path.starts_with('/') => Place::Heap(addr),
        None => Place::Heap(addr),
    }
}

/// Symbols of one ELF file, sorted by address, and the address its offset-0 segment expects.
struct Symbols {
    first_vaddr: u64,
    by_addr: Vec<Sym>,
}

/// One symbol: where it starts, its size, whether it names a real object or function (a sized
/// global FUNC/OBJECT, not a local or NOTYPE marker such as `__TMC_END__` or `completed.0`), and its
/// demangled name.
struct Sym {
    addr: u64,
    size: u64,
    real: bool,
    name: String,
}

/// Symbols looked at below an address for one whose extent holds it.
const LOOK_BACK: usize = 16;

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
    /// The symbol holding `vaddr`: among those starting at or below it, a real object or function
    /// whose size covers it, else the nearest unsized one within a page.
    fn lookup(&self, vaddr: u64) -> Option<(&str, u64)> {
        let end = self.by_addr.partition_point(|s| s.addr <= vaddr);
        let below = &self.by_addr[end.saturating_sub(LOOK_BACK)..end];
        let holds = |s: &&Sym| s.size > 0 && vaddr - s.addr < s.size;
        let best = below
            .iter()
            .rev()
            .filter(holds)
            .max_by_key(|s| (s.real, std::cmp::Reverse(s.size)))
            .or_else(|| below.last().filter(|s| s.size == 0 && vaddr - s.addr < 4096))?;
        Some((best.name.as_str(), vaddr - best.addr))
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
    let first_vaddr =
        file.segments().find(|s| s.file_range().0 == 0).map_or(0, |s| s.address() & !0xfff);
    let mut by_addr: Vec<Sym> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.address() != 0 && s.is_definition())
        .filter_map(|s| {
            let name = s.name().ok()?;
            let real = s.is_global()
                && s.size() > 0
                && matches!(s.kind(), SymbolKind::Text | SymbolKind::Data);
            Some(Sym {
                addr: s.address(),
                size: s.size(),
                real,
                name: format!("{:#}", rustc_demangle::demangle(name)),
            })
        })
        .collect();
    // At one address the real symbol first, so the duplicates dropped are the markers.
    by_addr.sort_by(|a, b| {
        a.addr
            .cmp(&b.addr)
            .then(b.real.cmp(&a.real))
            .then(b.size.cmp(&a.size))
            .then(a.name.cmp(&b.name))
    });
    by_addr.dedup_by(|b, a| a.addr == b.addr && a.size == b.size);
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
        assert!(
            matches!(place, Place::Heap(_) | Place::BrkHeap(_) | Place::Module { .. }),
            "{place:?}"
        );
    }

    #[test]
    fn a_sized_global_object_wins_over_markers_at_its_address_and_only_inside_its_size() {
        let sym = |addr, size, real, name: &str| Sym { addr, size, real, name: name.into() };
        let s = Symbols {
            first_vaddr: 0,
            by_addr: vec![
                sym(0x1000, 0x28b20, true, "_PyRuntime"),
                sym(0x1000, 0, false, "__TMC_END__"),
                sym(0x1100, 0, false, "completed.0"),
                sym(0x40000, 8, true, "counter"),
            ],
        };
        assert_eq!(s.lookup(0x11b4), Some(("_PyRuntime", 0x1b4)));
        assert_eq!(s.lookup(0x40004), Some(("counter", 4)));
        assert_eq!(s.lookup(0x40010), None);
    }

    #[test]
    fn bss_continues_into_the_anonymous_mapping_after_the_file() {
        let maps = parse_maps(
            "1000-2000 r-xp 00000000 08:01 5 /bin/prog\n2000-3000 rw-p 00001000 08:01 5 /bin/prog\n3000-5000 rw-p 00000000 00:00 0 \n9000-a000 rw-p 00000000 00:00 0 [heap]\n",
        );
        assert_eq!(
            locate(&maps, 0x4000),
            Place::Module { path: "/bin/prog".into(), base: 0x1000, addr: 0x4000 }
        );
        assert_eq!(locate(&maps, 0x9100), Place::BrkHeap(0x100));
        let vdso = parse_maps("7ffc0000-7ffc2000 r-xp 00000000 00:00 0 [vdso]\n");
        assert_eq!(locate(&vdso, 0x7ffc0100), Place::Special("[vdso]".into()));
        assert_eq!(locate(&maps, 0xb000), Place::Unknown(0xb000));
        let shm = parse_maps("5000-9000 rw-s 00000000 00:01 7 /dev/zero (deleted)\n");
        assert_eq!(locate(&shm, 0x5050), Place::Heap(0x5050));
    }
}
