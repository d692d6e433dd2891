//! Runs shared by the candidates of one round (`--candidates K`). Prevent's runs with only a
//! change's test side applied depend on nothing else of the change, so candidates whose test
//! sides are identical (the same files with the same bytes) would make the very same runs on
//! the very same tree: the first candidate to need them makes them, the others wait for it and
//! record copies. A candidate whose numbering differs, or whose first run was stopped, makes
//! its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::evidence::CommandRecord;
use crate::patch::FileChange;

/// The runs made once: where their ids start, and the records.
type Made = Option<(usize, Vec<CommandRecord>)>;

/// The tests-only runs of a round's candidates, by test side.
#[derive(Default)]
pub(crate) struct SharedRuns {
    cells: Mutex<HashMap<Vec<u8>, Arc<OnceLock<Made>>>>,
}

impl SharedRuns {
    /// The cell holding (or about to hold) the runs of the test side `changes`.
    fn cell(&self, changes: &[FileChange]) -> Option<Arc<OnceLock<Made>>> {
        let mut cells = self.cells.lock().ok()?;
        Some(cells.entry(key(changes)).or_default().clone())
    }

    /// The records of the runs for the test side `changes` whose ids start at `first`: made by
    /// `make` (which returns its ids, `None` when stopped) if no other candidate made them, else
    /// copies of the other's. `None` when they must be made again here (`make` is then not
    /// called: the caller makes its own).
    pub(crate) fn get_or_make<E>(
        &self,
        changes: &[FileChange],
        first: usize,
        make: impl FnOnce() -> Result<Option<Vec<CommandRecord>>, E>,
    ) -> Shared<E> {
        let Some(cell) = self.cell(changes) else {
            return Shared::Absent;
        };
        let mut made_here = None;
        let made = cell.get_or_init(|| {
            let result = make();
            let records = match &result {
                Ok(Some(records)) => Some((first, records.clone())),
                _ => None,
            };
            made_here = Some(result);
            records
        });
        match (made_here, made) {
            (Some(result), _) => Shared::MadeHere(result),
            (None, Some((at, records))) if *at == first => Shared::Copied(records.clone()),
            (None, _) => Shared::Absent,
        }
    }
}

/// What [`SharedRuns::get_or_make`] gave.
pub(crate) enum Shared<E> {
    /// This candidate made the runs (the result of `make`).
    MadeHere(Result<Option<Vec<CommandRecord>>, E>),
    /// Another candidate made them: copies of its records, ids and all.
    Copied(Vec<CommandRecord>),
    /// Nothing usable: make them here.
    Absent,
}

/// Path and bytes of every change, in order: equal keys mean identical test sides.
fn key(changes: &[FileChange]) -> Vec<u8> {
    let mut key = Vec::new();
    for change in changes {
        for part in [
            Some(change.path.as_bytes()),
            change.before.as_deref(),
            change.after.as_deref(),
        ] {
            match part {
                Some(bytes) => {
                    key.extend((bytes.len() as u64).to_le_bytes());
                    key.extend(bytes);
                }
                None => key.extend(u64::MAX.to_le_bytes()),
            }
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, after: &str) -> FileChange {
        FileChange {
            path: path.to_owned(),
            before: Some(b"x\n".to_vec()),
            after: Some(after.as_bytes().to_vec()),
        }
    }

    fn record(id: usize) -> CommandRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "phase": "prevent", "purpose": "tests-only-reproduction", "round": 1,
            "command": "pytest", "policy": {"allowed": true}
        }))
        .unwrap()
    }

    #[test]
    fn identical_test_sides_share_one_making_and_different_ones_do_not() {
        let shared = SharedRuns::default();
        let side = [change("tests/test_a.py", "y\n")];
        let made = shared.get_or_make(&side, 4, || Ok::<_, ()>(Some(vec![record(4)])));
        assert!(matches!(made, Shared::MadeHere(Ok(Some(_)))));
        let copied = shared.get_or_make(&side, 4, || -> Result<_, ()> { panic!("made twice") });
        assert!(matches!(copied, Shared::Copied(records) if records[0].id == 4));
        // Another numbering, or another test side: made again.
        let renumbered = shared.get_or_make(&side, 5, || -> Result<_, ()> { panic!("called") });
        assert!(matches!(renumbered, Shared::Absent));
        let other = [change("tests/test_a.py", "z\n")];
        let made = shared.get_or_make(&other, 4, || Ok::<_, ()>(Some(vec![record(4)])));
        assert!(matches!(made, Shared::MadeHere(_)));
        // A making that was stopped is not shared.
        let stopped = [change("tests/test_b.py", "y\n")];
        let made = shared.get_or_make(&stopped, 4, || Ok::<_, ()>(None));
        assert!(matches!(made, Shared::MadeHere(Ok(None))));
        let again = shared.get_or_make(&stopped, 4, || -> Result<_, ()> { panic!("called") });
        assert!(matches!(again, Shared::Absent));
    }
}
