//! What a name must be before git ever sees it: visible (no control, format,
//! bidirectional or otherwise invisible character a person cannot see), a branch
//! `git check-ref-format --branch` takes, and within git's and the filesystem's
//! length limits. Shared: ship's parameters and the saga's merge-turn branches.
//!
//! Pure checks: `open` (and `classify`) run them before any git, and `decide`
//! runs them again, so the audit re-derives every refusal.

/// The longest file name (`NAME_MAX`) most filesystems take, in bytes.
pub const NAME_MAX: usize = 255;
/// The longest path (`PATH_MAX`), in bytes.
pub const PATH_MAX: usize = 4096;
/// A branch's longest `/`-separated component, in bytes: a loose ref is a file,
/// and git writes `<component>.lock` beside it first.
pub const REF_COMPONENT_MAX: usize = NAME_MAX - ".lock".len();
/// A branch's longest name, in bytes: `<git dir>/logs/refs/heads/<branch>.lock`
/// must stay well inside `PATH_MAX` wherever the repository lives.
pub const REF_MAX: usize = 1024;
/// `WORKTREE_PATH`'s longest, in bytes: room below `PATH_MAX` for one more
/// full-length name inside it.
pub const WORKTREE_PATH_MAX: usize = PATH_MAX - 1 - NAME_MAX;
/// The longest free text (`TIEBREAKER_4`, `CLOSE_STEP`), in bytes.
pub const TEXT_MAX: usize = 1024;

/// A refused value: the rule and a lower-case sentence.
pub type Refused = (&'static str, String);

pub use super::text::{first_invisible, is_invisible};

/// `s` holds only characters a person can see.
pub fn visible(s: &str) -> Result<(), Refused> {
    match first_invisible(s) {
        None => Ok(()),
        Some((i, c)) => Err((
            "invisible-character",
            format!(
                "character {i} is U+{:04X}, a control, format, bidirectional or invisible character a person cannot see",
                u32::from(c)
            ),
        )),
    }
}

/// `s` is at most `max` bytes, and each `/`-separated component at most `component`.
pub fn within(s: &str, max: usize, component: usize) -> Result<(), Refused> {
    if s.len() > max {
        return Err((
            "length",
            format!("{} bytes, past the limit of {max}", s.len()),
        ));
    }
    match s.split('/').find(|c| c.len() > component) {
        Some(c) => Err((
            "length",
            format!(
                "a component of {} bytes, past the limit of {component}",
                c.len()
            ),
        )),
        None => Ok(()),
    }
}

/// What `git check-ref-format --branch` refuses (git's `check_refname_format` on
/// `refs/heads/<name>`, and `HEAD`), plus the lone `@` git reads as `HEAD`.
pub fn ref_format(name: &str) -> Result<(), Refused> {
    let refuse = |why: &str| Err(("ref-format", format!("git refuses it as a branch: {why}")));
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name == "HEAD" || name == "@" {
        return refuse("it names HEAD");
    }
    if let Some(c) = name
        .chars()
        .find(|c| u32::from(*c) < 0x20 || " ~^:?*[\\\u{7f}".contains(*c))
    {
        return refuse(&format!("it holds `{}`", c.escape_default()));
    }
    if name.contains("..") {
        return refuse("it holds `..`");
    }
    if name.contains("@{") {
        return refuse("it holds `@{`");
    }
    if name.ends_with('.') {
        return refuse("it ends with `.`");
    }
    for component in name.split('/') {
        if component.is_empty() {
            return refuse("it has an empty component (a leading, trailing or double `/`)");
        }
        if component.starts_with('.') {
            return refuse("a component starts with `.`");
        }
        if component.ends_with(".lock") {
            return refuse("a component ends with `.lock`");
        }
    }
    Ok(())
}

/// A caller's label (an operator, a boundary, an owner, a run or session id): a
/// [`visible_name`], composed (NFC), never starting with a combining mark.
pub fn label(what: &str, s: &str, max: usize) -> Result<(), Refused> {
    visible_name(what, s, max)?;
    // One spelling a name: composed (`é`, never `e` and U+0301), and never a mark
    // with nothing under it (helper-76: a claim owner of a lone U+0301).
    if s.chars()
        .next()
        .is_some_and(unicode_normalization::char::is_combining_mark)
    {
        return Err((
            "combining-start",
            format!("the {what} starts with a combining mark, which has no character to sit on"),
        ));
    }
    if !unicode_normalization::is_nfc(s) {
        return Err((
            "normal-form",
            format!("the {what} is not in Unicode's composed form (NFC): spell it composed"),
        ));
    }
    Ok(())
}

/// Not empty, at most `max` bytes, every character visible, no space at either
/// end, and not option-like: what a claim's owner and id have been since claims
/// were recorded (their types are read back through it, so it stays as it is;
/// a new claim is held to [`label`] by the claim machine's decision). `what`
/// names it in the message.
pub fn visible_name(what: &str, s: &str, max: usize) -> Result<(), Refused> {
    if s.is_empty() {
        return Err(("nonempty-string", format!("the {what} is empty")));
    }
    if s.len() > max {
        return Err((
            "length",
            format!("the {what} is {} bytes, past the limit of {max}", s.len()),
        ));
    }
    if let Some((i, c)) = first_invisible(s) {
        return Err((
            "invisible-character",
            format!(
                "character {i} of the {what} is U+{:04X}, a control, format, bidirectional or invisible character a person cannot see",
                u32::from(c)
            ),
        ));
    }
    if s.starts_with(' ') || s.ends_with(' ') {
        return Err((
            "surrounding-space",
            format!("the {what} starts or ends with a space"),
        ));
    }
    super::ids::refuse_option_like(s, what).map_err(|e| (e.rule, e.message))
}

/// A name a gate compares by its exact spelling (a boundary a pause waits for, a
/// gate a verdict names): a [`label`] of printable ASCII, so no two spellings
/// read alike (helper-76: a pause for `café` was crossed at `cafe` + U+0301, one
/// for a fullwidth `ｐhase-2` at `phase-2`).
pub fn ascii_label(what: &str, s: &str, max: usize) -> Result<(), Refused> {
    label(what, s, max)?;
    match s.chars().position(|c| !(c.is_ascii_graphic() || c == ' ')) {
        None => Ok(()),
        Some(i) => Err((
            "ascii-name",
            format!("character {i} of the {what} is not printable ASCII: a name a gate compares has one spelling"),
        )),
    }
}

/// Free text a person reads (a reason, a next step, a detail): one line of
/// visible characters, at most [`TEXT_MAX`] bytes; it may be empty.
pub fn text(s: &str) -> Result<(), Refused> {
    visible(s)?;
    if s.len() > TEXT_MAX {
        return Err((
            "length",
            format!("{} bytes, past the limit of {TEXT_MAX}", s.len()),
        ));
    }
    Ok(())
}

/// The longest prose (a reason, a rationale, a note), in bytes.
pub const PROSE_MAX: usize = 64 * 1024;

/// Prose a person reads (a rationale, a reason, a concern): lines of visible
/// characters (a newline is the one invisible character it may hold), at most
/// [`PROSE_MAX`] bytes.
pub fn prose(s: &str) -> Result<(), Refused> {
    if s.len() > PROSE_MAX {
        return Err((
            "length",
            format!("{} bytes, past the limit of {PROSE_MAX}", s.len()),
        ));
    }
    let mut at = 0;
    for line in s.split('\n') {
        if let Err((rule, _)) = visible(line) {
            let (i, c) = first_invisible(line).unwrap_or((0, ' '));
            return Err((
                rule,
                format!(
                    "character {} is U+{:04X}, a control, format, bidirectional or invisible character a person cannot see",
                    at + i,
                    u32::from(c)
                ),
            ));
        }
        at += line.chars().count() + 1;
    }
    Ok(())
}

/// A branch name: visible, within the ref limits, and one git takes. (Option-like
/// names are refused before this, with their own rule.)
pub fn branch(name: &str) -> Result<(), Refused> {
    visible(name)?;
    within(name, REF_MAX, REF_COMPONENT_MAX)?;
    ref_format(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_found_and_visible_ones_are_not() {
        for c in [
            '\u{202E}',
            '\u{200B}',
            '\u{7}',
            '\n',
            '\u{A0}',
            '\u{2066}',
            '\u{FEFF}',
            '\u{E0041}',
            '\u{FFFF}',
            '\u{3164}',
        ] {
            assert!(is_invisible(c), "U+{:04X}", u32::from(c));
        }
        for c in ['a', ' ', 'é', '漢', '-', '/', '😀'] {
            assert!(!is_invisible(c), "{c}");
        }
        assert_eq!(first_invisible("ab\u{200B}c"), Some((2, '\u{200B}')));
    }

    #[test]
    fn git_ref_rules() {
        for bad in [
            "HEAD",
            "@",
            "a..b",
            "a.lock",
            "a//b",
            "a/.b",
            "a b",
            "x~1",
            "a@{1}",
            "a.",
            "/a",
            "a/",
            "a\\b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            ".a",
            "a/b.lock/c",
            "a^b",
            "",
        ] {
            assert!(ref_format(bad).is_err(), "{bad:?}");
        }
        for good in ["feature/x", "worktree-abc", "café", "a@b", "refs/heads/x"] {
            assert_eq!(ref_format(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn lengths() {
        assert!(branch(&"a".repeat(REF_COMPONENT_MAX)).is_ok());
        assert_eq!(
            branch(&"a".repeat(REF_COMPONENT_MAX + 1)).unwrap_err().0,
            "length"
        );
        assert_eq!(branch(&"ab/".repeat(400)).unwrap_err().0, "length");
    }
}
