//! cairn's workspace tests, one binary (one link on two cores): the journal on
//! real SQLite files and on a throwaway PostgreSQL cluster (the conformance suite
//! runs the same tests on both), the engine and its audit driven by a test-only
//! machine, property tests, and the `cairn` binary end to end with insta snapshots.

mod support;

mod build_loop;
mod cli;
mod conformance;
mod conformance_cli;
mod depth;
mod engine;
mod fuzz;
mod fuzz_specs;
mod harness;
mod idempotency;
mod journal;
mod observer;
mod park;
mod park_git;
mod park_properties;
mod park_snapshots;
mod pr_loop;
mod pr_properties;
mod properties;
mod reliability;
mod saga;
mod saga_gates;
mod saga_properties;
mod ship;
mod ship_preflight;
mod ship_properties;
mod tidy;
mod trust;
mod trust_cli;
mod work_node;
mod work_properties;
mod work_spec;
