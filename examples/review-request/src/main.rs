//! Runs one review request end to end on a journal: open, a refused approval on
//! `unknown` evidence, approval, merge; then replay, verify, audit and graph.
//!
//! `cargo run -p review-request [JOURNAL]` (default: a fresh file in the temp dir).

use cairn::journal::Options;
use cairn::{Engine, Machine, Outcome, Request, StreamId};
use review_request::{check, registry, Command, Gate, ReviewRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("review-request-{}.db", std::process::id()))
        });
    let mut engine = Engine::open(&path, &Options::default(), registry())?;
    let stream = StreamId::new(ReviewRequest::NAME, &format!("rr-{}", std::process::id()))?;
    let request = Request::default();

    engine.execute::<ReviewRequest>(
        &stream,
        &Command::Open {
            title: "add the widget".into(),
        },
        &request,
    )?;
    let unknown = Command::Approve {
        review: check(Gate::Review, Outcome::Unknown, "alice", None),
    };
    match engine.execute::<ReviewRequest>(&stream, &unknown, &request) {
        Err(cairn::Error::Rejected(r)) => println!("refused, as it must be: {r}"),
        other => return Err(format!("an unknown review must be refused, got {other:?}").into()),
    }
    engine.execute::<ReviewRequest>(
        &stream,
        &Command::Approve {
            review: check(Gate::Review, Outcome::Pass, "alice", None),
        },
        &request,
    )?;
    let done = engine.execute::<ReviewRequest>(
        &stream,
        &Command::Merge {
            ci: check(Gate::Ci, Outcome::Pass, "ci", Some(0)),
        },
        &request,
    )?;
    println!("state after merge: {}", serde_json::to_string(&done.state)?);

    let (replayed, version) = engine.load::<ReviewRequest>(&stream)?;
    assert_eq!(replayed, done.state, "replay equals the executed state");
    println!(
        "replayed {version} events: {}",
        ReviewRequest::state_name(&replayed)
    );
    let verify = engine.journal().verify()?;
    let audit = engine.audit(Some(stream.as_str()))?;
    println!(
        "verify ok: {}; audit ok: {}, {} transitions re-decided",
        verify.ok, audit.ok, audit.redecided
    );
    println!("{}", ReviewRequest::graph().to_mermaid());
    if verify.ok && audit.ok && audit.redecided == 3 {
        Ok(())
    } else {
        Err("the journal did not verify and audit".into())
    }
}
