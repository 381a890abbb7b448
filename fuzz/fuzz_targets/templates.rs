//! Command templates, work expressions, quantities and durations.
#![no_main]
use libfuzzer_sys::fuzz_target;
use scalescope::plan::{quantity, template, work};

fuzz_target!(|text: &str| {
    let params = vec![("threads".to_string(), "4".to_string()), ("f".to_string(), "a b'c".to_string())];
    let _ = template::substitute(text, &params, template::Quote::None);
    let _ = template::substitute(text, &params, template::Quote::Shell);
    if let Ok(w) = work::evaluate(text) {
        assert!(w.amount.is_finite());
    }
    if let Some((v, _)) = quantity::parse(text) {
        assert!(v.is_finite());
    }
    let _ = scalescope::plan::parse_seconds(text);
});
