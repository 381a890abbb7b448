//! The documentation holds true of the code: every relative link in README.md, CONTRIBUTING.md and
//! docs/*.md names a file of the repository and every #anchor a heading of that file; modules use
//! only those before them in the data flow, as docs/architecture.md says, and it names every
//! source file; no folder's files import each other in a cycle; every error type has an exit code.

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
    prose_lines(markdown)
        .into_iter()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
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
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target =
                if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            assert!(target.exists(), "{}: the link {link} leads nowhere", file.display());
            if !anchor.is_empty() {
                let heads = anchors(&std::fs::read_to_string(&target).unwrap());
                assert!(
                    heads.iter().any(|h| h == anchor),
                    "{}: no heading #{anchor} in {}",
                    file.display(),
                    path
                );
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
    assert_eq!(
        slug("Why do its figures differ from `/usr/bin/time`?"),
        "why-do-its-figures-differ-from-usrbintime"
    );
    assert_eq!(links("see [a](b.md#c) and `[x](y)` and [d](e)"), vec!["b.md#c", "e"]);
}

/// The top-level modules in the order src/lib.rs declares them: the order of the data flow.
fn modules_in_flow_order() -> Vec<String> {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
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
    let files =
        if dir.is_dir() { rust_files(&dir) } else { vec![src.join(format!("{module}.rs"))] };
    let mut used = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + 7..];
                let name: String =
                    rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
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
    let arch =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
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
        imports_of("probes", &order)
            .iter()
            .filter(|m| ["plan", "exec", "sample"].contains(&m.as_str()))
            .count(),
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
    arch.lines()
        .filter(|l| l.starts_with("| "))
        .find(|l| l.split('|').nth(1).is_some_and(|c| c.contains(&name)))
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
            [module, .., name] => architecture_row(&arch, module).is_some_and(|row| {
                row.contains(&format!("`{name}`")) || row.contains(&format!("`{rel}`"))
            }),
            [] => unreachable!(),
        };
        if !named {
            unnamed.push(rel);
        }
    }
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "docs/architecture.md does not name these files in their module's row: {unnamed:?}"
    );
}

/// Rust code with comments dropped and the insides of string and character literals blanked, so
/// that braces and paths can be read off it.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            'r' if (c.get(i + 1) == Some(&'"') || c.get(i + 1) == Some(&'#'))
                && !c.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
            {
                let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
                if c.get(i + 1 + hashes) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                i += hashes + 2;
                while i < c.len()
                    && !(c[i] == '"'
                        && c[i + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes)
                {
                    i += 1;
                }
                i += hashes + 1;
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            // A character literal ('x', '\n', '{'), not a lifetime ('a).
            '\'' if c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'') => {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// `code` without inline modules (`mod tests { … }`, or any `mod x { … }`, whose `super` is the
/// file itself) and without the items marked `#[cfg(test)]`: what the file itself imports.
fn outside_tests_and_inline_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    loop {
        let test = rest.find("#[cfg(test)]");
        let module = rest.match_indices("mod ").map(|(i, _)| i).find(|&i| {
            let after: String =
                rest[i + 4..].chars().skip_while(|c| c.is_alphanumeric() || *c == '_').collect();
            (i == 0 || !rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
                && after.trim_start().starts_with('{')
        });
        let Some(start) = [test, module].into_iter().flatten().min() else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..start]);
        let Some(open) = rest[start..].find('{').map(|o| start + o) else { return out };
        let mut depth = 0;
        let mut end = rest.len();
        for (j, ch) in rest[open..].char_indices() {
            depth += match ch {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = open + j + 1;
                break;
            }
        }
        rest = &rest[end..];
    }
}

/// The names a path continues with after `prefix` (`a` in `a::B`, `a` and `b` in `{a, b::C}`).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| {
        s.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>()
    };
    let mut names = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        // `super::super::x` is no sibling; neither is a path that only ends in `prefix`.
        if code[..i].ends_with("::")
            || code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if rest.starts_with("super::") {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item) = (0, String::new());
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => names.push(ident(&std::mem::take(&mut item))),
                    _ => {}
                }
                if depth > 0 || ch != ',' {
                    item.push(ch);
                }
            }
            names.push(ident(&item));
        } else {
            names.push(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The files of `dir` (its mod.rs, and the crate's roots, left out) each with the sibling files it
/// imports: `super::x` or `crate::<dir>::x` where `x` is a sibling, or an item the folder's module
/// file re-exports from one (`pub use x::Item`). Test code and inline modules are left out.
fn sibling_imports(src: &Path, dir: &Path) -> Vec<(String, Vec<String>)> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter(|p| {
            !["mod.rs", "lib.rs", "main.rs"].contains(&p.file_name().unwrap().to_str().unwrap())
        })
        .collect();
    let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().into_owned();
    let siblings: Vec<String> = files.iter().map(|f| stem(f)).collect();
    let module_file = if dir == src {
        src.join("lib.rs")
    } else if dir.join("mod.rs").exists() {
        dir.join("mod.rs")
    } else {
        dir.with_extension("rs")
    };
    let module_code = code_only(&std::fs::read_to_string(&module_file).unwrap());
    // Items the module file re-exports, by the sibling that holds them.
    let mut reexported: Vec<(String, String)> = Vec::new();
    for s in &siblings {
        for item in names_after(&module_code, &format!("use {s}::")) {
            reexported.push((item, s.clone()));
        }
        for (i, _) in module_code.match_indices(&format!("use {s}::{{")) {
            let group = &module_code[i..];
            let group =
                &group[group.find('{').unwrap() + 1..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name = item.rsplit(" as ").next().unwrap().trim().to_string();
                if !name.is_empty() && !name.contains("::") {
                    reexported.push((name, s.clone()));
                }
            }
        }
    }
    let path: Vec<String> = dir
        .strip_prefix(src)
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let from_crate = if path.is_empty() {
        "crate::".to_string()
    } else {
        format!("crate::{}::", path.join("::"))
    };
    files
        .iter()
        .map(|f| {
            let me = stem(f);
            let code =
                outside_tests_and_inline_modules(&code_only(&std::fs::read_to_string(f).unwrap()));
            let mut uses: Vec<String> = names_after(&code, "super::")
                .into_iter()
                .chain(names_after(&code, &from_crate))
                .filter_map(|n| {
                    if siblings.contains(&n) {
                        Some(n)
                    } else {
                        reexported.iter().find(|(item, _)| *item == n).map(|(_, s)| s.clone())
                    }
                })
                .filter(|n| *n != me)
                .collect();
            uses.sort();
            uses.dedup();
            (me, uses)
        })
        .collect()
}

/// A cycle in a graph of names, if there is one: its names in order, the first again at the end.
fn cycle(graph: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &[(String, Vec<String>)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut c = path[at..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.iter().any(|d| d == n) {
            return None;
        }
        path.push(n.to_string());
        let next =
            graph.iter().find(|(m, _)| m == n).map(|(_, u)| u.as_slice()).unwrap_or_default();
        for u in next {
            if let Some(c) = visit(u, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.push(n.to_string());
        None
    }
    let mut done = Vec::new();
    graph.iter().find_map(|(n, _)| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_folder_has_an_import_cycle_among_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    let mut i = 0;
    while i < dirs.len() {
        let sub =
            std::fs::read_dir(&dirs[i]).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir());
        dirs.extend(sub.collect::<Vec<_>>());
        i += 1;
    }
    let (mut edges, mut cycles) = (0, Vec::new());
    for dir in &dirs {
        let graph = sibling_imports(&src, dir);
        edges += graph.iter().map(|(_, u)| u.len()).sum::<usize>();
        if let Some(c) = cycle(&graph) {
            cycles.push(format!(
                "{}: {}",
                dir.strip_prefix(&src).unwrap().display(),
                c.join(" → ")
            ));
        }
    }
    assert!(edges > 100, "only {edges} imports among sibling files found: is the reader right?");
    assert!(cycles.is_empty(), "files of one folder import each other in a cycle: {cycles:#?}");
}

#[test]
fn sibling_imports_are_read_through_groups_re_exports_and_past_tests() {
    let code = code_only(
        "use super::{a, b::{X, Y}};\nuse crate::m::c::Z; // super::d\nlet s = \"super::e\";\n#[cfg(test)]\nmod tests { use super::f; }\nuse super::super::g;",
    );
    let code = outside_tests_and_inline_modules(&code);
    assert_eq!(names_after(&code, "super::"), ["a", "b"]);
    assert_eq!(names_after(&code, "crate::m::"), ["c"]);
    let graph = |e: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        e.iter().map(|(n, u)| (n.to_string(), u.iter().map(|s| s.to_string()).collect())).collect()
    };
    assert_eq!(cycle(&graph(&[("a", &["b"]), ("b", &["c"]), ("c", &[])])), None);
    assert_eq!(
        cycle(&graph(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"])])).unwrap(),
        ["a", "b", "c", "a"]
    );
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
        assert!(
            arch.contains(&format!("`{layer}/`")),
            "docs/architecture.md does not describe sample's `{layer}/`"
        );
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
                let decl =
                    lines.find(|l| l.contains("pub struct ") || l.contains("pub enum ")).unwrap();
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
