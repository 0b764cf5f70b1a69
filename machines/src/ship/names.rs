//! Ship's names: the shared rules (`evidence::names`: visible, a branch git takes,
//! within the length limits) and the seed's `WORKTREE_PATH` shape,
//! `<REPO_ROOT>/.claude/worktrees/<SHORT_ID>`.
//!
//! Pure checks: `open` (and `classify`) run them before any git, and `decide`
//! runs them again, so the audit re-derives every refusal.

pub use crate::evidence::names::*;

/// The seed's `WORKTREE_PATH` for `short_id`: `<root>/.claude/worktrees/<SHORT_ID>`;
/// `Some(root)` when `path` has that shape.
pub fn worktree_root<'a>(path: &'a str, short_id: &str) -> Option<&'a str> {
    path.strip_suffix(short_id)?
        .strip_suffix("/.claude/worktrees/")
        .filter(|root| root.is_empty() || root.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worktree_shape() {
        assert_eq!(worktree_root("/r/.claude/worktrees/abc", "abc"), Some("/r"));
        assert_eq!(worktree_root("/.claude/worktrees/abc", "abc"), Some(""));
        for bad in [
            "/r/.git/worktrees/abc",
            "/r/.claude/worktrees/xabc",
            "r/.claude/worktrees/abc",
        ] {
            assert_eq!(worktree_root(bad, "abc"), None, "{bad}");
        }
    }
}
