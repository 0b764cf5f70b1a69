//! The shapes: a criterion (with its amendment chain), its evidence (command,
//! agent, user), and a node (exactly one of leaf or composite, literal `touches`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::finding::{key, with};
use super::schema::Checker;
use super::{Criterion, Evidence, Node, Seg, Worker};

impl Checker {
    /// One acceptance criterion; `None` when it cannot be read.
    pub(super) fn criterion(&mut self, v: &Value, path: &[Seg]) -> Option<Criterion> {
        let m = self.object(v, path, &["id", "statement", "evidence"], &["amendments"])?;
        let id = self.string(m, path, "id", true);
        let statement = self.string(m, path, "statement", false);
        if let Some(a) = self.array(m, path, "amendments") {
            if a.is_empty() {
                self.err(
                    "schema-invalid",
                    key(path, "amendments"),
                    "at least one entry, or leave it out",
                );
            }
            for (i, x) in a.iter().enumerate() {
                let p = with(&key(path, "amendments"), Seg::Index(i));
                if let Some(am) = self.object(
                    x,
                    &p,
                    &[
                        "criterion_id",
                        "before",
                        "after",
                        "reason",
                        "authority",
                        "at",
                    ],
                    &[],
                ) {
                    for k in ["criterion_id", "reason", "authority", "at"] {
                        self.string(am, &p, k, true);
                    }
                    for k in ["before", "after"] {
                        self.string(am, &p, k, false);
                    }
                }
            }
        }
        let ep = key(path, "evidence");
        let evidence = m.get("evidence").and_then(|e| self.evidence(e, &ep));
        Some(Criterion {
            id: id?,
            statement: statement?,
            evidence: evidence?,
            raw: v.clone(),
        })
    }

    /// A criterion's evidence, by its `kind`.
    pub(super) fn evidence(&mut self, v: &Value, path: &[Seg]) -> Option<Evidence> {
        let kind = v.get("kind").and_then(Value::as_str);
        match kind {
            Some("command") => {
                let m = self.object(
                    v,
                    path,
                    &["kind", "run", "expect"],
                    &["timeout_ms", "inherit_env"],
                )?;
                let run = self.string(m, path, "run", true);
                let xp = key(path, "expect");
                let expect = m
                    .get("expect")
                    .and_then(|x| self.object(x, &xp, &["exit", "output_includes"], &[]));
                let (mut exit, mut floor) = (None, None);
                if let Some(x) = expect {
                    match x.get("exit").map(|e| e.as_i64()) {
                        Some(Some(e)) if (0..=255).contains(&e) => exit = Some(e),
                        Some(_) => {
                            self.err("schema-invalid", key(&xp, "exit"), "an integer 0..255")
                        }
                        None => {}
                    }
                    floor = self.string(x, &xp, "output_includes", true);
                }
                let timeout_ms = match m.get("timeout_ms").map(|t| t.as_u64()) {
                    None => Some(30_000),
                    Some(Some(t)) if (1_000..=3_600_000).contains(&t) => Some(t),
                    Some(_) => {
                        self.err(
                            "schema-invalid",
                            key(path, "timeout_ms"),
                            "an integer 1000..3600000",
                        );
                        None
                    }
                };
                let inherit_env = self.strings(m, path, "inherit_env", true);
                let forbidden = |n: &str| {
                    ["PATH", "HOME", "SHELL", "USER", "PWD"].contains(&n)
                        || ["XDG_", "GIT_", "LD_", "DYLD_"]
                            .iter()
                            .any(|p| n.starts_with(p))
                };
                if m.contains_key("inherit_env") {
                    let unique: BTreeSet<&String> = inherit_env.iter().collect();
                    if inherit_env.is_empty()
                        || inherit_env.len() > 32
                        || unique.len() != inherit_env.len()
                    {
                        self.err(
                            "schema-invalid",
                            key(path, "inherit_env"),
                            "1..32 unique environment names",
                        );
                    }
                    for (i, n) in inherit_env.iter().enumerate() {
                        if forbidden(n) {
                            self.err(
                                "schema-invalid",
                                with(&key(path, "inherit_env"), Seg::Index(i)),
                                format!("`{n}` may not be inherited"),
                            );
                        }
                    }
                }
                Some(Evidence::Command {
                    run: run?,
                    exit: exit?,
                    output_includes: floor?,
                    timeout_ms: timeout_ms?,
                    inherit_env,
                })
            }
            Some("agent") => {
                let m = self.object(v, path, &["kind", "agent", "inputs", "rubric"], &[])?;
                let agent = self.string(m, path, "agent", true);
                let rubric = self.string(m, path, "rubric", true);
                let inputs = self.strings(m, path, "inputs", true);
                if m.get("inputs")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.is_empty())
                {
                    self.err("schema-invalid", key(path, "inputs"), "at least one input");
                }
                for (i, p) in inputs.iter().enumerate() {
                    if !is_inside_relative(p) {
                        self.err(
                            "schema-invalid",
                            with(&key(path, "inputs"), Seg::Index(i)),
                            "a relative path inside the tree",
                        );
                    }
                }
                Some(Evidence::Agent {
                    agent: agent?,
                    rubric: rubric?,
                })
            }
            Some("user") => {
                let m = self.object(v, path, &["kind", "prompt"], &[])?;
                Some(Evidence::User {
                    prompt: self.string(m, path, "prompt", true)?,
                })
            }
            Some(other) => {
                self.err(
                    "schema-invalid",
                    key(path, "kind"),
                    format!("unknown evidence kind `{other}`"),
                );
                None
            }
            None if v.is_object() && v.get("kind").is_none() => {
                self.err("schema-required", key(path, "kind"), "`kind` is required");
                None
            }
            None => {
                self.err(
                    "schema-invalid",
                    path.to_vec(),
                    "expected an evidence object with a string `kind`",
                );
                None
            }
        }
    }

    /// One node and, depth-first, its children (pushed to `out`); its address
    /// when its id could be read.
    pub(super) fn node(
        &mut self,
        v: &Value,
        path: &[Seg],
        parent: &[String],
        out: &mut Vec<Node>,
    ) -> Option<Vec<String>> {
        let m = self.object(
            v,
            path,
            &["id", "task"],
            &[
                "description",
                "depends_on",
                "touches",
                "refs",
                "worker",
                "acceptance",
                "checklist",
                "work",
            ],
        )?;
        let id = self.string(m, path, "id", true);
        let task = self.string(m, path, "task", false).unwrap_or_default();
        self.string(m, path, "description", false);
        let depends_on = self.strings(m, path, "depends_on", true);
        let touches = self.strings(m, path, "touches", true);
        for (i, t) in touches.iter().enumerate() {
            let tp = with(&key(path, "touches"), Seg::Index(i));
            if t.contains(['*', '?', '[', '{']) {
                self.err("touches-glob", tp, format!("`{t}`: touches are literal directories or files, not globs (containment does not expand them)"));
            } else if t.starts_with('/') || t.split('/').any(|s| s == "..") {
                self.err(
                    "touches-outside-tree",
                    tp,
                    format!("`{t}`: a relative path inside the tree"),
                );
            }
        }
        if let Some(refs) = self.array(m, path, "refs") {
            for (i, r) in refs.iter().enumerate() {
                let rp = with(&key(path, "refs"), Seg::Index(i));
                if let Some(rm) = self.object(r, &rp, &["path"], &["lines", "why"]) {
                    self.string(rm, &rp, "path", true);
                }
            }
        }
        let worker = m.get("worker").and_then(|w| {
            let wp = key(path, "worker");
            let wm = self.object(w, &wp, &[], &["profile", "agent", "model", "skills"])?;
            Some(Worker {
                profile: self.string(wm, &wp, "profile", true),
                agent: self.string(wm, &wp, "agent", true),
                skills: self.strings(wm, &wp, "skills", true),
                model: self.string(wm, &wp, "model", true),
            })
        });
        let address = {
            let mut a = parent.to_vec();
            a.push(id.clone().unwrap_or_default());
            a
        };
        let mut acceptance = vec![];
        if let Some(acc) = self.array(m, path, "acceptance") {
            for (i, c) in acc.iter().enumerate() {
                if let Some(c) = self.criterion(c, &with(&key(path, "acceptance"), Seg::Index(i))) {
                    acceptance.push(c);
                }
            }
        }
        let checklist = self.strings(m, path, "checklist", false);
        let index = out.len();
        out.push(Node {
            address: address.clone(),
            path: path.to_vec(),
            depends_on,
            touches,
            acceptance,
            checklist,
            children: vec![],
            task,
            worker,
        });
        let mut children = vec![];
        match m.get("work") {
            Some(w) => {
                if m.contains_key("checklist") {
                    // The node matches no shape (pi-work's fixture path), and the
                    // key that breaks it is named where it is.
                    self.err(
                        "schema-invalid",
                        path.to_vec(),
                        "a composite node (with `work`) has no `checklist`",
                    );
                    self.err(
                        "schema-additional-properties",
                        key(path, "checklist"),
                        "`checklist` is not a property of a composite node (one with `work`)",
                    );
                }
                match w.as_array() {
                    Some(a) if a.is_empty() => self.err(
                        "schema-invalid",
                        key(path, "work"),
                        "a composite node has at least one child",
                    ),
                    Some(a) => {
                        for (i, c) in a.iter().enumerate() {
                            if let Some(child) = self.node(
                                c,
                                &with(&key(path, "work"), Seg::Index(i)),
                                &address,
                                out,
                            ) {
                                children.push(child);
                            }
                        }
                    }
                    None => self.err(
                        "schema-invalid",
                        key(path, "work"),
                        "`work` must be an array",
                    ),
                }
            }
            None => match m.get("acceptance") {
                None => self.err(
                    "schema-required",
                    key(path, "acceptance"),
                    "a leaf node has at least one acceptance criterion",
                ),
                Some(Value::Array(a)) if a.is_empty() => self.err(
                    "schema-invalid",
                    key(path, "acceptance"),
                    "a leaf node has at least one acceptance criterion",
                ),
                _ => {}
            },
        }
        out[index].children = children;
        id.map(|_| address)
    }
}

/// Whether `p` names something strictly inside the tree: relative, and after
/// resolving `.` and `..` neither the tree itself (`./`, `foo/..`) nor above it.
fn is_inside_relative(p: &str) -> bool {
    if p.starts_with('/') {
        return false;
    }
    let mut depth: usize = 0;
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => depth += 1,
        }
    }
    depth > 0
}

#[cfg(test)]
mod tests {
    use super::is_inside_relative;

    #[test]
    fn an_agent_input_is_strictly_inside_the_tree() {
        for p in ["src", "src/lib.rs", "./src", "a/../b", "a/b/../c/"] {
            assert!(is_inside_relative(p), "{p}");
        }
        for p in [
            "/abs",
            ".",
            "./",
            "foo/..",
            "./foo/../",
            "foo/bar/../../",
            "..",
            "../x",
            "a/../../x",
            "",
        ] {
            assert!(!is_inside_relative(p), "{p}");
        }
    }
}
