//! Whether the bundled SQLite this build links has `SQLITE_ENABLE_SNAPSHOT`
//! (libsqlite3-sys compiles it with the flags in `LIBSQLITE3_FLAGS`; this
//! workspace sets them in `.cargo/config.toml`). Without it the snapshot
//! functions are not in the library, so the code that calls them is left out
//! (`cfg(cairn_wal_snapshot)`) and `verify` checks the structure in line.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(cairn_wal_snapshot)");
    println!("cargo:rerun-if-env-changed=LIBSQLITE3_FLAGS");
    let flags = std::env::var("LIBSQLITE3_FLAGS").unwrap_or_default();
    if flags.split_whitespace().any(|f| {
        matches!(
            f,
            "SQLITE_ENABLE_SNAPSHOT" | "-DSQLITE_ENABLE_SNAPSHOT" | "-DSQLITE_ENABLE_SNAPSHOT=1"
        )
    }) {
        println!("cargo:rustc-cfg=cairn_wal_snapshot");
    }
}
