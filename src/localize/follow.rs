//! Following the failure to the code it is about, when the output itself only names the
//! test (an assertion in a test file, a call that fails at the call site):
//!
//! - the modules each failing test file imports, resolved to files;
//! - the functions the failing test's own body calls, resolved to their definitions through
//!   the test file's imports (following re-exports: a package's `__init__.py`, an
//!   `index.ts` barrel, a `package.json` entry that gathers modules, a Rust `pub use`);
//! - the names the output talks about (error messages, the failing assertion), resolved
//!   the same way, else to their definitions anywhere in the repository when there are
//!   few, else to the files that mention them;
//! - the files string literals in the failing test name (`strings`).

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashSet, VecDeque};

use super::calls::{Call, calls, test_block};
use super::candidate::Candidate;
use super::defs::{DefKind, Lang};
use super::hit::Hit;
use super::imports::{Import, imports};
use super::names::{Named, Role};
use super::phrases::{self, Quoted};
use super::reach::{self, CLOSURE_DEPTH, MAX_CLOSURE_FILES, Reached};
use super::resolve::is_test_path;
use super::strings;
use super::tree::{Def, Tree, child, parent};

/// Test files whose imports and calls are followed.
const MAX_TEST_FILES: usize = 3;
/// Lines of one test file whose enclosing tests are read.
const MAX_LINES_PER_TEST_FILE: usize = 8;
/// Share of the test file's score an imported file gets.
const IMPORT_FACTOR: f64 = 0.4;
/// An imported file never gets more than this for being imported.
const MAX_IMPORT_WEIGHT: f64 = 40.0;
/// A file defining a function the failing test calls, reached through its imports.
const CALLED_WEIGHT: f64 = 50.0;
/// A file defining what an error message or the failing assertion names, by role.
const NAMED_ERROR_WEIGHT: f64 = 40.0;
const NAMED_TYPE_WEIGHT: f64 = 45.0;
const NAMED_MODULE_WEIGHT: f64 = 40.0;
const NAMED_CALL_WEIGHT: f64 = 40.0;
/// A file that only mentions a name an error message quotes.
const MENTION_WEIGHT: f64 = 15.0;
/// Names defined in more source files than this are not followed without an import.
const MAX_GLOBAL_DEFINITIONS: usize = 3;
/// Files that only mention a name: at most this many.
const MAX_MENTIONS: usize = 3;

/// Where a name was found, and how, in words.
struct Resolved<'a> {
    def: Def<'a>,
    /// How the test reaches it, e.g. "through `qs` (`var qs = require('..')`)".
    via: String,
    /// It shares the weight with this many other definitions.
    share: usize,
}

/// A failing test file with what it imports.
pub(crate) struct TestFile<'a> {
    path: &'a str,
    score: f64,
    lines: Vec<u64>,
    text: std::rc::Rc<str>,
    imports: Vec<Import<'a>>,
    closure: OnceCell<Vec<Reached<'a>>>,
}

/// Hits from the failing test files among `candidates` (those `hits` say hold a failing
/// test or a test frame) and from the names the output talks about.
pub(crate) fn hits<'a>(
    tree: &Tree<'a>,
    candidates: &[Candidate],
    hits: &[Hit],
    named: &[Named],
    quoted: &[Quoted],
) -> Vec<Hit> {
    let holds_test: HashSet<&str> = hits
        .iter()
        .filter(|hit| hit.names_failing_test || is_test_path(&hit.path))
        .map(|hit| hit.path.as_str())
        .collect();
    let tests: Vec<TestFile<'a>> = candidates
        .iter()
        .filter(|c| holds_test.contains(c.path.as_str()))
        .take(MAX_TEST_FILES)
        .filter_map(|c| {
            let path = tree.tracked(&c.path)?;
            let text = tree.read(path)?;
            Some(TestFile {
                path,
                score: c.score,
                lines: c
                    .lines
                    .iter()
                    .copied()
                    .take(MAX_LINES_PER_TEST_FILE)
                    .collect(),
                imports: imports(tree, path, &text),
                text,
                closure: OnceCell::new(),
            })
        })
        .collect();
    let mut out = Vec::new();
    for test in &tests {
        out.extend(import_hits(test));
        out.extend(call_hits(tree, test));
        out.extend(reach::hits(
            reached(tree, test),
            test.path,
            import_weight(test),
        ));
        out.extend(phrases::hits(tree, reached(tree, test), quoted));
        out.extend(strings::hits(tree, test.path, &test.text, &test.lines));
        let reached_files: Vec<&str> = reached(tree, test).iter().map(|r| r.file).collect();
        out.extend(strings::stem_hits(
            test.path,
            &test.text,
            &test.lines,
            &reached_files,
        ));
    }
    for name in named {
        out.extend(named_hits(tree, &tests, name));
    }
    out
}

/// The files the test's imports reach, computed once.
fn reached<'t, 'a>(tree: &Tree<'a>, test: &'t TestFile<'a>) -> &'t [Reached<'a>] {
    test.closure
        .get_or_init(|| reach::closure(tree, test.path, &test.imports))
}

impl<'a> TestFile<'a> {
    /// Tracked test file `path`, read and its imports resolved, for [`resolve_call`].
    pub(crate) fn open(tree: &Tree<'a>, path: &'a str) -> Option<TestFile<'a>> {
        let text = tree.read(path)?;
        Some(TestFile {
            path,
            score: 0.0,
            lines: Vec::new(),
            imports: imports(tree, path, &text),
            text,
            closure: OnceCell::new(),
        })
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

/// Where `name` (called on `qualifier`, if any) in test file `test` is defined, through the
/// test's imports, with how it was reached in words; `None` when the imports do not lead
/// to it (the language's or a dependency's) or the test file defines it itself.
pub(crate) fn resolve_call<'a>(
    tree: &Tree<'a>,
    test: &TestFile<'a>,
    name: &str,
    qualifier: Option<&str>,
) -> Option<(Def<'a>, String)> {
    resolve(tree, test, name, qualifier)
        .filter(|found| found.def.path != test.path && !is_test_path(found.def.path))
        .map(|found| (found.def, found.via))
}

/// What a file the test imports gets for it.
fn import_weight(test: &TestFile<'_>) -> f64 {
    (test.score * IMPORT_FACTOR).min(MAX_IMPORT_WEIGHT)
}

fn import_hits(test: &TestFile<'_>) -> Vec<Hit> {
    let weight = import_weight(test);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for import in &test.imports {
        let files: Vec<&str> = import
            .files
            .iter()
            .copied()
            .filter(|file| !is_test_path(file) && seen.insert(*file))
            .collect();
        if files.is_empty() {
            continue;
        }
        // A package's files share the weight, so a big package does not crowd the list.
        let each = weight / (files.len() as f64).sqrt();
        for file in files {
            let reason = if import.same_package {
                format!("in the same Go package as failing test file {}", test.path)
            } else {
                format!(
                    "imported by failing test file {} at line {} (`{}`)",
                    test.path, import.line, import.statement
                )
            };
            out.push(Hit {
                path: file.to_owned(),
                line: None,
                weight: each,
                reason,
                names_failing_test: false,
            });
        }
    }
    out
}

fn call_hits<'a>(tree: &Tree<'a>, test: &TestFile<'a>) -> Vec<Hit> {
    let Some(lang) = Lang::of(test.path) else {
        return Vec::new();
    };
    let mut blocks: Vec<(u64, u64)> = test
        .lines
        .iter()
        .filter_map(|line| test_block(lang, &test.text, *line))
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    let mut seen: Vec<Call> = Vec::new();
    let mut out = Vec::new();
    for (first, last) in blocks {
        for call in calls(lang, &test.text, first, last) {
            if seen
                .iter()
                .any(|c| c.name == call.name && c.qualifier == call.qualifier)
            {
                continue;
            }
            seen.push(call.clone());
            let called = format!("`{}`", call.text);
            // A call the imports do not lead to is the language's or a dependency's; it
            // is not searched for in the whole repository.
            if let Some(resolved) = resolve(tree, test, &call.name, call.qualifier.as_deref())
                && resolved.def.path != test.path
            {
                out.push(Hit {
                    path: resolved.def.path.to_owned(),
                    line: (resolved.def.line > 0).then_some(resolved.def.line),
                    weight: CALLED_WEIGHT,
                    reason: format!(
                        "{}, which failing test file {} calls as {called} at line {}{}",
                        defines(&resolved.def, &call.name),
                        test.path,
                        call.line,
                        resolved.via
                    ),
                    names_failing_test: false,
                });
            }
        }
    }
    out
}

fn named_hits<'a>(tree: &Tree<'a>, tests: &[TestFile<'a>], named: &Named) -> Vec<Hit> {
    let weight = match named.role {
        Role::Error => NAMED_ERROR_WEIGHT,
        Role::Type => NAMED_TYPE_WEIGHT,
        Role::Module => NAMED_MODULE_WEIGHT,
        Role::Call => NAMED_CALL_WEIGHT,
    };
    let said = match named.role {
        Role::Call => "called in the failing assertion",
        _ => "named by the error",
    };
    if named.role == Role::Module {
        return module_files(tree, &named.name)
            .into_iter()
            .map(|path| Hit {
                path: path.to_owned(),
                line: None,
                weight,
                reason: format!("is module `{}`, {said} `{}`", named.name, named.quote),
                names_failing_test: false,
            })
            .collect();
    }
    // A source file that holds the failing test (a Rust `#[cfg(test)]` module) and defines
    // the name is where it lives; the rest of the repository is not searched for it.
    let beside_test = tests
        .iter()
        .filter(|test| !is_test_path(test.path))
        .find_map(|test| tree.definition_in(test.path, &named.name))
        .map(|def| Resolved {
            def,
            via: " (beside the failing test)".to_owned(),
            share: 1,
        });
    let resolved: Vec<Resolved<'_>> = match beside_test.or_else(|| {
        tests
            .iter()
            .find_map(|test| resolve(tree, test, &named.name, None))
    }) {
        Some(found) => vec![found],
        None => match global(tree, &named.name) {
            Global::Found(found) => found,
            // Too common a name to point anywhere.
            Global::Many => Vec::new(),
            Global::Nowhere if named.role == Role::Error => return mentions(tree, named),
            Global::Nowhere => Vec::new(),
        },
    };
    resolved
        .into_iter()
        .map(|r| Hit {
            path: r.def.path.to_owned(),
            line: (r.def.line > 0).then_some(r.def.line),
            weight: weight / r.share as f64,
            reason: format!(
                "{}, {said} `{}`{}",
                defines(&r.def, &named.name),
                named.quote,
                r.via
            ),
            names_failing_test: false,
        })
        .collect()
}

fn defines(def: &Def<'_>, name: &str) -> String {
    if def.line == 0 {
        return format!("is the module that provides `{name}`");
    }
    format!("defines {} `{name}` at line {}", def.kind.noun(), def.line)
}

/// Where `name` (called on `qualifier`, if any) is defined, as seen from a test file: in
/// what an import binds to the qualifier or the name, else among the files its imports
/// reach. Reads only those files; `None` also when the test file defines the name itself.
fn resolve<'a>(
    tree: &Tree<'a>,
    test: &TestFile<'a>,
    name: &str,
    qualifier: Option<&str>,
) -> Option<Resolved<'a>> {
    if qualifier.is_none() && tree.definition_in(test.path, name).is_some() {
        return None;
    }
    // `qs.parse(`, `Duration.from_parts(`: look inside what the qualifier is bound to.
    if let Some(qualifier) = qualifier
        && let Some((import, imported)) = bound(test, qualifier)
    {
        let owner = match &imported {
            Some(imported) => defining(tree, import, imported).map(|r| vec![r.def.path]),
            None => Some(import.files.clone()),
        };
        let starts: Vec<&'a str> = owner.unwrap_or_else(|| import.files.clone());
        if let Some(mut found) = reach(tree, &starts, name) {
            found.via = format!(" through `{qualifier}` (`{}`)", import.statement);
            return Some(found);
        }
    }
    // `parse(` where `parse` is imported, or a module bound to the name called directly.
    if let Some((import, imported)) = bound(test, name) {
        let found = match &imported {
            Some(imported) => defining(tree, import, imported),
            None => import.files.first().map(|file| Resolved {
                def: tree.definition_in(file, name).unwrap_or(Def {
                    path: file,
                    line: 0,
                    kind: DefKind::Value,
                }),
                via: String::new(),
                share: 1,
            }),
        };
        if let Some(mut found) = found {
            found.via = format!(" (imported: `{}`)", import.statement);
            return Some(found);
        }
    }
    // Any definition among the files the test's imports reach, nearest first.
    let def = reached(tree, test)
        .iter()
        .filter(|r| !is_test_path(r.file))
        .find_map(|r| tree.definition_in(r.file, name))?;
    Some(Resolved {
        def,
        via: format!(" (reached from the imports of {})", test.path),
        share: 1,
    })
}

/// The import that binds `local` in the test file, and the name it imports (`None` when
/// `local` is the module itself, or every name of a same-package or star import).
fn bound<'t, 'a>(test: &'t TestFile<'a>, local: &str) -> Option<(&'t Import<'a>, Option<String>)> {
    test.imports.iter().find_map(|import| {
        if import.alias.as_deref() == Some(local) {
            return Some((import, None));
        }
        import
            .names
            .iter()
            .find(|(bound, _)| bound == local)
            .map(|(_, imported)| (import, Some(imported.clone())))
    })
}

/// The definition of `name` reached from `import`: in the module, through its re-exports,
/// else anywhere in the module's package directory.
fn defining<'a>(tree: &Tree<'a>, import: &Import<'a>, name: &str) -> Option<Resolved<'a>> {
    reach(tree, &import.files, name)
}

/// The definition of `name` reached from `files`: in them, through what they import and
/// pass on (breadth first, so the nearest wins), else anywhere in the first one's
/// directory and below.
fn reach<'a>(tree: &Tree<'a>, files: &[&'a str], name: &str) -> Option<Resolved<'a>> {
    let first = files.first().copied()?;
    let mut queue: VecDeque<(&'a str, usize, String)> = files
        .iter()
        .map(|file| (*file, 0, name.to_owned()))
        .collect();
    let mut visited: Vec<&'a str> = Vec::new();
    while let Some((file, depth, wanted)) = queue.pop_front() {
        if visited.contains(&file) || visited.len() >= MAX_CLOSURE_FILES {
            continue;
        }
        visited.push(file);
        let def = tree
            .definition_in(file, &wanted)
            .filter(|def| !binds_import(tree, def));
        if let Some(def) = def {
            let via = if depth == 0 {
                String::new()
            } else {
                format!(" (re-exported by {first})")
            };
            return Some(Resolved { def, via, share: 1 });
        }
        if depth >= CLOSURE_DEPTH {
            continue;
        }
        let Some(text) = tree.read(file) else {
            continue;
        };
        for next in imports(tree, file, &text) {
            let passes = next.alias.as_deref() == Some(wanted.as_str())
                || next.same_package
                || next
                    .names
                    .iter()
                    .any(|(local, _)| local == &wanted || local == "*");
            if !passes {
                continue;
            }
            let renamed = next
                .names
                .iter()
                .find(|(local, _)| local == &wanted)
                .map_or(wanted.clone(), |(_, imported)| imported.clone());
            for file in next.files {
                queue.push_back((file, depth + 1, renamed.clone()));
            }
        }
    }
    // Not found through the imports (names exported dynamically): the package directory,
    // from the source index, but not at the repository root (that is the global search).
    let dir = parent(first);
    if dir.is_empty() {
        return None;
    }
    let prefix = child(dir, "");
    let mut inside: Vec<&'a str> = tree
        .definition_files(name)
        .into_iter()
        .filter(|path| !is_test_path(path) && path.starts_with(&prefix))
        .collect();
    inside.sort_by_key(|path| (path.matches('/').count(), *path));
    let def = inside
        .into_iter()
        .filter_map(|path| tree.definition_in(path, name))
        .find(|def| !binds_import(tree, def))?;
    Some(Resolved {
        def,
        via: format!(" (in the package of {first})"),
        share: 1,
    })
}

/// A "definition" that only binds an import (`var parse = require('./parse')`): the
/// definition proper is in the module it loads.
fn binds_import(tree: &Tree<'_>, def: &Def<'_>) -> bool {
    tree.line(def.path, def.line)
        .is_some_and(|line| line.contains("require(") || line.contains("import("))
}

/// What the whole repository says about a name.
enum Global<'a> {
    /// A few source files define it.
    Found(Vec<Resolved<'a>>),
    /// More than [`MAX_GLOBAL_DEFINITIONS`] do.
    Many,
    /// None does.
    Nowhere,
}

/// Source definitions of `name` anywhere, from the source index.
fn global<'a>(tree: &Tree<'a>, name: &str) -> Global<'a> {
    let files: Vec<&'a str> = tree
        .definition_files(name)
        .into_iter()
        .filter(|path| !is_test_path(path))
        .collect();
    // Hash collisions may add a few files that do not confirm; more than twice the bound
    // are real definitions.
    if files.len() > MAX_GLOBAL_DEFINITIONS * 2 {
        return Global::Many;
    }
    let confirmed: Vec<Def<'a>> = files
        .into_iter()
        .filter_map(|path| tree.definition_in(path, name))
        .collect();
    let share = confirmed.len();
    match share {
        0 => Global::Nowhere,
        n if n > MAX_GLOBAL_DEFINITIONS => Global::Many,
        _ => Global::Found(
            confirmed
                .into_iter()
                .map(|def| Resolved {
                    def,
                    via: if share > 1 {
                        format!(" (one of {share} definitions)")
                    } else {
                        String::new()
                    },
                    share,
                })
                .collect(),
        ),
    }
}

/// Files that mention an identifier an error message quotes, when no file defines it.
fn mentions(tree: &Tree<'_>, named: &Named) -> Vec<Hit> {
    let Some(n) = tree
        .index()
        .watched()
        .iter()
        .position(|watched| *watched == named.name)
    else {
        return Vec::new();
    };
    tree.index()
        .mentions(n)
        .iter()
        .take(MAX_MENTIONS)
        .map(|mention| Hit {
            path: tree.path(mention.file).to_owned(),
            line: Some(mention.line),
            weight: MENTION_WEIGHT,
            reason: format!(
                "uses `{}` at line {}, named by the error `{}` (no file defines it)",
                named.name, mention.line, named.quote
            ),
            names_failing_test: false,
        })
        .collect()
}

/// The files a dotted Python module names (`pkg.util`: `pkg/util.py`, `pkg/util/__init__.py`).
fn module_files<'a>(tree: &Tree<'a>, dotted: &str) -> Vec<&'a str> {
    let relative = dotted.replace('.', "/");
    let mut found = tree.with_suffix(&format!("{relative}.py"));
    found.extend(tree.with_suffix(&format!("{relative}/__init__.py")));
    found.truncate(MAX_GLOBAL_DEFINITIONS);
    found
}
