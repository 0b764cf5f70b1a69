//! `ship`: the worktree ship pipeline (seed `004_ca58b56f5390770e`). So far its
//! preflight classifier; the pipeline machine itself (phases, gates, resume, failure
//! recovery) is issue #7's remaining work.

pub mod preflight;
