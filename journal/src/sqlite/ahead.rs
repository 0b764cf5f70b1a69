//! Reading ahead in the verify walk: the walk asks for transition records and
//! signatures by id, in the order their events come, which for a sound journal
//! is the order of their ids. One page query per [`PAGE`] rows replaces a point
//! query per transition (measured: a 1M-transition journal's verify spent a
//! quarter of its time on those lookups). An id asked out of order, or a page
//! that cannot be read, is the caller's point query: what the walk sees is the
//! same either way, in the same read transaction.

use std::collections::VecDeque;

/// Rows per page: small enough that a page of large commands (a ship report
/// with its git runs) stays a few megabytes. A page may also end early (the
/// transition records' page ends at [`PAGE_BYTES`] decompressed).
pub(super) const PAGE: i64 = 128;

/// Where a page of transition records ends, counting each record's command and
/// context as decompressed: the fetch bound every store keeps.
pub(super) const PAGE_BYTES: usize = crate::store::FETCH_BYTES;

/// What the pages say of one id.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen<T> {
    Found(T),
    /// No such row: the pages ran past the id (or ended) without it.
    Absent,
    /// The pages cannot tell (an id asked out of order, or a page that could
    /// not be read): the caller asks the store.
    Ask,
}

/// Rows with ids above `after`, fetched a page at a time.
pub(super) struct Ahead<T> {
    buf: VecDeque<T>,
    /// The last id fetched.
    after: i64,
    /// The last id asked: rows below it may have been passed over.
    asked: i64,
    /// No page follows the last: it was short.
    ended: bool,
    /// A page could not be read.
    failed: bool,
}

impl<T> Ahead<T> {
    pub(super) fn new() -> Self {
        Self {
            buf: VecDeque::new(),
            after: 0,
            asked: 0,
            ended: false,
            failed: false,
        }
    }

    /// The row with id `id`, from the pages `page(after, limit)` returns (rows
    /// with ids above `after`, by id, at most `limit`, and whether more may
    /// follow: a page may end before `limit`).
    pub(super) fn take<E>(
        &mut self,
        id: i64,
        key: impl Fn(&T) -> i64,
        mut page: impl FnMut(i64, i64) -> Result<(Vec<T>, bool), E>,
    ) -> Seen<T> {
        if id <= self.asked || self.failed {
            return Seen::Ask;
        }
        self.asked = id;
        loop {
            while self.buf.front().is_some_and(|row| key(row) < id) {
                self.buf.pop_front();
            }
            match self.buf.pop_front() {
                Some(row) if key(&row) == id => return Seen::Found(row),
                Some(row) => {
                    self.buf.push_front(row);
                    return Seen::Absent;
                }
                None if self.ended => return Seen::Absent,
                None => match page(self.after, PAGE) {
                    Ok((rows, more)) => {
                        self.ended = !more;
                        if let Some(last) = rows.last() {
                            self.after = key(last);
                        }
                        self.buf.extend(rows);
                    }
                    Err(_) => {
                        self.failed = true;
                        return Seen::Ask;
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(rows: &[i64]) -> impl FnMut(i64, i64) -> Result<(Vec<i64>, bool), ()> + '_ {
        cut_pages(rows, usize::MAX)
    }

    /// Pages that end after `cut` rows (as a page of large records ends early),
    /// saying that more follow.
    fn cut_pages(
        rows: &[i64],
        cut: usize,
    ) -> impl FnMut(i64, i64) -> Result<(Vec<i64>, bool), ()> + '_ {
        move |after, n| {
            let page: Vec<i64> = rows
                .iter()
                .copied()
                .filter(|r| *r > after)
                .take((n as usize).min(cut))
                .collect();
            let more = page.len() == n as usize || page.len() == cut;
            Ok((page, more))
        }
    }

    #[test]
    fn in_order_ids_are_found_or_absent_and_others_are_asked() {
        let rows: Vec<i64> = (1..=300).filter(|i| i % 7 != 0).collect();
        let mut a = Ahead::new();
        assert_eq!(a.take(1, |r| *r, pages(&rows)), Seen::Found(1));
        assert_eq!(a.take(3, |r| *r, pages(&rows)), Seen::Found(3));
        assert_eq!(a.take(7, |r| *r, pages(&rows)), Seen::Absent);
        // Backwards: rows may have been passed over, so the store answers.
        assert_eq!(a.take(2, |r| *r, pages(&rows)), Seen::Ask);
        assert_eq!(a.take(140, |r| *r, pages(&rows)), Seen::Absent);
        assert_eq!(a.take(200, |r| *r, pages(&rows)), Seen::Found(200));
        assert_eq!(a.take(299, |r| *r, pages(&rows)), Seen::Found(299));
        assert_eq!(a.take(301, |r| *r, pages(&rows)), Seen::Absent);
    }

    #[test]
    fn an_unreadable_page_hands_every_later_id_to_the_store() {
        let mut a: Ahead<i64> = Ahead::new();
        assert_eq!(
            a.take(1, |r| *r, |_, _| Err::<(Vec<i64>, bool), _>(())),
            Seen::Ask
        );
        let rows = [1, 2, 3];
        assert_eq!(a.take(2, |r| *r, pages(&rows)), Seen::Ask);
    }

    proptest::proptest! {
        /// Whatever ids are asked in whatever order, a page's answer is the
        /// store's: found when the row exists, absent when it does not.
        #[test]
        fn the_pages_never_contradict_the_store(
            rows in proptest::collection::btree_set(1i64..600, 0..400),
            asks in proptest::collection::vec(-3i64..610, 0..200),
            cut in 1usize..200,
        ) {
            let rows: Vec<i64> = rows.into_iter().collect();
            let mut a = Ahead::new();
            for id in asks {
                match a.take(id, |r| *r, cut_pages(&rows, cut)) {
                    Seen::Found(r) => proptest::prop_assert!(r == id && rows.contains(&id)),
                    Seen::Absent => proptest::prop_assert!(!rows.contains(&id)),
                    Seen::Ask => {}
                }
            }
        }
    }
}
