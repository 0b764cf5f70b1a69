//! The phase reports (leaf result packets) in the wire format the seed's leaves
//! already write: known fields typed; beside them only the wire format's own
//! fields, the run's `INTENT_FIELD` and the consumer fields declared at `ship
//! open`, kept unread (`consumer_fields`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gates::Squash;
use crate::evidence::wire::InputError;

/// A leaf verdict: `ok`/`passed`/`shipped`, or `stopped:<reason>`.
pub fn stopped_reason(verdict: &str) -> Option<&str> {
    verdict.strip_prefix("stopped:")
}

/// §phase-1 report (kata-ship `resolve`, prompt-ship): `verdict` `ok | stopped:<reason>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phase1Report {
    /// `ok` or `stopped:<reason>`.
    pub verdict: String,
    /// The worktree the leaf says it worked in.
    pub worktree_path: String,
    /// The branch the leaf says it committed on.
    pub branch: String,
    /// The head the leaf committed (short or full).
    #[serde(default)]
    pub head_sha: Option<String>,
    /// Every path the leaf committed; missing is the empty set (every path out of scope).
    #[serde(default)]
    pub in_scope_paths: Option<Vec<String>>,
    /// The commit subject.
    #[serde(default)]
    pub commit_subject: Option<String>,
    /// Fields kept unread: the wire format's (`SHEET_FIELDS`), the run's
    /// `INTENT_FIELD` and the consumer fields declared at `ship open`; no other
    /// (`consumer_fields`, ship rules 9).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `clean | rerere-resolved | conflict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RebaseOutcome {
    /// Rebased without conflicts.
    Clean,
    /// rerere resolved the conflicts.
    RerereResolved,
    /// A conflict rerere could not clear: tiebreaker 3.
    Conflict,
}

/// A tiebreaker the leaf met: 1, 2 and 4 are auto-disposed with their grounding;
/// 3 and 5 stop and ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tiebreaker {
    /// 1–5.
    pub number: u8,
    /// ≤ 80 words of context.
    pub context: String,
    /// The disposition applied (1/2/4) or proposed (3/5).
    pub disposition: String,
    /// The evidence the disposition rests on (required for 1, 2, 4).
    #[serde(default)]
    pub grounding: Option<String>,
}

/// §phase-2-rebase-refine report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefineReport {
    /// `passed | flapping | daemon_unhealthy | stopped:<reason>`.
    pub verdict: String,
    /// How the one rebase went.
    pub rebase_outcome: RebaseOutcome,
    /// Refine iterations run.
    pub iterations_run: u32,
    /// The tip (short or full).
    pub tip_sha: String,
    /// `<sha> <subject>` lines.
    #[serde(default)]
    pub commits_added: Vec<String>,
    /// `<finding> — <grounding>`: every dismissal cites its grounding.
    #[serde(default)]
    pub dismissed_findings: Vec<String>,
    /// Only on `flapping` / `stopped`.
    #[serde(default)]
    pub remaining_findings: Option<Vec<String>>,
    /// Lint clean on the tip.
    pub lint_clean: bool,
    /// A broadening run (§phase-2-broadening) skips the rebase.
    #[serde(default)]
    pub rebase_already_done: bool,
    /// Tiebreakers met.
    #[serde(default)]
    pub tiebreakers: Vec<Tiebreaker>,
    /// Fields kept unread: the wire format's (`SHEET_FIELDS`), the run's
    /// `INTENT_FIELD` and the consumer fields declared at `ship open`; no other
    /// (`consumer_fields`, ship rules 9).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// `unchanged | clean | rerere-resolved | conflict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReRebase {
    /// The target had not moved.
    Unchanged,
    /// Re-rebased cleanly.
    Clean,
    /// rerere resolved it.
    RerereResolved,
    /// Tiebreaker 3.
    Conflict,
}

/// §phase-3 report up to the merge (cairn performs the merge and teardown itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreMergeReport {
    /// §phase-3 step 2.
    pub rebase_outcome_3_2: ReRebase,
    /// Step 3.
    pub tests_pass: bool,
    /// Step 3.
    pub lint_clean: bool,
    /// Step 4.
    pub squash: Squash,
    /// The full pre-squash commit (required unless `squash` is `n/a`).
    #[serde(default)]
    pub pre_squash_sha: Option<String>,
    /// `<sha> <subject>` per roll-up (required when squashed).
    #[serde(default)]
    pub rollups: Vec<String>,
    /// How many open review jobs `roborev fix --open --list` listed for the branch
    /// (an observation of the review tool; cairn does not run it).
    pub open_review_jobs: u64,
    /// Fields kept unread: the wire format's (`SHEET_FIELDS`), the run's
    /// `INTENT_FIELD` and the consumer fields declared at `ship open`; no other
    /// (`consumer_fields`, ship rules 9).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A phase report's fields as the wire spells them, and the consumer's.
pub trait Fields {
    /// Every field the report's type reads (a test holds the list to the type's
    /// JSON Schema).
    const FIELDS: &'static [&'static str];
    /// The consumer's fields, kept unread.
    fn extra(&self) -> &BTreeMap<String, Value>;
}

impl Fields for Phase1Report {
    const FIELDS: &'static [&'static str] = &[
        "verdict",
        "worktree_path",
        "branch",
        "head_sha",
        "in_scope_paths",
        "commit_subject",
    ];
    fn extra(&self) -> &BTreeMap<String, Value> {
        &self.extra
    }
}

impl Fields for RefineReport {
    const FIELDS: &'static [&'static str] = &[
        "verdict",
        "rebase_outcome",
        "iterations_run",
        "tip_sha",
        "commits_added",
        "dismissed_findings",
        "remaining_findings",
        "lint_clean",
        "rebase_already_done",
        "tiebreakers",
    ];
    fn extra(&self) -> &BTreeMap<String, Value> {
        &self.extra
    }
}

impl Fields for PreMergeReport {
    const FIELDS: &'static [&'static str] = &[
        "rebase_outcome_3_2",
        "tests_pass",
        "lint_clean",
        "squash",
        "pre_squash_sha",
        "rollups",
        "open_review_jobs",
    ];
    fn extra(&self) -> &BTreeMap<String, Value> {
        &self.extra
    }
}

/// The fields the wire format's reports and packets carry beyond what cairn reads
/// (`ship-wire-format.md` §2–3: kata-ship's and prompt-ship's phase-1 fields,
/// kata-ship's `pushed_to_kata`, the packet's envelope and phase-3 fields).
pub const SHEET_FIELDS: &[&str] = &[
    "resolve_intent_excerpt",
    "intent_excerpt",
    "cited_rdrs",
    "cited_refs",
    "followup_katas",
    "followups_noted",
    "pushed_to_kata",
    "phase",
    "verdict",
    "kata_id",
    "session_id",
    "worktree_path",
    "branch",
    "merged_sha",
    "summary",
    "teardown",
    "changed_paths",
    "evidence_paths",
    "next_action",
    "mutation_requests",
    "summary_80w",
];

/// A report's fields beyond its own are kept unread, so a misspelt field would
/// drop what it says: a `tiebreaker` list kept its stop tiebreaker from
/// stopping a `passed` refine, and no rule on names tells a typo from a new
/// name (helper-54 and -55 walked around edit distance, containment, look-alike
/// letters and nesting). So a report holds its own fields, the wire format's
/// ([`SHEET_FIELDS`]), the run's `INTENT_FIELD` and the fields the consumer
/// declared at `ship open --consumer-field`, and nothing else (`unknown-field`).
pub fn consumer_fields<R: Fields>(
    report: &R,
    params: &super::state::Params,
) -> Result<(), InputError> {
    for key in report.extra().keys() {
        let known = SHEET_FIELDS.contains(&key.as_str())
            || *key == params.intent_field
            || params.consumer_fields.iter().any(|c| c == key);
        if !known {
            return Err(InputError::new(
                format!("report.{}", key.escape_debug()),
                "unknown-field",
                format!(
                    "`{}` is not a field of this report, of the wire format's, or one the \
                     run declared: declare a consumer field of its own at `ship open \
                     --consumer-field NAME`",
                    key.escape_debug()
                ),
            ));
        }
    }
    Ok(())
}

/// The field of any phase report that `name` could be taken for: a declared
/// consumer field must be none (`ship open --consumer-field`). Folded (lower
/// case, letters and digits, a trailing `s` dropped), it equals one, is one
/// edit from it (two for eight letters or more), contains it, or holds all its
/// words.
pub fn resembling(name: &str) -> Option<&'static str> {
    Phase1Report::FIELDS
        .iter()
        .chain(RefineReport::FIELDS)
        .chain(PreMergeReport::FIELDS)
        .copied()
        .find(|own| resembles(name, own))
}

/// Lower case, letters and digits only, one trailing `s` dropped.
fn fold(name: &str) -> String {
    let mut out: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    if out.len() > 1 && out.ends_with('s') {
        out.pop();
    }
    out
}

/// The name's words (split at anything but a letter or digit), each folded.
fn words(name: &str) -> std::collections::BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(fold)
        .collect()
}

fn resembles(key: &str, own: &str) -> bool {
    let (k, o) = (fold(key), fold(own));
    let within = if o.chars().count() >= 8 { 2 } else { 1 };
    k == o
        || strsim::osa_distance(&k, &o) <= within
        || k.contains(&o)
        || words(own).is_subset(&words(key))
        // a part of a field's name (`findings`, `remaining`: helper-56)
        || words(key).is_subset(&words(own))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ship::state::Params;
    use serde_json::json;

    fn schema_fields<T: schemars::JsonSchema>() -> Vec<String> {
        let schema = serde_json::to_value(schemars::schema_for!(T)).expect("a schema serializes");
        let mut keys: Vec<String> = schema["properties"]
            .as_object()
            .expect("a report's schema has properties")
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    fn listed<R: Fields>() -> Vec<String> {
        let mut keys: Vec<String> = R::FIELDS.iter().map(|f| (*f).to_owned()).collect();
        keys.sort();
        keys
    }

    #[test]
    fn each_report_lists_the_fields_its_type_reads() {
        assert_eq!(listed::<Phase1Report>(), schema_fields::<Phase1Report>());
        assert_eq!(listed::<RefineReport>(), schema_fields::<RefineReport>());
        assert_eq!(
            listed::<PreMergeReport>(),
            schema_fields::<PreMergeReport>()
        );
    }

    fn refine_with(key: &str, value: Value) -> RefineReport {
        let mut doc = json!({
            "verdict": "passed", "rebase_outcome": "clean", "iterations_run": 1,
            "tip_sha": "abc1234", "lint_clean": true,
        });
        doc[key] = value;
        serde_json::from_value(doc).expect("a refine report")
    }

    fn stop() -> Value {
        json!([{"number": 3, "context": "c", "disposition": "d"}])
    }

    /// No spelling of a field the report reads gets a stop tiebreaker past
    /// `passed` as a field kept unread: each name helper-54 and helper-55 found
    /// is refused, and so is anything the run did not declare.
    #[test]
    fn a_field_the_report_and_the_run_do_not_know_is_refused() {
        let params = Params::sample();
        for key in [
            "tiebreaker",
            "Tiebreakers",
            "tie-breakers",
            "tiebraekers",
            "remaining-findings",
            "stop_tiebreakers",
            "stop_tiebreaks",
            "tiebreaking",
            "tiebrkrs",
            "t1ebr3ak3rs",
            "findings",
            "open_findings",
            "unresolved_findings",
            "details",
            "tiebreakers\u{200B}",
            "\u{FF54}\u{FF49}\u{FF45}\u{FF42}\u{FF52}\u{FF45}\u{FF41}\u{FF4B}\u{FF45}\u{FF52}\u{FF53}",
            "t\u{456}\u{435}br\u{435}\u{430}k\u{435}r\u{455}",
        ] {
            let e = consumer_fields(&refine_with(key, stop()), &params).expect_err(key);
            assert_eq!(
                (e.rule, e.field.as_str()),
                ("unknown-field", format!("report.{}", key.escape_debug()).as_str()),
                "{key}"
            );
        }
    }

    /// The wire format's fields pass in every report, and so do the run's
    /// `INTENT_FIELD` and the fields it declared.
    #[test]
    fn the_wire_formats_and_the_declared_fields_are_kept() {
        let mut params = Params::sample();
        params.intent_field = "resolve_intent".into();
        params.consumer_fields = vec!["kata_ticket".into()];
        let base = [
            json!({"verdict": "ok", "worktree_path": "/w", "branch": "b"}),
            json!({
                "verdict": "passed", "rebase_outcome": "clean", "iterations_run": 1,
                "tip_sha": "abc1234", "lint_clean": true,
            }),
            json!({
                "rebase_outcome_3_2": "clean", "tests_pass": true, "lint_clean": true,
                "squash": "n/a", "open_review_jobs": 0,
            }),
        ];
        for key in SHEET_FIELDS
            .iter()
            .copied()
            .chain(["resolve_intent", "kata_ticket"])
        {
            let with = |i: usize| {
                let mut doc = base[i].clone();
                if doc.get(key).is_none() {
                    doc[key] = json!("x");
                }
                doc
            };
            let r: Phase1Report = serde_json::from_value(with(0)).expect("phase 1");
            assert!(consumer_fields(&r, &params).is_ok(), "phase 1: {key}");
            let r: RefineReport = serde_json::from_value(with(1)).expect("refine");
            assert!(consumer_fields(&r, &params).is_ok(), "refine: {key}");
            let r: PreMergeReport = serde_json::from_value(with(2)).expect("pre-merge");
            assert!(consumer_fields(&r, &params).is_ok(), "pre-merge: {key}");
        }
    }

    /// A declared consumer field may not be taken for a report's field.
    #[test]
    fn a_declaration_that_reads_like_a_report_field_is_refused() {
        for name in [
            "tiebreaker",
            "tie_breakers",
            "stop_tiebreakers",
            "tiebreakers_met",
            "findings_remaining",
            "remaining_findingz",
            "TESTS_PASSED",
        ] {
            assert!(resembling(name).is_some(), "{name}");
        }
        for name in ["findings", "remaining"] {
            assert!(resembling(name).is_some(), "{name}");
        }
        for name in ["kata_ticket", "pushed_to_kata", "reviewer", "notes"] {
            assert_eq!(resembling(name), None, "{name}");
        }
    }
}
