//! A saga verb that names the ship run behind it (`--from ship/<SHORT_ID>`): the
//! engine reads the run (`Saga::reads`), and the run's word on what it merged —
//! its branch, repository, target and the commit cairn saw land — must be this
//! command's. Each disagreement names its field and the stream that contradicts.

use crate::evidence::{AbsPath, FullCommit, RefName};
use crate::reads::{Fact, JOURNAL_AGREES, SHIP_MACHINE};
use crate::{Context, Violation};

/// What the command says the ship run did.
pub(super) struct Expect<'a> {
    /// The thread crediting the run (`saga/<saga id>`): the run must act for it.
    pub saga: &'a str,
    /// The unit's branch, when the command has one.
    pub branch: Option<&'a str>,
    pub repo: &'a AbsPath,
    pub target: &'a RefName,
    /// The merged commit and the field that names it.
    pub merged: (&'a FullCommit, &'static str),
}

/// Every way the ship run `ship` (as read into `ctx`) contradicts `expect`: it is
/// no ship run's stream, the journal holds no such run, it has not merged, or its
/// branch, repository, target or merged commit differ.
pub(super) fn agrees(ship: &str, ctx: &Context, expect: Expect<'_>) -> Vec<Violation> {
    let no =
        |field: &str, message: String| vec![Violation::new(JOURNAL_AGREES, Some(field), message)];
    if !crate::reads::is_ship_stream(ship) {
        return no(
            "from",
            format!("`{ship}` is not a ship run: name it as `{SHIP_MACHINE}/<SHORT_ID>`"),
        );
    }
    let read = match ctx.read(ship) {
        Some(read) if read.version > 0 => read,
        _ => return no("from", format!("the journal holds no ship run `{ship}`")),
    };
    let Some(Fact::Ship {
        repo,
        branch: shipped,
        target,
        merged,
        acts_for,
        ..
    }) = &read.fact
    else {
        return no("from", format!("`{ship}` states no ship run's merge"));
    };
    let mut out = vec![];
    // The run names the thread it acts for once, at open: another thread can
    // never credit its merge (nor can this one, for a run that names none).
    match acts_for.as_deref() {
        Some(s) if s == expect.saga => {}
        Some(s) => out.extend(no(
            "from",
            format!("`{ship}` acts for `{s}`, not `{}`", expect.saga),
        )),
        None => out.extend(no(
            "from",
            format!(
                "`{ship}` acts for no saga thread: open it with `--for {}` to credit its merge here",
                expect.saga
            ),
        )),
    }
    if let Some(branch) = expect.branch.filter(|b| b != shipped) {
        out.extend(no(
            "from",
            format!("`{ship}` shipped branch `{shipped}`, but the unit's branch is `{branch}`"),
        ));
    }
    if repo != expect.repo.as_str() {
        out.extend(no(
            "repo",
            format!("`{ship}` merged in `{repo}`, not `{}`", expect.repo),
        ));
    }
    if target != expect.target.as_str() {
        out.extend(no(
            "target",
            format!("`{ship}` merged onto `{target}`, not `{}`", expect.target),
        ));
    }
    let (commit, field) = expect.merged;
    match merged {
        Some(sha) if sha == commit => {}
        Some(sha) => out.extend(no(
            field,
            format!("`{ship}` merged `{sha}`, not `{commit}`"),
        )),
        None => out.extend(no(
            "from",
            format!(
                "`{ship}` is at `{}`: cairn has not seen its merge land (`cairn ship merge`)",
                read.state
            ),
        )),
    }
    out
}
