//! Importing a results document: load, analyse, diagnose and render whatever parses.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let dir = std::env::temp_dir().join(format!("scalescope-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("results.json");
    if std::fs::write(&file, bytes).is_err() {
        return;
    }
    if let Ok((_, doc)) = scalescope::results::load(&file)
        && let Ok(Some(a)) = scalescope::analysis::analyze_results(&doc, &Default::default(), &Default::default())
    {
        let _ = scalescope::diagnose::diagnose(&doc, Some(&a));
        let _ = scalescope::report::summary(&doc, Some(&a));
    }
});
