#!/usr/bin/env bash
# Regenerates docs/graphs/<machine>.dot and .svg for every machine `cairn machines`
# lists: the DOT exactly as `cairn graph <machine> --format dot` prints it (a test,
# tests/graphs.rs, holds the committed .dot files to that), the SVG drawn from it by
# Graphviz's `dot`.
#
#   docs/graphs/render.sh                    # builds and runs this checkout's cairn
#   CAIRN=path/to/cairn docs/graphs/render.sh
#
# Needs graphviz (`dot`) and jq.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${CAIRN:-}" ]; then
  cargo build -q -p cairn-cli --bin cairn --manifest-path "$here/../../Cargo.toml"
  target=$(cargo metadata -q --format-version 1 --no-deps --manifest-path "$here/../../Cargo.toml" | jq -r .target_directory)
  CAIRN=$target/debug/cairn
fi
rm -f "$here"/*.dot "$here"/*.svg
for m in $("$CAIRN" machines | jq -r '.machines[].name'); do
  "$CAIRN" graph "$m" --format dot > "$here/$m.dot"
  dot -Tsvg "$here/$m.dot" > "$here/$m.svg"
  echo "docs/graphs/$m.svg"
done
