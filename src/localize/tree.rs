//! The repository as one localization sees it: the tracked files, the path index, the
//! source index, and a small bounded cache of the few files read whole (failing test files,
//! the modules they import, `package.json`, `tsconfig.json`, `Cargo.toml`, `go.mod`).
//!
//! The source index reads every tracked source file, so it is built only when a search
//! must cover the whole repository (a name no import leads to, a test name the output does
//! not place), and then once: a failure whose output and imports lead straight to the code
//! costs reads of those few files only, however large the repository.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use super::defs::{DefKind, Lang, definition, test_title};
use super::index::{MAX_FILE_BYTES, SourceIndex};
use super::resolve::PathIndex;

/// At most this many files are read whole in one localization (the index pass excepted).
const MAX_READS: usize = 400;

/// A definition, confirmed in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Def<'a> {
    pub path: &'a str,
    pub line: u64,
    pub kind: DefKind,
}

pub(crate) struct Tree<'a> {
    pub root: &'a Path,
    pub paths: PathIndex<'a>,
    index: OnceCell<SourceIndex>,
    /// Names whose mentions the index notes when it is built.
    watched: Vec<String>,
    tracked: &'a [String],
    /// Tracked paths sorted, for directory listings; made on first use.
    sorted: OnceCell<Vec<&'a str>>,
    cache: RefCell<HashMap<String, Option<Rc<str>>>>,
    reads: Cell<usize>,
    max_reads: usize,
}

impl<'a> Tree<'a> {
    /// The tracked files under `root`; the index, when built, notes the mentions of the
    /// `watched` names.
    pub(crate) fn new(root: &'a Path, tracked: &'a [String], watched: &[String]) -> Tree<'a> {
        Tree {
            root,
            paths: PathIndex::new(root, tracked),
            index: OnceCell::new(),
            watched: watched.to_vec(),
            tracked,
            sorted: OnceCell::new(),
            cache: RefCell::new(HashMap::new()),
            reads: Cell::new(0),
            max_reads: MAX_READS,
        }
    }

    /// The same tree with room for `max_reads` whole-file reads: one tree serves many
    /// failures (triage), each reading its few files once.
    pub(crate) fn with_max_reads(mut self, max_reads: usize) -> Tree<'a> {
        self.max_reads = max_reads;
        self
    }

    /// The source index, built on first use.
    pub(crate) fn index(&self) -> &SourceIndex {
        self.index
            .get_or_init(|| SourceIndex::build(self.root, self.tracked, &self.watched))
    }

    /// Whether the source index has been built (a whole-repository search happened).
    #[cfg(test)]
    pub(crate) fn index_built(&self) -> bool {
        self.index.get().is_some()
    }

    pub(crate) fn is_tracked(&self, path: &str) -> bool {
        self.paths.get(path).is_some()
    }

    /// `path` as the tracked list holds it, if tracked.
    pub(crate) fn tracked(&self, path: &str) -> Option<&'a str> {
        self.paths.get(path)
    }

    /// The tracked path with this index id.
    pub(crate) fn path(&self, id: u32) -> &'a str {
        self.tracked.get(id as usize).map_or("", String::as_str)
    }

    /// The text of a tracked file, within the read bounds; `None` when it is not tracked,
    /// too large, unreadable, or the bound is reached.
    pub(crate) fn read(&self, path: &str) -> Option<Rc<str>> {
        if let Some(cached) = self.cache.borrow().get(path) {
            return cached.clone();
        }
        let text = self.load(path);
        self.cache
            .borrow_mut()
            .insert(path.to_owned(), text.clone());
        text
    }

    fn load(&self, path: &str) -> Option<Rc<str>> {
        if !self.is_tracked(path) || self.reads.get() >= self.max_reads {
            return None;
        }
        self.reads.set(self.reads.get() + 1);
        let abs = self.root.join(path);
        if std::fs::metadata(&abs).ok()?.len() > MAX_FILE_BYTES {
            return None;
        }
        let bytes = std::fs::read(&abs).ok()?;
        Some(Rc::from(String::from_utf8_lossy(&bytes)))
    }

    /// Tracked files directly in `dir` ("" for the root).
    pub(crate) fn files_in(&self, dir: &str) -> Vec<&'a str> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let sorted = self.sorted.get_or_init(|| {
            let mut sorted: Vec<&str> = self.tracked.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            sorted
        });
        let start = sorted.partition_point(|path| *path < prefix.as_str());
        sorted[start..]
            .iter()
            .take_while(|path| path.starts_with(&prefix))
            .filter(|path| !path[prefix.len()..].contains('/'))
            .copied()
            .collect()
    }

    /// Tracked files `wanted` may name: itself or a path ending with `/wanted`.
    pub(crate) fn with_suffix(&self, wanted: &str) -> Vec<&'a str> {
        self.paths.with_suffix(wanted)
    }

    /// Files that may define `name` (the index compares hashes), in tracked order; confirm
    /// with [`Tree::definition_in`].
    pub(crate) fn definition_files(&self, name: &str) -> Vec<&'a str> {
        self.index()
            .definition_files(name)
            .into_iter()
            .map(|id| self.path(id))
            .collect()
    }

    /// The first line of `path` that defines `name`, read from the file.
    pub(crate) fn definition_in(&self, path: &'a str, name: &str) -> Option<Def<'a>> {
        let lang = Lang::of(path)?;
        let text = self.read(path)?;
        text.lines().enumerate().find_map(|(i, line)| {
            let (found, kind) = definition(lang, line.as_bytes())?;
            (found == name.as_bytes()).then_some(Def {
                path,
                line: i as u64 + 1,
                kind,
            })
        })
    }

    /// JS test files that may title a test `title`; confirm with [`Tree::title_in`].
    pub(crate) fn title_files(&self, title: &str) -> Vec<&'a str> {
        self.index()
            .title_files(title)
            .into_iter()
            .map(|id| self.path(id))
            .collect()
    }

    /// The first line of `path` that titles a test `title`.
    pub(crate) fn title_in(&self, path: &'a str, title: &str) -> Option<Def<'a>> {
        let text = self.read(path)?;
        text.lines().enumerate().find_map(|(i, line)| {
            (test_title(line.as_bytes())? == title.as_bytes()).then_some(Def {
                path,
                line: i as u64 + 1,
                kind: DefKind::TestTitle,
            })
        })
    }

    /// Line `line` (1-based) of a tracked file.
    pub(crate) fn line(&self, path: &str, line: u64) -> Option<String> {
        let text = self.read(path)?;
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        text.lines().nth(index).map(str::to_owned)
    }
}

/// The directory part of a repository-relative path ("" at the root).
pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `dir` joined with a relative path, `.` and `..` resolved; `None` above the root.
pub(crate) fn join(dir: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// `dir/name`, or `name` at the root.
pub(crate) fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The 1-based number of the line holding byte `at`.
pub(crate) fn line_at(text: &str, at: usize) -> u64 {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at.min(text.len())]).count() as u64 + 1
}
