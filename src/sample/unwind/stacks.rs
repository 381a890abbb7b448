//! User call stacks of the traced processes: unwound with framehop (DWARF CFI from `.eh_frame`,
//! frame pointers where there is none) from a sample's registers and stack copy, or from a
//! blocked thread's `sp` and `pc` (the end of `/proc/<tid>/syscall`) and its stack read with
//! `process_vm_readv`; named by ELF symbol; interned, so a stack is a small number.

use super::elf::{Bytes, Elf, Files, Section};
use super::regs::Regs;
use super::symbols::parse_maps;
use crate::sample::proc::procfs;
use framehop::{MayAllocateDuringUnwind, Module, Unwinder};
use std::collections::HashMap;
use std::sync::Arc;

type Native = framehop::UnwinderNative<Section, MayAllocateDuringUnwind>;
type Cache = framehop::CacheNative<MayAllocateDuringUnwind>;

/// An interned stack.
pub type StackId = u32;

/// Bytes of a blocked thread's stack read for unwinding.
pub const BLOCKED_STACK_BYTES: usize = 32 * 1024;
/// Frames kept per stack at most (the outermost are dropped past it).
const MAX_FRAMES: usize = 128;
/// Frame records tried as the frame pointer of a stack unwound without one.
const FP_CANDIDATES: usize = 4;

/// The module of a frame at an address in no module.
pub const UNMAPPED: &str = "?";

/// One frame: the function (or `module+0xoffset` without a symbol) and its module.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// Demangled function name, or `module+0x…` when no symbol covers the address.
    pub function: String,
    /// File name of the module (`libc.so.6`), `[vdso]`, or `?` for an unmapped address.
    pub module: String,
}

/// A module mapped in a process.
struct Mod {
    range: std::ops::Range<u64>,
    bias: u64,
    elf: Arc<Elf>,
    name: String,
}

/// What the unwinder knows of one process.
struct Proc {
    unwinder: Native,
    mods: Vec<Mod>,
    /// Whether /proc/<pid>/maps was read since the last miss.
    fresh: bool,
}

/// Unwinds, names and interns stacks for the processes of one run.
pub struct Stacks {
    vdso: Option<Arc<Elf>>,
    procs: HashMap<i32, Proc>,
    cache: Cache,
    frames: Vec<Frame>,
    frame_ids: HashMap<Frame, u32>,
    stacks: Vec<Vec<u32>>,
    stack_ids: HashMap<Vec<u32>, StackId>,
    /// Named addresses: (file, address in it) → frames, outermost first (the function the
    /// address is in, then the functions inlined there). Keyed by file, not process: the forty
    /// short processes of `xargs -P 2 sha256sum` each named the same code anew.
    named: HashMap<(usize, u64), Vec<u32>>,
    /// The files met in this run by path, opened (or found changed) once: every process mapping
    /// the C library asked whether it changed on disk since, a `statx` each.
    files: HashMap<String, Option<Arc<Elf>>>,
    blocked: HashMap<(i32, u64, u64), Option<StackId>>,
    /// Why a blocked thread's stack could not be read, once.
    pub refusal: Option<String>,
    /// CPU seconds spent opening files: a one-off per module.
    pub load_cpu_s: f64,
}

impl Default for Stacks {
    fn default() -> Stacks {
        Stacks::new()
    }
}

impl Stacks {
    /// An empty table.
    pub fn new() -> Stacks {
        Stacks {
            vdso: own_vdso().map(Arc::new),
            procs: HashMap::new(),
            cache: Cache::new(),
            frames: Vec::new(),
            frame_ids: HashMap::new(),
            stacks: Vec::new(),
            stack_ids: HashMap::new(),
            named: HashMap::new(),
            files: HashMap::new(),
            blocked: HashMap::new(),
            refusal: None,
            load_cpu_s: 0.0,
        }
    }

    /// The stack of a thread blocked in the kernel, from the user `sp` and `pc` that end its
    /// `/proc/<tid>/syscall`: its stack memory is read with `process_vm_readv` and unwound.
    /// Cached per (thread, sp, pc): a thread found again in the same wait costs a lookup.
    /// `still_there` is asked after the memory was read: a thread that left its wait meanwhile
    /// may have overwritten the stack, so its copy is thrown away. `None` when the memory cannot
    /// be read (see [`Stacks::refusal`]), the thread moved, or nothing unwinds.
    pub fn blocked(
        &mut self,
        pid: i32,
        tid: i32,
        sp: u64,
        pc: u64,
        still_there: impl FnOnce() -> bool,
    ) -> Option<StackId> {
        if let Some(&hit) = self.blocked.get(&(tid, sp, pc)) {
            return hit;
        }
        let stack = match read_stack(pid, sp, BLOCKED_STACK_BYTES) {
            Ok(s) => s,
            Err(e) => {
                if e.kind() == std::io::ErrorKind::PermissionDenied && self.refusal.is_none() {
                    self.refusal = Some(format!(
                        "stacks of blocked threads not readable here (process_vm_readv: {e}): waits named by address only"
                    ));
                }
                return None;
            }
        };
        if !still_there() {
            return None;
        }
        self.blocked_from(pid, tid, sp, pc, &stack)
    }

    /// The stack a thread blocked at `sp` and `pc` had when it was last unwound there.
    pub fn blocked_cached(&self, tid: i32, sp: u64, pc: u64) -> Option<StackId> {
        self.blocked.get(&(tid, sp, pc)).copied().flatten()
    }

    /// The stack of a blocked thread from a copy of its stack memory taken while it waited
    /// (`stack`, the bytes from `sp` up), cached as [`Stacks::blocked`] is.
    pub fn blocked_from(
        &mut self,
        pid: i32,
        tid: i32,
        sp: u64,
        pc: u64,
        stack: &[u8],
    ) -> Option<StackId> {
        if let Some(&hit) = self.blocked.get(&(tid, sp, pc)) {
            return hit;
        }
        let id = self.unwind(pid, Regs { pc, sp, fp: 0, lr: 0 }, stack);
        self.blocked.insert((tid, sp, pc), id);
        id
    }

    /// Unwinds from `regs` over `stack` (the bytes from `regs.sp` up) in process `pid`, names the
    /// frames and interns the stack (outermost frame first).
    pub fn unwind(&mut self, pid: i32, regs: Regs, stack: &[u8]) -> Option<StackId> {
        let mut addrs = self.addresses(pid, regs, stack);
        // A caller in a module not known yet (the program itself when only the libraries came as
        // mmap records): read the maps once more and unwind again.
        let covers = |s: &Stacks, a: u64| {
            s.procs.get(&pid).is_some_and(|p| p.mods.iter().any(|m| m.range.contains(&a)))
        };
        if let Some(&miss) = addrs.iter().find(|&&a| !covers(self, a)) {
            let before = self.procs.get(&pid).map_or(0, |p| p.mods.len());
            self.ensure(pid, miss);
            if self.procs.get(&pid).map_or(0, |p| p.mods.len()) > before {
                addrs = self.addresses(pid, regs, stack);
            }
        }
        if addrs.is_empty() {
            return None;
        }
        let mut frames: Vec<u32> = Vec::with_capacity(addrs.len());
        for &a in addrs.iter().rev() {
            frames.extend(self.frames_at(pid, a));
        }
        frames.dedup_by(|a, b| a == b && self.frames[*a as usize].function.contains("+0x"));
        Some(self.intern(frames))
    }

    /// Return addresses, innermost first, adjusted for lookup (a return address minus one).
    ///
    /// A blocked thread's frame pointer is not known (`/proc/<tid>/syscall` ends with sp and pc
    /// only), and the unwinding stops at the first caller whose unwind rule needs it: code built
    /// with frame pointers, such as Rust's standard library, whose `Mutex::lock_contended` then
    /// hid the program's own frames. The frame pointer is then taken from the stack itself: the
    /// lowest [`FP_CANDIDATES`] frame records above `sp` (a slot holding 0 or an address higher
    /// up the stack, followed by a return address into a mapped module) are tried, and the
    /// longest unwinding is kept.
    fn addresses(&mut self, pid: i32, regs: Regs, stack: &[u8]) -> Vec<u64> {
        self.ensure(pid, regs.pc);
        let mut best = self.unwind_from(pid, regs, stack);
        if regs.fp == 0 {
            let records = self.procs.get(&pid).map(|p| {
                frame_records(stack, regs.sp, |a| p.mods.iter().any(|m| m.range.contains(&a)))
            });
            for fp in records.unwrap_or_default() {
                let tried = self.unwind_from(pid, Regs { fp, ..regs }, stack);
                if tried.len() > best.len() {
                    best = tried;
                }
            }
        }
        if best.is_empty() {
            best.push(regs.pc);
        }
        best
    }

    fn unwind_from(&mut self, pid: i32, regs: Regs, stack: &[u8]) -> Vec<u64> {
        let Some(p) = self.procs.get(&pid) else { return vec![regs.pc] };
        let sp = regs.sp;
        let mut read = |addr: u64| -> Result<u64, ()> {
            let off = addr.checked_sub(sp).ok_or(())? as usize;
            let b = stack.get(off..off + 8).ok_or(())?;
            Ok(u64::from_le_bytes(b.try_into().map_err(|_| ())?))
        };
        let mut out = Vec::new();
        let mut it = p.unwinder.iter_frames(regs.pc, native_regs(regs), &mut self.cache, &mut read);
        while let Ok(Some(f)) = it.next() {
            out.push(f.address_for_lookup());
            if out.len() >= MAX_FRAMES {
                break;
            }
        }
        out
    }

    /// A new sweep: a process's maps may be read again on the next miss (a library loaded since,
    /// or maps read while the process was still being exec'd).
    pub fn next_sweep(&mut self) {
        for p in self.procs.values_mut() {
            p.fresh = false;
        }
    }

    /// Makes sure the process's modules are known and cover `pc` (maps re-read once on a miss).
    fn ensure(&mut self, pid: i32, pc: u64) {
        let known =
            self.procs.get(&pid).is_some_and(|p| p.mods.iter().any(|m| m.range.contains(&pc)));
        let fresh = self.procs.get(&pid).is_some_and(|p| p.fresh);
        if known || fresh {
            return;
        }
        self.read_maps(pid);
    }

    fn read_maps(&mut self, pid: i32) {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return };
        let maps = parse_maps(&text);
        for m in maps.iter().filter(|m| m.exec) {
            if m.path.starts_with('/') {
                self.add_mapping(pid, m.start, m.end - m.start, m.offset, &m.path.clone());
            } else if m.path == "[vdso]"
                && let Some(v) = self.vdso.clone()
            {
                self.add_module(pid, m.start..m.end, m.start, v, "[vdso]".into());
            }
        }
        self.procs.entry(pid).or_insert_with(new_proc).fresh = true;
    }

    /// Adds an executable mapping of `path` (from an mmap record or the maps file).
    pub fn add_mapping(&mut self, pid: i32, addr: u64, len: u64, pgoff: u64, path: &str) {
        let elf = match self.files.get(path) {
            Some(elf) => elf.clone(),
            None => {
                let cpu0 = procfs::thread_cpu_s();
                let elf = Files::shared().get(path);
                self.load_cpu_s += procfs::thread_cpu_s() - cpu0;
                self.files.insert(path.to_string(), elf.clone());
                elf
            }
        };
        let Some(elf) = elf else { return };
        let Some(bias) = elf.bias(addr, pgoff, true) else { return };
        let name = path.rsplit('/').next().unwrap_or(path).to_string();
        self.add_module(pid, addr..addr + len, bias, elf, name);
    }

    fn add_module(
        &mut self,
        pid: i32,
        range: std::ops::Range<u64>,
        bias: u64,
        elf: Arc<Elf>,
        name: String,
    ) {
        let p = self.procs.entry(pid).or_insert_with(new_proc);
        if p.mods.iter().any(|m| m.range.start == range.start) {
            return;
        }
        let module = Module::new(name.clone(), range.clone(), bias, elf.section_info());
        p.unwinder.add_module(module);
        p.mods.push(Mod { range, bias, elf, name });
    }

    /// A new process forked from `parent`: same modules.
    pub fn fork(&mut self, parent: i32, child: i32) {
        if let Some(p) = self.procs.get(&parent) {
            let copy = Proc {
                unwinder: p.unwinder.clone(),
                mods: p
                    .mods
                    .iter()
                    .map(|m| Mod {
                        range: m.range.clone(),
                        bias: m.bias,
                        elf: m.elf.clone(),
                        name: m.name.clone(),
                    })
                    .collect(),
                fresh: false,
            };
            self.procs.insert(child, copy);
        }
    }

    /// The process executed a new program: its modules start anew.
    pub fn exec(&mut self, pid: i32) {
        self.procs.insert(pid, new_proc());
    }

    /// The frames of an address, outermost first: the function it is in (by ELF symbol), then
    /// the functions inlined there (by DWARF, where the file has it).
    fn frames_at(&mut self, pid: i32, addr: u64) -> Vec<u32> {
        let module =
            self.procs.get(&pid).and_then(|p| p.mods.iter().find(|m| m.range.contains(&addr)));
        // The file's identity: every `Elf` stays alive as long as this table holds it in a
        // module or in `files`, so its address is not reused meanwhile.
        let key = module.map(|m| (Arc::as_ptr(&m.elf) as usize, addr.wrapping_sub(m.bias)));
        if let Some(f) = key.and_then(|k| self.named.get(&k)) {
            return f.clone();
        }
        let mut frames = Vec::new();
        // A file's first lookup reads its symbol table (and its debug file's) and its DWARF: a
        // one-off, counted apart from the sweeps' cost like opening the file.
        let mut first_use_s = 0.0;
        match module {
            Some(m) => {
                let cpu0 = (!m.elf.names_loaded()).then(procfs::thread_cpu_s);
                let svma = addr.wrapping_sub(m.bias);
                let function = match m.elf.symbols().lookup(svma) {
                    Some((name, _)) => name.to_string(),
                    None => format!("{}+{svma:#x}", m.name),
                };
                let module = m.name.clone();
                let inlined = m.elf.inlined(svma);
                first_use_s = cpu0.map_or(0.0, |c| procfs::thread_cpu_s() - c);
                frames.push(Frame { function, module: module.clone() });
                frames.extend(
                    inlined.into_iter().map(|function| Frame { function, module: module.clone() }),
                );
            }
            None => frames.push(Frame { function: format!("{addr:#x}"), module: UNMAPPED.into() }),
        };
        self.load_cpu_s += first_use_s;
        let ids: Vec<u32> = frames.into_iter().map(|f| self.frame_id(f)).collect();
        // An address outside every known module may be named once its module is known.
        if let Some(k) = key {
            self.named.insert(k, ids.clone());
        }
        ids
    }

    fn frame_id(&mut self, frame: Frame) -> u32 {
        let next = self.frames.len() as u32;
        let id = *self.frame_ids.entry(frame.clone()).or_insert(next);
        if id == next {
            self.frames.push(frame);
        }
        id
    }

    fn intern(&mut self, frames: Vec<u32>) -> StackId {
        if let Some(&id) = self.stack_ids.get(&frames) {
            return id;
        }
        let id = self.stacks.len() as StackId;
        self.stacks.push(frames.clone());
        self.stack_ids.insert(frames, id);
        id
    }

    /// Interns a stack of given frames (outermost first): for stacks made of labels.
    pub fn intern_frames(&mut self, frames: &[Frame]) -> StackId {
        let ids: Vec<u32> = frames.iter().map(|f| self.frame_id(f.clone())).collect();
        self.intern(ids)
    }

    /// The frames of a stack, outermost first.
    pub fn frames(
        &self,
        id: StackId,
    ) -> impl DoubleEndedIterator<Item = &Frame> + ExactSizeIterator {
        self.stacks
            .get(id as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .map(|&f| &self.frames[f as usize])
    }

    /// Every frame and every stack (as frame indices, outermost first), for storing.
    pub fn tables(&self) -> (&[Frame], &[Vec<u32>]) {
        (&self.frames, &self.stacks)
    }
}

fn new_proc() -> Proc {
    Proc { unwinder: Native::new(), mods: Vec::new(), fresh: false }
}

#[cfg(target_arch = "x86_64")]
fn native_regs(r: Regs) -> framehop::UnwindRegsNative {
    framehop::UnwindRegsNative::new(r.pc, r.sp, r.fp)
}

#[cfg(target_arch = "aarch64")]
fn native_regs(r: Regs) -> framehop::UnwindRegsNative {
    framehop::UnwindRegsNative::new(r.lr, r.sp, r.fp)
}

/// The lowest [`FP_CANDIDATES`] frame records in `stack` (read from `sp` up): 8-aligned slots
/// whose word is 0 or an address further up this stack (the caller's frame pointer) and whose
/// next word is a return address for which `code` holds.
fn frame_records(stack: &[u8], sp: u64, code: impl Fn(u64) -> bool) -> Vec<u64> {
    let word = |off: usize| {
        stack.get(off..off + 8).map(|b| u64::from_le_bytes(b.try_into().expect("eight bytes")))
    };
    let top = sp + stack.len() as u64;
    let first = (8 - (sp % 8) as usize) % 8;
    (first..stack.len().saturating_sub(15))
        .step_by(8)
        .filter(|&off| {
            let (Some(saved), Some(ret)) = (word(off), word(off + 8)) else { return false };
            let at = sp + off as u64;
            (saved == 0 || (saved > at && saved < top)) && ret > 0x1000 && code(ret)
        })
        .take(FP_CANDIDATES)
        .map(|off| sp + off as u64)
        .collect()
}

/// Reads up to `len` bytes of `pid`'s memory from `sp` up, stopping at the first unmapped page
/// (the top of the stack).
pub(crate) fn read_stack(pid: i32, sp: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    // One remote piece per page: a transfer stops at the first unreadable piece, not before.
    let mut remote = Vec::new();
    let mut at = sp;
    let end = sp.saturating_add(len as u64);
    while at < end {
        let next = ((at / 4096) + 1) * 4096;
        let to = next.min(end);
        remote.push(libc::iovec { iov_base: at as *mut libc::c_void, iov_len: (to - at) as usize });
        at = to;
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: len };
    // SAFETY: `local` covers `buf`, which outlives the call; remote addresses are only read by the kernel.
    let n = unsafe {
        libc::process_vm_readv(pid, &local, 1, remote.as_ptr(), remote.len() as libc::c_ulong, 0)
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

/// This process's vDSO image (the kernel maps the same one into every process of an ABI).
fn own_vdso() -> Option<Elf> {
    let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").ok()?);
    let v = maps.iter().find(|m| m.path == "[vdso]")?;
    let len = (v.end - v.start) as usize;
    // SAFETY: the vDSO mapping of this process is readable for its whole length while it lives.
    let bytes = unsafe { std::slice::from_raw_parts(v.start as *const u8, len) }.to_vec();
    Elf::parse(Bytes::Owned(bytes))
}

/// Returns the innermost frames where a thread waits, named for people: the entry point into
/// the C library (or the Rust/C++ standard library) it called and the frames above it,
/// `pthread_mutex_lock ← update_histogram ← worker`. Library-internal names are normalised
/// (`___pthread_mutex_lock`, `__GI___pthread_mutex_lock` → `pthread_mutex_lock`). `None` for an
/// empty stack.
pub fn wait_site<'a>(
    frames: impl DoubleEndedIterator<Item = &'a Frame>,
    callers: usize,
) -> Option<String> {
    let inner: Vec<&Frame> = frames.rev().collect();
    let first = inner.first()?;
    let lib = |f: &Frame| is_runtime(f);
    // The innermost run of library frames ends at the entry point the program called.
    let run = if lib(first) { inner.iter().take_while(|f| lib(f)).count() } else { 0 };
    if run == inner.len() {
        // Nothing but runtime (a thread of the OpenMP runtime waiting in it): named by its
        // innermost frames outside the C library, not by the thread start at the bottom.
        let own: Vec<String> = inner
            .iter()
            .filter(|f| !is_c_library(f))
            .take(1 + callers)
            .map(|f| without_generics(&f.function))
            .collect();
        return Some(if own.is_empty() { normalise(&first.function) } else { own.join(" ← ") });
    }
    let mut parts = Vec::new();
    if run > 0 {
        parts.push(normalise(&inner[run - 1].function));
    }
    parts.extend(
        inner[run..]
            .iter()
            .take(callers + usize::from(run == 0))
            .map(|f| without_generics(&f.function)),
    );
    Some(parts.join(" ← "))
}

/// A function's name without its generic arguments, for a line a person reads: a Rust closure
/// in a thread pool is otherwise hundreds of characters of types (`std::join<u64>` → `std::join`,
/// `{closure#0}<app::{closure_env#0}>` → `{closure#0}`). A qualified self type keeps its brackets
/// (`<Vec<T> as Drop>::drop` → `<Vec as Drop>::drop`); C++ operators are left as they are.
pub fn without_generics(name: &str) -> String {
    if name.contains("operator") {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    let mut prev = ' ';
    for c in name.chars() {
        if depth > 0 {
            match c {
                '<' => depth += 1,
                // `->` in a closure's signature is no bracket.
                '>' if prev != '-' => depth -= 1,
                _ => {}
            }
        } else if c == '<' && (prev.is_alphanumeric() || matches!(prev, '_' | '}' | '>')) {
            depth = 1;
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Modules of the C library itself, the loader and the vDSO.
const C_LIBRARY: [&str; 5] = ["libc.so", "libpthread.so", "ld-linux", "libc-", "[vdso]"];
/// Language runtimes besides the C library.
const RUNTIMES: [&str; 4] = ["libstdc++.so", "libc++.so", "libgcc_s.so", "libgomp.so"];

/// Frames of the C library itself (and the loader and the vDSO).
fn is_c_library(f: &Frame) -> bool {
    C_LIBRARY.iter().any(|l| f.module.starts_with(l))
}

/// Frames of the C library and the language runtimes: where a wait's name starts.
pub fn is_runtime(f: &Frame) -> bool {
    is_c_library(f)
        || RUNTIMES.iter().any(|l| f.module.starts_with(l))
        || ["std::", "core::", "alloc::", "<std::", "<core::", "<alloc::"]
            .iter()
            .any(|p| f.function.starts_with(p))
}

/// A C library name as documented: `___pthread_mutex_lock` → `pthread_mutex_lock`,
/// `__GI___nanosleep` → `nanosleep`, `__libc_read` → `read`, `___pthread_cond_timedwait64` →
/// `pthread_cond_timedwait`.
pub fn normalise(name: &str) -> String {
    let n = name.strip_prefix("__GI_").unwrap_or(name);
    let n = n.strip_prefix("__libc_").unwrap_or(n).trim_start_matches('_');
    let n = n.strip_suffix("_time64").unwrap_or(n);
    let n = if n.starts_with("pthread_") { n.strip_suffix("64").unwrap_or(n) } else { n };
    if n.is_empty() { name.to_string() } else { n.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(function: &str, module: &str) -> Frame {
        Frame { function: function.into(), module: module.into() }
    }

    #[test]
    fn a_wait_is_named_by_the_library_entry_and_its_callers() {
        let stack = [
            f("clone3", "libc.so.6"),
            f("start_thread", "libc.so.6"),
            f("worker", "behave"),
            f("update_histogram", "behave"),
            f("___pthread_mutex_lock", "libc.so.6"),
            f("__lll_lock_wait", "libc.so.6"),
        ];
        assert_eq!(
            wait_site(stack.iter(), 2).unwrap(),
            "pthread_mutex_lock ← update_histogram ← worker"
        );
        let own = [f("main", "prog"), f("spin_wait", "prog")];
        assert_eq!(wait_site(own.iter(), 2).unwrap(), "spin_wait ← main");
        assert_eq!(wait_site([].iter(), 2), None);
        let pool = [
            f("clone3", "libc.so.6"),
            f("start_thread", "libc.so.6"),
            f("libgomp.so.1+0x1b9aa", "libgomp.so.1"),
            f("libgomp.so.1+0x1d2c5", "libgomp.so.1"),
        ];
        assert_eq!(
            wait_site(pool.iter(), 2).unwrap(),
            "libgomp.so.1+0x1d2c5 ← libgomp.so.1+0x1b9aa"
        );
    }

    #[test]
    fn frame_records_are_a_saved_frame_pointer_then_a_return_address() {
        let sp = 0x7000_0000u64;
        let words: [u64; 8] = [
            0x5555_1234, // a return address with no saved frame pointer below it
            sp + 0x30,   // a saved frame pointer further up…
            0x5555_2000, // …then a return address: a record at sp + 16
            sp - 8,      // below the slot: not a frame pointer
            0x5555_3000,
            0, // the outermost record (frame pointer 0)
            0x5555_4000,
            7, // neither 0 nor on the stack
        ];
        let stack: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let code = |a: u64| (0x5555_0000..0x5556_0000).contains(&a);
        assert_eq!(frame_records(&stack, sp, code), vec![sp + 8, sp + 40]);
        assert!(frame_records(&stack, sp, |_| false).is_empty());
    }

    #[test]
    fn generic_arguments_are_left_out_of_a_wait_site() {
        assert_eq!(without_generics("std::join<u64>"), "std::join");
        assert_eq!(
            without_generics("{closure#0}<app::pool::{closure#1}<fn() -> u64>, Vec<u8>> in zoo.rs"),
            "{closure#0} in zoo.rs"
        );
        assert_eq!(
            without_generics("<alloc::vec::Vec<T> as core::ops::Drop>::drop"),
            "<alloc::vec::Vec as core::ops::Drop>::drop"
        );
        assert_eq!(without_generics("std::operator<< <char>"), "std::operator<< <char>");
        assert_eq!(without_generics("update_histogram"), "update_histogram");
        let stack = [f("worker<Histogram>", "app"), f("___pthread_mutex_lock", "libc.so.6")];
        assert_eq!(wait_site(stack.iter(), 2).unwrap(), "pthread_mutex_lock ← worker");
    }

    #[test]
    fn c_library_names_are_normalised() {
        assert_eq!(normalise("__GI___nanosleep"), "nanosleep");
        assert_eq!(normalise("___pthread_cond_timedwait64"), "pthread_cond_timedwait");
        assert_eq!(normalise("__libc_read"), "read");
        assert_eq!(normalise("__clock_nanosleep_time64"), "clock_nanosleep");
        assert_eq!(normalise("__"), "__");
    }

    #[inline(never)]
    fn capture_here(stacks: &mut Stacks) -> Option<StackId> {
        let (sp, pc): (u64, u64);
        // SAFETY: reads the stack pointer and the address of the next instruction, nothing else.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::asm!("mov {sp}, rsp", "lea {pc}, [rip]", sp = out(reg) sp, pc = out(reg) pc)
        };
        #[cfg(not(target_arch = "x86_64"))]
        return None;
        let me = std::process::id() as i32;
        stacks.blocked(me, me, sp, pc, || true)
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn unwinds_this_thread_through_its_callers() {
        let mut stacks = Stacks::new();
        let id = capture_here(&mut stacks).expect("a stack");
        let names: Vec<&str> = stacks.frames(id).map(|f| f.function.as_str()).collect();
        assert!(names.last().unwrap().ends_with("capture_here"), "{names:?}");
        assert!(
            names.iter().any(|n| n.ends_with("unwinds_this_thread_through_its_callers")),
            "the caller is found by DWARF unwinding: {names:?}"
        );
        assert!(names.len() >= 4, "{names:?}");
    }
}
