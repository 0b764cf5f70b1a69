//! A user criterion's confirmation, read from the one channel cairn accepts it
//! on: the controlling terminal of the `cairn` process (`/dev/tty`). cairn mints a
//! one-time challenge, shows it there with the criterion's prompt, and reads one
//! line back; the machine passes the criterion only when that line is
//! `I confirm <challenge>`. An agent's non-interactive shell has no controlling
//! terminal, so it can neither see the challenge nor answer it: opening
//! `/dev/tty` fails, and the criterion is recorded as
//! `user-confirmation-unavailable`. Nothing on the command line, in the
//! environment or on stdin can stand in for it.

use std::io::{BufRead, BufReader, Write};

use cairn::work::Confirmation;

use crate::output::visible;

/// The longest answer read (a confirmation is one short line).
const MAX_LINE: u64 = 4096;

/// Asks the host on the controlling terminal to confirm criterion `id` of `node`.
pub fn ask(node: &[String], id: &str, prompt: &str) -> Confirmation {
    let challenge = uuid::Uuid::new_v4().simple().to_string();
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty");
    let Ok(mut tty) = tty else {
        return Confirmation {
            challenge,
            channel: None,
            words: None,
        };
    };
    // What the workspec's writer put in the prompt, the id and the node's
    // address reaches the terminal visible, on its one line (helper-91: an
    // escape sequence in a prompt cleared the host's screen and set its title;
    // a line break could print a second `cairn:` line).
    let address = serde_json::to_string(node).unwrap_or_default();
    let (id, address, prompt) = (visible(id), visible(&address), visible(prompt));
    let asked = write!(
        tty,
        "cairn: user criterion {id} of node {address}: {prompt}\n\
         cairn: to confirm, type exactly: I confirm {challenge}\n> "
    )
    .and_then(|()| tty.flush());
    let mut line = String::new();
    let read = asked.and_then(|()| {
        let reader = tty.try_clone()?;
        let mut reader = BufReader::new(std::io::Read::take(reader, MAX_LINE));
        reader.read_line(&mut line)
    });
    match read {
        Ok(_) => {
            Confirmation::from_terminal(challenge, line.trim_end_matches(['\r', '\n']).to_owned())
        }
        Err(_) => Confirmation {
            challenge,
            channel: None,
            words: None,
        },
    }
}
