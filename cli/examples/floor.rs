//! The floor for "a CLI that durably records one thing": open the SQLite file, insert
//! one row with `synchronous=FULL` in WAL mode, print a JSON line. Built by
//! `benches/cli.sh` to measure cairn's whole-process cost against.

use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: floor DB")?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let c = rusqlite::Connection::open(path)?;
    c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    c.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL);")?;
    c.execute("INSERT INTO rows (body) VALUES (?1)", [&input])?;
    println!("{{\"ok\":true,\"id\":{}}}", c.last_insert_rowid());
    Ok(())
}
