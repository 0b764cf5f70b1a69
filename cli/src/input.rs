//! The one input document a verb reads (stdin, or a ship leaf's packet): read once,
//! bounded, kept for the run, so a refusal can name every violation of it against
//! the verb's schema (`crate::schema`). A verb waiting on a terminal says so.

use std::io::{IsTerminal, Read};
use std::sync::OnceLock;

use cairn::machines::evidence::wire;
use serde_json::Value;

use crate::failure::{input, Failure};

/// The largest input document accepted (bytes): a bound on memory for hostile input.
pub const MAX_INPUT: u64 = 16 * 1024 * 1024;

/// The verb being run (`park check`), set once after the command line parsed.
static VERB: OnceLock<String> = OnceLock::new();
/// The document text the verb read, kept for the run.
static DOCUMENT: OnceLock<String> = OnceLock::new();
/// The document as the verb completed it, where it adds what it observed itself.
static COMPLETED: OnceLock<String> = OnceLock::new();

/// Names the verb this process runs (its subcommand path, without `cairn`).
pub fn set_verb(path: String) {
    let _ = VERB.set(path);
}

/// The verb's `--idempotency-key` and `--fencing-token` as given, where it
/// takes them: a refusal names what is wrong with them beside the rest.
static FLAGS: OnceLock<(Option<String>, Option<String>)> = OnceLock::new();

/// Keeps the verb's key and token flags (see [`flags`]).
pub fn set_flags(key: Option<String>, token: Option<String>) {
    let _ = FLAGS.set((key, token));
}

/// The key and token flags the verb was given (`None` where it takes none).
pub fn flags() -> (Option<&'static str>, Option<&'static str>) {
    FLAGS
        .get()
        .map_or((None, None), |(k, t)| (k.as_deref(), t.as_deref()))
}

/// The verb this process runs, once the command line parsed.
pub fn verb() -> Option<&'static str> {
    VERB.get().map(String::as_str)
}

/// The document the verb decided on, if it read one: as completed, else as read.
pub fn kept() -> Option<&'static str> {
    COMPLETED.get().or(DOCUMENT.get()).map(String::as_str)
}

/// Keeps the document as the verb completed it (`pr observe --pr` adds the
/// reading it made), so a refusal names only what the caller's part lacks.
pub fn completed(text: String) {
    let _ = COMPLETED.set(text);
}

/// Keeps `text` as the run's document (a verb reads one).
pub fn keep(text: String) -> &'static str {
    DOCUMENT.get_or_init(|| text).as_str()
}

/// Reads stdin whole as UTF-8 text (at most [`MAX_INPUT`] bytes). On a terminal,
/// says first on stderr that a document is awaited, and how to end it.
pub fn read_stdin() -> Result<&'static str, Failure> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let verb = verb().unwrap_or("this verb");
        // exec's document is the machine's own command: its shape is the
        // machine's, not a schema of exec's.
        let shape = if verb == "exec" {
            "`cairn exec --help` says what it holds".to_owned()
        } else {
            format!("`cairn schema {verb}` shows its shape")
        };
        crate::output::stderr_line(format_args!(
            "cairn: `{verb}` reads a JSON document on stdin, which is a terminal: paste it and \
             end with Ctrl-D, or pipe it in ({shape})"
        ));
    }
    let mut buf = Vec::new();
    stdin
        .take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| input("$", "stdin", &format!("cannot read stdin: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(input(
            "$",
            "input-size",
            &format!("stdin is larger than {MAX_INPUT} bytes"),
        ));
    }
    let text = String::from_utf8(buf)
        .map_err(|e| input("$", "utf-8", &format!("stdin is not UTF-8: {e}")))?;
    Ok(keep(text))
}

/// Reads the file at `path` whole as UTF-8 text, bounded as stdin is: a regular
/// file of at most [`MAX_INPUT`] bytes, opened without blocking, so a fifo, a
/// device or `/dev/zero` is refused rather than waited on or read forever
/// (helper-75: `--spec /dev/zero` grew to 5 GB, a fifo hung). `field` names the
/// flag, `unreadable` the rule a file that cannot be opened or read breaks.
pub fn read_file(path: &std::path::Path, field: &str, unreadable: &str) -> Result<String, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| input(field, unreadable, &format!("`{shown}`: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| input(field, unreadable, &format!("`{shown}`: {e}")))?;
    if !meta.is_file() {
        return Err(input(
            field,
            "regular-file",
            &format!("`{shown}` is not a regular file"),
        ));
    }
    let mut buf = Vec::new();
    file.take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| input(field, unreadable, &format!("`{shown}`: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(input(
            field,
            "input-size",
            &format!("`{shown}` is larger than {MAX_INPUT} bytes"),
        ));
    }
    String::from_utf8(buf)
        .map_err(|e| input(field, "utf-8", &format!("`{shown}` is not UTF-8: {e}")))
}

/// Reads stdin as exactly one strict JSON document (`wire::parse_document`).
pub fn document() -> Result<Value, Failure> {
    Ok(wire::parse_document(read_stdin()?)?)
}
