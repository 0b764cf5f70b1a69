//! Watching a tree while a criterion runs: an inotify watch on every directory
//! that holds a file git lists (tracked, or untracked and not ignored), so a
//! criterion that writes a file and puts it back, or creates and deletes one,
//! is seen — a before/after `git status` alone would call both clean. The paths
//! seen are then checked against `.gitignore` by git (`check-ignore`), and both
//! are recorded ([`TreeWatch`]) for the machine to judge. Linux only: elsewhere
//! no watch starts, and the machine fails the criterion as `tree-unwatched`.

use cairn_machines::work::node::{ignore_plan, TreeWatch};

use crate::observe::{git, run};

/// A started watch on a tree.
pub struct Watch {
    tree: String,
    #[cfg(target_os = "linux")]
    inner: linux::Inotify,
}

impl Watch {
    /// Starts watching `tree`, or says why it cannot.
    pub fn start(tree: &str) -> Result<Watch, String> {
        let listed = run(&git(
            tree,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        ));
        if !listed.ok() {
            return Err(format!("git ls-files failed: {}", listed.stderr.trim()));
        }
        let mut dirs = std::collections::BTreeSet::from([String::new()]);
        for path in listed.stdout.split('\0').filter(|p| !p.is_empty()) {
            let mut p = path;
            while let Some((parent, _)) = p.rsplit_once('/') {
                dirs.insert(parent.to_owned());
                p = parent;
            }
        }
        Self::on(tree, &dirs)
    }

    #[cfg(target_os = "linux")]
    fn on(tree: &str, dirs: &std::collections::BTreeSet<String>) -> Result<Watch, String> {
        Ok(Watch {
            tree: tree.to_owned(),
            inner: linux::Inotify::new(tree, dirs)?,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn on(_tree: &str, _dirs: &std::collections::BTreeSet<String>) -> Result<Watch, String> {
        Err("no tree watch on this platform".into())
    }

    /// Stops the watch: what it saw, with git's reading of which of those paths
    /// are ignored.
    pub fn finish(self) -> TreeWatch {
        #[cfg(target_os = "linux")]
        let (changed, overflow) = self.inner.drain();
        #[cfg(not(target_os = "linux"))]
        let (changed, overflow) = (Vec::new(), true);
        let ignored = ignore_plan(&self.tree, &changed).map(|argv| run(&argv));
        TreeWatch {
            method: "inotify".into(),
            changed,
            overflow,
            ignored,
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{BTreeMap, BTreeSet};
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// What counts as a change: content, metadata, names; not reads.
    const MASK: u32 = libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MODIFY
        | libc::IN_ATTRIB
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_ONLYDIR;

    pub(super) struct Inotify {
        fd: OwnedFd,
        dirs: BTreeMap<i32, String>,
    }

    impl Inotify {
        pub(super) fn new(tree: &str, dirs: &BTreeSet<String>) -> Result<Inotify, String> {
            // SAFETY: a plain syscall; a non-negative return is a new descriptor we own.
            let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if raw < 0 {
                return Err(format!(
                    "inotify_init1: {}",
                    std::io::Error::last_os_error()
                ));
            }
            // SAFETY: `raw` is a valid descriptor just returned to us and owned by no one else.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mut watched = BTreeMap::new();
            for d in dirs {
                let path = if d.is_empty() {
                    tree.to_owned()
                } else {
                    format!("{}/{d}", tree.trim_end_matches('/'))
                };
                let c = CString::new(path.clone()).map_err(|e| e.to_string())?;
                // SAFETY: `fd` is our inotify descriptor, `c` a NUL-terminated path.
                let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), MASK) };
                if wd < 0 {
                    return Err(format!(
                        "cannot watch `{path}`: {}",
                        std::io::Error::last_os_error()
                    ));
                }
                watched.insert(wd, d.clone());
            }
            Ok(Inotify { fd, dirs: watched })
        }

        /// Every event queued so far: the paths (relative to the tree), sorted and
        /// deduplicated, and whether the queue overflowed.
        pub(super) fn drain(self) -> (Vec<String>, bool) {
            let mut seen = BTreeSet::new();
            let mut overflow = false;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                // SAFETY: reads at most `buf.len()` bytes into our buffer from our descriptor.
                let n = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        buf.as_mut_ptr().cast::<libc::c_void>(),
                        buf.len(),
                    )
                };
                // Non-blocking: -1 (EAGAIN) once the queue is empty.
                let Ok(n) = usize::try_from(n) else { break };
                if n == 0 {
                    break;
                }
                let head = std::mem::size_of::<libc::inotify_event>();
                let mut at = 0;
                while at + head <= n {
                    // SAFETY: the kernel wrote whole events; this one's header lies in
                    // `buf[at..at + head]` (read unaligned: the buffer is bytes).
                    let ev: libc::inotify_event = unsafe {
                        std::ptr::read_unaligned(buf[at..].as_ptr().cast::<libc::inotify_event>())
                    };
                    let len = ev.len as usize;
                    let name_bytes = &buf[at + head..(at + head + len).min(n)];
                    let name = String::from_utf8_lossy(
                        name_bytes.split(|b| *b == 0).next().unwrap_or_default(),
                    )
                    .into_owned();
                    at += head + len;
                    if ev.mask & libc::IN_Q_OVERFLOW != 0 {
                        overflow = true;
                        continue;
                    }
                    if ev.mask & libc::IN_IGNORED != 0 {
                        continue;
                    }
                    let Some(dir) = self.dirs.get(&ev.wd) else {
                        continue;
                    };
                    let path = match (dir.is_empty(), name.is_empty()) {
                        (true, true) => ".".to_owned(),
                        (true, false) => name,
                        (false, true) => dir.clone(),
                        (false, false) => format!("{dir}/{name}"),
                    };
                    seen.insert(path);
                }
            }
            (seen.into_iter().collect(), overflow)
        }
    }
}
