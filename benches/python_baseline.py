#!/usr/bin/env python3
"""What the seeds' helper scripts cost: read one JSON object, check a few fields,
append a row with sqlite3 (WAL, synchronous=FULL), print JSON. Python 3 stdlib only."""
import json
import sqlite3
import sys

doc = json.load(sys.stdin)
for key in ("schema_version", "protocol_phase", "pr_backed", "bead", "checks"):
    if key not in doc:
        print(json.dumps({"error": f"missing {key}"}), file=sys.stderr)
        sys.exit(2)
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
with db:
    cur = db.execute("INSERT INTO rows (body) VALUES (?)", (json.dumps(doc),))
print(json.dumps({"ok": True, "id": cur.lastrowid}, sort_keys=True))
