//! Graph-driven exploration (the XState model-based-testing idea, over the real
//! `decide`): from the initial state, try every step of an alphabet in every state
//! reached, breadth first, and keep for each declared state and edge the shortest
//! step sequence that reaches it. Pure: decide and evolve only, with the harness's
//! deterministic contexts, so the sequences found replay the same way through the
//! journal-backed engine (`cairn::testing`).
//!
//! States are told apart by their JSON with the contexts' times and fresh ids
//! blanked (a state reached at step 3 and the same state reached at step 5 are one
//! state), so loops are walked once per distinct state and a budget bounds the rest.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::coverage::{Coverage, Edge};
use crate::{Context, Machine, Timestamp};

/// The context of the `step`-th command of a harness sequence: one minute per step
/// from 2026-01-01 (with a sub-second part, as a real clock has), fresh ids
/// numbered by step, and the given session.
pub fn context(step: usize, fresh_ids: usize, session: Option<&str>) -> Context {
    let base = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .expect("a fixed RFC3339 literal parses");
    Context {
        now: Timestamp::from_instant(
            base + chrono::Duration::minutes(step as i64)
                + chrono::Duration::nanoseconds(123_456_789),
        ),
        fresh_ids: (0..fresh_ids)
            .map(|k| uuid::Uuid::from_u128(((step as u128) << 32) + k as u128 + 1))
            .collect(),
        session: session.map(str::to_owned),
        reads: Vec::new(),
        scans: Vec::new(),
        fencing_token: None,
    }
}

/// A check of one state: `Err` says what is wrong.
pub type Check<S> = dyn Fn(&S) -> Result<(), String>;

/// How a search tells states apart.
pub type Key<S> = dyn Fn(&S) -> String;

/// A domain property of a machine's states, checked by the harness on every state a
/// sequence reaches (or on each sequence's final state): `Err` says what is wrong.
pub struct Property<S> {
    /// A name for the report.
    pub name: String,
    /// The check.
    pub check: Box<Check<S>>,
}

impl<S> Property<S> {
    /// A property named `name`.
    pub fn new(name: &str, check: impl Fn(&S) -> Result<(), String> + 'static) -> Self {
        Self {
            name: name.to_owned(),
            check: Box::new(check),
        }
    }
}

/// Why a harness failed, told apart so a bug in the test's own code is never
/// reported as a broken cairn invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The test's own code (its step-to-command function, a property's closure,
    /// the step generator) panicked.
    UserPanic {
        /// Which code: `to_command`, the property `name`, the step generator.
        what: String,
        /// Where: the step and the state it met.
        place: String,
        /// The panic's message.
        message: String,
    },
    /// A universal invariant broke (decide or evolve panicked, an event off the
    /// graph, the journal disagreeing with the fold, …).
    Invariant(String),
    /// A property the test declared does not hold.
    Property {
        /// The property.
        name: String,
        /// Where: the step and the state.
        place: String,
        /// What the property said.
        message: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::UserPanic {
                what,
                place,
                message,
            } => write!(
                f,
                "the test's own {what} panicked ({place}): {message} — a bug in the test's code, not a broken cairn invariant"
            ),
            Failure::Invariant(m) => write!(f, "broke a universal invariant: {m}"),
            Failure::Property {
                name,
                place,
                message,
            } => write!(f, "broke the property `{name}` ({place}): {message}"),
        }
    }
}

/// Runs `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-text payload".into())
    })
}

/// Checks every property on `state`; `place` says where, for the report.
pub fn check_properties<M: Machine>(
    properties: &[Property<M::State>],
    state: &M::State,
    place: impl Fn() -> String,
) -> Result<(), Failure> {
    for p in properties {
        match catch(|| (p.check)(state)) {
            Ok(Ok(())) => {}
            Ok(Err(message)) => {
                return Err(Failure::Property {
                    name: p.name.clone(),
                    place: format!("{}, state `{}`", place(), M::state_name(state)),
                    message,
                })
            }
            Err(message) => {
                return Err(Failure::UserPanic {
                    what: format!("property `{}`", p.name),
                    place: format!("{}, state `{}`", place(), M::state_name(state)),
                    message,
                })
            }
        }
    }
    Ok(())
}

/// What an exploration found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// What the pure exploration reached (counts are of decisions, not of runs).
    pub coverage: Coverage,
    /// Step sequences (indices into the alphabet) that together reach every state
    /// and take every edge the exploration reached, shortest first found, none a
    /// prefix of another.
    pub paths: Vec<Vec<usize>>,
    /// The states expanded.
    pub expanded: usize,
    /// False when the budget ran out before the search did.
    pub exhaustive: bool,
}

/// An exploration of `M` over an alphabet of steps.
pub struct Explorer<'a, M: Machine, P> {
    /// The steps to try in every state.
    pub alphabet: &'a [P],
    /// The test's step-to-command function.
    pub to_command: &'a dyn Fn(&M::State, &P) -> M::Command,
    /// Properties every reached state must keep.
    pub properties: &'a [Property<M::State>],
    /// The session every context carries.
    pub session: Option<&'a str>,
    /// At most this many distinct states are expanded.
    pub max_states: usize,
    /// Edges the test names unreachable by design: the search stops once every
    /// other edge is taken.
    pub unreachable: &'a [Edge],
    /// How the search tells states apart, when the test says (states with the same
    /// key are expanded once); by default, the state's JSON with the contexts'
    /// times and fresh ids blanked.
    pub key: Option<&'a Key<M::State>>,
}

struct Node<S> {
    state: S,
    parent: Option<(usize, usize)>,
    depth: usize,
}

impl<M: Machine, P: fmt::Debug> Explorer<'_, M, P> {
    /// Explores until every declared edge (save the named ones) is taken, no new
    /// state appears, or `max_states` states were expanded. States reached by an
    /// edge not taken before are expanded first; the others by state name, the
    /// name expanded least so far first (each name's queue breadth first), so a
    /// budget spent on one corner of a large state space still leaves the search
    /// reaching past it.
    pub fn run(&self) -> Result<Exploration, Failure> {
        let graph = M::graph();
        let mut coverage = Coverage::new(&graph);
        let initial = M::initial_state();
        check_properties::<M>(self.properties, &initial, || "the initial state".into())?;
        coverage.state(M::state_name(&initial));
        let mut nodes = vec![Node {
            state: initial,
            parent: None,
            depth: 0,
        }];
        let mut seen: HashSet<String> = HashSet::new();
        seen.insert(self.key(&nodes[0].state, 0));
        let mut reached: BTreeMap<Edge, usize> = BTreeMap::new();
        let wanted = coverage
            .edges
            .keys()
            .filter(|e| !self.unreachable.contains(e))
            .count();
        let mut novel = VecDeque::from([0usize]);
        // The other new states, queued by state name: the next comes from the name
        // expanded least so far, so no corner of the state space takes the budget.
        let mut rest: BTreeMap<&'static str, VecDeque<usize>> = BTreeMap::new();
        let mut by_name: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut expanded = 0;
        let mut exhaustive = true;
        let next_rest = |rest: &mut BTreeMap<&'static str, VecDeque<usize>>,
                         by_name: &BTreeMap<&'static str, usize>| {
            let name = *rest
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .min_by_key(|(name, _)| by_name.get(*name).copied().unwrap_or(0))?
                .0;
            rest.get_mut(name).and_then(VecDeque::pop_front)
        };
        while let Some(n) = novel.pop_front().or_else(|| next_rest(&mut rest, &by_name)) {
            let taken = reached
                .keys()
                .filter(|e| !self.unreachable.contains(e))
                .count();
            if taken == wanted {
                break;
            }
            if expanded >= self.max_states {
                exhaustive = false;
                break;
            }
            expanded += 1;
            *by_name.entry(M::state_name(&nodes[n].state)).or_insert(0) += 1;
            let depth = nodes[n].depth;
            let ctx = context(depth, M::FRESH_IDS, self.session);
            for (k, step) in self.alphabet.iter().enumerate() {
                let place = || format!("step {depth} ({step:?})");
                let state = &nodes[n].state;
                let command = catch(|| (self.to_command)(state, step)).map_err(|message| {
                    Failure::UserPanic {
                        what: "to_command".into(),
                        place: format!("{}, state `{}`", place(), M::state_name(state)),
                        message,
                    }
                })?;
                let decided = catch(|| M::decide(state, &command, &ctx)).map_err(|m| {
                    Failure::Invariant(format!(
                        "{}: decide panicked in state `{}` on {command:?}: {m}",
                        place(),
                        M::state_name(state)
                    ))
                })?;
                let events = match decided {
                    Ok(events) => events,
                    Err(rejection) => {
                        for v in &rejection.violations {
                            coverage.rejection(&rejection.command, &v.predicate);
                        }
                        continue;
                    }
                };
                if events.is_empty() {
                    continue;
                }
                let mut next = state.clone();
                let mut new_edges = vec![];
                for e in &events {
                    let from = M::state_name(&next);
                    next = catch(|| M::evolve(next, e)).map_err(|m| {
                        Failure::Invariant(format!("{}: evolve panicked on {e:?}: {m}", place()))
                    })?;
                    let to = M::state_name(&next);
                    let event = M::event_name(e);
                    if !graph.has_edge(from, event, to) {
                        return Err(Failure::Invariant(format!(
                            "{}: `{event}` from `{from}` to `{to}` is not an edge of the graph",
                            place()
                        )));
                    }
                    check_properties::<M>(self.properties, &next, place)?;
                    coverage.edge(from, event, to);
                    if !reached.contains_key(&(from, event, to)) {
                        new_edges.push((from, event, to));
                    }
                }
                let new_state = seen.insert(self.key(&next, depth + 1));
                let found_edge = !new_edges.is_empty();
                if new_state || found_edge {
                    nodes.push(Node {
                        state: next,
                        parent: Some((n, k)),
                        depth: depth + 1,
                    });
                    let child = nodes.len() - 1;
                    for e in new_edges {
                        reached.insert(e, child);
                    }
                    match (new_state, found_edge) {
                        (true, true) => novel.push_back(child),
                        (true, false) => rest
                            .entry(M::state_name(&nodes[child].state))
                            .or_default()
                            .push_back(child),
                        (false, _) => {}
                    }
                }
            }
        }
        let path = |mut n: usize| {
            let mut steps = vec![];
            while let Some((parent, k)) = nodes[n].parent {
                steps.push(k);
                n = parent;
            }
            steps.reverse();
            steps
        };
        let mut paths: Vec<Vec<usize>> = reached.values().map(|n| path(*n)).collect();
        paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
        let mut kept: Vec<Vec<usize>> = vec![];
        for p in paths {
            if !kept.iter().any(|k| k.starts_with(&p)) {
                kept.push(p);
            }
        }
        kept.reverse();
        Ok(Exploration {
            coverage,
            paths: kept,
            expanded,
            exhaustive,
        })
    }

    /// The state's identity for the search: the test's key (beside the state's
    /// name), else its JSON with the times and fresh ids of the contexts up to
    /// `depth` blanked.
    fn key(&self, state: &M::State, depth: usize) -> String {
        if let Some(key) = self.key {
            return format!("{}\n{}", M::state_name(state), key(state));
        }
        let mut text = serde_json::to_string(state)
            .unwrap_or_else(|e| format!("{}: unencodable: {e}", M::state_name(state)));
        for i in 0..=depth {
            let ctx = context(i, M::FRESH_IDS, self.session);
            text = text.replace(ctx.now.as_str(), "<now>");
            for id in &ctx.fresh_ids {
                text = text.replace(&id.to_string(), "<id>");
            }
        }
        text
    }
}
