#!/usr/bin/env bash
# Each process's own CPU, one process at a time: `perf stat -e task-clock,page-faults`
# on one durable `cairn park evaluate` and on the floor (a minimal Rust binary that
# inserts one row durably), each run on a fresh copy of the same templates as
# benches/cli.sh. hyperfine's wall-clock ratio on this VM moves with the fsync wait;
# both processes wait for the same fsyncs, so this is the gap that is cairn's own.
#
#   benches/cpu.sh [RUNS]     (default 60; needs `perf`, e.g. Debian's linux-perf)
# Prints the median (and min) task-clock and the median page faults of each.
#
#   CAIRN_CPU_AGAINST=/path/to/another/cairn benches/cpu.sh [RUNS]
# Runs that binary (an older build, say) in place of the floor, one run of each
# in turn on the same templates, so a slow minute of the VM weighs on both: the
# way to tell a change of cairn's from a change of the VM's. Compare binaries
# made the same way (each linked by cargo): a `cp` of the same binary measured
# ~0.8 ms and ~90 page faults apart from its original (helper-93), as the page
# cache holds the two files differently.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-60}
command -v perf >/dev/null 2>&1 || { echo "benches/cpu.sh needs perf (linux-perf)" >&2; exit 1; }
. benches/setup-cli.sh
in=$work/observation.json
against=${CAIRN_CPU_AGAINST:-}
evaluate() {
  perf stat -x, -e task-clock,page-faults -o "$work/one" \
    "$1" --db "$work/cairn.db" park evaluate --episode-id "$ep" --intent-id "$intent" \
    --attempt-id "$attempt" < "$in" > /dev/null 2>&1
}
one() {
  cp "$work/template/cairn.db" "$work/cairn.db"
  cp "$work/template/floor.db" "$work/floor.db"
  rm -f "$work"/cairn.db-* "$work"/floor.db-*
  case $1 in
    cairn) evaluate "$C" ;;
    against) evaluate "$against" ;;
    floor) perf stat -x, -e task-clock,page-faults -o "$work/one" "$FLOOR" "$work/floor.db" < "$in" > /dev/null ;;
  esac
  grep -v '^#' "$work/one" | grep -v '^$' | cut -d, -f1 | paste -sd' ' >> "$work/$1.stat"
}
if [ -n "$against" ]; then
  case $against in /*) ;; *) against=$PWD/$against ;; esac
  [ -x "$against" ] || { echo "benches/cpu.sh: CAIRN_CPU_AGAINST=$against is not an executable" >&2; exit 2; }
  # One untimed run of each, its error shown: a binary that cannot evaluate
  # on these templates (an older schema, a bad path) is named, not timed.
  for bin in "$C" "$against"; do
    cp "$work/template/cairn.db" "$work/cairn.db"; rm -f "$work"/cairn.db-*
    "$bin" --db "$work/cairn.db" park evaluate --episode-id "$ep" --intent-id "$intent" \
      --attempt-id "$attempt" < "$in" > /dev/null 2> "$work/err" \
      || { cat "$work/err" >&2; echo "benches/cpu.sh: $bin failed the evaluation above" >&2; exit 1; }
  done
  : > "$work/cairn.stat"; : > "$work/against.stat"
  for _ in $(seq 1 "$runs"); do one against; one cairn; done
  other=against; label="$against park evaluate (durable)"
else
  for who in cairn floor; do
    : > "$work/$who.stat"
    for _ in $(seq 1 "$runs"); do one "$who"; done
  done
  other=floor; label=floor
fi
python3 - "$work/cairn.stat" "$work/$other.stat" "$label" <<'PY'
import statistics, sys
def read(p):
    rows = [l.split() for l in open(p) if l.strip()]
    return [float(r[0]) for r in rows], [float(r[1]) for r in rows]
(ct, cf), (ft, ff) = read(sys.argv[1]), read(sys.argv[2])
for name, t, f in (("cairn park evaluate (durable)", ct, cf), (sys.argv[3], ft, ff)):
    print(f"{statistics.median(t):6.2f} ms task-clock median (min {min(t):.2f})  {statistics.median(f):4.0f} page faults  {name}")
print(f"cairn - {'the other' if sys.argv[3] != 'floor' else 'floor'}: {statistics.median(ct) - statistics.median(ft):.2f} ms of CPU")
PY
