#!/usr/bin/env bash
# Regenerates cli/hot-symbols.txt: every function of the `cairn` binary that the
# short verbs run (a durable `park evaluate`, `park prepare-attempt`, `park
# check`, `state` of a stream, `--version`), in the order callgrind first lists
# them. cli/build.rs hands the file to the linker, which places those functions
# side by side: they then span 18 windows of 64 KB of text instead of ~180
# (docs/performance.md). A name the build no longer has is skipped by the
# linker, so a stale file costs speed, never correctness; regenerate it after a
# toolchain or dependency update.
#
#   benches/hot-symbols.sh      (needs valgrind; builds the release binary)
# CI's smoke: CAIRN_BENCH_PROFILE=dev CAIRN_HOT_SYMBOLS_OUT=<file> (the list of
# the dev build, written elsewhere: it proves the script runs).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { echo "benches/hot-symbols.sh needs valgrind" >&2; exit 1; }
. benches/setup-cli.sh
runs=${CAIRN_CALLGRIND_DIR:-$work/callgrind}
mkdir -p "$runs"
n=0
grind() {
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$runs/$n.out" "$@" > /dev/null 2>&1 || true
}
fresh() { cp "$work/template/cairn.db" "$work/cairn.db"; rm -f "$work"/cairn.db-*; }
fresh
grind "$C" --db "$work/cairn.db" park evaluate --episode-id "$ep" --intent-id "$intent" \
  --attempt-id "$attempt" < "$work/observation.json"
grind "$C" park check < "$work/observation.json"
fresh
grind "$C" --db "$work/cairn.db" state "park/$ep"
fresh
printf '{"mode":"park","anchor_bead":"rsry-42","episode_id":"%s","intent_id":"%s","prior_receipts":[]}' "$ep" "$intent" \
  > "$work/prepare.json"
grind "$C" --db "$work/cairn.db" park prepare-attempt < "$work/prepare.json"
grind "$C" --version
list=${CAIRN_HOT_SYMBOLS_OUT:-cli/hot-symbols.txt}
/usr/bin/python3 - "$runs" "$C" > "$list" <<'PY'
# Every function with a cost line of its own in the binary's object, in the
# order the runs first list them. Names and objects are compressed: `fn=(12)
# name` names id 12 once (or `cfn=`/`cob=` do, as callees), then `fn=(12)` reuses
# it; a function's object is the `ob=` in force where its own `fn=` block starts.
import re, sys, pathlib
runs, binary = pathlib.Path(sys.argv[1]), sys.argv[2]
seen, order = set(), []
for out in sorted(runs.glob("*.out"), key=lambda p: int(p.stem)):
    names, objects, ob = {}, {}, None
    for line in out.read_text(errors="replace").splitlines():
        m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line)
        if not m:
            continue
        kind, i, name = m.groups()
        if kind in ("ob", "cob"):
            if name:
                objects[i] = name
            if kind == "ob":
                ob = objects.get(i)
            continue
        if name:
            names[i] = re.sub(r"'\d+$", "", name)
        name = names.get(i)
        if kind == "fn" and ob == binary and name and not name.startswith(("0x", "(")):
            if name not in seen:
                seen.add(name)
                order.append(name)
print("\n".join(order))
PY
echo "$list: $(wc -l < "$list") functions" >&2
# An empty list means the runs found nothing of the binary: fail, never commit it.
[ -s "$list" ]
