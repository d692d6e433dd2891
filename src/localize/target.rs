//! The code one failing test exercises, as a single name that failures can share (triage
//! groups by it): the repository's definition that the failing assertion calls, a data file
//! the failing test reads, else the top-ranked non-test file of a full localization.
//!
//! The repository is listed once and one [`Tree`] serves every failure, so the files read
//! whole (test files, what they import) are read once however many failures name them, and
//! the source index, when a search needs it, is built once.
//!
//! It does not decide the cause of a failure (a stack frame outside the test is a better
//! answer, `triage::cause` asks for it first) and never reads untracked files.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::calls::{calls, test_block};
use super::defs::Lang;
use super::extract::extract;
use super::follow::{TestFile, resolve_call};
use super::names::{Role, named};
use super::resolve::is_test_path;
use super::search::failing_test_hits;
use super::tree::{Tree, join, parent};

/// Whole-file reads one triage may make (every failing test file and what it imports).
const MAX_TRIAGE_READS: usize = 20_000;
/// A failing statement is read over at most this many lines (a call split over lines).
const MAX_STATEMENT_LINES: usize = 6;
/// Lines above the failing assertion searched for the call that computed what it checks
/// (`got := Slug(x)` above `if got != want`).
const LOOK_BACK_LINES: u64 = 6;
/// Extensions of data files a test reads (fixtures, golden files).
const DATA_EXTENSIONS: &[&str] = &[
    "json", "jsonl", "ndjson", "csv", "tsv", "yaml", "yml", "toml", "txt", "xml", "ini", "dat",
];

/// The repository a triage localizes in: its files are listed once, on first use, so a
/// run whose failures all have a frame outside the test never lists them.
pub struct Repository {
    pub root: PathBuf,
    files: OnceCell<Vec<String>>,
    /// Lists the repository-relative paths (tracked files, or the files of a directory that
    /// is not a git work tree).
    list: fn(&Path) -> Vec<String>,
}

impl Repository {
    /// The repository at `root`, whose files `list` gives when first needed.
    pub fn new(root: PathBuf, list: fn(&Path) -> Vec<String>) -> Repository {
        Repository {
            root,
            files: OnceCell::new(),
            list,
        }
    }

    /// The files, listed on first use.
    pub fn files(&self) -> &[String] {
        self.files.get_or_init(|| (self.list)(&self.root))
    }

    /// How many files were listed, if they were.
    pub fn listed(&self) -> Option<usize> {
        self.files.get().map(Vec::len)
    }
}

/// What a failing test exercises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A definition of the repository that the failing assertion (or the statement that
    /// computed what it checks) calls, resolved through the test's imports.
    Definition {
        name: String,
        path: String,
        line: u64,
    },
    /// A data file the failing test reads.
    DataFile { path: String },
    /// The top-ranked non-test file of a full localization.
    File { path: String },
}

/// Finds targets for many failures in one repository.
pub struct Targets<'a> {
    repository: &'a Repository,
    /// Made on the first failure that needs it.
    tree: OnceCell<Tree<'a>>,
    tests: RefCell<HashMap<&'a str, Option<Rc<TestFile<'a>>>>>,
    /// (test file, failing line) → target: failures of one assertion share it.
    at_line: RefCell<HashMap<(&'a str, u64), Option<Target>>>,
}

impl<'a> Targets<'a> {
    pub fn new(repository: &'a Repository) -> Targets<'a> {
        Targets {
            repository,
            tree: OnceCell::new(),
            tests: RefCell::new(HashMap::new()),
            at_line: RefCell::new(HashMap::new()),
        }
    }

    fn tree(&self) -> &Tree<'a> {
        self.tree.get_or_init(|| {
            Tree::new(&self.repository.root, self.repository.files(), &[])
                .with_max_reads(MAX_TRIAGE_READS)
        })
    }

    /// The target of the failing test `test` (its runner's name) whose failure text is
    /// `output`; `test_file` is the test's file when the runner says (relative to the root).
    pub fn target(&self, output: &str, test: &str, test_file: Option<&str>) -> Option<Target> {
        if self.repository.files().is_empty() {
            return None;
        }
        let (path, line) = self.failing_place(output, test, test_file)?;
        let key = (path, line.unwrap_or(0));
        if let Some(known) = self.at_line.borrow().get(&key) {
            return known.clone();
        }
        let found = self
            .in_test(path, line, output)
            .or_else(|| self.top_file(output, test));
        self.at_line.borrow_mut().insert(key, found.clone());
        found
    }

    /// The failing test's file and the line of the failure in it (the deepest location the
    /// output gives in that file), else the line that defines the test.
    fn failing_place(
        &self,
        output: &str,
        test: &str,
        test_file: Option<&str>,
    ) -> Option<(&'a str, Option<u64>)> {
        let known = test_file.and_then(|file| self.tree().tracked(file));
        let mut in_file: Vec<(&'a str, u64, bool)> = Vec::new();
        for found in extract(output) {
            let location = &found.location;
            let Some(line) = location.line else {
                continue;
            };
            let Some(path) = self.tree().paths.resolve(&location.path).first().copied() else {
                continue;
            };
            let wanted = match known {
                Some(known) => path == known,
                None => is_test_path(path),
            };
            if wanted {
                let outer_first = matches!(
                    location.kind.as_str(),
                    "python-traceback" | "pytest-failure"
                );
                in_file.push((path, line, outer_first));
            }
        }
        // Python prints the deepest frame last, the other languages first.
        let deepest = match in_file.first() {
            Some((_, _, true)) => in_file.last(),
            _ => in_file.first(),
        };
        if let Some((path, line, _)) = deepest {
            return Some((path, Some(*line)));
        }
        let defined = failing_test_hits(self.tree(), &[test.to_owned()], &[])
            .into_iter()
            .find(|hit| hit.names_failing_test || is_test_path(&hit.path))
            .and_then(|hit| Some((self.tree().tracked(&hit.path)?, hit.line)));
        match (known, defined) {
            (Some(known), Some((path, line))) if path == known => Some((known, line)),
            (Some(known), _) => Some((known, None)),
            (None, defined) => defined,
        }
    }

    fn test_file(&self, path: &'a str) -> Option<Rc<TestFile<'a>>> {
        if let Some(known) = self.tests.borrow().get(path) {
            return known.clone();
        }
        let opened = TestFile::open(self.tree(), path).map(Rc::new);
        self.tests.borrow_mut().insert(path, opened.clone());
        opened
    }

    /// What the failing test in `path` exercises, read from its own code: a data file its
    /// block reads, else what the failing statement calls, else a call the output's
    /// assertion lines name, else what a statement just above computed.
    fn in_test(&self, path: &'a str, line: Option<u64>, output: &str) -> Option<Target> {
        let test = self.test_file(path)?;
        let lang = Lang::of(path)?;
        let text = test.text();
        let block = line.and_then(|line| test_block(lang, text, line));
        if let Some((first, last)) = block
            && let Some(data) = self.data_file(path, text, first, last)
        {
            return Some(data);
        }
        let resolved = |first: u64, last: u64| {
            calls(lang, text, first, last).into_iter().find_map(|call| {
                resolve_call(self.tree(), &test, &call.name, call.qualifier.as_deref())
                    .map(|(def, _)| definition(&call.name, def.path, def.line))
            })
        };
        if let Some(line) = line
            && let Some(found) = resolved(line, statement_end(text, line))
        {
            return Some(found);
        }
        let from_output = named(output)
            .into_iter()
            .filter(|name| name.role == Role::Call)
            .find_map(|name| {
                resolve_call(self.tree(), &test, &name.name, None)
                    .map(|(def, _)| definition(&name.name, def.path, def.line))
            });
        if from_output.is_some() {
            return from_output;
        }
        let (line, (first, _)) = line.zip(block)?;
        (line.saturating_sub(LOOK_BACK_LINES).max(first)..line)
            .rev()
            .find_map(|above| resolved(above, above))
    }

    /// A data file the failing test's lines `first..=last` of test file `path` (or a helper
    /// of the test file they call) name: by a string literal, or by a name the file binds
    /// to one (`PRICES = DIR / "prices.json"`).
    /// A literal is looked up relative to the test's directory, else to the root, else as
    /// the one file of that name.
    fn data_file(&self, path: &'a str, text: &str, first: u64, last: u64) -> Option<Target> {
        let regex = DATA_LITERAL.as_ref()?;
        let binding = BINDING.as_ref()?;
        // The test's block and the blocks of the test file's own helpers it calls.
        let mut blocks = vec![(first, last)];
        if let Some(lang) = Lang::of(path) {
            for call in calls(lang, text, first, last) {
                if let Some(def) = self.tree().definition_in(path, &call.name)
                    && let Some(helper) = test_block(lang, text, def.line)
                {
                    blocks.push(helper);
                }
            }
        }
        let in_block = |number: usize| {
            let line = number as u64 + 1;
            blocks.iter().any(|(a, b)| (*a..=*b).contains(&line))
        };
        let block_words: Vec<&str> = text
            .lines()
            .enumerate()
            .filter(|(number, _)| in_block(*number))
            .flat_map(|(_, line)| line.split(|c: char| !(c.is_alphanumeric() || c == '_')))
            .filter(|word| !word.is_empty())
            .collect();
        for (number, line) in text.lines().enumerate() {
            let Some(literal) = regex.captures(line).and_then(|caps| caps.get(1)) else {
                continue;
            };
            let read = in_block(number)
                || binding
                    .captures(line)
                    .and_then(|caps| caps.get(1))
                    .is_some_and(|name| block_words.contains(&name.as_str()));
            if !read {
                continue;
            }
            let literal = literal.as_str();
            let beside =
                join(parent(path), literal).and_then(|joined| self.tree().tracked(&joined));
            let at_root = join("", literal).and_then(|joined| self.tree().tracked(&joined));
            let named = beside.or(at_root).or_else(|| {
                let stripped = literal.trim_start_matches("./").trim_start_matches("../");
                match self.tree().with_suffix(stripped).as_slice() {
                    [only] => Some(*only),
                    _ => None,
                }
            });
            if let Some(found) = named {
                return Some(Target::DataFile {
                    path: found.to_owned(),
                });
            }
        }
        None
    }

    /// The top-ranked non-test file of a full localization of this failure.
    fn top_file(&self, output: &str, test: &str) -> Option<Target> {
        let named = named(output);
        super::rank::candidates(self.tree(), output, &[test.to_owned()], &named)
            .into_iter()
            .find(|candidate| !is_test_path(&candidate.path) && Lang::of(&candidate.path).is_some())
            .map(|candidate| Target::File {
                path: candidate.path,
            })
    }
}

static DATA_LITERAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let extensions = DATA_EXTENSIONS.join("|");
    Regex::new(&format!(
        r#"["'`]([^"'`\s]{{1,200}}\.(?:{extensions}))["'`]"#
    ))
    .ok()
});

/// A name bound at the start of a line: `NAME =`, `const name =`, `static NAME: &str =`,
/// `var name =`, `name :=`.
static BINDING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:export\s+)?(?:pub\s+)?(?:const|let|var|static)?\s*([A-Za-z_$][\w$]*)\s*(?::[^=]*)?:?=[^=]").ok()
});

fn definition(name: &str, path: &str, line: u64) -> Target {
    Target::Definition {
        name: name.to_owned(),
        path: path.to_owned(),
        line,
    }
}

/// The last line of the statement starting at `line`: its parentheses closed, within
/// [`MAX_STATEMENT_LINES`].
fn statement_end(text: &str, line: u64) -> u64 {
    let skip = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let mut depth = 0i64;
    let mut end = line;
    for (i, code) in text
        .lines()
        .skip(skip)
        .take(MAX_STATEMENT_LINES)
        .enumerate()
    {
        for c in code.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        end = line + i as u64;
        if depth <= 0 {
            break;
        }
    }
    end
}

/// The files of `root` when it is not a git work tree: every file below it, hidden
/// directories and dependency or build directories skipped, at most `max` files, sorted.
pub fn list_files(root: &Path, max: usize) -> Vec<String> {
    const SKIPPED: &[&str] = &[
        "node_modules",
        "target",
        "__pycache__",
        "vendor",
        "dist",
        "build",
    ];
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = dir.join(&name);
            if kind.is_dir() {
                // A virtual environment holds the language's and the dependencies' code.
                let venv = root.join(&rel).join("pyvenv.cfg").is_file();
                if !name.starts_with('.') && !SKIPPED.contains(&name.as_str()) && !venv {
                    dirs.push(rel);
                }
            } else if kind.is_file() {
                out.push(rel.to_string_lossy().into_owned());
                if out.len() >= max {
                    out.sort();
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository(files: &[(&str, &str)]) -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = dir.path().to_owned();
        (dir, Repository::new(root, |root| list_files(root, 100)))
    }

    const SHOP: &[(&str, &str)] = &[
        ("shop/__init__.py", ""),
        (
            "shop/text.py",
            "def slug(t):\n    return t.replace(' ', '_')\n",
        ),
        (
            "shop/stats.py",
            "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n",
        ),
        (
            "tests/test_shop.py",
            "from pathlib import Path\n\nfrom shop.stats import mean\nfrom shop.text import slug\n\nDATA = Path(__file__).parent / \"data.json\"\n\n\ndef test_slug():\n    assert slug('a b') == 'a-b'\n\n\ndef test_mean():\n    got = mean([1, 1])\n    assert got == 1\n\n\ndef test_data():\n    assert mean(load(DATA)) == 2\n\n\ndef load(path):\n    return [1]\n",
        ),
        ("tests/data.json", "[1, 2]\n"),
        ("node_modules/x/index.js", "module.exports = 1;\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
    ];

    /// The target of test `name` of `tests/test_shop.py` whose assertion on `line` failed.
    fn target_of(name: &str, line: u64) -> Option<Target> {
        let (_dir, repo) = repository(SHOP);
        let output = format!(
            "    def {name}():\n>       assert x\nE       assert 0 == 1\n\ntests/test_shop.py:{line}: AssertionError"
        );
        Targets::new(&repo).target(
            &output,
            &format!("tests/test_shop.py::{name}"),
            Some("tests/test_shop.py"),
        )
    }

    fn definition_at(name: &str, path: &str) -> Option<Target> {
        Some(definition(name, path, 1))
    }

    #[test]
    fn the_assertion_s_call_resolved_through_the_imports_is_the_target() {
        assert_eq!(
            target_of("test_slug", 10),
            definition_at("slug", "shop/text.py")
        );
    }

    #[test]
    fn a_call_just_above_the_assertion_is_the_target_when_the_assertion_calls_nothing() {
        assert_eq!(
            target_of("test_mean", 15),
            definition_at("mean", "shop/stats.py")
        );
    }

    #[test]
    fn a_data_file_the_test_reads_through_a_module_name_is_the_target() {
        assert_eq!(
            target_of("test_data", 19),
            Some(Target::DataFile {
                path: "tests/data.json".to_owned()
            })
        );
    }

    #[test]
    fn listing_skips_hidden_and_dependency_directories() {
        let (_dir, repo) = repository(SHOP);
        assert_eq!(repo.listed(), None);
        assert!(repo.files().contains(&"tests/data.json".to_owned()));
        assert!(
            repo.files()
                .iter()
                .all(|f| !f.starts_with("node_modules") && !f.starts_with(".git")),
            "{:?}",
            repo.files()
        );
    }
}
