//! The shapes of the streams one lifecycle names another by: what `ship open`,
//! `saga save` and the work verbs write, so a name no stream of that machine can
//! have is refused at input (never read, never a link). Re-exported by
//! [`crate::reads`].

use crate::reads::{BUILD_LOOP_MACHINE, SAGA_MACHINE, SHIP_MACHINE, WORK_NODE_MACHINE};

/// A saga thread's id: `issue-<N>` (digits, no leading zero: `issue-042` would be a
/// second thread for issue 42) or `task-<slug>` (`[a-z0-9-]`, not empty).
pub fn is_saga_id(id: &str) -> bool {
    let ok_slug = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    match (id.strip_prefix("issue-"), id.strip_prefix("task-")) {
        (Some(n), _) => {
            !n.is_empty() && !n.starts_with('0') && n.chars().all(|c| c.is_ascii_digit())
        }
        (_, Some(slug)) => ok_slug(slug),
        _ => false,
    }
}

/// `saga/<saga id>`: a stream a saga thread can have.
pub fn is_saga_stream(stream: &str) -> bool {
    stream
        .strip_prefix(SAGA_MACHINE)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(is_saga_id)
}

/// A ship run's short id as `ship open` takes it: 1–64 characters of
/// `[A-Za-z0-9._-]`, not `.` or `..`.
pub fn is_short_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && id != "."
        && id != ".."
}

/// `ship/<SHORT_ID>`: a stream a ship run can have.
pub fn is_ship_stream(stream: &str) -> bool {
    stream
        .strip_prefix(SHIP_MACHINE)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(is_short_id)
}

/// `work-node/<spec key>:<address>`: a stream a work node can have — the spec key
/// 16 lower-case hex digits, the address one or more `/`-separated node ids, each
/// of `[A-Za-z0-9._-]` with any other byte as `+HH` (as `work::node::stream_instance`
/// writes them), none empty, `.` or `..`.
pub fn is_work_node_stream(stream: &str) -> bool {
    let Some((key, address)) = stream
        .strip_prefix(WORK_NODE_MACHINE)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split_once(':'))
    else {
        return false;
    };
    let plain = |c: u8| c.is_ascii_alphanumeric() || b"._-".contains(&c);
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let segment = |s: &str| {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                c if plain(c) => i += 1,
                // Only a byte `stream_instance` escapes is written `+HH`: `+41`
                // for `A` would be a second spelling of one node (helper-72).
                b'+' if b.len() >= i + 3 => match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) if !plain(h * 16 + l) => i += 3,
                    _ => return false,
                },
                _ => return false,
            }
        }
        !s.is_empty() && s != "." && s != ".."
    };
    key.len() == 16
        && key
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        && address.split('/').all(segment)
}

/// `build-loop/<saga id>:<unit>`: the saga thread whose unit's build loop the
/// stream is (`None` for a name no build loop can have).
pub fn build_loop_thread(stream: &str) -> Option<&str> {
    let (thread, unit) = stream
        .strip_prefix(BUILD_LOOP_MACHINE)?
        .strip_prefix('/')?
        .split_once(':')?;
    let unit_ok = !unit.is_empty()
        && unit
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._@+-".contains(c));
    (is_saga_id(thread) && unit_ok).then_some(thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_shapes_are_the_ones_their_machines_write() {
        for good in ["ship/abc", "ship/42-u1.x"] {
            assert!(is_ship_stream(good), "{good}");
        }
        for bad in [
            "ship/",
            "ship//s1",
            "ship/s1/",
            "ship/./s1",
            "ship/..",
            "ship/s 1",
            "park/x",
            "shipx/a",
        ] {
            assert!(!is_ship_stream(bad), "{bad}");
        }
        assert_eq!(
            build_loop_thread("build-loop/issue-42:U1"),
            Some("issue-42")
        );
        for bad in [
            "build-loop/issue-42",
            "build-loop/issue-042:U1",
            "build-loop/issue-42:",
            "build-loop/issue-42:a/b",
            "ship/issue-42:U1",
        ] {
            assert_eq!(build_loop_thread(bad), None, "{bad}");
        }
        for good in [
            "work-node/cce8fcf698764a27:core",
            "work-node/cce8fcf698764a27:core/sub.1",
            "work-node/cce8fcf698764a27:caf+C3+A9",
            "work-node/cce8fcf698764a27:a+20b+2Bc+00",
        ] {
            assert!(is_work_node_stream(good), "{good}");
        }
        for bad in [
            "work-node/x",
            "work-node/:core",
            "work-node//cce8fcf698764a27:core",
            "work-node/cce8fcf698764a27:",
            "work-node/cce8fcf698764a27",
            "work-node/cce8fcf698764a27:core/../x",
            "work-node/cce8fcf698764a27:core:x",
            "work-node/cce8fcf698764a27:core/",
            "work-node/CCE8FCF698764A27:core",
            "work-node/cce8fcf698764a27:a+zz",
            "work-node/cce8fcf698764a27:a+c3",
            // A byte written plain is never escaped: one node, one spelling.
            "work-node/cce8fcf698764a27:a+41",
            "work-node/cce8fcf698764a27:+2E",
            "work-node/cce8fcf698764a27:+2E+2E",
            "work-node/cce8fcf698764a27:a+2D",
        ] {
            assert!(!is_work_node_stream(bad), "{bad}");
        }
    }
}
