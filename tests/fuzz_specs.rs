//! Hostile input beyond park: the ship machine's report-reading verbs on garbage
//! reports, and workspec validation, lineage and amendment on hostile YAML and
//! drafts (volume with CAIRN_SOAK=1). Seeds: proptest-regressions/fuzz.txt.

use cairn::Machine as _;
use proptest::prelude::*;

use crate::fuzz::{any_json, config, ctx};

proptest! {
    #![proptest_config(config(256, 100_000))]

    /// The ship machine's report-reading verbs on garbage reports, in the state each
    /// verb is admitted in (phase 1, 2, 3), with the runs the CLI would make.
    #[test]
    fn ship_reports_never_panic(doc in any_json(), which in 0u8..3) {
        use cairn::machines::ship::{admits, gates, Command, Ship, Verb as ShipVerb};
        use crate::support::ship::{happy, params, World, ROOT};
        let mut state = Ship::initial_state();
        for (step, w) in &happy()[..3 + which as usize] {
            let c = crate::support::ship::command(&state, step, w);
            let events = Ship::decide(&state, &c, &ctx()).expect("the happy prefix is accepted");
            state = events.iter().fold(state, Ship::evolve);
        }
        let w = World::happy();
        let p = params();
        let command = match which {
            0 => Command::Verify { report: doc, runs: w.runs(&gates::phase1d_plan(&p, ROOT)) },
            1 => Command::Refine { report: doc, runs: w.runs(&gates::refine_plan(&p, ROOT)) },
            _ => Command::PreMerge { report: doc, runs: w.runs(&gates::premerge_plan(&p, ROOT, None)), work_nodes: vec![] },
        };
        // The happy prefix leaves the run where the verb is admitted, so the report is read.
        let verb = match which { 0 => ShipVerb::Verify, 1 => ShipVerb::Refine, _ => ShipVerb::PreMerge };
        prop_assert!(admits(&state, verb).is_ok(), "{:?} is not admitted in {}", verb, Ship::state_name(&state));
        if let Err(r) = Ship::decide(&state, &command, &ctx()) {
            prop_assert_eq!(&r.state, Ship::state_name(&state));
            prop_assert!(!r.violations.is_empty() && r.violations.iter().all(|v| !v.predicate.is_empty()), "{:?}", r);
        }
    }
}

/// Hostile workspec text: YAML-ish tokens, alone or after a valid spec (so some of
/// it validates and reaches lineage).
fn yamlish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("title: t\n".to_owned()),
        Just("description: d\n".to_owned()),
        Just("intent: i\n".to_owned()),
        Just("work:\n".to_owned()),
        Just("  - id: a\n".to_owned()),
        Just("    task: t\n".to_owned()),
        Just("    depends_on: [a, b]\n".to_owned()),
        Just("    acceptance: [{id: A, statement: s, evidence: {kind: command, run: x, expect: {exit: 0, output_includes: ok}}}]\n".to_owned()),
        Just("    work:\n".to_owned()),
        Just("---\n".to_owned()),
        Just("!md |\n  x\n".to_owned()),
        Just("&a [*a]\n".to_owned()),
        Just("? [x]\n: y\n".to_owned()),
        "[ -~\n]{0,12}".prop_map(|s| s),
    ];
    prop_oneof![
        2 => proptest::collection::vec(token.clone(), 0..14).prop_map(|v| v.concat()),
        1 => proptest::collection::vec(token, 0..3)
            .prop_map(|v| format!("{}{}", crate::support::work::SPEC, v.concat())),
    ]
}

/// The C1 criterion of `support::work::SPEC`, as its draft states it.
const C1: &str = "hits skip the backend";

/// A source draft: hostile text, or C1's criterion followed by more text (blank
/// lines, another heading, more bullets or hostile text).
fn draft() -> impl Strategy<Value = String> {
    let tail = prop_oneof![
        Just(String::new()),
        Just("\n\n".to_owned()),
        "# [ -~]{0,20}\n[ -~\n]{0,20}".prop_map(|s| s),
        "- [a-z]{1,3}: [ -~]{1,10}\n".prop_map(|s| s),
        "[ -~\n]{0,40}".prop_map(|s| s),
    ];
    prop_oneof![
        ".{0,40}".prop_map(|s| s),
        tail.prop_map(|tail| format!("# Criteria <!-- work:criteria -->\n- C1: {C1}\n{tail}")),
    ]
}

/// Amending C1 of `spec`, against `draft`.
fn amend_c1(spec: &str, draft: &str) -> Result<String, (&'static str, String)> {
    use cairn::machines::work::amend;
    let request = amend::AmendRequest {
        criterion_id: "C1".into(),
        before: C1.into(),
        after: "hits never reach the backend".into(),
        reason: "r".into(),
        authority: "a".into(),
    };
    amend::amend_criterion(spec, Some(draft), &request, "2026-01-01T00:00:00Z")
}

proptest! {
    #![proptest_config(config(512, 100_000))]

    /// Workspec validation, lineage and amendment never panic on hostile YAML or a
    /// hostile draft; lineage only adds findings; a valid spec amended against a draft
    /// that states its criterion is amended, and the result keeps its lineage.
    #[test]
    fn workspec_validation_never_panics(text in yamlish(), draft in draft()) {
        use cairn::machines::work::{amend, spec};
        use crate::support::work::SPEC;
        let v = spec::validate(&text);
        let lineage = spec::validate_with_draft(&text, &spec::Draft::Text(draft.clone()));
        prop_assert!(v.findings.iter().all(|f| lineage.findings.contains(f)), "lineage dropped a finding");
        if let Some(s) = &v.spec {
            let ready =
                cairn::machines::work::ready::ready_set(s, &Default::default(), &Default::default());
            prop_assert!(ready.iter().all(|a| s.node(a).is_some()), "{:?}", ready);
        }
        // The hostile draft against the known-good SPEC: past the spec, into the draft.
        let states_c1 = amend::draft_criteria(&draft).is_ok_and(|c| c.get("C1").map(String::as_str) == Some(C1));
        match amend_c1(SPEC, &draft) {
            Ok(amended) => {
                prop_assert!(states_c1, "amended against a draft that does not state C1: {:?}", draft);
                // C1 follows from the draft through its amendment; the only other
                // finding a draft can add is a criterion no node owns.
                let again = spec::validate_with_draft(&amended, &spec::Draft::Text(draft.clone()));
                let errors: Vec<&str> = again.findings.iter().filter(|f| f.severity == spec::Severity::Error).map(|f| f.code.as_str()).collect();
                prop_assert!(errors.iter().all(|c| *c == "criterion-draft-criterion-unassigned"), "{:?}", again.findings);
            }
            Err((code, _)) => prop_assert!(!states_c1, "a draft stating C1 refused: {}", code),
        }
        // The hostile spec against the draft: only that it never panics.
        let _ = amend_c1(&text, &draft);
        let _ = amend::add_touches(&text, &["a".to_owned()], &["x".to_owned()]);
    }
}

/// The workspec fuzz reaches lineage and amendment: of 1,000 generated texts some
/// validate (so lineage runs on them), and of 1,000 drafts some state C1 (so an
/// amendment of SPEC applies).
#[test]
fn workspec_fuzz_reaches_lineage_and_amendment() {
    use cairn::machines::work::spec;
    let valid = crate::support::sample(yamlish(), 1000)
        .iter()
        .filter(|t| spec::validate(t).valid())
        .count();
    let amended = crate::support::sample(draft(), 1000)
        .iter()
        .filter(|d| amend_c1(crate::support::work::SPEC, d).is_ok())
        .count();
    eprintln!("{valid} of 1000 texts validate; {amended} of 1000 drafts amend SPEC");
    assert!(valid >= 30, "only {valid} of 1000 hostile texts validate");
    assert!(amended >= 100, "only {amended} of 1000 drafts amend SPEC");
}
