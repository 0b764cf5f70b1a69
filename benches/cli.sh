#!/usr/bin/env bash
# Whole-process cost of cairn's CLI beside its floors, with hyperfine, in one run:
#   a durable park transition (`cairn park evaluate` with ids, eligible input),
#   a read-only `cairn park check`, `cairn state` of a 1,000-event stream,
#   (a) a minimal Rust binary that opens SQLite, inserts one row durably, prints JSON,
#   (b) a Python 3 stdlib script doing the same (what the seeds' helpers cost),
#       run by the system interpreter directly (no version-manager shim).
#
#   benches/cli.sh [RUNS]     (CI smoke: benches/cli.sh 3)
# Installs hyperfine from Debian's packages when missing. Writes bench-cli.md and
# bench-cli.json under target/ (or $CARGO_TARGET_DIR), and prints each median with its ratio to the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
if ! command -v hyperfine >/dev/null 2>&1; then
  apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine; }
fi
. benches/setup-cli.sh
report=${CARGO_TARGET_DIR:-$PWD/target}
mkdir -p "$report"
# The system interpreter, run directly: a `python3` found through a version
# manager's shim (pyenv here) costs tens of milliseconds more per call and
# would flatter cairn.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
# A 1,000-event stream for `cairn state` (in its own journal, only read).
export CAIRN_DB=$work/state.db
for _ in $(seq 1 999); do
  printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":"ep-00000000-0000-4000-8000-000000000001","intent_id":"%s","prior_receipts":[]}' "$intent" \
    | "$C" park prepare-attempt >/dev/null 2>&1
done
printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":"ep-00000000-0000-4000-8000-000000000001","intent_id":"%s","prior_receipts":[]}' "$intent" \
  | "$C" park prepare-attempt >/dev/null 2>&1

# Debian's hyperfine has no --input: stdin comes by redirection in hyperfine's shell,
# whose start-up hyperfine measures and subtracts (the same for every command).
# Before every timed run, fresh copies of the small templates: each durable write lands
# on an episode with one prepared attempt (a real episode's size), and the floor on a
# table with one row — the runs do not pile up on one stream.
in=$work/observation.json
fresh="cp $work/template/cairn.db $work/cairn.db && cp $work/template/floor.db $work/floor.db && rm -f $work/cairn.db-wal $work/cairn.db-shm $work/floor.db-wal $work/floor.db-shm"
hyperfine --warmup 5 --runs "$runs" --export-markdown $report/bench-cli.md --export-json $report/bench-cli.json --prepare "$fresh" \
  -n "cairn park evaluate (durable transition)" "$C --db $work/cairn.db park evaluate --episode-id $ep --intent-id $intent --attempt-id $attempt < $in > /dev/null 2>&1" \
  -n "cairn park check (read-only)" "$C park check < $in > /dev/null" \
  -n "cairn state (1,000 events)" "$C --db $work/state.db state park/ep-00000000-0000-4000-8000-000000000001 > /dev/null" \
  -n "floor: minimal Rust durable insert" "$FLOOR $work/floor.db < $in > /dev/null" \
  -n "python3 stdlib helper (/usr/bin/python3)" "$py benches/python_baseline.py $work/floor.db < $in > /dev/null"
# The ratios the performance targets are judged by: medians (this VM's fsync
# latency has a long tail that moves means), each command against the floor
# measured in this same run.
python3 - $report/bench-cli.json <<'PY'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
floor = next(r for r in rs if r["command"].startswith("floor"))["median"]
for r in rs:
    print(f'{r["median"]*1e3:8.2f} ms median  {r["median"]/floor:5.2f}x the floor  {r["command"]}')
PY
echo "written: $report/bench-cli.md, $report/bench-cli.json"
