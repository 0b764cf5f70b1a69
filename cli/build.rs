//! Links the `cairn` binary as a position-dependent executable (`-no-pie`).
//!
//! Why: a short verb is mostly process start-up. As a PIE the binary carries
//! ~32,000 relative relocations that the dynamic loader applies at every start,
//! copy-on-writing ~570 KB of relocated read-only data: about a third of the
//! page faults of `cairn --version`. Linked position-dependent, the addresses are
//! fixed at link time and the loader has almost nothing to do (docs/performance.md
//! has the measurement). The price is ASLR for the executable's own image (shared
//! libraries, heap and stack stay randomised): cairn runs as its caller, on its
//! caller's input, and holds no secret a fixed image address would expose.
//! Only the binary: the library, tests and benches link as usual.

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("linux") {
        println!("cargo:rustc-link-arg-bin=cairn=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
