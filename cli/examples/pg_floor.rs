//! The PostgreSQL floor for "a CLI that durably records one thing": connect with the
//! same client crate cairn uses (`postgres`), insert one row with
//! `synchronous_commit=on`, print a JSON line. Run by `benches/postgres.rs`.

use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: pg_floor URL")?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let mut c = postgres::Client::connect(&url, postgres::NoTls)?;
    c.batch_execute("SET synchronous_commit = on; CREATE TABLE IF NOT EXISTS floor_rows (id bigserial PRIMARY KEY, body text NOT NULL)")?;
    let id: i64 = c
        .query_one(
            "INSERT INTO floor_rows (body) VALUES ($1) RETURNING id",
            &[&input],
        )?
        .get(0);
    println!("{{\"ok\":true,\"id\":{id}}}");
    Ok(())
}
