//! Did-you-mean: the known names nearest an unknown one — a machine (`graph`,
//! `exec`, `state`), a stream (`state`, `journal log|audit --stream`), a verb
//! (`schema`, `man`) — put into the error as `suggestions`.

use cairn::journal::Journal;

use crate::failure::Failure;

/// At most this many suggestions.
const MAX: usize = 3;

/// The names of `known` nearest `word`, nearest first (then by name), at most
/// [`MAX`]: those within an edit distance (optimal string alignment: an insertion,
/// deletion, substitution or swap of two neighbours each count one) of a third of
/// `word`'s length, at least 1 and at most 3: a few typos, never "similar". Not a
/// ratio: two streams of one machine share a long prefix (`park/ep-` and a uuid),
/// and a ratio would offer any of them.
pub fn nearest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let bound = (word.chars().count() / 3).clamp(1, 3);
    let mut near: Vec<(usize, &str)> = known
        .into_iter()
        .filter(|k| *k != word)
        .map(|k| (strsim::osa_distance(word, k), k))
        .filter(|(d, _)| *d <= bound)
        .collect();
    near.sort_unstable();
    near.dedup();
    near.into_iter()
        .take(MAX)
        .map(|(_, k)| k.to_owned())
        .collect()
}

/// An unknown machine's error, with the registered machines nearest its name.
pub fn machine(failure: Failure, machines: &[String]) -> Failure {
    let name = match &failure {
        Failure::Cairn(cairn::Error::UnknownMachine { name }) => name.clone(),
        _ => return failure,
    };
    with(failure, nearest(&name, machines.iter().map(String::as_str)))
}

/// A stream with nothing recorded, with the recorded streams nearest its name
/// (read only on this error path: listing the streams reads every event).
pub fn stream(failure: Failure, journal: &Journal) -> Failure {
    let name = match &failure {
        Failure::Cairn(cairn::Error::NoSuchStream { stream }) => stream.clone(),
        Failure::NoSuchStream { stream, .. } => stream.clone(),
        _ => return failure,
    };
    let Ok(streams) = journal.streams() else {
        return failure;
    };
    with(
        failure,
        nearest(&name, streams.iter().map(|s| s.stream.as_str())),
    )
}

/// `failure` carrying `suggestions` (unchanged when there are none).
pub fn with(failure: Failure, suggestions: Vec<String>) -> Failure {
    if suggestions.is_empty() {
        failure
    } else {
        Failure::Suggested(Box::new(failure), suggestions)
    }
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn near_names_only_nearest_first() {
        let machines = ["park", "pr-loop", "ship", "saga", "work-node", "claim"];
        assert_eq!(nearest("shpi", machines), ["ship"]);
        assert_eq!(nearest("prk", machines), ["park"]);
        assert_eq!(nearest("sage", machines), ["saga"]);
        assert!(nearest("frobnicate", machines).is_empty());
        let streams = [
            "park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "park/ep-77777777-3c1a-4b7e-9d2a-5f1c2e3d4a5b",
            "ticket/t1",
            "ticket/t2",
            "ticket/t10",
        ];
        assert_eq!(
            nearest("park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5c", streams),
            ["park/ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b"]
        );
        assert_eq!(
            nearest("ticket/t3", streams),
            ["ticket/t1", "ticket/t2", "ticket/t10"]
        );
        // Another episode of the same machine is not "near".
        assert!(nearest("park/ep-nope", streams).is_empty());
        // The word itself is not a suggestion.
        assert_eq!(nearest("ticket/t1", ["ticket/t1"]), Vec::<String>::new());
    }
}
