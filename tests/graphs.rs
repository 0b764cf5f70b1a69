//! Every built-in machine's graph, drawn: DOT that Graphviz's `dot` renders (where
//! it is installed — CI installs it, and there its absence fails), Mermaid with
//! the real state names, and an XState config whose every target is a state.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::cli::run;

fn machines() -> Vec<String> {
    let (code, stdout, _) = run(&["machines"], None);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    v["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_owned())
        .collect()
}

fn graph(machine: &str, format: &str) -> String {
    let (code, stdout, stderr) = run(&["graph", machine, "--format", format], None);
    assert_eq!(code, 0, "{machine} {format}: {stderr}");
    stdout
}

/// Renders DOT with Graphviz: `None` where `dot` is not installed.
pub(crate) fn render(dot: &str) -> Option<std::process::Output> {
    let mut child = match Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("dot: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    Some(child.wait_with_output().unwrap())
}

#[test]
fn graphviz_renders_every_built_in_graph() {
    let mut rendered = 0;
    for m in machines() {
        let dot = graph(&m, "dot");
        let Some(out) = render(&dot) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs graphviz (.ci/run): `dot` must be there"
            );
            eprintln!("graphviz is not installed: DOT not rendered");
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{m}: dot refused it: {stderr}\n{dot}");
        assert!(stderr.trim().is_empty(), "{m}: dot warned: {stderr}");
        let svg = String::from_utf8_lossy(&out.stdout);
        assert!(svg.contains("<svg"), "{m}");
        rendered += 1;
    }
    assert!(rendered >= 6, "{rendered}");
}

#[test]
fn mermaid_names_every_state_as_it_is() {
    for m in machines() {
        let mermaid = graph(&m, "mermaid");
        let json: Value = serde_json::from_str(&graph(&m, "json")).unwrap();
        assert!(mermaid.starts_with("stateDiagram-v2\n"), "{m}");
        for s in json["states"].as_array().unwrap() {
            let name = s["name"].as_str().unwrap();
            assert!(
                mermaid.contains(&format!("state \"{name}\" as ")),
                "{m}: {name} is not declared by name:\n{mermaid}"
            );
        }
        // Every line is a declaration, a transition or the header.
        for line in mermaid.lines().skip(1) {
            let line = line.trim();
            assert!(
                line.starts_with("state \"") || line.contains(" --> "),
                "{m}: {line}"
            );
        }
    }
}

#[test]
fn drawn_edges_are_fewer_and_lose_no_event() {
    for m in machines() {
        let json: Value = serde_json::from_str(&graph(&m, "json")).unwrap();
        let edges = json["edges"].as_array().unwrap();
        let mermaid = graph(&m, "mermaid");
        let drawn = mermaid
            .lines()
            .filter(|l| l.contains(" --> ") && !l.contains("[*]"))
            .count();
        let pairs: std::collections::BTreeSet<(&str, &str)> = edges
            .iter()
            .map(|e| (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()))
            .collect();
        assert!(
            drawn <= pairs.len(),
            "{m}: {drawn} drawn, {} pairs",
            pairs.len()
        );
        for e in edges {
            let event = e["event"].as_str().unwrap();
            assert!(mermaid.contains(event), "{m}: {event} is not drawn");
        }
    }
    // The pr-loop's pause and abandon, taken from every open state, are drawn once.
    let pr = graph("pr-loop", "mermaid");
    assert_eq!(
        pr.lines().filter(|l| l.ends_with(": abandoned")).count(),
        1,
        "{pr}"
    );
    assert!(pr.contains("any live state"), "{pr}");
}

#[test]
fn xstate_targets_are_states() {
    for m in machines() {
        let x: Value = serde_json::from_str(&graph(&m, "xstate")).unwrap();
        let states = x["states"].as_object().unwrap();
        assert!(states.contains_key(x["initial"].as_str().unwrap()), "{m}");
        let json: Value = serde_json::from_str(&graph(&m, "json")).unwrap();
        let mut n = 0;
        for (name, node) in states {
            if let Some(on) = node.get("on") {
                for (event, target) in on.as_object().unwrap() {
                    let t = target.as_str().unwrap();
                    assert!(states.contains_key(t), "{m}: {name} --{event}--> {t}");
                    n += 1;
                }
            } else {
                assert_eq!(node["type"], "final", "{m}: {name}");
            }
        }
        assert_eq!(
            n,
            json["edges"].as_array().unwrap().len(),
            "{m}: every edge"
        );
    }
}

/// The pictures under `docs/graphs/` are the graphs as built: each committed
/// `<machine>.dot` is what `cairn graph <machine> --format dot` prints, byte for
/// byte, an SVG drawn from it sits beside it, and no picture is of a machine that
/// is not registered.
#[test]
fn the_committed_pictures_are_the_graphs_as_built() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/graphs"));
    let machines = machines();
    assert!(machines.len() >= 7, "{machines:?}");
    for m in &machines {
        let built = graph(m, "dot");
        let path = dir.join(format!("{m}.dot"));
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}: run docs/graphs/render.sh", path.display()));
        assert_eq!(
            committed, built,
            "docs/graphs/{m}.dot is not `cairn graph {m} --format dot`: run docs/graphs/render.sh"
        );
        let svg = dir.join(format!("{m}.svg"));
        let svg = std::fs::read_to_string(&svg)
            .unwrap_or_else(|e| panic!("{}: {e}: run docs/graphs/render.sh", svg.display()));
        assert!(
            svg.contains("<svg"),
            "docs/graphs/{m}.svg is not an SVG: run docs/graphs/render.sh"
        );
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let (Some(stem), Some(ext)) = (path.file_stem(), path.extension()) else {
            continue;
        };
        if ext == "dot" || ext == "svg" {
            let stem = stem.to_string_lossy();
            assert!(
                machines.iter().any(|m| *m == stem),
                "{}: no machine `{stem}`: run docs/graphs/render.sh",
                path.display()
            );
        }
    }
}
