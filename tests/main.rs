//! cairn's workspace tests, one binary (one link on two cores): the journal on
//! real SQLite files and on a throwaway PostgreSQL cluster (the conformance suite
//! runs the same tests on both), the engine and its audit driven by a test-only
//! machine, property tests, and the `cairn` binary end to end with insta snapshots.

mod support;

mod build_loop;
mod build_loop_criterion;
mod build_loop_preview;
mod claim;
mod claim_fence;
mod claim_gate;
mod claim_properties;
mod claim_race;
mod cli;
mod conformance;
mod conformance_claim;
mod conformance_cli;
mod conformance_reads;
mod conformance_trust;
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
mod park_helper;
mod park_helper_fold;
mod park_helper_journal;
mod park_properties;
mod park_snapshots;
mod pr_audit;
mod pr_findings;
mod pr_loop;
mod pr_merge;
mod pr_properties;
mod pr_sequences;
mod properties;
mod reads;
mod reliability;
mod saga;
mod saga_downstream;
mod saga_gates;
mod saga_mint;
mod saga_observed;
mod saga_properties;
mod saga_qa;
mod ship;
mod ship_merge;
mod ship_names;
mod ship_preflight;
mod ship_properties;
mod ship_race;
mod ship_stops;
mod tidy;
mod trust;
mod trust_cli;
mod work_confirm;
mod work_node;
mod work_properties;
mod work_rules;
mod work_spec;
