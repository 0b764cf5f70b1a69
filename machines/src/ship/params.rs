//! The ship run's parameter rules (the seed's parameter table): each field's
//! first broken rule, pure, run by `open` before any git and by `decide` again.

use super::names;
use super::state::Params;
use crate::evidence::{AbsPath, RefName};

impl Params {
    /// The parameter rules: `(field, rule, message)` of the first broken one. Pure:
    /// `open` runs them before any git, and `decide` again.
    pub fn check(&self) -> Result<(), Broken> {
        match self.violations().into_iter().next() {
            Some(first) => Err(first),
            None => Ok(()),
        }
    }

    /// Every broken parameter rule, the first of each field, in field order: a
    /// refused `ship open` names them all at once. A rule that reads two fields
    /// (the branches differ; the worktree path under the short id) is judged
    /// only when each of them holds on its own.
    pub fn violations(&self) -> Vec<Broken> {
        let short_id = self.short_id_rules();
        let branch = option_like("branch", &self.branch)
            .and_then(|()| names::branch(&self.branch).map_err(at("branch")));
        let target = option_like("target_branch", &self.target_branch)
            .and_then(|()| names::branch(&self.target_branch).map_err(at("target_branch")));
        let distinct = if branch.is_ok() && target.is_ok() && self.branch == self.target_branch {
            Err((
                "branch",
                "distinct-branch",
                "the worktree branch must differ from the target branch".into(),
            ))
        } else {
            Ok(())
        };
        let worktree = self.worktree_rules(short_id.is_ok());
        let intent = self.intent_rules();
        let consumer = self.consumer_rules(intent.is_ok());
        [
            short_id,
            self.basename_rules(),
            branch,
            target,
            distinct,
            worktree,
            intent,
            consumer,
            text_rules("tiebreaker_4", &self.tiebreaker_4, "name the protocol"),
            text_rules("close_step", &self.close_step, "name the close step"),
        ]
        .into_iter()
        .filter_map(Result::err)
        .collect()
    }

    fn short_id_rules(&self) -> Result<(), Broken> {
        if crate::reads::is_short_id(&self.short_id) {
            return Ok(());
        }
        Err((
            "short_id",
            "short-id",
            "1–64 characters of [A-Za-z0-9._-], not `.` or `..`".into(),
        ))
    }

    fn basename_rules(&self) -> Result<(), Broken> {
        let b = &self.expected_basename;
        if b.is_empty() || b.contains('/') || b == "." || b == ".." {
            return Err((
                "expected_basename",
                "basename",
                "a non-empty directory name without `/`".into(),
            ));
        }
        names::visible(b).map_err(at("expected_basename"))?;
        names::within(b, names::NAME_MAX, names::NAME_MAX).map_err(at("expected_basename"))
    }

    /// `WORKTREE_PATH`; where it must sit is judged only under a valid short id.
    fn worktree_rules(&self, short_id_holds: bool) -> Result<(), Broken> {
        let w = &self.worktree_path;
        option_like("worktree_path", w)?;
        names::visible(w).map_err(at("worktree_path"))?;
        if let Err(e) = AbsPath::parse(w) {
            return Err((
                "worktree_path",
                e.rule,
                "an absolute, normalised path".into(),
            ));
        }
        names::within(w, names::WORKTREE_PATH_MAX, names::NAME_MAX).map_err(at("worktree_path"))?;
        if short_id_holds && names::worktree_root(w, &self.short_id).is_none() {
            return Err((
                "worktree_path",
                "worktree-path",
                format!(
                    "must be the seed's `<REPO_ROOT>/.claude/worktrees/{}`",
                    self.short_id
                ),
            ));
        }
        Ok(())
    }

    fn intent_rules(&self) -> Result<(), Broken> {
        if !field_name(&self.intent_field) {
            return Err((
                "intent_field",
                "field-name",
                "a report field name ([A-Za-z0-9_]+)".into(),
            ));
        }
        // A name a report carries, bounded like every other (helper-93: a
        // field name of 100,000 characters was recorded).
        names::within(&self.intent_field, names::NAME_MAX, names::NAME_MAX)
            .map_err(at("intent_field"))?;
        // Every report holds the intent field unread: it may not be taken for
        // one the report reads (helper-56: `--intent-field tiebreaker`).
        if let Some(own) = super::report::resembling(&self.intent_field) {
            return Err((
                "intent_field",
                "field-name-resembles",
                format!(
                    "`{}` reads like `{own}`, a field a report has",
                    self.intent_field
                ),
            ));
        }
        Ok(())
    }

    /// Each consumer field's own rules, then whether it is declared twice: the
    /// intent field is compared only when it holds on its own (a broken one is
    /// named as its own field's problem, not again as a consumer field's).
    fn consumer_rules(&self, intent_holds: bool) -> Result<(), Broken> {
        for (i, name) in self.consumer_fields.iter().enumerate() {
            if !field_name(name) {
                return Err((
                    "consumer_field",
                    "field-name",
                    format!(
                        "`{}`: a report field name ([A-Za-z0-9_]+)",
                        name.escape_debug()
                    ),
                ));
            }
            names::within(name, names::NAME_MAX, names::NAME_MAX).map_err(at("consumer_field"))?;
            if let Some(own) = super::report::resembling(name) {
                return Err((
                    "consumer_field",
                    "field-name-resembles",
                    format!(
                        "`{name}` reads like `{own}`, a field a report has: a consumer field \
                         must not be taken for one"
                    ),
                ));
            }
            if self.consumer_fields[..i].contains(name)
                || (intent_holds && *name == self.intent_field)
            {
                return Err((
                    "consumer_field",
                    "field-name-twice",
                    format!("`{name}` is declared twice (a consumer field, or the intent field)"),
                ));
            }
        }
        Ok(())
    }
}

/// A broken parameter rule: `(field, rule, message)`.
pub type Broken = (&'static str, &'static str, String);

/// A name check's refusal as `field`'s.
fn at(field: &'static str) -> impl Fn(names::Refused) -> Broken {
    move |(rule, m)| (field, rule, m)
}

/// The same rule for the path as for the names: git must not read it as an option.
fn option_like(field: &'static str, value: &str) -> Result<(), Broken> {
    match RefName::parse(value) {
        Ok(_) => Ok(()),
        Err(_) => Err((
            field,
            "option-like",
            "must not start with `-` (git would read it as an option)".into(),
        )),
    }
}

/// A report field name: `[A-Za-z0-9_]+`.
fn field_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `TIEBREAKER_4` and `CLOSE_STEP`: visible free text within its limit.
fn text_rules(field: &'static str, text: &str, what: &str) -> Result<(), Broken> {
    if text.trim().is_empty() {
        return Err((field, "nonempty-string", what.into()));
    }
    names::visible(text).map_err(at(field))?;
    names::within(text, names::TEXT_MAX, names::TEXT_MAX).map_err(at(field))
}
