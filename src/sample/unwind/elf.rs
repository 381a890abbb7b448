//! ELF files as the unwinder and the namer need them, mapped once and shared: the unwind
//! sections (`.eh_frame`, `.eh_frame_hdr`, `.debug_frame`) handed to framehop without copying, the
//! load segments (to turn a mapping into a load bias), the build id, a symbol table that
//! prefers sized functions and objects over markers and never names an address past a
//! symbol's end, and the functions inlined at an address (DWARF, through addr2line, where the
//! file has uncompressed debug information). A stripped file takes its symbols (and DWARF) from
//! its separate debug file where a distribution's debug package installed one. Names are
//! demangled (Rust, then C++).

use crate::mapped::Mapped;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Where debug packages install separate debug files (`.build-id/xx/….debug`, or the file's own
/// folder under it).
pub const DEBUG_ROOT: &str = "/usr/lib/debug";

/// The bytes of an ELF image: a mapped file, or a copy (the vDSO).
pub enum Bytes {
    /// A file mapped read-only.
    Mapped(Mapped),
    /// An image copied from memory.
    Owned(Vec<u8>),
}

impl Bytes {
    /// The image.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m.bytes(),
            Bytes::Owned(v) => v,
        }
    }
}

/// A byte range of an image, as framehop's section data.
#[derive(Clone)]
pub struct Section {
    map: Arc<Bytes>,
    range: Range<usize>,
}

impl Deref for Section {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map.bytes()[self.range.clone()]
    }
}

impl std::fmt::Debug for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Section({:?})", self.range)
    }
}

// SAFETY: a section derefs into bytes that an `Arc` keeps alive and never moves (a read-only
// mapping, or a vector never changed after the image was copied), and its clones share them.
unsafe impl gimli::StableDeref for Section {}
// SAFETY: as above; a clone derefs to the same bytes.
unsafe impl gimli::CloneStableDeref for Section {}

/// DWARF read straight from the mapped sections.
type Reader = gimli::EndianReader<gimli::RunTimeEndian, Section>;

/// The DWARF of a file, for inlined functions: addr2line's context, which fills its caches as it
/// is used (hence the lock).
struct Dwarf(std::sync::Mutex<addr2line::Context<Reader>>);

/// One ELF file.
pub struct Elf {
    map: Arc<Bytes>,
    /// GNU build id, hex, when the file has one.
    pub build_id: Option<String>,
    /// Load segments: (virtual address, file offset, file size, executable).
    segments: Vec<(u64, u64, u64, bool)>,
    /// Sections by name: (address range, file range).
    sections: HashMap<Vec<u8>, (Range<u64>, Range<usize>)>,
    symbols: OnceLock<SymbolTable>,
    /// Whether the debug information is there to be read (present and not compressed).
    has_dwarf: bool,
    little_endian: bool,
    dwarf: OnceLock<Option<Dwarf>>,
    /// Where the file was read from, to find its separate debug file.
    path: Option<PathBuf>,
    /// The separate debug file (a distribution's `-dbg`/`-dbgsym` package), looked for on first use.
    debug: OnceLock<Option<Box<Elf>>>,
}

impl Elf {
    /// Maps and indexes the file at `path`; `None` when it is not a readable ELF file.
    pub fn open(path: &str) -> Option<Elf> {
        let mut elf = Elf::parse(Bytes::Mapped(Mapped::open(Path::new(path)).ok()?))?;
        elf.path = Some(PathBuf::from(path));
        Some(elf)
    }

    /// Indexes an image; `None` when it is not ELF.
    pub fn parse(bytes: Bytes) -> Option<Elf> {
        let map = Arc::new(bytes);
        let file = object::File::parse(map.bytes()).ok()?;
        let build_id =
            file.build_id().ok().flatten().map(|b| b.iter().map(|x| format!("{x:02x}")).collect());
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                let exec =
                    matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0);
                (s.address(), off, size, exec)
            })
            .collect();
        let has_dwarf = file.section_by_name(".debug_info").is_some_and(|s| {
            s.compressed_file_range().is_ok_and(|r| r.format == object::CompressionFormat::None)
        });
        let little_endian = file.is_little_endian();
        let sections = file
            .sections()
            .filter_map(|s| {
                let name = s.name_bytes().ok()?.to_vec();
                let (off, size) = s.file_range()?;
                let file = usize::try_from(off).ok()?..usize::try_from(off + size).ok()?;
                Some((name, (s.address()..s.address() + s.size(), file)))
            })
            .collect();
        Some(Elf {
            map,
            build_id,
            segments,
            sections,
            symbols: OnceLock::new(),
            has_dwarf,
            little_endian,
            dwarf: OnceLock::new(),
            path: None,
            debug: OnceLock::new(),
        })
    }

    /// The load bias of a mapping of file offset `pgoff` at `start` (executable or not): the
    /// address minus the file's stated (virtual) address. One file page may hold the end of one
    /// segment and the start of the next, so the segment with the mapping's permission wins.
    pub fn bias(&self, start: u64, pgoff: u64, exec: bool) -> Option<u64> {
        let covers = |s: &&(u64, u64, u64, bool)| s.1 & !0xfff <= pgoff && pgoff < s.1 + s.2.max(1);
        let (vaddr, off, _, _) = self
            .segments
            .iter()
            .filter(covers)
            .find(|s| s.3 == exec)
            .or_else(|| self.segments.iter().find(covers))?;
        Some(start.wrapping_add(off.wrapping_sub(pgoff)).wrapping_sub(*vaddr))
    }

    /// The symbol table, parsed on first use. A stripped file (no `.symtab`) takes the symbols of
    /// its separate debug file too, where one is installed.
    pub fn symbols(&self) -> &SymbolTable {
        self.symbols.get_or_init(|| {
            let debug = self.debug_file().filter(|_| !self.sections.contains_key(&b".symtab"[..]));
            let images: Vec<&[u8]> =
                std::iter::once(self.map.bytes()).chain(debug.map(|d| d.map.bytes())).collect();
            SymbolTable::parse(&images)
        })
    }

    /// Whether the symbol table and the DWARF have been read (their first use costs the most).
    pub fn names_loaded(&self) -> bool {
        self.symbols.get().is_some() && (!self.has_dwarf || self.dwarf.get().is_some())
    }

    /// The separate debug file of a stripped file, as gdb finds it: by build id under
    /// [`DEBUG_ROOT`]`/.build-id/`, or by the name in `.gnu_debuglink` next to the file, in its
    /// `.debug/` folder or under [`DEBUG_ROOT`]. A file whose build id differs is not it.
    fn debug_file(&self) -> Option<&Elf> {
        self.debug
            .get_or_init(|| {
                let mut candidates = Vec::new();
                if let Some(id) = self.build_id.as_deref().filter(|id| id.len() > 2) {
                    candidates.push(Path::new(DEBUG_ROOT).join(format!(
                        ".build-id/{}/{}.debug",
                        &id[..2],
                        &id[2..]
                    )));
                }
                if let (Some(name), Some(dir)) =
                    (self.debuglink(), self.path.as_deref().and_then(Path::parent))
                {
                    candidates.push(dir.join(&name));
                    candidates.push(dir.join(".debug").join(&name));
                    candidates.push(
                        Path::new(DEBUG_ROOT)
                            .join(dir.strip_prefix("/").unwrap_or(dir))
                            .join(&name),
                    );
                }
                candidates
                    .into_iter()
                    .filter(|c| Some(c.as_path()) != self.path.as_deref())
                    .find_map(|c| {
                        let elf = Elf::parse(Bytes::Mapped(Mapped::open(&c).ok()?))?;
                        (elf.build_id.is_none()
                            || self.build_id.is_none()
                            || elf.build_id == self.build_id)
                            .then(|| Box::new(elf))
                    })
            })
            .as_deref()
    }

    /// The file name in `.gnu_debuglink` (up to its NUL), if any.
    fn debuglink(&self) -> Option<String> {
        let (_, file) = self.sections.get(&b".gnu_debuglink"[..])?;
        let bytes = self.map.bytes().get(file.clone())?;
        let name = &bytes[..bytes.iter().position(|&b| b == 0)?];
        (!name.is_empty() && !name.contains(&b'/'))
            .then(|| String::from_utf8_lossy(name).into_owned())
    }

    /// The functions inlined at `svma` (an address in the file's own terms), outermost first,
    /// demangled; empty where nothing is inlined there or the file has no readable DWARF.
    pub fn inlined(&self, svma: u64) -> Vec<String> {
        if !self.has_dwarf {
            return self
                .debug_file()
                .filter(|d| d.has_dwarf)
                .map_or_else(Vec::new, |d| d.inlined(svma));
        }
        let Some(Dwarf(ctx)) = self.dwarf.get_or_init(|| self.load_dwarf()).as_ref() else {
            return Vec::new();
        };
        let ctx = ctx.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(mut frames) = ctx.find_frames(svma).skip_all_loads() else { return Vec::new() };
        let mut names = Vec::new();
        while let Ok(Some(f)) = frames.next() {
            let Some(name) =
                f.function.as_ref().and_then(|n| n.raw_name().ok()).map(|n| demangle(&n))
            else {
                return Vec::new();
            };
            // An inlined Rust generic has a bare DWARF name (`atomic_add<u64, u64>`); the file it
            // was written in says whether it comes from the standard library.
            let file = f.location.and_then(|l| l.file);
            names.push(match file.and_then(rust_library) {
                Some(lib) if !name.contains("::") => format!("{lib}::{name}"),
                // A closure's bare name (`{closure#2}`) says where it is written.
                _ if name.starts_with("{closure") => {
                    match file.and_then(|f| f.rsplit('/').next()) {
                        Some(base) => format!("{name} in {base}"),
                        None => name,
                    }
                }
                _ => name,
            });
        }
        // addr2line gives the innermost first and ends with the function the code is in.
        names.pop();
        names.reverse();
        names
    }

    fn load_dwarf(&self) -> Option<Dwarf> {
        if !self.has_dwarf {
            return None;
        }
        let endian = if self.little_endian {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let section = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            let range = match self.sections.get(id.name().as_bytes()) {
                Some((_, file)) if file.end <= self.map.bytes().len() => file.clone(),
                _ => 0..0,
            };
            Ok(gimli::EndianReader::new(Section { map: self.map.clone(), range }, endian))
        };
        let dwarf = gimli::Dwarf::load(section).ok()?;
        addr2line::Context::from_dwarf(dwarf).ok().map(|c| Dwarf(std::sync::Mutex::new(c)))
    }

    /// The unwind sections for framehop.
    pub fn section_info(self: &Arc<Elf>) -> SectionInfo {
        SectionInfo(self.clone())
    }
}

/// framehop's view of an [`Elf`].
pub struct SectionInfo(Arc<Elf>);

impl framehop::ModuleSectionInfo<Section> for SectionInfo {
    fn base_svma(&self) -> u64 {
        0
    }

    fn section_svma_range(&mut self, name: &[u8]) -> Option<Range<u64>> {
        self.0.sections.get(name).map(|(svma, _)| svma.clone())
    }

    fn section_data(&mut self, name: &[u8]) -> Option<Section> {
        let (_, file) = self.0.sections.get(name)?;
        (file.end <= self.0.map.bytes().len())
            .then(|| Section { map: self.0.map.clone(), range: file.clone() })
    }
}

/// Symbols of one file sorted by address: (address, size, name as stored), one per address. A
/// name is demangled the first time a lookup lands on it: demangling every symbol of `cc1` (C++,
/// 30 MB) when it was first unwound through was a third of the sampler's CPU beside `make -j`.
#[derive(Default)]
pub struct SymbolTable {
    by_addr: Vec<Symbol>,
}

/// One entry of a [`SymbolTable`].
struct Symbol {
    addr: u64,
    size: u64,
    name: Box<str>,
    demangled: OnceLock<String>,
}

impl Symbol {
    fn new(addr: u64, size: u64, name: &str) -> Symbol {
        Symbol { addr, size, name: name.into(), demangled: OnceLock::new() }
    }
}

impl SymbolTable {
    /// Reads the symbol tables (`.symtab` and `.dynsym`) of ELF images of one file (the file and
    /// its separate debug file, whose addresses are the same); an image that is not ELF adds none.
    pub fn parse(images: &[&[u8]]) -> SymbolTable {
        let files: Vec<object::File> =
            images.iter().filter_map(|d| object::File::parse(*d).ok()).collect();
        // At one address the best symbol wins: a sized function or object over a marker
        // (`_edata`, `__bss_start`, `__TMC_END__`), global over local (`completed.0`).
        let mut all: Vec<(u64, u8, u64, &str)> = files
            .iter()
            .flat_map(|f| f.symbols().chain(f.dynamic_symbols()))
            .filter(|s| s.address() != 0 && s.is_definition())
            .filter_map(|s| {
                let sized = s.size() > 0 && matches!(s.kind(), SymbolKind::Text | SymbolKind::Data);
                let rank = 2 * u8::from(sized) + u8::from(s.is_global());
                Some((s.address(), rank, s.size(), s.name().ok()?))
            })
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        all.dedup_by_key(|s| s.0);
        SymbolTable {
            by_addr: all.into_iter().map(|(a, _, size, n)| Symbol::new(a, size, n)).collect(),
        }
    }

    /// The symbol whose extent holds `vaddr` and the offset into it; a symbol without a size
    /// names its own address only.
    pub fn lookup(&self, vaddr: u64) -> Option<(&str, u64)> {
        let end = self.by_addr.partition_point(|s| s.addr <= vaddr);
        // A small symbol may sit inside a larger one: look back a few entries for one that covers.
        self.by_addr[end.saturating_sub(8)..end].iter().rev().find_map(|s| {
            let off = vaddr - s.addr;
            (off < s.size || off == 0)
                .then(|| (s.demangled.get_or_init(|| demangle(&s.name)).as_str(), off))
        })
    }
}

/// `core`, `alloc` or `std` for a source file of Rust's standard library
/// (`/rustc/<hash>/library/core/src/sync/atomic.rs`).
fn rust_library(file: &str) -> Option<&'static str> {
    ["core", "alloc", "std"].into_iter().find(|lib| file.contains(&format!("/library/{lib}/src/")))
}

/// A symbol's readable name: Rust (legacy and v0) and C++ (Itanium) demangled, without C++
/// parameter lists; anything else as it is.
pub fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z")
        && let Ok(sym) = cpp_demangle::Symbol::new(name)
    {
        let opts = cpp_demangle::DemangleOptions::new().no_params();
        if let Ok(d) = sym.demangle_with_options(&opts) {
            return d;
        }
    }
    name.to_string()
}

/// Opened files, by path and by build id (one copy of a library reached by two paths).
#[derive(Default)]
pub struct Files {
    by_path: HashMap<String, (Stamp, Option<Arc<Elf>>)>,
    by_build_id: HashMap<String, Arc<Elf>>,
}

/// What tells a file rebuilt in place from the one opened before.
type Stamp = Option<(u64, u64, u64, std::time::SystemTime)>;

fn stamp(path: &str) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.modified().ok()?))
}

impl Files {
    /// The file at `path`, opened once (again when it changed); `None` when it is not a readable
    /// ELF file.
    pub fn get(&mut self, path: &str) -> Option<Arc<Elf>> {
        let now = stamp(path);
        if let Some((seen, f)) = self.by_path.get(path)
            && *seen == now
        {
            return f.clone();
        }
        let elf = Elf::open(path).map(Arc::new).map(|e| match &e.build_id {
            Some(id) => self.by_build_id.entry(id.clone()).or_insert(e).clone(),
            None => e,
        });
        self.by_path.insert(path.to_string(), (now, elf.clone()));
        elf
    }

    /// The files opened by every run of this process: a sweep's runs map the same program and
    /// libraries, and each is read and indexed once rather than once per run.
    pub fn shared() -> std::sync::MutexGuard<'static, Files> {
        static FILES: OnceLock<std::sync::Mutex<Files>> = OnceLock::new();
        FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_and_cpp_and_keeps_c() {
        assert_eq!(demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(demangle("_ZN3foo3Bar6updateEi"), "foo::Bar::update");
        assert_eq!(demangle("update_histogram"), "update_histogram");
    }

    #[test]
    fn the_symbols_of_this_test_binary_name_a_function_inside_its_extent() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let elf = Elf::open(exe.to_str().unwrap()).unwrap();
        let table = elf.symbols();
        let f = demangles_rust_and_cpp_and_keeps_c as fn() as usize as u64;
        let maps =
            super::super::symbols::parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let m = maps.iter().find(|m| m.start <= f && f < m.end).unwrap();
        let bias = elf.bias(m.start, m.offset, m.exec).unwrap();
        let (name, off) = table.lookup(f - bias).unwrap();
        assert!(name.ends_with("demangles_rust_and_cpp_and_keeps_c"), "{name}");
        assert_eq!(off, 0);
        assert!(elf.sections.contains_key(&b".eh_frame"[..]));
    }

    #[test]
    fn a_stripped_file_is_named_from_its_separate_debug_file() {
        let dir = tempfile::tempdir().unwrap();
        let (src, exe) = (dir.path().join("p.c"), dir.path().join("p"));
        std::fs::write(&src, "static int __attribute__((noinline)) hidden_step(int x) { return x * 3; }\nint main(int c, char **v) { return hidden_step(c); }\n").unwrap();
        let run = |cmd: &str, args: &[&std::ffi::OsStr]| {
            let st = std::process::Command::new(cmd).args(args).current_dir(dir.path()).status();
            assert!(st.is_ok_and(|s| s.success()), "{cmd} {args:?}");
        };
        let os = |s: &'static str| std::ffi::OsStr::new(s);
        run("cc", &[os("-O1"), os("-o"), exe.as_os_str(), src.as_os_str()]);
        let hidden = |path: &std::path::Path| -> bool {
            let elf = Elf::open(path.to_str().unwrap()).unwrap();
            elf.symbols().by_addr.iter().any(|s| &*s.name == "hidden_step")
        };
        assert!(hidden(&exe), "a static function is in .symtab");
        run("objcopy", &[os("--only-keep-debug"), os("p"), os("p.debug")]);
        run("strip", &[os("--strip-all"), os("p")]);
        std::fs::rename(dir.path().join("p.debug"), dir.path().join("elsewhere.debug")).unwrap();
        assert!(!hidden(&exe), "stripped, and no debug file found");
        std::fs::rename(dir.path().join("elsewhere.debug"), dir.path().join("p.debug")).unwrap();
        run("objcopy", &[os("--add-gnu-debuglink=p.debug"), os("p")]);
        assert!(hidden(&exe), "named from p.debug, found by .gnu_debuglink");
    }

    #[test]
    fn markers_lose_to_sized_symbols_and_nothing_is_named_past_its_end() {
        let t = SymbolTable {
            by_addr: vec![
                Symbol::new(0x100, 0x40, "histogram_lock"),
                Symbol::new(0x200, 0, "_edata"),
            ],
        };
        assert_eq!(t.lookup(0x108), Some(("histogram_lock", 8)));
        assert_eq!(t.lookup(0x140), None);
        assert_eq!(t.lookup(0x200), Some(("_edata", 0)));
        assert_eq!(t.lookup(0x208), None);
    }
}
