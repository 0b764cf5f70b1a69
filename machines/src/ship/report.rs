//! The phase reports (leaf result packets) in the wire format the seed's leaves
//! already write: known fields typed, consumer-added fields kept as they are —
//! unless a consumer field's name cannot be told from one cairn reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gates::Squash;
use crate::evidence::text::first_invisible;
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
    /// The consumer's fields, including its `INTENT_FIELD`.
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
    /// Consumer fields.
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
    /// Consumer fields.
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

/// A consumer's field is kept unread, so one misspelt field would drop what it
/// says: a `tiebreaker` list keeps its stop tiebreaker from stopping a `passed`
/// refine, a `remaining-findings` keeps findings off a `passed`. A consumer
/// field is refused when a person could take its name for one the report reads:
/// it holds a character no one can see, or any character but ASCII (a
/// fullwidth, Cyrillic or mathematical letter passes for a Latin one:
/// helper-54), or, folded (lower case, letters and digits only, a trailing `s`
/// dropped), it equals one of the report's fields, is one edit from it (two
/// for names of eight letters or more), contains it (`stop_tiebreakers`), or
/// holds all its words (`findings_remaining`). The consumer fields the seed's
/// leaves write (`resolve_intent_excerpt`, `cited_rdrs`, `merged_sha`,
/// `summary`, `teardown`, …) are none of these.
pub fn consumer_fields<R: Fields>(report: &R) -> Result<(), InputError> {
    for key in report.extra().keys() {
        let field = format!("report.{}", key.escape_debug());
        if let Some((i, c)) = first_invisible(key) {
            return Err(InputError::new(
                field,
                "invisible-character",
                format!(
                    "character {i} of the field name is U+{:04X}, a character a person cannot see",
                    u32::from(c)
                ),
            ));
        }
        if let Some((i, c)) = key.chars().enumerate().find(|(_, c)| !c.is_ascii()) {
            return Err(InputError::new(
                field,
                "field-name-ascii",
                format!(
                    "character {i} of the field name is U+{:04X}: a consumer field's name is \
                     ASCII, so no letter in it can pass for another",
                    u32::from(c)
                ),
            ));
        }
        if let Some(own) = R::FIELDS.iter().find(|f| resembles(key, f)) {
            return Err(InputError::new(
                field,
                "field-name-resembles",
                format!(
                    "`{}` is not a field of this report but reads like `{own}`, which is: \
                     spell it `{own}`, or name a consumer field so it cannot be taken for one",
                    key.escape_debug()
                ),
            ));
        }
    }
    Ok(())
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
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn refine_with(key: &str) -> RefineReport {
        let mut doc = json!({
            "verdict": "passed", "rebase_outcome": "clean", "iterations_run": 1,
            "tip_sha": "abc1234", "lint_clean": true,
        });
        doc[key] = json!([{"number": 3, "context": "c", "disposition": "d"}]);
        serde_json::from_value(doc).expect("a refine report")
    }

    #[test]
    fn a_field_that_reads_like_one_the_report_reads_is_refused() {
        for key in [
            "tiebreaker",
            "Tiebreakers",
            "tie-breakers",
            "tie_breakers ",
            "tiebraekers",
            "remaining-findings",
            "RemainingFindings",
            "rebase_already_don",
            // helper-54: a field's name inside another, or its words reordered.
            "stop_tiebreakers",
            "tiebreakers_met",
            "open_tiebreakers",
            "tiebreaker_list",
            "stoptiebreakers",
            "findings_remaining",
        ] {
            let e = consumer_fields(&refine_with(key)).expect_err(key);
            assert_eq!(e.rule, "field-name-resembles", "{key}");
        }
        // helper-54: letters that pass for Latin ones (fullwidth, Cyrillic,
        // mathematical bold, a combining mark that counts as a letter).
        for key in [
            "\u{FF54}\u{FF49}\u{FF45}\u{FF42}\u{FF52}\u{FF45}\u{FF41}\u{FF4B}\u{FF45}\u{FF52}\u{FF53}",
            "t\u{456}\u{435}br\u{435}\u{430}k\u{435}r\u{455}",
            "\u{1D42D}\u{1D422}\u{1D41E}\u{1D41B}\u{1D42B}\u{1D41E}\u{1D41A}\u{1D424}\u{1D41E}\u{1D42B}\u{1D42C}",
            "tiebreaker\u{345}\u{345}\u{345}",
            "r\u{435}m\u{430}\u{456}n\u{456}ng_f\u{456}nd\u{456}ng\u{455}",
        ] {
            let e = consumer_fields(&refine_with(key)).expect_err(key);
            assert_eq!(e.rule, "field-name-ascii", "{key}");
        }
        for key in ["tiebreakers\u{200B}", "\u{202E}tiebreakers", "x\ty"] {
            let e = consumer_fields(&refine_with(key)).expect_err(key);
            assert_eq!(e.rule, "invisible-character", "{key:?}");
            assert!(e.field.starts_with("report."), "{}", e.field);
        }
    }

    #[test]
    fn the_consumer_fields_the_seed_names_are_kept() {
        for key in [
            "resolve_intent_excerpt",
            "intent_excerpt",
            "cited_rdrs",
            "cited_refs",
            "followup_katas",
            "followups_noted",
            "pushed_to_kata",
            "phase",
            "kata_id",
            "session_id",
            "merged_sha",
            "summary",
            "summary_80w",
            "teardown",
            "changed_paths",
            "evidence_paths",
            "next_action",
            "mutation_requests",
            "worktree_path",
            "branch",
            "verdict",
        ] {
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
            let with = |i: usize| {
                let mut doc = base[i].clone();
                doc[key] = json!("x");
                doc
            };
            if !Phase1Report::FIELDS.contains(&key) {
                let r: Phase1Report = serde_json::from_value(with(0)).expect("phase 1");
                assert!(consumer_fields(&r).is_ok(), "phase 1: {key}");
            }
            if !RefineReport::FIELDS.contains(&key) {
                let r: RefineReport = serde_json::from_value(with(1)).expect("refine");
                assert!(consumer_fields(&r).is_ok(), "refine: {key}");
            }
            let r: PreMergeReport = serde_json::from_value(with(2)).expect("pre-merge");
            assert!(consumer_fields(&r).is_ok(), "pre-merge: {key}");
        }
    }
}
