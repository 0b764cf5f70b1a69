#!/usr/bin/env bash
# cairn's main job, end to end: one park episode walked from preflight through
# checkpoint authorization, durable evaluation, receipt validation and comment
# read-back to safe_to_close, recorded on the embedded SQLite journal, then
# replayed, verified and audited.
#
#   CAIRN=path/to/cairn CAIRN_DB=./cairn-demo.db examples/park-episode.sh
#
# The wire documents under examples/park/ are built the way the park skill's
# helper builds them, and cairn answers with the helper's bytes; the
# evidence describes a bound workspace at /srv/work/project (a fixture: `check`,
# `evaluate` and `validate-receipt` judge evidence, they do not read the disk;
# `cairn park observe-vcs --repo DIR` is the verb that observes a real one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CAIRN=${CAIRN:-cairn}
export CAIRN_DB=${CAIRN_DB:-./cairn-demo.db}
docs=$here/park

say() { printf '\n== %s\n' "$*"; }
# A string field of a park answer (the helper's bytes: `"key": "value"`).
field() { sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p"; }
fill() {
  local text
  text=$(cat "$1")
  text=${text//__EPISODE__/$episode}
  text=${text//__INTENT__/$intent}
  text=${text//__ATTEMPT__/${attempt:-}}
  text=${text//\"__BINDING__\"/${binding:-null}}
  printf '%s' "$text"
}

say "prepare-attempt without stable ids: cairn mints them and asks for a retry"
out=$(printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":null,"intent_id":null,"prior_receipts":[]}' | "$CAIRN" park prepare-attempt)
echo "$out"
episode=$(echo "$out" | field episode_id)
intent=$(echo "$out" | field intent_id)

say "bind-repository: exactly one registered repository for the bound root"
binding=$(fill "$docs/bind.json" | "$CAIRN" park bind-repository)
echo "$binding" | cut -c1-160

say "prepare-attempt with the stable ids: a fresh attempt, recorded on park/$episode"
out=$(printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":"%s","intent_id":"%s","prior_receipts":[]}' "$episode" "$intent" | "$CAIRN" park prepare-attempt)
echo "$out"
attempt=$(echo "$out" | field attempt_id)
ids=(--episode-id "$episode" --intent-id "$intent" --attempt-id "$attempt")

say "check (read-only) and evaluate the preflight observation: checkpoint authorized"
fill "$docs/observation-preflight.json" | "$CAIRN" park check
fill "$docs/observation-preflight.json" | "$CAIRN" park evaluate "${ids[@]}"

say "evaluate the post-checkpoint durable observation: write_receipt"
fill "$docs/observation-durable.json" | "$CAIRN" park evaluate "${ids[@]}"

say "validate-receipt on the exact bytes"
receipt=$(fill "$docs/receipt.json" | tr -d '\n' | sed 's/  */ /g')
printf '%s' "$receipt" | "$CAIRN" park validate-receipt "${ids[@]}"

say "confirm-readback: the bead comments, one of them exactly the fenced bytes"
escaped=${receipt//\\/\\\\}
escaped=${escaped//\"/\\\"}
printf '{"receipt_bytes":"%s","comments":[{"id":101,"body":"parking for today"},{"id":102,"body":"```work_episode_receipt/v1\\n%s\\n```"}]}' "$escaped" "$escaped" \
  | "$CAIRN" park confirm-readback "${ids[@]}"

say "the episode, rebuilt by replay"
"$CAIRN" state "park/$episode"

say "its history"
"$CAIRN" journal log --stream "park/$episode"

say "verify the hash chain and audit (re-decide every transition)"
"$CAIRN" journal verify
"$CAIRN" journal audit --stream "park/$episode"
