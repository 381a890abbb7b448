//! The parameter value grammar (`1..64:x2`, lists, `nproc`): never a panic, never unbounded.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|spec: &str| {
    if let Ok(v) = scalescope::plan::expand_values(spec, 8) {
        assert!(!v.is_empty() && v.len() <= 100_000);
    }
});
