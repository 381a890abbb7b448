//! Synchronisation objects everyone meets, recognised by the symbol they live in or the function
//! that waits on them, with a human name and advice that fits them. Only objects verified on real
//! programs are listed (docs/findings.md says which).

use crate::analysis::threads::PointThreads;
use crate::results::Class;

/// Which well-known object it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Id {
    /// CPython's global interpreter lock.
    Gil,
    /// glibc malloc's main arena lock.
    MainArena,
    /// An OpenMP barrier.
    OmpBarrier,
    /// Go's scheduler parking a thread (an M) it has no runnable goroutine for.
    GoIdleM,
}

/// A well-known object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// Which one it is.
    pub id: Id,
    /// What it is, in words.
    pub what: &'static str,
    /// Whether it serialises threads by design (a lock), whatever its futex operation looks like.
    pub lock: bool,
    /// What to try.
    pub advice: &'static str,
}

const TABLE: &[(&str, Known)] = &[
    (
        "!_PyRuntime+",
        Known {
            id: Id::Gil,
            what: "CPython's global interpreter lock (GIL): one thread runs Python code at a time",
            lock: true,
            advice: "threads do not run Python code in parallel: use processes (multiprocessing, concurrent.futures.ProcessPoolExecutor), move the hot loop into code that releases the GIL (NumPy, a C/Cython/Rust extension), or a free-threaded CPython build (3.13t and later)",
        },
    ),
    (
        "!main_arena+",
        Known {
            id: Id::MainArena,
            what: "glibc malloc's main arena lock",
            lock: true,
            advice: "threads contend on malloc: allocate less in the hot loop, reuse buffers, raise MALLOC_ARENA_MAX or use a thread-caching allocator (jemalloc, mimalloc, tcmalloc)",
        },
    ),
    (
        "gomp_barrier_wait",
        Known {
            id: Id::OmpBarrier,
            what: "an OpenMP barrier: threads wait for the slowest to reach the end of a parallel region",
            lock: false,
            advice: "balance the loop: schedule(dynamic) or schedule(guided) for uneven iterations, smaller chunks, or nowait where the barrier is not needed",
        },
    ),
    ("runtime.stopm", GO_IDLE),
    ("runtime.runqgrab", GO_IDLE),
    ("runtime.sysmon", GO_IDLE),
];

/// Go's scheduler threads without a goroutine to run: parked (`runtime.stopm`), backing off
/// while they look for one to steal (`runtime.runqgrab`), or its monitor asleep beside them
/// (`runtime.sysmon`), whose sleeps share a name with theirs.
const GO_IDLE: Known = Known {
    id: Id::GoIdleM,
    what: "the Go scheduler had no runnable goroutine for its other threads (runtime.stopm, runtime.runqgrab): the goroutines ran one at a time, each waiting for another (a sync.Mutex, a channel)",
    lock: false,
    advice: "see what the goroutines block on (runtime/pprof's mutex and block profiles, go tool trace); hold a sync.Mutex around less work, shard the state, or give each goroutine its own and merge at the end",
};

/// Whether a well-known object is where a scheduling runtime parks the threads it has no task
/// for: a wait there is a wait for work, judged by what ran meanwhile (see `causes`).
pub fn parks_idle_threads(k: Known) -> bool {
    k.id == Id::GoIdleM
}

/// The well-known object behind a wait's name (`libpython3.11.so.1.0!_PyRuntime+0x1b4`), if any.
pub fn lookup(name: &str) -> Option<Known> {
    TABLE.iter().find(|(pattern, _)| name.contains(pattern)).map(|(_, k)| *k)
}

/// A point's threads as the findings read them: a wait on a well-known lock (CPython's GIL is a
/// condition variable, which the sampler files under `wait`) counted as `lock`, its time moved
/// with it, so that the thread-time line and the waits list say what the finding says.
pub fn as_shown(mut t: PointThreads) -> PointThreads {
    for w in &mut t.waits {
        let Some(class) = w.class.filter(|c| *c != Class::Lock) else { continue };
        if !lookup(&w.name).is_some_and(|k| k.lock) {
            continue;
        }
        let moved = t.classes.get(&class).copied().unwrap_or(0.0).min(w.seconds);
        *t.classes.entry(class).or_default() -= moved;
        *t.classes.entry(Class::Lock).or_default() += moved;
        t.classes.retain(|_, s| *s > 0.0);
        w.class = Some(Class::Lock);
    }
    t
}

/// An interpreter whose threads take turns on its own lock, recognised by the library its waits
/// are entered from when the lock itself has no name (Ruby's GVL is a condition variable per
/// thread, on the heap). Only words: what the waits are is decided by how the threads take turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interpreter {
    /// What the waits are, in words.
    pub what: &'static str,
    /// What to try.
    pub advice: &'static str,
}

const INTERPRETERS: &[(&str, Interpreter)] = &[
    (
        "← libruby",
        Interpreter {
            what: "a wait inside the Ruby interpreter, where threads take turns on its global VM lock (GVL) or on a Thread::Mutex",
            advice: "Ruby threads run Ruby code one at a time (the GVL): use processes (fork, a pre-forking server) or Ractors for CPU-bound work, or a C extension that releases the GVL; if a Thread::Mutex of the program is what they take turns on, shorten its critical section",
        },
    ),
    (
        "← shared.so",
        Interpreter {
            what: "a wait inside Perl's threads::shared, whose lock() and every use of a :shared variable take a lock",
            advice: "keep each thread's state in variables that are not :shared and merge it into the shared one once at the end (a :shared variable per thread still takes threads::shared's lock at every use), or use processes (fork, Parallel::ForkManager)",
        },
    ),
];

/// The interpreter a lock's waits are entered from (`pthread_cond_wait ← libruby-3.1.so+0x20a2ac`),
/// if any.
pub fn interpreter(site: &str) -> Option<Interpreter> {
    INTERPRETERS.iter().find(|(pattern, _)| site.contains(pattern)).map(|(_, i)| *i)
}

#[cfg(test)]
mod tests {
    #[test]
    fn recognises_the_interpreter_lock_in_a_static_or_shared_python() {
        assert!(super::lookup("libpython3.11.so.1.0!_PyRuntime+0x1b4").unwrap().lock);
        assert!(super::lookup("python3.11!_PyRuntime+0x1b4").is_some());
        assert!(super::lookup("heap+0x1b4").is_none());
    }

    #[test]
    fn a_wait_entered_from_the_ruby_interpreter_is_said_to_be_its() {
        let site = "pthread_cond_timedwait ← libruby-3.1.so.3.1.2+0x20a2ac ← libruby-3.1.so.3.1.2+0x20f7b9 (heap+0x2d5700)";
        assert!(super::interpreter(site).unwrap().what.contains("GVL"));
        assert!(
            super::interpreter("pthread_mutex_lock ← update_histogram ← worker (heap+0x2a0)")
                .is_none()
        );
    }
}
