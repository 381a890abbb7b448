//! The documentation holds true of the code: every relative link in README.md, CONTRIBUTING.md and
//! docs/*.md names a file of the repository and every #anchor a heading of that file; modules use
//! only those before them in the data flow, as docs/architecture.md says, and it names every
//! source file; every error type has an exit code.

use std::path::{Path, PathBuf};

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines outside code blocks.
fn prose_lines(markdown: &str) -> Vec<&str> {
    let mut fenced = false;
    markdown
        .lines()
        .filter(|line| {
            if line.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// Headings, as anchors.
fn anchors(markdown: &str) -> Vec<String> {
    prose_lines(markdown).into_iter().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

/// Link targets outside code: what stands in `](…)`.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(markdown) {
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            let target = &rest[i + 2..];
            let end = target.find(')').unwrap_or(target.len());
            out.push(target[..end].to_string());
            rest = &target[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    files.extend(
        std::fs::read_dir(root.join("docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            assert!(target.exists(), "{}: the link {link} leads nowhere", file.display());
            if !anchor.is_empty() {
                let heads = anchors(&std::fs::read_to_string(&target).unwrap());
                assert!(heads.iter().any(|h| h == anchor), "{}: no heading #{anchor} in {}", file.display(), path);
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} links found: is the parser right?");
}

#[test]
fn anchors_are_spelled_as_github_spells_them() {
    assert_eq!(
        slug(" Why does a lock read `heap+0x…`, and how do I keep symbols?"),
        "why-does-a-lock-read-heap0x-and-how-do-i-keep-symbols"
    );
    assert_eq!(slug("Why do its figures differ from `/usr/bin/time`?"), "why-do-its-figures-differ-from-usrbintime");
    assert_eq!(links("see [a](b.md#c) and `[x](y)` and [d](e)"), vec!["b.md#c", "e"]);
}

/// The top-level modules in the order src/lib.rs declares them: the order of the data flow.
fn modules_in_flow_order() -> Vec<String> {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    lib.lines().filter_map(|l| l.strip_prefix("pub mod ")).map(|m| m.trim_end_matches(';').to_string()).collect()
}

/// Every .rs file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p)
            } else if p.extension().is_some_and(|x| x == "rs") {
                v.push(p)
            }
        }
    }
    v
}

/// The top-level modules a module's code (comments left out) names through `crate::`.
fn imports_of(module: &str, all: &[String]) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let dir = src.join(module);
    let files = if dir.is_dir() { rust_files(&dir) } else { vec![src.join(format!("{module}.rs"))] };
    let mut used = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + 7..];
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let names: Vec<String> = if name.is_empty() && rest.starts_with('{') {
                    rest[1..]
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                        .collect()
                } else {
                    vec![name]
                };
                for n in names {
                    if n != module && all.contains(&n) && !used.contains(&n) {
                        used.push(n);
                    }
                }
            }
        }
    }
    used
}

#[test]
fn modules_use_only_those_before_them_and_architecture_md_names_each() {
    let order = modules_in_flow_order();
    assert!(order.len() > 10, "{order:?}");
    let arch = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md")).unwrap();
    for (i, m) in order.iter().enumerate() {
        assert!(arch.contains(&format!("`{m}`")), "docs/architecture.md does not describe `{m}`");
        for used in imports_of(m, &order) {
            let j = order.iter().position(|x| *x == used).unwrap();
            assert!(
                j < i,
                "`{m}` uses `{used}`, which comes after it in the data flow (src/lib.rs, docs/architecture.md)"
            );
        }
    }
    assert_eq!(
        imports_of("probes", &order).iter().filter(|m| ["plan", "exec", "sample"].contains(&m.as_str())).count(),
        0
    );
    // The readers read saved results alone: the stored types are in `results`, below the modules
    // that fill them.
    for reader in ["analysis", "diagnose", "report", "compare", "history"] {
        let measuring: Vec<String> = imports_of(reader, &order)
            .into_iter()
            .filter(|m| ["sample", "exec", "launch"].contains(&m.as_str()))
            .collect();
        assert!(
            measuring.is_empty(),
            "`{reader}` uses {measuring:?}: it should read saved results alone (docs/architecture.md)"
        );
    }
}

/// The row of docs/architecture.md's module table whose first cell names `module`.
fn architecture_row<'a>(arch: &'a str, module: &str) -> Option<&'a str> {
    let name = format!("`{module}`");
    arch.lines().filter(|l| l.starts_with("| ")).find(|l| l.split('|').nth(1).is_some_and(|c| c.contains(&name)))
}

#[test]
fn architecture_md_names_every_source_file_in_its_module_s_row() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let arch = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut unnamed = Vec::new();
    for f in rust_files(&src) {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        let named = match parts.as_slice() {
            // The crate's roots, by their paths.
            ["lib.rs" | "main.rs"] => arch.contains(&format!("`src/{rel}`")),
            // A module of one file, by its row.
            [file] => architecture_row(&arch, file.trim_end_matches(".rs")).is_some(),
            // A folder's mod.rs, by its folder's module (and sample's sub-folders, by the test below).
            [.., "mod.rs"] => true,
            // Any other file, by its name or its path in its module's row.
            [module, .., name] => architecture_row(&arch, module)
                .is_some_and(|row| row.contains(&format!("`{name}`")) || row.contains(&format!("`{rel}`"))),
            [] => unreachable!(),
        };
        if !named {
            unnamed.push(rel);
        }
    }
    unnamed.sort();
    assert!(unnamed.is_empty(), "docs/architecture.md does not name these files in their module's row: {unnamed:?}");
}

/// The sub-folders of src/sample in the order of their layers, below the sampler thread.
const SAMPLE_LAYERS: [&str; 4] = ["proc", "unwind", "trace", "account"];

#[test]
fn sample_sub_folders_use_only_those_before_them_and_architecture_md_names_each() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sample = root.join("src/sample");
    let arch = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut folders: Vec<String> = std::fs::read_dir(&sample)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut layers = SAMPLE_LAYERS.map(String::from).to_vec();
    layers.sort();
    assert_eq!(folders, layers, "a sub-folder of src/sample is not in SAMPLE_LAYERS");
    for (i, layer) in SAMPLE_LAYERS.iter().enumerate() {
        assert!(arch.contains(&format!("`{layer}/`")), "docs/architecture.md does not describe sample's `{layer}/`");
        for f in rust_files(&sample.join(layer)) {
            let text = std::fs::read_to_string(&f).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for later in SAMPLE_LAYERS[i + 1..].iter().chain(&["sampler"]) {
                    assert!(
                        !line.contains(&format!("sample::{later}"))
                            && !line.contains(&format!("super::super::{later}")),
                        "{} uses sample's `{later}`, which comes after `{layer}/` (docs/architecture.md)",
                        f.display()
                    );
                }
            }
        }
    }
}

#[test]
fn every_error_type_has_an_exit_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let error = std::fs::read_to_string(src.join("error.rs")).unwrap();
    let named = |n: &str| error.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == n);
    let mut types = Vec::new();
    for f in rust_files(&src) {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim_start().starts_with("#[derive(") && line.contains("thiserror::Error") {
                let decl = lines.find(|l| l.contains("pub struct ") || l.contains("pub enum ")).unwrap();
                let name: String = decl
                    .split_whitespace()
                    .skip_while(|w| *w != "struct" && *w != "enum")
                    .nth(1)
                    .unwrap()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                types.push((name, f.clone()));
            }
        }
    }
    assert!(types.len() >= 8, "{types:?}");
    for (name, file) in types {
        // A type called `Error` other than the crate's is named by its module (`pagecache::Error`).
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let found = match name.as_str() {
            "Error" if stem == "error" => true,
            "Error" => error.contains(&format!("{stem}::Error")),
            _ => named(&name),
        };
        assert!(
            found,
            "{name} ({}) is not in src/error.rs, as a variant of the crate's Error or held inside one: which exit code does it give?",
            file.display()
        );
    }
}
