//! Property tests: every parser of user input, program output and /proc text, and the results
//! loader, fed thousands of generated hostile inputs (seeded, so a failure reproduces). None may
//! panic, hang or allocate without bound; where a parser accepts, its answer must make sense.

use scalescope::exec::Scanner;
use scalescope::plan::{
    MetricSpec, Quote, evaluate_work, expand_values, parse_quantity, shell_quote, substitute,
};
use scalescope::sample::procfs;
use scalescope::stats::Rng;

const ROUNDS: usize = 20_000;

/// Characters that matter to the grammars, plus bytes that matter to nobody.
const ALPHABET: &[&str] = &[
    "0",
    "1",
    "2",
    "9",
    "64",
    "18446744073709551615",
    "99999999999999999999",
    ".",
    "..",
    ",",
    ":",
    "x",
    "*",
    "+",
    "-",
    "/",
    "{",
    "}",
    "=",
    "e",
    "E",
    "k",
    "M",
    "G",
    "Ki",
    "Gi",
    "B",
    "s",
    "ms",
    "m",
    "h",
    " ",
    "(",
    ")",
    "nproc",
    "é",
    "\0",
    "\n",
    "\t",
    "'",
    "\"",
    "$",
    "`",
    ";",
    "threads",
    "{threads}",
    "1e308",
    "-1",
    "inf",
    "NaN",
    "0x7f",
];

fn text(rng: &mut Rng) -> String {
    let n = rng.below(12);
    (0..n).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect()
}

#[test]
fn value_lists_never_panic_and_stay_bounded() {
    let mut rng = Rng::new(1);
    for _ in 0..ROUNDS {
        let spec = text(&mut rng);
        if let Ok(v) = expand_values(&spec, 8) {
            assert!(!v.is_empty() && v.len() <= 100_000, "{spec:?}");
            let mut sorted = v.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), v.len(), "no duplicates: {spec:?}");
        }
    }
    // Huge ranges are refused before anything is allocated, and saturation cannot loop.
    for spec in [
        "1..18446744073709551615",
        "1..18446744073709551615:x2",
        "0..18446744073709551615:+1",
        "1..1000000:x1",
    ] {
        let r = expand_values(spec, 8);
        assert!(r.is_err() || r.as_ref().unwrap().len() < 100, "{spec}: {r:?}");
    }
}

#[test]
fn templates_and_work_expressions_never_panic() {
    let mut rng = Rng::new(2);
    let params =
        vec![("threads".to_string(), "4".to_string()), ("f".to_string(), "a b'c".to_string())];
    for _ in 0..ROUNDS {
        let t = text(&mut rng);
        for q in [Quote::None, Quote::Shell] {
            // `${threads}` is the shell's and stays; `{{threads}}` writes literal braces.
            let kept = t.matches("${threads}").count() + t.matches("{{threads}").count();
            if let Ok(out) = substitute(&t, &params, q) {
                assert!(out.matches("{threads}").count() <= kept, "{t:?} → {out:?}");
            }
        }
        if let Ok(w) = evaluate_work(&t) {
            assert!(w.amount.is_finite(), "{t:?}");
        }
        let _ = parse_quantity(&t);
        let _ = scalescope::plan::parse_seconds(&t);
    }
}

#[test]
fn shell_quoting_round_trips_through_a_real_shell() {
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let v: String = text(&mut rng).replace('\0', "");
        let quoted = shell_quote(&v);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {quoted}"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), v, "{quoted}");
    }
}

#[test]
fn metric_lines_of_any_bytes_never_panic() {
    let specs = vec![
        MetricSpec {
            name: "tp".into(),
            regex: r"Throughput: ([0-9.eE+-]+ ?[kMG]?i?B?/?s?)".into(),
        },
        MetricSpec { name: "n".into(), regex: r"n=(\S+)".into() },
    ];
    let scanner = Scanner::new(&specs).unwrap();
    let mut rng = Rng::new(4);
    let mut found = Vec::new();
    for _ in 0..ROUNDS {
        let mut line: Vec<u8> = match rng.below(3) {
            0 => b"scalescope-metric ".to_vec(),
            1 => b"Throughput: ".to_vec(),
            _ => b"n=".to_vec(),
        };
        line.extend(text(&mut rng).bytes());
        if rng.below(4) == 0 {
            line.extend((0..rng.below(40)).map(|_| rng.next_u64() as u8));
        }
        found.clear();
        scanner.scan_line(&line, &mut found);
        assert!(
            found.iter().all(|f| f.value.is_finite()),
            "{:?}: {found:?}",
            String::from_utf8_lossy(&line)
        );
    }
}

#[test]
fn proc_parsers_survive_mangled_text() {
    let samples = [
        "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 50 20 0 0 20 0 4 0 12345 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
        "123456789 98765 4321\n",
        "202 0x7f3a 0x81 0x0 0x0 0x0 0x0 0x7ffc 0x7f3b\n",
        "-1 0x7ffc 0x7f3b\n",
        "running\n",
        "voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n",
        "rchar: 100\nwchar: 20\nsyscr: 1\nread_bytes: 4096\n",
    ];
    let mut rng = Rng::new(5);
    for _ in 0..ROUNDS {
        let base = samples[rng.below(samples.len())];
        let mut b: Vec<u8> = base.as_bytes().to_vec();
        match rng.below(3) {
            0 => b.truncate(rng.below(b.len() + 1)),
            1 => {
                let i = rng.below(b.len());
                b[i] = ALPHABET[rng.below(ALPHABET.len())].bytes().next().unwrap_or(b'x');
            }
            _ => b.extend(text(&mut rng).bytes()),
        }
        let t = String::from_utf8_lossy(&b);
        let _ = procfs::stat(&t);
        let _ = procfs::schedstat(&t);
        let _ = procfs::syscall(&t);
        let _ = procfs::switches(&t);
        let _ = procfs::io(&t);
    }
}

#[test]
fn results_files_truncated_or_corrupted_load_or_fail_but_never_panic() {
    let good =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report/results.json"))
            .unwrap();
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("results.json");
    let mut rng = Rng::new(6);
    let mut loaded = 0;
    for i in 0..600 {
        let mut b = good.clone();
        match i % 4 {
            0 => b.truncate(rng.below(b.len())),
            1 => {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(b.len());
                    b[at] = rng.next_u64() as u8;
                }
            }
            2 => {
                let at = rng.below(b.len());
                b.splice(at..at, text(&mut rng).bytes());
            }
            _ => {
                let s = String::from_utf8_lossy(&b)
                    .replace("\"wall_s\": ", "\"wall_s\": -")
                    .replacen("\"points\"", &format!("\"{}\"", text(&mut rng)), rng.below(2));
                b = s.into_bytes();
            }
        }
        std::fs::write(&path, &b).unwrap();
        if let Ok((_, doc)) = scalescope::results::load(&path) {
            loaded += 1;
            if let Some(axis) = &doc.plan.axis
                && let Ok(a) =
                    scalescope::analysis::analyze_results(&doc, axis, &Default::default())
            {
                let _ = scalescope::diagnose::diagnose(&doc, Some(&a));
                let _ = scalescope::report::summary(&doc, Some(&a));
                let _ = scalescope::report::csv::render(&doc, Some(&a));
            }
        }
    }
    assert!(loaded > 0 && loaded < 600, "some mutations still parse, most do not: {loaded}");
}
