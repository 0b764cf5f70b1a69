//! The tidy test: every Rust file says what it is for (its first line is `//!`),
//! source files stay under 600 lines (save the allowlisted ones being split, whose
//! list only shrinks), no machine module imports another machine's module, and the
//! raw string checks behind the checked values stay inside `evidence/ids.rs`.

use std::path::{Path, PathBuf};

/// Every folder whose Rust files are checked (recursively; `target/` skipped).
const ROOTS: [&str; 7] = [
    "machines/src",
    "journal/src",
    "src",
    "cli/src",
    "tests",
    "benches",
    "examples",
];

/// The folders whose files must stay under [`MAX_LINES`].
const SOURCE_ROOTS: [&str; 4] = ["machines/src", "journal/src", "src", "cli/src"];

const MAX_LINES: usize = 600;

/// Source files over [`MAX_LINES`] that are being split now, each with its line count
/// when it was listed as a ceiling. A listed file must not grow past its ceiling, and
/// must leave the list once it is at or under [`MAX_LINES`] (or gone): the list only
/// shrinks. Never add to it: split the file.
const OVERSIZED: &[(&str, usize)] = &[];

/// Folders under `machines/src` that every machine shares: not machines.
const SHARED: [&str; 1] = ["evidence"];

fn workspace() -> PathBuf {
    // The test binary is declared by cli/Cargo.toml: the workspace is its parent.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// The `.rs` files under `dir`, recursively, skipping `target/`; sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
                .path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A path relative to the workspace, with `/` separators.
fn relative(path: &Path) -> String {
    let rel = path.strip_prefix(workspace()).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_rust_file_says_what_it_is_for() {
    let root = workspace();
    let files: Vec<PathBuf> = ROOTS
        .iter()
        .flat_map(|r| rust_files(&root.join(r)))
        .collect();
    // The walk found the workspace (not an empty folder).
    assert!(files.len() > 50, "only {} Rust files found", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !read(f).starts_with("//!"))
        .map(|f| relative(f))
        .collect();
    assert!(
        missing.is_empty(),
        "files whose first line is not a `//!` line saying what the file is for: {missing:#?}"
    );
}

#[test]
fn source_files_stay_under_600_lines() {
    let root = workspace();
    let mut problems = vec![];
    let mut seen = vec![];
    for file in SOURCE_ROOTS.iter().flat_map(|r| rust_files(&root.join(r))) {
        let name = relative(&file);
        let lines = read(&file).lines().count();
        match OVERSIZED.iter().find(|(listed, _)| *listed == name) {
            None if lines > MAX_LINES => problems.push(format!(
                "{name} has {lines} lines (at most {MAX_LINES}): split it"
            )),
            None => {}
            Some((_, ceiling)) => {
                seen.push(name.clone());
                if lines > *ceiling {
                    problems.push(format!(
                        "{name} grew to {lines} lines, past its OVERSIZED ceiling of {ceiling}"
                    ));
                } else if lines <= MAX_LINES {
                    problems.push(format!(
                        "{name} is down to {lines} lines: remove it from OVERSIZED"
                    ));
                }
            }
        }
    }
    for (listed, _) in OVERSIZED {
        if !seen.iter().any(|s| s == listed) {
            problems.push(format!("{listed} is in OVERSIZED but gone: remove it"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// `text` names `module` right after `prefix` (and not a longer name that starts with it).
fn names(text: &str, prefix: &str, module: &str) -> bool {
    let needle = format!("{prefix}{module}");
    text.match_indices(&needle).any(|(at, _)| {
        !text[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn no_machine_imports_another_machine() {
    let machines_src = workspace().join("machines/src");
    let mut machines: Vec<String> = std::fs::read_dir(&machines_src)
        .expect("machines/src")
        .map(|e| e.expect("an entry of machines/src").path())
        .filter(|p| p.is_dir())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| !SHARED.contains(&n.as_str()))
        .collect();
    machines.sort();
    // The folders were found (so the check below ranges over the machines).
    assert!(
        machines.iter().any(|m| m == "park") && machines.len() >= 5,
        "{machines:?}"
    );
    let mut problems = vec![];
    for m in &machines {
        for file in rust_files(&machines_src.join(m)) {
            for (n, line) in read(&file).lines().enumerate() {
                for other in machines.iter().filter(|o| *o != m) {
                    if names(line, "crate::", other) || names(line, "super::super::", other) {
                        problems.push(format!(
                            "{}:{}: machine `{m}` imports machine `{other}`: {}",
                            relative(&file),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "use crate::evidence (or another shared module) instead: {problems:#?}"
    );
}

/// The string checks behind `FullCommit`, `AbsPath`, `RefName`, `HttpUrl` and
/// `JjChange`, private to the one file that declares the newtypes.
const RAW_CHECKS: [&str; 5] = [
    "is_full_git_id",
    "is_normal_abs_path",
    "is_option_like",
    "is_http_url",
    "is_full_jj_change",
];

/// The file that may name them.
const CHECKED_VALUES: &str = "machines/src/evidence/ids.rs";

#[test]
fn raw_id_and_path_checks_stay_behind_the_newtypes() {
    let root = workspace();
    let mut problems = vec![];
    let mut declared = 0;
    for file in ROOTS.iter().flat_map(|r| rust_files(&root.join(r))) {
        let name = relative(&file);
        // This file names them to pin them.
        if name == "tests/tidy.rs" {
            continue;
        }
        let text = read(&file);
        for (n, line) in text.lines().enumerate() {
            for check in RAW_CHECKS.iter().filter(|c| names(line, "", c)) {
                if name == CHECKED_VALUES {
                    declared += usize::from(line.starts_with(&format!("fn {check}(")));
                    if line.contains(&format!("pub fn {check}(")) {
                        problems.push(format!("{name}:{}: `{check}` is public", n + 1));
                    }
                } else {
                    problems.push(format!(
                        "{name}:{}: names `{check}`: build the newtype instead: {}",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // The checks were found where they are declared (so the scan ranges over them).
    assert_eq!(
        declared,
        RAW_CHECKS.len(),
        "private declarations found in {CHECKED_VALUES}"
    );
}
