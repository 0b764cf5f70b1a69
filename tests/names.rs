//! Every built-in's state, event and command names are its serde tags: the names
//! `#[derive(Names)]` reads from the serde attributes equal serde's own list of
//! variants, in order, and every graph names only those (ship's eight journal
//! names apart, listed in `ship::JOURNAL_NAMES`, and work-node's review, recorded
//! by its verdict: `work::node::REVIEW_NAMES`). The states of ship, saga and
//! build-loop are named from their data, not a tag; the harness pins those (a
//! state the graph does not declare fails it).

use cairn::machines::testing::assert_serde_names;
use cairn::machines::{build_loop, park, pr_loop, saga, ship, work, GraphSpec};
use cairn::Machine;

#[test]
fn derived_names_are_the_serde_tags() {
    assert_serde_names::<park::State>(Some("state"), park::State::VARIANT_NAMES);
    assert_serde_names::<park::Event>(Some("type"), park::Event::VARIANT_NAMES);
    assert_serde_names::<park::Command>(Some("command"), park::Command::VARIANT_NAMES);
    assert_serde_names::<pr_loop::State>(Some("state"), pr_loop::State::VARIANT_NAMES);
    assert_serde_names::<pr_loop::Event>(Some("type"), pr_loop::Event::VARIANT_NAMES);
    assert_serde_names::<pr_loop::Command>(Some("command"), pr_loop::Command::VARIANT_NAMES);
    assert_serde_names::<work::node::State>(Some("stage"), work::node::State::VARIANT_NAMES);
    assert_serde_names::<work::node::Event>(Some("type"), work::node::Event::VARIANT_NAMES);
    assert_serde_names::<work::node::Command>(Some("command"), work::node::Command::VARIANT_NAMES);
    assert_serde_names::<saga::Event>(Some("type"), saga::Event::VARIANT_NAMES);
    assert_serde_names::<saga::Command>(Some("command"), saga::Command::VARIANT_NAMES);
    assert_serde_names::<build_loop::Event>(Some("type"), build_loop::Event::VARIANT_NAMES);
    assert_serde_names::<build_loop::Command>(Some("command"), build_loop::Command::VARIANT_NAMES);
    assert_serde_names::<ship::Event>(Some("type"), ship::Event::VARIANT_NAMES);
    assert_serde_names::<ship::Command>(Some("command"), ship::Command::VARIANT_NAMES);
}

/// Every event and state the graph names is one the machine has.
fn graph_names(graph: &GraphSpec, events: &[&str], states: Option<&[&str]>) {
    for e in &graph.edges {
        assert!(
            events.contains(&e.event),
            "{}: the edge label `{}` is no event name",
            graph.machine,
            e.event
        );
    }
    if let Some(states) = states {
        let declared: Vec<&str> = graph.states.iter().map(|s| s.name).collect();
        assert_eq!(declared.len(), states.len(), "{}", graph.machine);
        for s in states {
            assert!(
                declared.contains(s),
                "{}: `{s}` is not declared",
                graph.machine
            );
        }
    }
}

#[test]
fn graphs_name_only_derived_names() {
    use cairn::machines::build_loop::BuildLoop;
    use cairn::machines::park::Park;
    use cairn::machines::pr_loop::PrLoop;
    use cairn::machines::saga::Saga;
    use cairn::machines::ship::Ship;
    use cairn::machines::work::node::WorkNode;
    graph_names(
        &Park::graph(),
        park::Event::VARIANT_NAMES,
        Some(park::State::VARIANT_NAMES),
    );
    graph_names(
        &PrLoop::graph(),
        pr_loop::Event::VARIANT_NAMES,
        Some(pr_loop::State::VARIANT_NAMES),
    );
    // work-node: serde's tags, a review recorded by its verdict.
    let work_events: Vec<&str> = work::node::Event::VARIANT_NAMES
        .iter()
        .copied()
        .filter(|n| *n != "review-recorded")
        .chain(work::node::REVIEW_NAMES)
        .collect();
    assert!(work::node::Event::VARIANT_NAMES.contains(&"review-recorded"));
    graph_names(
        &WorkNode::graph(),
        &work_events,
        Some(work::node::State::VARIANT_NAMES),
    );
    graph_names(&Saga::graph(), saga::Event::VARIANT_NAMES, None);
    graph_names(&BuildLoop::graph(), build_loop::Event::VARIANT_NAMES, None);
    // ship: serde's tags, save the eight whose journal name differs.
    let journal: Vec<&str> = ship::Event::VARIANT_NAMES
        .iter()
        .map(|tag| {
            ship::JOURNAL_NAMES
                .iter()
                .find(|(serde, _)| serde == tag)
                .map_or(*tag, |(_, journal)| journal)
        })
        .collect();
    for (serde, _) in ship::JOURNAL_NAMES {
        assert!(ship::Event::VARIANT_NAMES.contains(&serde), "{serde}");
    }
    graph_names(&Ship::graph(), &journal, None);
}
