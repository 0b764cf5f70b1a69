//! `saga review --from` against a build loop that keeps handing revisions, on
//! real processes: the reviewed SHA the CLI takes from the loop can be stale by
//! the time the decision reads the loop itself. The CLI reads the loop again and
//! decides again (found: losing that race exited 2, `journal-agrees`, as if the
//! caller had typed a wrong SHA, when nothing the caller typed was wrong).

use crate::support::saga::Thread;

#[test]
fn a_review_by_reference_never_blames_the_caller_for_a_loop_that_moved() {
    let t = Thread::new();
    t.reviewed("accepted");
    let done = std::sync::atomic::AtomicBool::new(false);
    let (handed, reviews) = std::thread::scope(|s| {
        let loop_side = s.spawn(|| {
            let mut handed = 0;
            for i in 0..40 {
                t.commit(&format!("f{i}.txt"));
                let (code, out) = t.build_loop(&[]);
                assert_eq!(code, 0, "the build loop goes green: {out}");
                handed += 1;
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            handed
        });
        let mut reviews = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let (code, out) = t.s(
                "review",
                &["--outcome", "accepted", "--from", "build-loop/issue-42:U1"],
            );
            // Exit 3 is a lost append (the loop moved after the decision read
            // it): the caller retries. Never 2: the caller typed nothing wrong.
            assert!(matches!(code, 0 | 3), "{out}");
            reviews += 1;
        }
        (loop_side.join().expect("the loop side"), reviews)
    });
    assert_eq!(handed, 40);
    assert!(reviews > 10, "the review side ran {reviews} times");
}
