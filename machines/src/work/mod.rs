//! `work-node`: the work-execution seed (`001_3153f5e4699cf4ee`). So far: the
//! workspec (YAML reading, schema, ids, dependencies, lints, addresses) and the
//! lifecycle / ready-set computation, and the node machine (`node`).

pub mod amend;
pub mod node;
pub mod ready;
pub mod spec;
mod verdict;
pub mod yaml;
