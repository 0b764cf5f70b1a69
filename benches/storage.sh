#!/usr/bin/env bash
# Bytes on disk per transition: WALKS park walks (examples/park-episode.sh, five
# transitions each, the README's main job) recorded on one fresh SQLite journal,
# checkpointed, then the file's size over its transitions, with what each table and
# column holds (SQLite's `dbstat`, read through Python's sqlite3).
#
#   benches/storage.sh [WALKS]     (default 50)
# CAIRN_BENCH_PROFILE=dev: CI's smoke, on the test build (no figure is judged there).
set -euo pipefail
cd "$(dirname "$0")/.."
walks=${1:-50}
profile=${CAIRN_BENCH_PROFILE:-release}
cargo build -q --profile "$profile" -p cairn-cli --bin cairn
out=${CARGO_TARGET_DIR:-$PWD/target}/$([ "$profile" = dev ] && echo debug || echo "$profile")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq 1 "$walks"); do
  CAIRN="$out/cairn" CAIRN_DB="$work/journal.db" bash examples/park-episode.sh \
    > /dev/null 2> "$work/walk.err" || { cat "$work/walk.err" >&2; exit 1; }
done
python3 - "$work/journal.db" "$walks" <<'PY'
import sqlite3, sys, os
path, walks = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(path)
c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
size = os.path.getsize(path)
n = c.execute("SELECT count(*) FROM transitions").fetchone()[0]
cmd, ctx, packed = c.execute(
    "SELECT sum(length(command)), sum(length(context)), sum(typeof(command) = 'blob') FROM transitions"
).fetchone()
print(f"{walks} park walks, {n} transitions: {size} bytes, {size / n:.0f} bytes per transition")
print(f"  stored command {cmd / n:.0f} B and context {ctx / n:.0f} B per transition; {packed} of {n} commands packed")
try:
    for name, pages in c.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"):
        print(f"  {name:32} {pages / n:7.0f} B per transition")
except sqlite3.OperationalError:
    print("  (this SQLite has no dbstat: no table breakdown)")
PY
