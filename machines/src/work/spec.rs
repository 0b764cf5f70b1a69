//! The workspec: its schema (closed objects, exactly one node shape), ids and
//! dependencies (a cycle is named), `touches` without globs, the lints, and
//! qualified node addresses. Every finding has a stable code and a path into the
//! document (`$.work[0].depends_on`).

use std::collections::{BTreeMap, BTreeSet};

use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// `error` stops; `warning` is a decision to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec is invalid.
    Error,
    /// A lint.
    Warning,
}

/// A validation finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The stable code.
    pub code: String,
    /// error | warning.
    pub severity: Severity,
    /// The path into the document.
    pub path: Vec<Seg>,
    /// What is wrong.
    pub message: String,
}

impl Finding {
    /// An error.
    pub fn error(code: &str, path: Vec<Seg>, message: impl Into<String>) -> Self {
        Finding {
            code: code.into(),
            severity: Severity::Error,
            path,
            message: message.into(),
        }
    }
    /// A warning.
    pub fn warning(code: &str, path: Vec<Seg>, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(code, path, message)
        }
    }
    /// `error dependency-cycle at $.work[0].depends_on`.
    pub fn render(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{sev} {} at {}", self.code, render_path(&self.path))
    }
}

/// `$.work[0].depends_on`.
pub fn render_path(path: &[Seg]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn with(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    with(path, Seg::Key(k.into()))
}

/// A criterion's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Evidence {
    /// A command cairn runs in the tree.
    Command {
        /// The shell string (`sh -c`).
        run: String,
        /// The expected exit status.
        exit: i64,
        /// The floor: must appear in stdout or stderr.
        output_includes: String,
        /// The timeout.
        timeout_ms: u64,
        /// Environment names passed through.
        inherit_env: Vec<String>,
    },
    /// An agent judge: `agent-unavailable` in v1.
    Agent {
        /// The agent.
        agent: String,
        /// Its rubric.
        rubric: String,
    },
    /// A question for the host user.
    User {
        /// The prompt.
        prompt: String,
    },
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    /// Its id (unique in the spec).
    pub id: String,
    /// Its accepted text.
    pub statement: String,
    /// Its evidence.
    pub evidence: Evidence,
    /// The criterion as written (for the contract hash).
    pub raw: Value,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The qualified address.
    pub address: Vec<String>,
    /// The path of the node in the document.
    pub path: Vec<Seg>,
    /// Sibling ids this node depends on.
    pub depends_on: Vec<String>,
    /// Literal paths the node may write.
    pub touches: Vec<String>,
    /// Criteria.
    pub acceptance: Vec<Criterion>,
    /// Checklist items.
    pub checklist: Vec<String>,
    /// Child addresses.
    pub children: Vec<Vec<String>>,
    /// The task.
    pub task: String,
}

/// A spec read as far as it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Every node, depth-first.
    pub nodes: Vec<Node>,
    /// The open decision ids.
    pub open_decisions: Vec<String>,
}

impl Spec {
    /// The node at `address`.
    pub fn node(&self, address: &[String]) -> Option<&Node> {
        self.nodes.iter().find(|n| n.address == address)
    }
    /// Resolves `--node`: a JSON address array, or a bare id that must be unique.
    pub fn resolve(&self, selector: &str) -> Result<&Node, String> {
        if selector.starts_with('[') {
            let addr: Vec<String> = serde_json::from_str(selector)
                .map_err(|e| format!("not a JSON array of ids: {e}"))?;
            return self
                .node(&addr)
                .ok_or_else(|| format!("no node at {selector}"));
        }
        let hits: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| n.address.last().is_some_and(|id| id == selector))
            .collect();
        match hits.as_slice() {
            [one] => Ok(one),
            [] => Err(format!("no node has the id `{selector}`")),
            many => Err(format!(
                "the bare id `{selector}` is ambiguous: {}; give the qualified address",
                many.iter()
                    .map(|n| serde_json::to_string(&n.address).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    /// Effective dependencies: own `depends_on` and every ancestor's, as addresses.
    pub fn effective_deps(&self, address: &[String]) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for depth in 1..=address.len() {
            let prefix = &address[..depth];
            if let Some(n) = self.node(prefix) {
                for d in &n.depends_on {
                    let mut a = prefix[..depth - 1].to_vec();
                    a.push(d.clone());
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
        }
        out
    }
}

/// The result of validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// Every finding, errors first.
    pub findings: Vec<Finding>,
    /// The spec, when it could be read (even with errors).
    pub spec: Option<Spec>,
}

impl Validation {
    /// No errors.
    pub fn valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

struct Checker {
    findings: Vec<Finding>,
}

impl Checker {
    fn err(&mut self, code: &str, path: Vec<Seg>, message: impl Into<String>) {
        self.findings.push(Finding::error(code, path, message));
    }

    /// A closed object: required and allowed keys; `None` if not an object.
    fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &[Seg],
        required: &[&str],
        optional: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(m) = v.as_object() else {
            self.err("schema-invalid", path.to_vec(), "expected an object");
            return None;
        };
        for r in required {
            if !m.contains_key(*r) {
                self.err(
                    "schema-required",
                    key(path, r),
                    format!("`{r}` is required"),
                );
            }
        }
        for k in m.keys() {
            if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
                self.err(
                    "schema-additional-properties",
                    key(path, k),
                    format!("`{k}` is not a property here"),
                );
            }
        }
        Some(m)
    }

    fn string(
        &mut self,
        m: &Map<String, Value>,
        path: &[Seg],
        k: &str,
        nonempty: bool,
    ) -> Option<String> {
        match m.get(k)? {
            Value::String(s) if nonempty && s.trim().is_empty() => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must not be empty"),
                );
                None
            }
            Value::String(s) => Some(s.clone()),
            _ => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must be a string"),
                );
                None
            }
        }
    }

    fn strings(
        &mut self,
        m: &Map<String, Value>,
        path: &[Seg],
        k: &str,
        nonempty: bool,
    ) -> Vec<String> {
        let Some(v) = m.get(k) else { return vec![] };
        let Some(a) = v.as_array() else {
            self.err(
                "schema-invalid",
                key(path, k),
                format!("`{k}` must be an array"),
            );
            return vec![];
        };
        let mut out = vec![];
        for (i, x) in a.iter().enumerate() {
            match x {
                Value::String(s) if nonempty && s.trim().is_empty() => self.err(
                    "schema-invalid",
                    with(&key(path, k), Seg::Index(i)),
                    "must not be empty",
                ),
                Value::String(s) => out.push(s.clone()),
                _ => self.err(
                    "schema-invalid",
                    with(&key(path, k), Seg::Index(i)),
                    "must be a string",
                ),
            }
        }
        out
    }

    fn array<'a>(
        &mut self,
        m: &'a Map<String, Value>,
        path: &[Seg],
        k: &str,
    ) -> Option<&'a Vec<Value>> {
        let v = m.get(k)?;
        match v.as_array() {
            Some(a) => Some(a),
            None => {
                self.err(
                    "schema-invalid",
                    key(path, k),
                    format!("`{k}` must be an array"),
                );
                None
            }
        }
    }

    fn criterion(&mut self, v: &Value, path: &[Seg]) -> Option<Criterion> {
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

    fn evidence(&mut self, v: &Value, path: &[Seg]) -> Option<Evidence> {
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
                    if p.starts_with('/') || p == "." {
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

    fn node(
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
        if let Some(w) = m.get("worker") {
            let wp = key(path, "worker");
            if let Some(wm) = self.object(w, &wp, &["profile", "agent", "model"], &["skills"]) {
                for k in ["profile", "agent", "model"] {
                    self.string(wm, &wp, k, true);
                }
                self.strings(wm, &wp, "skills", true);
            }
        }
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
        });
        let mut children = vec![];
        match m.get("work") {
            Some(w) => {
                if m.contains_key("checklist") {
                    self.err(
                        "schema-invalid",
                        path.to_vec(),
                        "a composite node (with `work`) has no `checklist`",
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

fn clean_touch(t: &str) -> String {
    let t = t.trim_start_matches("./");
    t.trim_end_matches('/').to_owned()
}

fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (clean_touch(a), clean_touch(b));
    a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/"))
}

/// Validates a workspec document.
pub fn validate(text: &str) -> Validation {
    let (value, mut findings) = super::yaml::read(text);
    let Some(value) = value else {
        return Validation {
            findings,
            spec: None,
        };
    };
    let mut c = Checker { findings: vec![] };
    let root = c.object(
        &value,
        &[],
        &["title", "description", "intent", "work"],
        &[
            "links",
            "corrects",
            "supersedes",
            "open_decisions",
            "advisory_dispositions",
        ],
    );
    let mut nodes = Vec::new();
    let mut open_decisions = Vec::new();
    if let Some(m) = root {
        for k in ["title", "description", "intent"] {
            c.string(m, &[], k, false);
        }
        if let Some(work) = c.array(m, &[], "work") {
            for (i, n) in work.iter().enumerate() {
                c.node(
                    n,
                    &[Seg::Key("work".into()), Seg::Index(i)],
                    &[],
                    &mut nodes,
                );
            }
        }
        if let Some(ods) = c.array(m, &[], "open_decisions") {
            for (i, d) in ods.iter().enumerate() {
                let p = vec![Seg::Key("open_decisions".into()), Seg::Index(i)];
                if let Some(dm) = c.object(d, &p, &["id", "decides"], &["question", "tripwire"]) {
                    if let Some(id) = c.string(dm, &p, "id", true) {
                        open_decisions.push(id);
                    }
                    c.string(dm, &p, "decides", true);
                }
            }
        }
        for k in ["links", "corrects", "supersedes", "advisory_dispositions"] {
            c.array(m, &[], k);
        }
    }
    let mut findings_ids = ids_and_dependencies(&nodes);
    c.findings.append(&mut findings_ids);
    let errors = c.findings.iter().any(|f| f.severity == Severity::Error);
    if !errors {
        c.findings.extend(lints(&nodes));
    }
    findings.append(&mut c.findings);
    // Errors first, then warnings; stable within each; no duplicates.
    let mut seen = BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.severity, render_path(&f.path))));
    findings.sort_by_key(|f| f.severity);
    Validation {
        findings,
        spec: Some(Spec {
            nodes,
            open_decisions,
        }),
    }
}

fn ids_and_dependencies(nodes: &[Node]) -> Vec<Finding> {
    let mut out = vec![];
    // Siblings: grouped by parent address.
    let mut groups: BTreeMap<Vec<String>, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        groups
            .entry(n.address[..n.address.len() - 1].to_vec())
            .or_default()
            .push(n);
    }
    for siblings in groups.values() {
        let mut seen = BTreeSet::new();
        for n in siblings {
            let id = n.address.last().cloned().unwrap_or_default();
            if !seen.insert(id.clone()) {
                out.push(Finding::error(
                    "duplicate-node-id",
                    key(&n.path, "id"),
                    format!("`{id}` is already the id of a sibling"),
                ));
            }
        }
        // A deterministic graph (no hashing): node i is sibling i.
        let mut g: DiGraph<usize, ()> = DiGraph::new();
        for i in 0..siblings.len() {
            g.add_node(i);
        }
        for (i, n) in siblings.iter().enumerate() {
            let id = n.address.last().cloned().unwrap_or_default();
            for (j, d) in n.depends_on.iter().enumerate() {
                let dp = with(&key(&n.path, "depends_on"), Seg::Index(j));
                if *d == id {
                    out.push(Finding::error(
                        "dependency-self",
                        dp,
                        format!("`{id}` depends on itself"),
                    ));
                    continue;
                }
                match siblings.iter().position(|s| s.address.last() == Some(d)) {
                    Some(k) => {
                        g.add_edge(NodeIndex::new(i), NodeIndex::new(k), ());
                    }
                    None => out.push(Finding::error(
                        "dependency-unresolved",
                        dp,
                        format!("`{d}` is not a sibling of `{id}`"),
                    )),
                }
            }
        }
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() < 2 {
                continue;
            }
            let mut members: Vec<usize> = scc.iter().map(|x| x.index()).collect();
            members.sort_unstable();
            let first = siblings[members[0]];
            // Name the cycle in dependency order, starting at its first member.
            let mut cycle = vec![members[0]];
            let mut at = members[0];
            while cycle.len() <= members.len() {
                let next = g
                    .neighbors(NodeIndex::new(at))
                    .map(|x| x.index())
                    .filter(|n| members.contains(n))
                    .min();
                match next {
                    Some(n) if n == members[0] => {
                        cycle.push(n);
                        break;
                    }
                    Some(n) if !cycle.contains(&n) => {
                        cycle.push(n);
                        at = n;
                    }
                    _ => break,
                }
            }
            let names: Vec<String> = cycle
                .iter()
                .map(|i| siblings[*i].address.last().cloned().unwrap_or_default())
                .collect();
            out.push(Finding::error(
                "dependency-cycle",
                key(&first.path, "depends_on"),
                format!("dependency cycle: {}", names.join(" → ")),
            ));
        }
    }
    let mut criteria = BTreeSet::new();
    for n in nodes {
        for (i, c) in n.acceptance.iter().enumerate() {
            if !criteria.insert(c.id.clone()) {
                out.push(Finding::error(
                    "duplicate-criterion-id",
                    with(
                        &with(&key(&n.path, "acceptance"), Seg::Index(i)),
                        Seg::Key("id".into()),
                    ),
                    format!("`{}` is already a criterion id in this spec", c.id),
                ));
            }
        }
    }
    out
}

/// Whether `a` must finish before `b` (transitively, through effective dependencies).
fn ordered(spec: &Spec, a: &[String], b: &[String]) -> bool {
    let mut stack = vec![b.to_vec()];
    let mut seen = BTreeSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) {
            continue;
        }
        for d in spec.effective_deps(&x) {
            if d == a || a.starts_with(&d) || d.starts_with(a) {
                return true;
            }
            stack.push(d.clone());
            // A composite dependency waits for its children.
            for n in spec.nodes.iter().filter(|n| n.address.starts_with(&d)) {
                stack.push(n.address.clone());
            }
        }
    }
    false
}

fn lints(nodes: &[Node]) -> Vec<Finding> {
    let spec = Spec {
        nodes: nodes.to_vec(),
        open_decisions: vec![],
    };
    let mut out = vec![];
    let mut by_touch: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        for t in &n.touches {
            by_touch.entry(clean_touch(t)).or_default().push(n);
        }
    }
    for (t, ns) in &by_touch {
        if ns.len() >= 3 {
            out.push(Finding::warning(
                "touches-concentration",
                key(&ns[2].path, "touches"),
                format!("`{t}` is touched by {} nodes", ns.len()),
            ));
        }
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let related = a.address.starts_with(&b.address) || b.address.starts_with(&a.address);
            if related
                || ordered(&spec, &a.address, &b.address)
                || ordered(&spec, &b.address, &a.address)
            {
                continue;
            }
            let shared: Vec<String> = a
                .touches
                .iter()
                .flat_map(|x| {
                    b.touches
                        .iter()
                        .filter(move |y| overlaps(x, y))
                        .map(move |_| clean_touch(x))
                })
                .collect();
            if !shared.is_empty() {
                out.push(Finding::warning(
                    "touch-overlap",
                    key(&b.path, "touches"),
                    format!(
                        "{} and {} can run in the same wave and both touch {}",
                        serde_json::to_string(&a.address).unwrap_or_default(),
                        serde_json::to_string(&b.address).unwrap_or_default(),
                        shared.join(", ")
                    ),
                ));
            }
        }
    }
    out
}

/// What is known of the source draft a spec declares on its first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Draft {
    /// The spec declares no draft: no lineage to check.
    NotDeclared,
    /// Declared, but absent, escaping the tree, or unreadable.
    Unavailable,
    /// Its text.
    Text(String),
}

/// [`validate`], plus criterion lineage against the retained source draft: every
/// criterion's text is the draft's, or the end of a valid amendment chain from it.
pub fn validate_with_draft(text: &str, draft: &Draft) -> Validation {
    let mut v = validate(text);
    let Some(spec) = v.spec.as_ref() else {
        return v;
    };
    if v.findings.iter().any(|f| f.severity == Severity::Error) {
        return v;
    }
    let criteria: Vec<(&Node, usize, &Criterion)> = spec
        .nodes
        .iter()
        .flat_map(|n| n.acceptance.iter().enumerate().map(move |(i, c)| (n, i, c)))
        .collect();
    let mut lineage = vec![];
    match draft {
        Draft::NotDeclared => {}
        Draft::Unavailable if !criteria.is_empty() => lineage.push(Finding::error(
            "criterion-draft-unavailable",
            vec![],
            "the retained source draft is absent or unreadable: restore it or correct the visible path",
        )),
        Draft::Unavailable => {}
        Draft::Text(d) => match super::amend::draft_criteria(d) {
            Err(m) => lineage.push(Finding::error("criterion-draft-invalid", vec![], m)),
            Ok(drafted) => {
                for (n, i, c) in &criteria {
                    let cp = with(&key(&n.path, "acceptance"), Seg::Index(*i));
                    match drafted.get(&c.id) {
                        None => lineage.push(Finding::error(
                            "criterion-draft-criterion-missing",
                            key(&cp, "id"),
                            format!("`{}` is not in the draft", c.id),
                        )),
                        Some(dt) => {
                            let chain: Vec<super::amend::Amendment> = c
                                .raw
                                .get("amendments")
                                .cloned()
                                .and_then(|a| serde_json::from_value(a).ok())
                                .unwrap_or_default();
                            if let Err(code) = super::amend::check_chain(&c.id, dt, &chain, &c.statement) {
                                lineage.push(Finding::error(code, key(&cp, "statement"), format!("`{}`'s text does not follow from the draft through its amendment chain", c.id)));
                            }
                        }
                    }
                }
                for id in drafted.keys() {
                    if !criteria.iter().any(|(_, _, c)| &c.id == id) {
                        lineage.push(Finding::error(
                            "criterion-draft-criterion-unassigned",
                            vec![],
                            format!("the draft's `{id}` is owned by no node"),
                        ));
                    }
                }
            }
        },
    }
    lineage.append(&mut v.findings);
    lineage.sort_by_key(|f| f.severity);
    v.findings = lineage;
    v
}
