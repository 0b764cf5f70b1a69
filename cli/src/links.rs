//! `cairn journal links [STREAM]`: how lifecycles are linked, read from the journal.
//!
//! A link is recorded once, where one lifecycle relied on another: a decision that
//! read another stream (a saga's merge naming its ship run, a park evaluation
//! reading the bead's PR loop, an act fenced by its lease) carries that read in its
//! transition's context, hashed and signed with it. This view lists those reads —
//! which stream's transition read which stream, at what version and state, and the
//! fact it relied on — for one stream (both directions) or the whole journal, as
//! JSON, a table or a DOT graph of streams. There is no second record to drift from
//! what the decisions used.

use std::collections::BTreeMap;

use cairn::journal::{Journal, Location, Options};
use cairn::machines::Read;
use cairn::StreamId;
use schemars::JsonSchema;
use serde::Serialize;

use crate::failure::{Done, Failure};
use crate::{output, suggest};

/// `journal links --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LinksFormat {
    /// The JSON document (`cairn schema journal links`)
    Json,
    /// One row per link
    Table,
    /// Graphviz DOT: streams as nodes, an edge from each reader to what it read
    /// (`| dot -Tsvg > links.svg`)
    Dot,
}

/// `journal links --format json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Links {
    /// The stream asked about (absent: the whole journal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Every recorded read, in transition order.
    pub links: Vec<Link>,
}

/// One stream's decision that read another.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Link {
    /// The stream whose transition read (the one that relied on the other).
    pub reader: String,
    /// The command it decided.
    pub command: String,
    /// The transition that recorded the read (`cairn journal show ID`).
    pub transition_id: i64,
    /// The stream read.
    pub read: String,
    /// Its version when read (0: it did not exist, and had to stay so).
    pub version: u64,
    /// Its state's name then.
    pub state: String,
    /// The kind of fact its machine stated (`lease`, `pr-loop`, `ship`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
    /// When the transition was recorded.
    pub recorded_at: String,
}

/// `cairn journal links [STREAM]`.
pub fn links(
    db: &Location,
    options: &Options,
    stream: Option<&str>,
    format: LinksFormat,
) -> Result<Done, Failure> {
    if let Some(s) = stream {
        StreamId::parse(s)?;
    }
    let journal = Journal::open_read_only(db, options)?;
    let all = recorded_links(&journal)?;
    let links: Vec<Link> = match stream {
        None => all,
        Some(s) => {
            let touching: Vec<Link> = all
                .into_iter()
                .filter(|l| l.reader == s || l.read == s)
                .collect();
            // Nothing recorded under the name: the read verbs' one rule, unless a
            // decision read it (a stream checked absent is linked all the same).
            if touching.is_empty() {
                crate::verbs::recorded(&journal, "stream", s)
                    .map_err(|e| suggest::stream(e, &journal))?;
            }
            touching
        }
    };
    match format {
        LinksFormat::Json => output::json(&Links {
            stream: stream.map(str::to_owned),
            links,
        }),
        LinksFormat::Table => output::human(&table(&links)),
        LinksFormat::Dot => output::human(&dot(&links)),
    }
    Ok(Done::Ok)
}

/// Every read recorded in the journal's transitions, stream by stream.
fn recorded_links(journal: &Journal) -> Result<Vec<Link>, Failure> {
    let mut out = vec![];
    for info in journal.streams()? {
        for t in journal.transitions(&info.stream)? {
            // The context is hashed and signed with the transition (`journal
            // verify` checks it); one without reads, or not of this shape, links
            // nothing.
            let reads: Vec<Read> = serde_json::from_str::<serde_json::Value>(&t.context)
                .ok()
                .and_then(|c| c.get("reads").cloned())
                .and_then(|r| serde_json::from_value(r).ok())
                .unwrap_or_default();
            for r in reads {
                out.push(Link {
                    reader: t.stream.clone(),
                    command: t.command_name.clone(),
                    transition_id: t.id,
                    fact: r.fact.as_ref().map(fact_kind),
                    read: r.stream,
                    version: r.version,
                    state: r.state,
                    recorded_at: t.recorded_at.clone(),
                });
            }
        }
    }
    out.sort_by_key(|l| l.transition_id);
    Ok(out)
}

/// The fact's `kind` tag, as the recorded context spells it.
fn fact_kind(fact: &cairn::machines::Fact) -> String {
    serde_json::to_value(fact)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

fn table(links: &[Link]) -> String {
    let mut rows = vec![[
        "READER",
        "COMMAND",
        "READ",
        "VER",
        "STATE",
        "FACT",
        "TRANSITION",
        "AT",
    ]
    .map(str::to_owned)];
    for l in links {
        rows.push([
            l.reader.clone(),
            l.command.clone(),
            l.read.clone(),
            l.version.to_string(),
            l.state.clone(),
            l.fact.clone().unwrap_or_else(|| "-".into()),
            l.transition_id.to_string(),
            l.recorded_at.clone(),
        ]);
    }
    let mut out = crate::journal::table(&rows);
    if links.is_empty() {
        out.push_str("(no links)\n");
    }
    out
}

/// Streams as boxes, one edge per (reader, read) pair labelled with the commands
/// that read (parallel reads drawn once), written and escaped by petgraph.
fn dot(links: &[Link]) -> String {
    use petgraph::dot::{Config, Dot};
    use petgraph::graph::DiGraph;
    let mut g: DiGraph<String, String> = DiGraph::new();
    let mut nodes = BTreeMap::new();
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // Names read from the journal, shown visible: a line break in one would
    // otherwise reach the graph as a label's line break.
    let shown = |s: &str| crate::output::visible(s).into_owned();
    for l in links {
        let commands = edges.entry((shown(&l.reader), shown(&l.read))).or_default();
        let command = shown(&l.command);
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    for ((reader, read), commands) in edges {
        let mut node = |name: &str| {
            *nodes
                .entry(name.to_owned())
                .or_insert_with(|| g.add_node(name.to_owned()))
        };
        let (a, b) = (node(&reader), node(&read));
        g.add_edge(a, b, commands.join("\n"));
    }
    let config = [Config::GraphContentOnly];
    let none = |_, _| String::new();
    let node = |_, _| "shape=box style=rounded".to_owned();
    let body = Dot::with_attr_getters(&g, &config, &none, &node);
    format!("digraph links {{\n    rankdir=LR\n    node [fontname=\"Helvetica\" fontsize=11]\n    edge [fontname=\"Helvetica\" fontsize=9]\n{body}}}\n")
}
