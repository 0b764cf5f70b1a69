//! The SQLite backend's hot queries, named, so the test below can check every
//! one uses an index.

/// The chain head: one seek to the end of the rowid B-tree.
pub(crate) const HEAD: &str =
    "SELECT seq, hash FROM events WHERE seq = (SELECT max(seq) FROM events)";
/// An idempotency key on a stream.
pub(crate) const IDEMPOTENCY: &str = "SELECT id, fingerprint, first_version, last_version FROM transitions WHERE stream = ?1 AND idempotency_key = ?2";
/// The sequence range of a transition's events, by their stream versions.
pub(crate) const TRANSITION_SEQS: &str =
    "SELECT min(seq), max(seq) FROM events WHERE stream = ?1 AND version BETWEEN ?2 AND ?3";
/// A stream's last version and its machine.
pub(crate) const STREAM_TIP: &str =
    "SELECT version, machine FROM events WHERE stream = ?1 ORDER BY version DESC LIMIT 1";
/// A stream's version.
pub(crate) const STREAM_VERSION: &str = "SELECT max(version) FROM events WHERE stream = ?1";
/// The last transition id of any stream in a name range (`machine/` up to
/// `machine0`: every stream of one machine), by the transitions' stream index.
pub(crate) const FAMILY_TIP: &str =
    "SELECT max(id) FROM transitions WHERE stream >= ?1 AND stream < ?2";
/// The first stream in a name range (`machine/` up to `machine0`): one seek of
/// the events' `(stream, version)` index.
pub(crate) const FAMILY_FIRST: &str =
    "SELECT min(stream) FROM events WHERE stream >= ?1 AND stream < ?2";
/// The stream after `?1` in the range that ends before `?2`: the next seek of a
/// skip scan that lists a machine's streams one seek per stream, never a pass
/// over the events. (A recursive query does the same in one statement, but
/// preparing it cost 182k instructions and two temporary b-trees, a twentieth
/// of a CLI transition that lists the work nodes; these two cost a few
/// thousand each.)
pub(crate) const FAMILY_NEXT: &str =
    "SELECT min(stream) FROM events WHERE stream > ?1 AND stream < ?2";
/// Every stream, in name order: a recursive skip scan over the whole index
/// (parameterless, so one text serves both backends).
pub(crate) use crate::store::ALL_STREAMS;
/// A stream's machine.
pub(crate) const STREAM_MACHINE: &str =
    "SELECT machine FROM events WHERE stream = ?1 ORDER BY version LIMIT 1";
/// The replay path, up to a version.
pub(crate) const REPLAY: &str = "SELECT seq, version, event_type, schema_version, payload FROM events WHERE stream = ?1 AND version <= ?2 ORDER BY version";
/// The replay path, the whole stream: with no bound a version of another type
/// (which sorts after every integer, so `version <= ?` leaves it out) is read,
/// and refused.
pub(crate) const REPLAY_ALL: &str = "SELECT seq, version, event_type, schema_version, payload FROM events WHERE stream = ?1 ORDER BY version";
/// A page of a stream's transition records, by first version.
pub(crate) const TRANSITIONS_FROM: &str = "SELECT id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at FROM transitions WHERE stream = ?1 AND first_version > ?2 ORDER BY first_version LIMIT ?3";
/// How many transition records a stream has.
pub(crate) const TRANSITION_COUNT: &str = "SELECT count(*) FROM transitions WHERE stream = ?1";
/// The transition record that covers a stream version: the last one starting at or
/// before it.
pub(crate) const TRANSITION_AT: &str = "SELECT id, first_version, last_version FROM transitions WHERE stream = ?1 AND first_version <= ?2 ORDER BY first_version DESC LIMIT 1";
/// A stream's events in a version range (a transition's events).
pub(crate) const STREAM_RANGE: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE stream = ?1 AND version BETWEEN ?2 AND ?3 ORDER BY version";
/// Records a signing key's public half once.
pub(crate) const KEY_INSERT: &str =
    "INSERT OR IGNORE INTO signing_keys (public_key, added_at) VALUES (?1, ?2)";
/// A signing key's id.
pub(crate) const KEY_ID: &str = "SELECT id FROM signing_keys WHERE public_key = ?1";
/// A transition's signature.
pub(crate) const SIGNATURE_INSERT: &str = "INSERT INTO signatures (transition_id, key_id, head_seq, head_hash, signature) VALUES (?1, ?2, ?3, ?4, ?5)";
/// A transition's signature and its key, for verify.
pub(crate) const SIGNATURE_OF: &str = "SELECT s.key_id, s.head_seq, s.head_hash, s.signature, k.public_key FROM signatures s LEFT JOIN signing_keys k ON k.id = s.key_id WHERE s.transition_id = ?1";
/// Transition records after an id, in id order.
pub(crate) const TRANSITIONS_AFTER: &str = "SELECT id, stream, machine, rules_version, command_name, command, context, idempotency_key, fingerprint, first_version, last_version, recorded_at FROM transitions WHERE id > ?1 ORDER BY id LIMIT ?2";
/// Signature rows after a transition id.
pub(crate) const SIGNATURES_AFTER: &str = "SELECT transition_id, key_id, head_seq, head_hash, signature FROM signatures WHERE transition_id > ?1 ORDER BY transition_id LIMIT ?2";
/// Events after a sequence number, all streams.
pub(crate) const LOG_AFTER: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2";
/// Events after a sequence number, one stream (its version order is its sequence order).
pub(crate) const LOG_STREAM_AFTER: &str = "SELECT seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash FROM events WHERE stream = ?2 AND seq > ?1 ORDER BY version LIMIT ?3";

/// One event row, at the seq it was hashed as (an append's, or an import's source's).
pub(crate) const EVENT_INSERT: &str = "INSERT INTO events (seq, stream, version, machine, event_type, schema_version, payload, recorded_at, transition_id, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::SqliteStore;
    use crate::Options;

    /// A cached statement runs again as compiled, whatever its new parameters: no
    /// hot query is re-prepared between calls (found: every `stream = ?1` query
    /// was, a third of a batch's time).
    #[test]
    fn a_cached_statement_is_never_re_prepared_for_new_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let j = SqliteStore::open(&dir.path().join("j.db"), &Options::default()).unwrap();
        // Each query with its parameters' kinds: `t` a text, `i` an integer.
        for (sql, kinds) in [
            (STREAM_TIP, "t"),
            (STREAM_VERSION, "t"),
            (REPLAY, "ti"),
            (REPLAY_ALL, "t"),
            (IDEMPOTENCY, "tt"),
            (FAMILY_TIP, "tt"),
        ] {
            for round in 0..4 {
                let mut stmt = j.conn.prepare_cached(sql).unwrap();
                assert_eq!(stmt.parameter_count(), kinds.len(), "`{sql}`");
                let values: Vec<rusqlite::types::Value> = kinds
                    .chars()
                    .enumerate()
                    .map(|(i, k)| match k {
                        't' => rusqlite::types::Value::Text(format!("s{round}/{i}")),
                        _ => rusqlite::types::Value::Integer(round * 7 + i as i64),
                    })
                    .collect();
                let mut rows = stmt.query(rusqlite::params_from_iter(values)).unwrap();
                while rows.next().unwrap().is_some() {}
                drop(rows);
                assert_eq!(
                    stmt.get_status(rusqlite::StatementStatus::RePrepare),
                    0,
                    "`{sql}` re-prepared at round {round}"
                );
            }
        }
    }

    /// Every hot query is answered through an index or the rowid, never a table scan
    /// (a test of structure, not of time).
    #[test]
    fn every_hot_query_uses_an_index() {
        let dir = tempfile::tempdir().unwrap();
        let j = SqliteStore::open(&dir.path().join("j.db"), &Options::default()).unwrap();
        for sql in [
            HEAD,
            IDEMPOTENCY,
            TRANSITION_SEQS,
            STREAM_TIP,
            STREAM_VERSION,
            FAMILY_TIP,
            FAMILY_FIRST,
            FAMILY_NEXT,
            ALL_STREAMS,
            STREAM_MACHINE,
            REPLAY,
            REPLAY_ALL,
            TRANSITION_COUNT,
            LOG_AFTER,
            LOG_STREAM_AFTER,
            KEY_ID,
            SIGNATURE_OF,
            TRANSITION_AT,
            STREAM_RANGE,
            TRANSITIONS_AFTER,
            TRANSITIONS_FROM,
            SIGNATURES_AFTER,
        ] {
            let mut stmt = j
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let plan: Vec<String> = stmt
                .query_map(
                    rusqlite::params_from_iter(std::iter::repeat_n(
                        rusqlite::types::Value::Null,
                        stmt.parameter_count(),
                    )),
                    |r| r.get::<_, String>(3),
                )
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let text = plan.join(" | ");
            // Every table access is a SEARCH (an index, the rowid, or a min/max seek);
            // none is a SCAN (but of a recursive query's own rows, `s`), and
            // nothing is sorted in a temporary B-tree.
            assert!(
                plan.iter()
                    .all(|step| (!step.starts_with("SCAN") || step == "SCAN s")
                        && !step.contains("TEMP B-TREE")),
                "`{sql}` plans `{text}`"
            );
        }
    }
}
