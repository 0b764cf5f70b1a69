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
pub fn hide_where_ignored(cmd: clap::Command) -> clap::Command {
    hide_on(cmd, |_| true)
}

/// `cmd` with the ignored global options hidden on the one verb `argv` names (if
/// it is listed): what parsing `argv` reads, without rebuilding the other 27
/// verbs (a twelfth of a short verb's instructions at every start).
///
/// The verb is found as clap descends: words that name a subcommand (or an
/// alias of one), with options skipped and the value of a global option that
/// takes one not read as a word; `help VERB…` names `VERB…`. Where this reads a
/// line differently from clap, the verb keeps its global options visible: its
/// help lists them, and the values parse and reach `Cli` as everywhere else.
pub fn hide_for(cmd: clap::Command, argv: &[std::ffi::OsString]) -> clap::Command {
    let named = named_verb(&cmd, argv);
    hide_on(cmd, |path| path == named)
}

/// The verb path `argv` (with the program name first) names in `cmd`.
fn named_verb(cmd: &clap::Command, argv: &[std::ffi::OsString]) -> String {
    let takes_value: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set() && a.get_action().takes_values())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let mut at = cmd;
    let mut path: Vec<&str> = Vec::new();
    let mut words = argv.iter().skip(1);
    while let Some(word) = words.next() {
        let Some(word) = word.to_str() else {
            // An option whose `=value` is not UTF-8 (a legal path) is still an
            // option; any other such word cannot name a verb (helper-51).
            if word.as_encoded_bytes().starts_with(b"-") {
                continue;
            }
            break;
        };
        if word == "--" {
            break;
        }
        if word.starts_with('-') {
            if takes_value.iter().any(|t| t == word) {
                words.next();
            }
            continue;
        }
        if word == "help" && at.find_subcommand("help").is_none() {
            continue;
        }
        match at.find_subcommand(word) {
            Some(sub) => {
                path.push(sub.get_name());
                at = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

/// `cmd` with the ignored global options hidden on the verbs of [`IGNORED`] that
/// `wanted` keeps.
fn hide_on(mut cmd: clap::Command, wanted: impl Fn(&str) -> bool) -> clap::Command {
    let globals: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    for (path, ignored) in IGNORED.iter().filter(|(path, _)| wanted(path)) {
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
    use std::ffi::OsString;

    fn line(words: &[&str]) -> Vec<OsString> {
        std::iter::once("cairn")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What parsing `words` gives with `cmd`: the parsed `Cli`, or the error
    /// exactly as the user would read it (help pages included).
    fn parse(mut cmd: clap::Command, words: &[&str]) -> String {
        use clap::FromArgMatches;
        match cmd.try_get_matches_from_mut(line(words)) {
            Ok(m) => format!("{:?}", crate::args::Cli::from_arg_matches(&m)),
            Err(e) => format!("{:?} {}", e.kind(), e.render()),
        }
    }

    /// The verb a line names, as clap descends it, however the line spells it.
    #[test]
    fn the_named_verb_is_the_one_clap_parses() {
        let cmd = crate::args::command();
        for (words, named) in [
            (&["park", "check"][..], "park check"),
            (&["--db", "park", "park", "check"], "park check"),
            (&["--db=x", "journal", "verify", "--json"], "journal verify"),
            (&["--busy-timeout-ms", "5", "state", "park/x"], "state"),
            (&["help", "journal", "copy"], "journal copy"),
            (&["journal", "help", "copy"], "journal copy"),
            (&["graph", "ship", "--db", "x"], "graph"),
            (&["park", "--", "check"], "park"),
            (&["nope", "check"], ""),
            (&[], ""),
        ] {
            assert_eq!(named_verb(&cmd, &line(words)), named, "{words:?}");
        }
    }

    /// A `--flag=value` whose value is not UTF-8 (a legal path) still names the
    /// verb after it, so its page hides what that verb ignores (helper-51: the
    /// walk stopped at the word, and `machines --help` listed `--db`); any other
    /// such word names no verb.
    #[cfg(unix)]
    #[test]
    fn a_non_utf8_option_value_still_names_the_verb() {
        use std::os::unix::ffi::OsStringExt;
        let cmd = crate::args::command();
        let odd = |before: &[u8]| {
            let mut v = before.to_vec();
            v.extend_from_slice(b"/tmp/j\xff.db");
            OsString::from_vec(v)
        };
        let words = |first: OsString, rest: &[&str]| {
            let mut l = vec![OsString::from("cairn"), first];
            l.extend(rest.iter().map(OsString::from));
            l
        };
        let argv = words(odd(b"--db="), &["machines", "--help"]);
        assert_eq!(named_verb(&cmd, &argv), "machines");
        let page = crate::args::command_for(&argv)
            .try_get_matches_from(&argv)
            .expect_err("a help page")
            .render()
            .to_string();
        assert!(!page.contains("--db"), "{page}");
        assert_eq!(named_verb(&cmd, &words(odd(b""), &["machines"])), "");
    }

    /// Preparing only the named verb changes no parse and no page: every listed
    /// verb's help, its ignored options given before and after it, and lines
    /// that name no listed verb read the same as with the whole tree prepared.
    #[test]
    fn only_the_named_verb_prepared_parses_the_same() {
        let mut lines: Vec<Vec<String>> = Vec::new();
        for (path, _) in IGNORED {
            let verb: Vec<String> = path.split(' ').map(str::to_owned).collect();
            let with = |before: &[&str], after: &[&str]| {
                let mut l: Vec<String> = before.iter().map(|w| (*w).to_owned()).collect();
                l.extend(verb.iter().cloned());
                l.extend(after.iter().map(|w| (*w).to_owned()));
                l
            };
            lines.push(with(&[], &["--help"]));
            lines.push(with(&["help"], &[]));
            lines.push(with(&[], &["--db", "x", "--signing-key", "k"]));
            lines.push(with(&["--db", "x", "--busy-timeout-ms", "7"], &[]));
            lines.push(with(&[], &["--busy-timeout-ms", "x"]));
        }
        for l in [
            &["park", "evaluate", "--help"][..],
            &["park", "evaluate", "--db", "x", "--episode-id", "e"],
            &["--db", "x", "state", "--signing-key", "k", "park/x"],
            &["journal", "--help"],
            &["--help"],
            &["park", "chek"],
        ] {
            lines.push(l.iter().map(|w| (*w).to_owned()).collect());
        }
        for l in &lines {
            let words: Vec<&str> = l.iter().map(String::as_str).collect();
            let whole = parse(crate::args::command(), &words);
            let named = parse(crate::args::command_for(&line(&words)), &words);
            assert_eq!(named, whole, "{words:?}");
        }
    }

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
