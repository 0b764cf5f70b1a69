//! A ship carries only what its work nodes verified (issue 21): `ship pre-merge
//! --work-node` reads each node into the decision, the merge's announcement reads
//! them again, and the audit names every decision that rested on a node's word
//! the node has since withdrawn. On real parts: a consumer repository shipped by
//! `cairn ship` and a work node verified in its worktree, on one journal.

use serde_json::Value;

use crate::park::park as cairn;
use crate::support::git::git;
use crate::support::kind_field_rule;
use crate::support::ship_repo::Repo;

/// A workspec outside the consumer repository with one node `core` (one command
/// criterion), and `cairn work VERB --spec … --node core` on the ship's journal.
pub(crate) struct Node {
    _dir: tempfile::TempDir,
    spec: String,
}

impl Node {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let spec = root.join("ship.yaml");
        // The criterion fails while `fail` exists beside the spec.
        let flag = root.join("fail");
        std::fs::write(
            &spec,
            format!("title: Ship check\ndescription: One node.\nintent: Ship it.\nwork:\n  - id: core\n    task: Implement\n    touches: [src.txt]\n    acceptance:\n      - id: C1\n        statement: It works\n        evidence:\n          kind: command\n          run: \"test ! -e {} && printf 'test result: ok\\\\n'\"\n          expect: {{ exit: 0, output_includes: \"test result: ok\" }}\n          timeout_ms: 20000\n", flag.display()),
        )
        .unwrap();
        // A spec lives in a repository (a recording verb refuses one outside
        // any: its nodes are keyed by the repository).
        crate::support::git::git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join(".gitignore"), "fail\n.work/\n").unwrap();
        crate::support::git::git(&root, &["add", "."]);
        crate::support::git::git(&root, &["commit", "-q", "-m", "spec"]);
        Node {
            spec: spec.to_str().unwrap().to_owned(),
            _dir: dir,
        }
    }

    /// `cairn work VERB --spec SPEC --node core EXTRA…` (no terminal, no session env).
    pub(crate) fn work(&self, r: &Repo, verb: &str, extra: &[&str]) -> Value {
        let (code, v) = self.try_work(r, verb, extra);
        // 4: recorded, not green (a failed verification).
        assert!(matches!(code, 0 | 4), "work {verb}: {v}");
        v
    }

    /// [`Node::work`], whatever it exits: the exit code and the JSON printed.
    pub(crate) fn try_work(&self, r: &Repo, verb: &str, extra: &[&str]) -> (i32, Value) {
        let out = std::process::Command::new("setsid")
            .arg("-w")
            .arg(env!("CARGO_BIN_EXE_cairn"))
            .args(["work", verb, "--spec", &self.spec, "--node", "core"])
            .args(extra)
            .arg("--db")
            .arg(r.journal.path())
            .env_remove("CAIRN_DB")
            .env_remove("CAIRN_SESSION")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code().unwrap_or(-1), v)
    }

    /// `work verify` of the ship's worktree at `commit`, in session `s1`: the
    /// node's state after it.
    /// `plan`, then `dispatch` into the ship's worktree at its HEAD: the node's stream.
    pub(crate) fn dispatched_in(&self, r: &Repo) -> String {
        self.dispatched_to(r, &r.wt())
    }

    /// `plan`, then `dispatch` into worktree `wt` at its HEAD: the node's stream.
    pub(crate) fn dispatched_to(&self, r: &Repo, wt: &std::path::Path) -> String {
        self.work(r, "plan", &[]);
        let base = git(wt, &["rev-parse", "HEAD"]);
        let wt = wt.to_str().unwrap().to_owned();
        let dispatched = self.work(
            r,
            "dispatch",
            &[
                "--run-id",
                "r-1",
                "--worktree",
                &wt,
                "--expected-commit",
                &base,
            ],
        );
        dispatched["stream"].as_str().unwrap().to_owned()
    }

    pub(crate) fn verify(&self, r: &Repo, commit: &str) {
        assert_eq!(self.verify_to(r, commit), "verified");
    }

    fn verify_to(&self, r: &Repo, commit: &str) -> String {
        self.verify_in(r, &r.wt(), commit)
    }

    /// `work verify` of worktree `wt` at `commit`, in session `s1`: the state after.
    pub(crate) fn verify_in(&self, r: &Repo, wt: &std::path::Path, commit: &str) -> String {
        let wt = wt.to_str().unwrap().to_owned();
        let v = self.work(
            r,
            "verify",
            &[
                "--worktree",
                &wt,
                "--expected-commit",
                commit,
                "--session",
                "s1",
            ],
        );
        v["state"].as_str().unwrap().to_owned()
    }

    /// The spec's criterion command replaced by hand with `run` (no amendment).
    pub(crate) fn edit_run_by_hand(&self, run: &str) {
        let text = std::fs::read_to_string(&self.spec).unwrap();
        let edited: Vec<String> = text
            .lines()
            .map(|l| match l.find("run: ") {
                Some(at) => format!("{}run: \"{run}\"", &l[..at]),
                None => l.to_owned(),
            })
            .collect();
        std::fs::write(&self.spec, edited.join("\n") + "\n").unwrap();
    }

    /// The criterion fails from now on (`true`) or passes again (`false`).
    pub(crate) fn failing(&self, fail: bool) {
        let flag = std::path::Path::new(&self.spec).with_file_name("fail");
        if fail {
            std::fs::write(flag, "").unwrap();
        } else {
            std::fs::remove_file(flag).unwrap();
        }
    }
}

/// `ship pre-merge --work-node …` of the standard report.
pub(crate) fn pre_merge(r: &Repo, nodes: &[&str]) -> (i32, Value) {
    let mut args = vec!["pre-merge", "--short-id", crate::support::ship_repo::ID];
    for n in nodes {
        args.extend_from_slice(&["--work-node", n]);
    }
    r.run(&args, &crate::support::ship_repo::premerge().to_string())
}

/// Stopped at pre-merge by the work nodes' gate with `outcome`; resumed to phase 3.
fn stopped_by_the_nodes(r: &Repo, out: &Value, outcome: &str) {
    let gate = crate::support::ship_repo::gate(out, "work-nodes-verified");
    assert_eq!(gate["outcome"], outcome, "{out}");
    assert_eq!(
        out["failure_code"].as_str().or(out["code"].as_str()),
        Some("stopped:pre-merge:work-nodes-verified"),
        "{out}"
    );
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
}

#[test]
fn a_ship_merges_only_the_commit_its_work_nodes_verified() {
    use crate::support::ship_repo::{phase1, refine};
    let r = Repo::new();
    let node = Node::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    // The node works in the ship's worktree.
    let stream = node.dispatched_in(&r);
    let wt = r.wt().to_str().unwrap().to_owned();
    let base = git(&r.wt(), &["rev-parse", "HEAD"]);
    let verified = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    node.verify(&r, &verified);
    let (code, out) = r.verb("verify", &phase1(&verified, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    // A review-round fix lands after the node verified: nobody re-ran its criteria.
    let fix = r.commit_in(&r.wt(), &[("src.txt", "fix, reviewed\n")], "fix: review");
    let (code, out) = r.verb("refine", &refine(&fix).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");

    // Not a work node's stream (another machine's, or a name no node can have):
    // refused at input, nothing written.
    let key = stream.split_once(':').unwrap().0.to_owned();
    for bad in [
        "park/ep-1".to_owned(),
        "work-node/x".to_owned(),
        "work-node/:core".to_owned(),
        format!("{key}:"),
        key.clone(),
        format!("{key}:core/../x"),
        format!("{key}:core:x"),
        format!("work-node//{}", &key["work-node/".len()..]),
    ] {
        let before = r.journal.bytes();
        let (code, out) = pre_merge(&r, &[&bad]);
        assert_eq!(
            (code, kind_field_rule(&out)),
            (2, ["input", "work_node", "work-node-stream"]),
            "{bad}: {out}"
        );
        assert_eq!(r.journal.bytes(), before, "{bad}");
    }

    // A node the journal does not hold vouches for nothing, and the node that
    // worked in the worktree (unnamed) verified another commit: the run stops.
    let (_, out) = pre_merge(&r, &["work-node/0000000000000000:core"]);
    let detail = crate::support::ship_repo::gate(&out, "work-nodes-verified")["detail"].clone();
    assert!(
        detail.as_str().unwrap().contains("holds no work node")
            && detail.as_str().unwrap().contains(&stream),
        "{detail}"
    );
    stopped_by_the_nodes(&r, &out, "fail");

    // The node verified `verified`, not the tip `fix`: the run stops, naming both.
    let (_, out) = pre_merge(&r, &[&stream]);
    let gate = crate::support::ship_repo::gate(&out, "work-nodes-verified").clone();
    assert!(
        gate["detail"]
            .as_str()
            .unwrap()
            .contains(&format!("verified {verified}, not {fix}")),
        "{gate}"
    );
    stopped_by_the_nodes(&r, &out, "fail");
    assert_eq!(r.main_head(), base, "nothing merged");

    // The node verifies the tip: the ship carries what was verified.
    node.verify(&r, &fix);
    let (code, out) = pre_merge(&r, &[&stream]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    assert_eq!(
        crate::support::ship_repo::gate(&out, "work-nodes-verified")["outcome"],
        "pass"
    );
    // The node withdraws its word before the merge (a re-verification of the same
    // commit fails): the merge is not announced and git does not run.
    node.failing(true);
    assert_eq!(node.verify_to(&r, &fix), "rejected");
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, kind_field_rule(&out)),
        (2, ["rejected", "work_node", "work-nodes-verified"]),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "nothing announced");
    assert_eq!(r.main_head(), base, "nothing merged");
    // A retry that leaves the node out does not drop it: once named, every later
    // pre-merge of the run checks it.
    let (code, out) = r.verb("resume", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    let (_, out) = pre_merge(&r, &[]);
    stopped_by_the_nodes(&r, &out, "fail");
    // Remediated in the same tree and verified again at the same commit: it vouches
    // (checked again without being named).
    node.failing(false);
    node.work(&r, "remediate", &["--run-id", "r-2", "--worktree", &wt]);
    node.verify(&r, &fix);
    let (code, out) = pre_merge(&r, &[]);
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    let (code, out) = r.verb("merge", "");
    assert_eq!((code, out["state"].as_str()), (0, Some("merged")), "{out}");
    assert_eq!(r.main_head(), fix);
    // The read is a link: ship's pre-merge read the node.
    let (_, links, _) = cairn(&["journal", "links", &stream], "", Some(&r.journal.path()));
    let readers: Vec<&str> = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["reader"].as_str().unwrap())
        .collect();
    // Two pre-merges named it, and the merge's announcement read it again.
    let commands: Vec<&str> = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"].as_str().unwrap())
        .collect();
    // Five pre-merges read it (two named it, two kept it, and the one naming an
    // unknown node found it by the worktree it worked in), and the announcement
    // of the merge that went through (the refused one recorded nothing).
    assert_eq!(readers, ["ship/abc"; 6], "{links}");
    assert_eq!(
        commands,
        [
            "pre-merge",
            "pre-merge",
            "pre-merge",
            "pre-merge",
            "pre-merge",
            "begin"
        ],
        "{links}"
    );
    r.audit_ok();

    // After the merge the node withdraws its word (a re-verification of the merged
    // commit fails): the audit still passes — each decision was right when made —
    // and names, as notices, every decision that rested on it.
    node.failing(true);
    assert_eq!(node.verify_to(&r, &fix), "rejected");
    let (code, audit, _) = cairn(&["journal", "audit"], "", Some(&r.journal.path()));
    assert_eq!((code, audit["ok"].as_bool()), (0, Some(true)), "{audit}");
    let notices: Vec<(&str, String)> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "reliance-withdrawn")
        .map(|f| {
            (
                f["stream"].as_str().unwrap(),
                f["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // Every decision that read it: the five pre-merges that did and the merge.
    assert_eq!(notices.len(), 5, "{audit}");
    for (reader, detail) in &notices {
        assert_eq!(*reader, "ship/abc");
        assert!(
            detail.contains(&format!("relied on `{stream}`")),
            "{detail}"
        );
    }
    assert!(
        notices[2]
            .1
            .contains(&format!("no longer vouches for {fix}")),
        "the passing pre-merge rested on the verification of {fix}: {notices:?}"
    );
}

/// The nodes that worked in a run's worktree ship with it, named or not (helper-38
/// probe 1): a node dispatched to the worktree whose criterion fails at the
/// commit shipped stops pre-merge; one that fails after pre-merge stops the
/// merge before git runs.
#[test]
fn a_node_that_worked_in_the_worktree_ships_with_it_unnamed() {
    use crate::support::ship_repo::{phase1, premerge, refine};
    let r = Repo::new();
    let node = Node::new();
    assert_eq!(r.open_with(&[]).0, 0);
    assert_eq!(r.verb("create", "").0, 0);
    let stream = node.dispatched_in(&r);
    let base = git(&r.wt(), &["rev-parse", "HEAD"]);
    let head = r.commit_in(&r.wt(), &[("src.txt", "fix\n")], "fix: the thing");
    node.verify(&r, &head);
    node.failing(true);
    assert_eq!(node.verify_to(&r, &head), "rejected");
    let (code, out) = r.verb("verify", &phase1(&head, Some(&["src.txt"])).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-2")), "{out}");
    let (code, out) = r.verb("refine", &refine(&head).to_string());
    assert_eq!((code, out["state"].as_str()), (0, Some("phase-3")), "{out}");
    // No `--work-node`: the node is found by the tree it worked in.
    let (_, out) = r.verb("pre-merge", &premerge().to_string());
    let gate = crate::support::ship_repo::gate(&out, "work-nodes-verified").clone();
    assert!(gate["detail"].as_str().unwrap().contains(&stream), "{gate}");
    stopped_by_the_nodes(&r, &out, "fail");
    // Redispatched and verified again at the commit shipped: merge-ready; then it
    // fails again before the merge, which is refused before git runs, nothing
    // written.
    node.failing(false);
    let wt = r.wt().to_str().unwrap().to_owned();
    node.work(&r, "remediate", &["--run-id", "r-2", "--worktree", &wt]);
    node.verify(&r, &head);
    let (code, out) = r.verb("pre-merge", &premerge().to_string());
    assert_eq!(
        (code, out["state"].as_str()),
        (0, Some("merge-ready")),
        "{out}"
    );
    node.failing(true);
    assert_eq!(node.verify_to(&r, &head), "rejected");
    let before = r.journal.bytes();
    let (code, out) = r.verb("merge", "");
    assert_eq!(
        (code, out["error"]["violations"][0]["predicate"].as_str()),
        (2, Some("work-nodes-verified")),
        "{out}"
    );
    assert_eq!(r.journal.bytes(), before, "a refusal wrote");
    assert_eq!(r.main_head(), base, "nothing merged");
    // Escalated, it vouches for nothing, named or not: its failed work in the
    // worktree stops the run (found by a hostile pass: escalating on purpose
    // dropped the check).
    for round in 3..=9 {
        let run_id = format!("r-{round}");
        let out = node.work(&r, "remediate", &["--run-id", &run_id, "--worktree", &wt]);
        assert_eq!(out["state"], "dispatched", "{out}");
        assert_eq!(node.verify_to(&r, &head), "rejected");
        let (code, out) = node.try_work(&r, "escalate", &["--reason", "the budget is spent"]);
        if code == 0 {
            assert_eq!(out["state"], "escalated", "{out}");
            break;
        }
        assert!(round < 9, "the budget never ran out: {out}");
    }
    let (_, out) = r.verb("pre-merge", &premerge().to_string());
    let gate = crate::support::ship_repo::gate(&out, "work-nodes-verified").clone();
    assert!(gate["detail"].as_str().unwrap().contains(&stream), "{gate}");
    stopped_by_the_nodes(&r, &out, "fail");
}
