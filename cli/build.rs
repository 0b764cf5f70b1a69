//! Links the `cairn` binary for a short process: position-dependent, and with
//! the functions a short verb runs placed side by side.
//!
//! `-no-pie`: a short verb is mostly process start-up. As a PIE the binary
//! carries ~32,000 relative relocations that the dynamic loader applies at every
//! start, copy-on-writing ~570 KB of relocated read-only data: about a third of
//! the page faults of `cairn --version`. Linked position-dependent, the
//! addresses are fixed at link time and the loader has almost nothing to do
//! (docs/performance.md has the measurement). The price is ASLR for the
//! executable's own image (shared libraries, heap and stack stay randomised):
//! cairn runs as its caller, on its caller's input, and holds no secret a fixed
//! image address would expose.
//!
//! `--symbol-ordering-file=hot-symbols.txt`: the ~1,500 functions a durable
//! transition and the other short verbs run are spread over the 16 MB of text,
//! one page fault (and 16 pages mapped) per 64 KB window they touch, ~180 of
//! them; placed together they fill 18. The file is made by
//! `benches/hot-symbols.sh`; a name the build does not have is skipped, so a
//! stale file costs speed, never correctness. Passed only where the linker is
//! LLD, which reads the file: rustc's own LLD links x86_64 Linux from rustc
//! 1.90 on, unless the build chose another linker (`CAIRN_NO_SYMBOL_ORDER=1`
//! turns it off by hand).
//!
//! Only the binary: the library, tests and benches link as usual.

use std::env;
use std::path::Path;

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    if target.contains("linux") {
        println!("cargo:rustc-link-arg-bin=cairn=-no-pie");
    }
    if let Some(order) = linked_by_lld(&target).then(symbol_order).flatten() {
        println!(
            "cargo:rustc-link-arg-bin=cairn=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=cairn=-Wl,--no-warn-symbol-ordering");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=CAIRN_NO_SYMBOL_ORDER");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
}

/// `hot-symbols.txt` copied to a name that holds its content's hash: cargo links
/// the binary again when its link arguments change, not when a file they name
/// does, so a new list must make a new argument.
fn symbol_order() -> Option<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let dir = env::var("CARGO_MANIFEST_DIR").ok()?;
    let list = std::fs::read(Path::new(&dir).join("hot-symbols.txt")).ok()?;
    // SipHash with fixed keys: the same list gives the same name in every build.
    let mut h = std::hash::DefaultHasher::new();
    list.hash(&mut h);
    let out =
        Path::new(&env::var("OUT_DIR").ok()?).join(format!("hot-symbols-{:016x}.txt", h.finish()));
    std::fs::write(&out, list).ok()?;
    Some(out)
}

/// Whether rustc links this build with its own LLD: x86_64 Linux, rustc 1.90
/// or later, and no linker chosen by the build's flags or environment.
fn linked_by_lld(target: &str) -> bool {
    if target != "x86_64-unknown-linux-gnu" || env::var_os("CAIRN_NO_SYMBOL_ORDER").is_some() {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if ["linker", "link-self-contained", "fuse-ld"]
        .iter()
        .any(|f| flags.contains(f))
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .lines()
        .find_map(|l| l.strip_prefix("release: 1."))
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
