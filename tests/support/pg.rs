//! A throwaway PostgreSQL server for the tests: `CAIRN_TEST_PG` (a URL to a
//! server where the tests may create schemas) when given, else a cluster of our
//! own — `initdb` and `pg_ctl` in a fresh temp dir, on a Unix socket in that dir
//! only, trust auth, run as the `postgres` system user when we are root (the
//! server refuses to run as root). Started once per test binary; stopped at exit
//! by an `atexit` handler (`pg_ctl stop -m immediate`, then the dir is removed),
//! and by a watchdog process should the binary be killed. Nothing is skipped: if
//! the server binaries cannot be found, every test that needs them fails saying so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// The server the tests use.
pub struct Server {
    /// `postgresql://…/db` without query parameters (the tests add their schema).
    base: String,
    /// Ours to stop at exit (`None` for `CAIRN_TEST_PG`).
    cluster: Option<Cluster>,
}

struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    /// Run the server binaries as the `postgres` user (we are root).
    as_postgres: bool,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

/// The server, started on first use.
pub fn server() -> &'static Server {
    match SERVER.get_or_init(start) {
        Ok(s) => s,
        Err(e) => panic!("the PostgreSQL half of the conformance suite cannot run: {e}"),
    }
}

impl Server {
    /// A URL of a fresh, empty schema of its own (first on the `search_path`).
    pub fn fresh_url(&self) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let schema = format!(
            "cairn_t{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let mut c = self.admin();
        c.batch_execute(&format!("CREATE SCHEMA {schema}"))
            .expect("the test server lets us create a schema");
        self.url_of(&schema)
    }

    /// A URL of a fresh database of its own in `encoding` (the server's
    /// encoding is what `octet_length` counts in), with the `C` locale.
    pub fn fresh_database(&self, encoding: &str) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "cairn_d{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        self.admin()
            .batch_execute(&format!(
                "CREATE DATABASE {name} ENCODING '{encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
            ))
            .expect("the test server lets us create a database");
        let (path, query) = self.base.split_once('?').unwrap_or((&self.base, ""));
        let (server, _db) = path.rsplit_once('/').expect("a URL names its database");
        match query {
            "" => format!("{server}/{name}"),
            q => format!("{server}/{name}?{q}"),
        }
    }

    /// The URL of `schema` (which may not exist).
    pub fn url_of(&self, schema: &str) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{schema}", self.base)
    }

    /// A superuser-ish connection to the database (no schema set).
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.base, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connect to the test server {}: {e}", self.base))
    }
}

fn start() -> Result<Server, String> {
    if let Some(url) = std::env::var("CAIRN_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Ok(Server {
            base: url,
            cluster: None,
        });
    }
    let bin = find_bin().ok_or_else(|| {
        "the PostgreSQL server binaries (initdb, pg_ctl) are not in /usr/lib/postgresql/*/bin \
         nor on PATH: install Debian's `postgresql` package (`.ci/run` does), or set \
         CAIRN_TEST_PG=postgresql://… to a server where the tests may create schemas"
            .to_owned()
    })?;
    // SAFETY: geteuid has no preconditions.
    let as_postgres = unsafe { libc::geteuid() } == 0;
    let dir = std::env::temp_dir().join(format!(
        "cairn-pg-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if as_postgres {
        let (uid, gid) = postgres_user().ok_or(
            "we run as root and the server refuses to: there is no `postgres` system user \
             to run it as (Debian's `postgresql` package creates it)",
        )?;
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    }
    let cluster = Cluster {
        dir: dir.clone(),
        bin,
        as_postgres,
    };
    let log = dir.join("server.log");
    cluster.run(
        "initdb",
        &[
            "-D",
            &cluster.data(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ],
    )?;
    let port = free_port()?;
    let options = format!(
        "-c listen_addresses='' -c unix_socket_directories='{}' -c port={port} -c max_connections=150",
        dir.display()
    );
    let started = cluster.run(
        "pg_ctl",
        &[
            "-D",
            &cluster.data(),
            "-l",
            log.to_str().unwrap_or_default(),
            "-w",
            "-t",
            "120",
            "-o",
            &options,
            "start",
        ],
    );
    if let Err(e) = started {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!("{e}\n{log}"));
    }
    watchdog(&cluster);
    // SAFETY: registering a plain `extern "C"` function with no captured state.
    unsafe { libc::atexit(stop_at_exit) };
    Ok(Server {
        base: format!(
            "postgresql://postgres@{}:{port}/postgres",
            encode(&dir.to_string_lossy())
        ),
        cluster: Some(cluster),
    })
}

impl Cluster {
    fn data(&self) -> String {
        self.dir.join("data").to_string_lossy().into_owned()
    }

    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let out = self
            .command(tool)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

extern "C" fn stop_at_exit() {
    if let Some(Ok(Server {
        cluster: Some(c), ..
    })) = SERVER.get()
    {
        c.stop();
    }
}

/// Stops the cluster within a second of this process's end, however it ends.
fn watchdog(c: &Cluster) {
    let stop = format!(
        "{} '{}/pg_ctl' -D '{}' -m immediate stop",
        if c.as_postgres {
            "runuser -u postgres --"
        } else {
            ""
        },
        c.bin.display(),
        c.data()
    );
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; if [ -d '{dir}' ]; then {stop}; rm -rf '{dir}'; fi",
        pid = std::process::id(),
        dir = c.dir.display(),
    );
    // Detached from our pipes, so `cargo test` does not wait for it.
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// `/usr/lib/postgresql/<newest>/bin`, else the directory of `pg_ctl` on PATH.
fn find_bin() -> Option<PathBuf> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, d)| has_tools(d))
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return Some(d);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| has_tools(d)).map(|d| {
            std::fs::canonicalize(d.join("pg_ctl"))
                .ok()
                .and_then(|c| c.parent().map(Path::to_owned))
                .unwrap_or(d)
        })
    })
}

fn postgres_user() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("postgres").ok()?;
    // SAFETY: getpwnam returns a pointer to static storage or null; we copy two
    // integers out immediately, before any other call could overwrite it.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// Percent-encodes a socket directory for the URL's host part.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}
