//! `save`: a tick. The id, the derived `next_round`, the gate verdicts, the
//! doc-review gate on entering `work`, and the phase authority (`qa` only through a
//! QA PASS); then the full snapshot the save leaves.

use super::super::command::Save;
use super::super::event::Event;
use super::super::gates;
use super::super::state::{parse_gate_verdict, GateVerdict, Phase, PhaseStatus, Status, Thread};
use super::super::tick::{self, valid_saga_id};
use super::review::doc_review_blocks;
use super::Refuse;
use crate::evidence::ids::refuse_option_like;
use crate::evidence::{bad_round, names, FullCommit};
use crate::reads::{Fact, Sieve, JOURNAL_AGREES, SAGA_MACHINE};
use crate::{Context, Rejection};

/// `save`: refused on a bad id, a set `next_round`, a bad destination or
/// orchestration backend, git runs that are not the capture plan, a bad verdict, a
/// round 0, an unresolved plan review on entering `work`, or a phase the save may
/// not move to.
pub(super) fn decide_save(
    r: &Refuse,
    saga_id: &str,
    save: &Save,
    ctx: &Context,
) -> Result<Vec<Event>, Rejection> {
    let state = r.state;
    if !valid_saga_id(saga_id) {
        return r.no(
            "saga-id",
            Some("id"),
            "`issue-<N>` or `task-<slug>` ([a-z0-9-])",
        );
    }
    if let Some(t) = state.thread() {
        if t.saga_id != saga_id {
            return r.no("saga-id", Some("id"), "this stream is another thread's");
        }
    }
    if save.next_round.is_some() {
        return r.no(
            "next-round-derived",
            Some("next_round"),
            "next_round is derived from rounds_seen (max + 1); set rounds_seen",
        );
    }
    typed(r, save)?;
    if let Some(d) = save.destination.as_deref() {
        if !d.is_empty() && !gates::DESTINATIONS.contains(&d) {
            return r.no(
                "destination",
                Some("destination"),
                &format!(
                    "`{d}` is not a destination ({})",
                    gates::DESTINATIONS.join(" | ")
                ),
            );
        }
    }
    for (field, v) in [
        ("orchestration_mode", &save.orchestration_mode),
        ("orchestration_recommended", &save.orchestration_recommended),
        (
            "orchestration_operator_choice",
            &save.orchestration_operator_choice,
        ),
    ] {
        if let Some(v) = v {
            tick::check_mode(v).map_err(|m| r.rejection("orchestration-mode", Some(field), &m))?;
        }
    }
    let captured = match &save.repo {
        None if save.git.is_empty() => (None, None),
        None => {
            return r.no(
                "evidence-bound",
                Some("git"),
                "git runs without the repository they read",
            )
        }
        // Absolute by its type: the CLI refuses `--repo` otherwise (`absolute-path`).
        Some(repo) => {
            let plan = tick::capture_plan(repo);
            if save.git.len() != plan.len() || save.git.iter().zip(&plan).any(|(r, p)| &r.argv != p)
            {
                return r.no(
                    "evidence-bound",
                    Some("git"),
                    "expected `git -C REPO branch --show-current` and `git -C REPO rev-parse --verify --end-of-options HEAD`",
                );
            }
            tick::captured(&save.git)
        }
    };
    let mut verdicts = vec![];
    for v in &save.gate_verdicts {
        verdicts.push(
            parse_gate_verdict(v)
                .map_err(|m| r.rejection("gate-verdict", Some("gate_verdict"), &m))?,
        );
    }
    if let Some((i, why)) = save.rounds_seen.as_deref().and_then(bad_round) {
        return r.no("round-number", Some(&format!("rounds_seen[{i}]")), &why);
    }
    for (i, v) in verdicts.iter().enumerate() {
        // A gate is named as the gates read it (helper-76: `review ` and
        // `revie` + U+0301 + `w` were two gates beside `review`).
        names::ascii_label("gate", &v.gate, names::NAME_MAX)
            .map_err(|(rule, m)| r.rejection(rule, Some(&format!("gate_verdict[{i}]")), &m))?;
    }
    if let Some((i, gate)) = verdicts
        .iter()
        .enumerate()
        .find(|(i, v)| {
            verdicts[..*i]
                .iter()
                .any(|w| w.gate.eq_ignore_ascii_case(&v.gate))
        })
        .map(|(i, v)| (i, v.gate.clone()))
    {
        return r.no(
            "gate-verdict",
            Some(&format!("gate_verdict[{i}]")),
            &format!("gate `{gate}` has a verdict already in this save: one verdict a gate"),
        );
    }
    let rounds = rounds_counted(r, saga_id, save.rounds_seen.as_deref(), ctx)?;
    let current = state.thread().map(|t| t.lifecycle_phase);
    // The doc-review gate: execution does not start over an unresolved P0/P1
    // finding; only a recorded doc-review override passes.
    if save.lifecycle_phase == Some(Phase::Work) && current != Some(Phase::Work) {
        if let Some(t) = state.thread() {
            if doc_review_blocks(&t.gates) {
                return r.no("doc-review-gate", Some("lifecycle_phase"), "an unresolved P0/P1 plan-review finding blocks execution; only a recorded doc-review override passes");
            }
        }
    }
    match save.lifecycle_phase {
        Some(Phase::Qa) if current != Some(Phase::Qa) => {
            return r.no("phase-authority", Some("lifecycle_phase"), "the advance to `qa` is made only by a recorded QA PASS (`cairn saga qa`), never by a save")
        }
        Some(Phase::Retro) if !matches!(current, Some(Phase::Qa | Phase::Retro)) => {
            return r.no("phase-authority", Some("lifecycle_phase"), "`retro` follows `qa`; this machine never moves past `work` by itself")
        }
        Some(p) if p < Phase::Qa && matches!(current, Some(Phase::Qa | Phase::Retro)) => {
            return r.no("phase-authority", Some("lifecycle_phase"), "the thread already passed QA")
        }
        _ => {}
    }
    let mut thread = apply(state.thread(), saga_id, save, verdicts, captured);
    if let Some(rounds) = rounds {
        thread.rounds_seen = rounds;
    }
    let thread = Box::new(thread);
    Ok(vec![if thread.lifecycle_phase == Phase::Retro {
        Event::RetroTickSaved { thread }
    } else {
        Event::TickSaved { thread }
    }])
}

/// The thread's rounds where PR loops follow it: counted once, by the loops (the
/// engine scanned every loop that follows a thread, `Sieve::ThreadLoops`). The
/// thread's rounds become their union with its own (a loop adopted the thread's
/// at its start); a typed list that is not that set is refused (`journal-agrees`,
/// naming the loops). `None`: no loop follows the thread, the save decides.
fn rounds_counted(
    r: &Refuse,
    saga_id: &str,
    typed: Option<&[u32]>,
    ctx: &Context,
) -> Result<Option<Vec<u32>>, Rejection> {
    let thread = format!("{SAGA_MACHINE}/{saga_id}");
    let mut loops = vec![];
    let mut rounds: Vec<u32> = r
        .state
        .thread()
        .map(|t| t.rounds_seen.clone())
        .unwrap_or_default();
    for read in ctx.scanned(Sieve::ThreadLoops) {
        if let Some(Fact::PrLoop {
            thread: Some(t),
            rounds_seen,
            ..
        }) = &read.fact
        {
            if *t == thread {
                loops.push(read.stream.as_str());
                rounds.extend(rounds_seen);
            }
        }
    }
    if loops.is_empty() {
        return Ok(None);
    }
    rounds.sort_unstable();
    rounds.dedup();
    if let Some(typed) = typed {
        let mut got = typed.to_vec();
        got.sort_unstable();
        got.dedup();
        if got != rounds {
            return r.no(
                JOURNAL_AGREES,
                Some("rounds_seen"),
                &format!(
                    "the rounds are counted by `{}`, which make them {rounds:?}, not {got:?}: leave --rounds-seen out",
                    loops.join("`, `")
                ),
            );
        }
    }
    Ok(Some(rounds))
}

/// What the caller typed, each value as the thread's readers take it (helper-75:
/// a branch holding U+200B, a newline or `--foo`, a `head_sha` of `abc`, and text
/// with bidirectional overrides were recorded): a typed branch is a branch git
/// takes, a typed HEAD a full commit, every text one line a person can read.
fn typed(r: &Refuse, s: &Save) -> Result<(), Rejection> {
    let no =
        |field: &str, (rule, message): names::Refused| r.rejection(rule, Some(field), &message);
    if let Some(b) = s.branch.as_deref().filter(|b| !b.is_empty()) {
        refuse_option_like(b, "branch")
            .map_err(|e| r.rejection(e.rule, Some("branch"), &e.message))?;
        names::branch(b).map_err(|e| no("branch", e))?;
    }
    if let Some(h) = s.head_sha.as_deref().filter(|h| !h.is_empty()) {
        FullCommit::parse(h).map_err(|e| r.rejection("full-head", Some("head_sha"), &e.message))?;
    }
    for (field, v) in [
        ("issue_ref", &s.issue_ref),
        ("plan_path", &s.plan_path),
        ("next_step", &s.next_step),
        ("destination", &s.destination),
    ] {
        if let Some(v) = v {
            names::text(v).map_err(|e| no(field, e))?;
        }
    }
    for (field, list) in [
        ("checks_run", &s.checks_run),
        ("work_session_paths", &s.work_session_paths),
        ("files_modified", &s.files_modified),
        ("pr_refs", &s.pr_refs),
        ("review_paths", &s.review_paths),
    ] {
        for (i, v) in list.iter().flatten().enumerate() {
            names::text(v).map_err(|e| no(&format!("{field}[{i}]"), e))?;
        }
    }
    for (i, v) in s.gate_verdicts.iter().enumerate() {
        names::text(v).map_err(|e| no(&format!("gate_verdict[{i}]"), e))?;
    }
    Ok(())
}

/// The snapshot a save leaves: omitted fields carried forward, an empty list clears;
/// the branch and head from the caller's flags, else from git, else carried.
fn apply(
    prev: Option<&Thread>,
    saga_id: &str,
    s: &Save,
    verdicts: Vec<GateVerdict>,
    (branch, head): (Option<String>, Option<FullCommit>),
) -> Thread {
    let carry = |new: &Option<String>, old: Option<&Option<String>>| match new {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(v.clone()),
        None => old.cloned().flatten(),
    };
    let list = |new: &Option<Vec<String>>, old: Option<&Vec<String>>| match new {
        Some(v) => v.iter().filter(|x| !x.is_empty()).cloned().collect(),
        None => old.cloned().unwrap_or_default(),
    };
    Thread {
        saga_id: saga_id.to_owned(),
        kind: s
            .kind
            .or(prev.map(|p| p.kind))
            .unwrap_or_else(|| tick::kind_of(saga_id)),
        lifecycle_phase: s
            .lifecycle_phase
            .or(prev.map(|p| p.lifecycle_phase))
            .unwrap_or(Phase::Ideation),
        phase_status: s
            .phase_status
            .or(prev.map(|p| p.phase_status))
            .unwrap_or(PhaseStatus::Pending),
        status: s
            .status
            .or(prev.map(|p| p.status))
            .unwrap_or(Status::Active),
        phase: s.phase.or(prev.map(|p| p.phase)).unwrap_or(1),
        destination: carry(&s.destination, prev.map(|p| &p.destination)),
        issue_ref: carry(&s.issue_ref, prev.map(|p| &p.issue_ref)),
        plan_path: carry(&s.plan_path, prev.map(|p| &p.plan_path)),
        branch: tick::branch_after(
            s.branch.as_deref(),
            branch.as_deref(),
            prev.and_then(|p| p.branch.as_deref()),
        ),
        head_sha: match (&s.head_sha, head) {
            (Some(_), _) | (None, None) => carry(&s.head_sha, prev.map(|p| &p.head_sha)),
            (None, Some(h)) => Some(h.into()),
        },
        orchestration_mode: s
            .orchestration_mode
            .clone()
            .or(prev.and_then(|p| p.orchestration_mode.clone())),
        // The recommender's answer and the operator's pick travel with a choice.
        orchestration_recommended: s
            .orchestration_recommended
            .clone()
            .or(s
                .orchestration_mode
                .as_ref()
                .map(|_| tick::RECOMMENDED_MODE.to_owned()))
            .or(prev.and_then(|p| p.orchestration_recommended.clone())),
        orchestration_operator_choice: s
            .orchestration_operator_choice
            .clone()
            .or(s.orchestration_mode.clone())
            .or(prev.and_then(|p| p.orchestration_operator_choice.clone())),
        next_step: carry(&s.next_step, prev.map(|p| &p.next_step)),
        rounds_seen: match &s.rounds_seen {
            Some(r) => r.clone(),
            None => prev.map(|p| p.rounds_seen.clone()).unwrap_or_default(),
        },
        checks_run: list(&s.checks_run, prev.map(|p| &p.checks_run)),
        work_session_paths: list(&s.work_session_paths, prev.map(|p| &p.work_session_paths)),
        files_modified: list(&s.files_modified, prev.map(|p| &p.files_modified)),
        pr_refs: list(&s.pr_refs, prev.map(|p| &p.pr_refs)),
        review_paths: list(&s.review_paths, prev.map(|p| &p.review_paths)),
        gate_verdicts: if s.gate_verdicts.is_empty() {
            prev.map(|p| p.gate_verdicts.clone()).unwrap_or_default()
        } else {
            verdicts
        },
        ticks: prev.map_or(0, |p| p.ticks) + 1,
        qa: prev.map(|p| p.qa.clone()).unwrap_or_default(),
        gates: prev.map(|p| p.gates.clone()).unwrap_or_default(),
    }
}
