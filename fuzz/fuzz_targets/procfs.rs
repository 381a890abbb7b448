//! The /proc parsers (stat with odd command names, schedstat, the three syscall forms, status, io).
#![no_main]
use libfuzzer_sys::fuzz_target;
use scalescope::sample::procfs;

fuzz_target!(|text: &str| {
    let _ = procfs::stat(text);
    let _ = procfs::schedstat(text);
    let _ = procfs::syscall(text);
    let _ = procfs::switches(text);
    let _ = procfs::io(text);
});
