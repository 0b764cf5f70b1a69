# Shared by benches/cli.sh and benches/cpu.sh (sourced from the repository root):
# builds cairn and the floor, and makes the templates every timed run copies — an
# episode with one prepared attempt (a real episode's size) and the floor's table
# with one row — and the durable observation. Sets C, FLOOR, work (removed on exit),
# ep, intent, attempt.
# CAIRN_BENCH_PROFILE=dev: CI's smoke, on the test build's artifacts (no timing
# is judged there); measurements use the default, release.
profile=${CAIRN_BENCH_PROFILE:-release}
# Two builds: with the example in the same invocation, cargo would build the
# binary with the dev-dependencies' features too (the `testing` facade), which
# is not the binary `cargo build --release` or `cargo install` makes.
cargo build -q --profile "$profile" -p cairn-cli --bin cairn
cargo build -q --profile "$profile" -p cairn-cli --example floor
out=${CARGO_TARGET_DIR:-$PWD/target}/$([ "$profile" = dev ] && echo debug || echo "$profile")
C=$out/cairn
FLOOR=$out/examples/floor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/template"
export CAIRN_DB=$work/template/cairn.db

# An episode ready for durable evaluations; each evaluate records receipt-authorized.
docs=examples/park
ep=ep-0b1e6f5e-3c1a-4b7e-9d2a-5f1c2e3d4a5b
intent=park-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f
binding=$(sed -e "s/__EPISODE__/$ep/" "$docs/bind.json" | "$C" park bind-repository)
attempt=$(printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":"%s","intent_id":"%s","prior_receipts":[]}' "$ep" "$intent" \
  | "$C" park prepare-attempt 2>/dev/null | sed -n 's/.*"attempt_id": *"\([^"]*\)".*/\1/p')
obs=$(cat "$docs/observation-durable.json")
obs=${obs//__EPISODE__/$ep}
obs=${obs//\"__BINDING__\"/$binding}
printf '%s' "$obs" > "$work/observation.json"
# The floor's template: its table exists, one row in it.
"$FLOOR" "$work/template/floor.db" < "$work/observation.json" > /dev/null
