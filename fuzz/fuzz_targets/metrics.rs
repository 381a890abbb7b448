//! Metric extraction from arbitrary output bytes (built-in lines and a user regex).
#![no_main]
use libfuzzer_sys::fuzz_target;
use scalescope::exec::Scanner;
use scalescope::plan::MetricSpec;

fuzz_target!(|line: &[u8]| {
    let specs = [MetricSpec { name: "tp".into(), regex: r"Throughput: ([0-9.eE+-]+ ?[kMG]?i?B?/?s?)".into() }];
    let scanner = Scanner::new(&specs).expect("the regex compiles");
    let mut found = Vec::new();
    scanner.scan_line(line, &mut found);
    assert!(found.iter().all(|f| f.value.is_finite()));
});
