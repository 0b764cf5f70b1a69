//! The global options (`--db`, `--busy-timeout-ms`, `--signing-key`) hidden on the
//! verbs that ignore them, and still accepted there, so every command line that
//! parsed before still parses.
//!
//! How: clap propagates a global option to every subcommand unless the
//! subcommand already has an argument with its id. A verb that ignores one gets
//! its own hidden, non-global copy, which parses the same flags (and environment
//! variable) and whose value clap still carries up to the top level by id, where
//! `Cli` reads it — so `cairn graph ship --db x` parses as before and does nothing
//! with `x`, as before.

/// The verbs (subcommand paths) and the global options each ignores: those that
/// open no journal ignore all three; those that only read one sign nothing.
const IGNORED: [(&str, &[&str]); 28] = [
    ("machines", &ALL),
    ("graph", &ALL),
    ("schema", &ALL),
    ("completions", &ALL),
    ("man", &ALL),
    // Pure answers on the document (and cairn's own git runs): no journal.
    ("park check", &ALL),
    ("park bind-repository", &ALL),
    ("park observe-vcs", &ALL),
    ("pr classify", &ALL),
    ("ship classify", &ALL),
    ("work validate", &ALL),
    // Read the journal, record nothing.
    ("park resume-gate", &["signing_key"]),
    ("saga scan", &["signing_key"]),
    ("saga restore", &["signing_key"]),
    ("saga show", &["signing_key"]),
    ("ship status", &["signing_key"]),
    ("work status", &["signing_key"]),
    ("work ready", &["signing_key"]),
    ("state", &["signing_key"]),
    ("journal log", &["signing_key"]),
    ("journal streams", &["signing_key"]),
    ("journal links", &["signing_key"]),
    ("journal verify", &["signing_key"]),
    ("journal show", &["signing_key"]),
    ("journal audit", &["signing_key"]),
    // Its journals are --from and --to.
    ("journal copy", &["db", "signing_key"]),
    ("journal key", &["busy_timeout_ms"]),
    // Reads the lease; the claim verbs that record sign.
    ("claim show", &["signing_key"]),
];

const ALL: [&str; 3] = ["db", "busy_timeout_ms", "signing_key"];

/// `cmd` with each ignored global option hidden on the verbs of [`IGNORED`].
pub fn hide_where_ignored(mut cmd: clap::Command) -> clap::Command {
    let globals: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    for (path, ignored) in IGNORED {
        let hidden: Vec<clap::Arg> = globals
            .iter()
            .filter(|g| ignored.contains(&g.get_id().as_str()))
            .map(|g| g.clone().global(false).hide(true))
            .collect();
        let words: Vec<&str> = path.split(' ').collect();
        cmd = at(cmd, &words, &|sub| sub.args(hidden.clone()));
    }
    cmd
}

/// `cmd` with `f` applied to the subcommand at `path`.
fn at(
    cmd: clap::Command,
    path: &[&str],
    f: &dyn Fn(clap::Command) -> clap::Command,
) -> clap::Command {
    match path {
        [] => f(cmd),
        [first, rest @ ..] => {
            let first = (*first).to_owned();
            cmd.mut_subcommand(first, |sub| at(sub, rest, f))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path names a verb: a renamed verb fails here, not silently.
    #[test]
    fn every_listed_verb_exists() {
        let cmd = crate::args::command();
        for (path, _) in IGNORED {
            let mut c = &cmd;
            for w in path.split(' ') {
                c = c
                    .find_subcommand(w)
                    .unwrap_or_else(|| panic!("`{path}` is not a verb"));
            }
            for id in ALL {
                let arg = c.get_arguments().find(|a| a.get_id() == id);
                let ignored = IGNORED
                    .iter()
                    .any(|(p, ids)| *p == path && ids.contains(&id));
                // Propagation happens when the command is built; before that an
                // ignored option is the verb's own hidden copy.
                if ignored {
                    assert!(arg.is_some_and(|a| a.is_hide_set()), "{path} {id}");
                }
            }
        }
    }
}
