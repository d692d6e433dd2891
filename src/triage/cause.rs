//! The cause of one failure, as a key that failures with the same cause share, by the
//! first rule that applies ([`Rule`]):
//!
//! 1. `frame`: the deepest frame of the failure's stack that is not the test's own code and
//!    not the language's or a dependency's (`shop/money.py:9`): one broken helper, one cause;
//! 2. `target`: where efix would look (`localize`'s [`Targets`]): the repository's function
//!    the failing assertion calls, resolved through the test's imports (`slug` in
//!    `shop/text.py`), a data file the failing test reads, else the localizer's top-ranked
//!    non-test file. Only when the repository is at hand (`--root`);
//! 3. `message`: the failure's message with what changes from run to run taken out
//!    (addresses, durations, thread ids, temporary paths) and its literals abstracted
//!    (numbers, quoted strings, collection contents): one wrong constant seen by many tests;
//! 4. `file`: the test's file (or package, or test binary).
//!
//! A forced rule (`--group-by`) is tried alone, with the test's file as the fallback.
//!
//! Frames are found by `localize`'s location patterns; which frame is deepest depends on the
//! language (Python and pytest print the deepest frame last, JS, Go and Rust first).

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::failure::{Failure, Runner};
use crate::localize::{Location, Target, Targets, extract_locations, strip_ansi};

/// The longest message kept in a cause, in characters.
const MAX_MESSAGE_CHARS: usize = 160;
/// Nested collections are abstracted at most this deep.
const MAX_COLLECTION_DEPTH: usize = 8;

/// The rule that grouped failures, as `--group-by` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// The deepest stack frame outside the test and outside dependencies.
    Frame,
    /// The code the failing test exercises, from the localizer.
    Target,
    /// The normalized message, literals abstracted.
    Message,
    /// The test's file.
    File,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Frame => "frame",
            Rule::Target => "target",
            Rule::Message => "message",
            Rule::File => "file",
        }
    }
}

/// What groups failures: `key` is compared, `label` is shown, `rule` says which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    pub(crate) rule: Rule,
    pub(crate) key: String,
    pub(crate) label: String,
}

/// What [`cause_of`] may use besides the failure.
#[derive(Clone, Copy, Default)]
pub(crate) struct Context<'t, 'a> {
    /// Paths under this directory are shown relative to it.
    pub(crate) root: &'t str,
    /// The repository, when it is at hand.
    pub(crate) targets: Option<&'t Targets<'a>>,
    /// Only this rule (then the test's file).
    pub(crate) forced: Option<Rule>,
}

/// The cause of `failure`.
pub(crate) fn cause_of(failure: &Failure, context: &Context<'_, '_>) -> Cause {
    let root = context.root;
    let text = vitest_frames(&failure.text);
    let message = message_of(failure, &text);
    let own = failure.scope.as_deref().map(|scope| relative(scope, root));
    // Only these runners' scope is the test's file; cargo's is a test binary, go's a package.
    let own_file = match failure.runner {
        Runner::Pytest | Runner::Jest | Runner::Vitest | Runner::Node => own.as_deref(),
        Runner::Cargo | Runner::Go => None,
    };
    let allowed = |rule: Rule| context.forced.is_none_or(|forced| forced == rule);
    if allowed(Rule::Frame)
        && let Some(frame) = deepest_frame(&text, own_file, root)
    {
        let place = match frame.line {
            Some(line) => format!("{}:{line}", frame.path),
            None => frame.path.clone(),
        };
        let label = match &message {
            Some(message) => format!("frame {place}: {message}"),
            None => format!("frame {place}"),
        };
        return Cause {
            rule: Rule::Frame,
            key: format!("at {place}"),
            label,
        };
    }
    if allowed(Rule::Target)
        && let Some(targets) = context.targets
        && let Some(target) = targets.target(&text, &failure.name, own_file)
    {
        let (key, label) = match target {
            Target::Definition { name, path, line } => (
                format!("def {path}::{name}"),
                format!("target `{name}` ({path}:{line}), called by the failing assertion"),
            ),
            Target::DataFile { path } => (
                format!("data {path}"),
                format!("target data file {path}, read by the failing test"),
            ),
            Target::File { path } => (
                format!("file-target {path}"),
                format!("target {path}, the localizer's top-ranked file"),
            ),
        };
        return Cause {
            rule: Rule::Target,
            key,
            label,
        };
    }
    if allowed(Rule::Message)
        && let Some(message) = message
    {
        let message = abstract_literals(&message);
        return Cause {
            rule: Rule::Message,
            key: format!("error {message}"),
            label: format!("message {message}"),
        };
    }
    let file = own
        .or_else(|| {
            failure
                .name
                .split_once("::")
                .map(|(file, _)| file.to_owned())
        })
        .unwrap_or_else(|| "(unknown file)".to_owned());
    Cause {
        rule: Rule::File,
        key: format!("file {file}"),
        label: format!("file {file}"),
    }
}

/// Vitest prints frames as `❯ fn src/a.js:3:9`; written as `at fn (src/a.js:3:9)` they are
/// JS stack frames for the location patterns.
fn vitest_frames(text: &str) -> std::borrow::Cow<'_, str> {
    static FRAME: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"(?m)^(\s*)❯ (?:(\S+) )?(\S+:\d+:\d+)\s*$").ok());
    match FRAME.as_ref() {
        Some(frame) if text.contains('❯') => frame.replace_all(text, "${1}at ${2} (${3})"),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

/// The deepest frame that is neither the test's own file (`own`, or any test file when the
/// test's file is not known) nor the runtime's or a dependency's.
fn deepest_frame(text: &str, own: Option<&str>, root: &str) -> Option<Location> {
    let mut outer_first = Vec::new();
    let mut inner_first = Vec::new();
    let mut panic = None;
    for location in extract_locations(text) {
        match location.kind.as_str() {
            "rust-panic" if panic.is_none() => panic = Some(location),
            "python-traceback" | "pytest-failure" => outer_first.push(location),
            "js-stack" | "rust-backtrace" | "go-panic" | "node-assertion" | "node-throw"
            | "go-test" => inner_first.push(location),
            _ => {}
        }
    }
    let ordered = panic
        .into_iter()
        .chain(inner_first)
        .chain(outer_first.into_iter().rev());
    for mut location in ordered {
        location.path = relative(&location.path, root);
        if is_foreign(&location.path) || is_own(&location.path, own) {
            continue;
        }
        return Some(location);
    }
    None
}

/// The path relative to `root` when it is under it, without a leading `./`.
pub(crate) fn relative(path: &str, root: &str) -> String {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let root = root.trim_end_matches('/');
    let stripped = if root.is_empty() {
        path
    } else {
        path.strip_prefix(root)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(path)
    };
    stripped.strip_prefix("./").unwrap_or(stripped).to_owned()
}

/// Code that is not the project's: the runtime, the standard library, dependencies.
fn is_foreign(path: &str) -> bool {
    const MARKERS: &[&str] = &[
        "site-packages/",
        "dist-packages/",
        "node_modules/",
        "/rustc/",
        "/.cargo/registry/",
        "/.cargo/git/",
        "/.rustup/",
        "/usr/lib/go",
        "/usr/local/go/",
        "/go/pkg/mod/",
        "/lib/python3",
        "<frozen",
        "<anonymous>",
        "node:",
        "internal/",
    ];
    MARKERS.iter().any(|marker| path.contains(marker))
        || path.starts_with("/rustc/")
        || path.starts_with("library/std/")
        || path.starts_with("library/core/")
}

/// The test's own code: its file when known, else any file named like a test.
fn is_own(path: &str, own: Option<&str>) -> bool {
    match own {
        Some(own) => path == own || path.ends_with(&format!("/{own}")) || is_test_file(path),
        None => is_test_file(path),
    }
}

/// A file named like a test by its runner's convention (not a helper under `tests/`, which
/// is a cause like any other code).
fn is_test_file(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem_ext = file.rsplit_once('.');
    (file.starts_with("test_") && file.ends_with(".py"))
        || file.ends_with("_test.py")
        || file.ends_with("_test.go")
        || stem_ext.is_some_and(|(stem, _)| stem.ends_with(".test") || stem.ends_with(".spec"))
        || (path.starts_with("tests/") || path.contains("/tests/"))
            && file.ends_with(".rs")
            && !path.contains("/common/")
            && file != "mod.rs"
        || file == "tests.rs"
}

/// The failure's message, normalized: the runner's own error lines when the text has them,
/// else the report's message.
fn message_of(failure: &Failure, text: &str) -> Option<String> {
    let from_text = match failure.runner {
        Runner::Pytest => pytest_message(text),
        Runner::Cargo => rust_message(text),
        Runner::Go => go_message(text),
        Runner::Jest | Runner::Vitest | Runner::Node => js_message(text),
    };
    let generic = |m: &&String| {
        let m = m.trim();
        !(m.is_empty() || m == "Failed" || m.starts_with("thread '") || m == "test failure")
    };
    from_text
        .or_else(|| failure.message.as_ref().filter(generic).cloned())
        .map(|message| normalize(&message))
        .filter(|message| !message.is_empty())
}

/// pytest marks the error lines with `E`.
fn pytest_message(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("E "))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(3)
        .collect();
    (!lines.is_empty()).then(|| lines.join(" ")).or_else(|| {
        // A traceback printed by Python itself ends with `Type: message`.
        text.lines()
            .rev()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with("File "))
            .filter(|line| line.contains("Error") || line.contains("Exception"))
            .map(str::to_owned)
    })
}

/// The lines after `panicked at ...:` up to the backtrace.
fn rust_message(text: &str) -> Option<String> {
    let mut lines = text
        .lines()
        .skip_while(|line| !line.contains(" panicked at "));
    let header = lines.next()?;
    let mut parts = Vec::new();
    // Rust before 1.73: `panicked at 'message', src/lib.rs:3:5`.
    if let Some(start) = header.find("panicked at '")
        && let Some(end) = header.rfind("', ")
        && end > start + 13
    {
        parts.push(header[start + 13..end].to_owned());
    }
    for line in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with("stack backtrace:") || line.starts_with("note: ") {
            break;
        }
        parts.push(line.to_owned());
        if parts.len() == 3 {
            break;
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// `panic: message`, else the first `file_test.go:N: message` line's message.
fn go_message(text: &str) -> Option<String> {
    static LOGGED: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^\s+\S+\.go:\d+: (.+)$").ok());
    for line in text.lines() {
        if let Some(panic) = line.trim().strip_prefix("panic: ") {
            return Some(panic.trim_end_matches(" [recovered]").to_owned());
        }
    }
    let logged = LOGGED.as_ref()?;
    text.lines()
        .find_map(|line| logged.captures(line))
        .and_then(|caps| caps.get(1))
        .map(|m| m.as_str().to_owned())
}

/// The lines before the first stack frame (`Expected:`/`Received:` included). node:test's
/// JUnit wraps the error (`[Error [ERR_TEST_FAILURE]: ...] { cause: TypeError: ... }`): the
/// cause is the message, as its spec reporter prints it.
fn js_message(text: &str) -> Option<String> {
    let text = match text.find("\n  cause: ") {
        Some(at) => &text[at + "\n  cause: ".len()..],
        None => text,
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        // Stop at the first frame, or at jest's code frame (`> 12 | expect(x)`).
        .take_while(|line| {
            !line.starts_with("at ") && !line.starts_with("❯ ") && !is_code_frame(line)
        })
        .filter(|line| !line.is_empty() && !line.starts_with("⎯"))
        .take(4)
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

/// A line of a code excerpt: `12 | code`, `> 12 | code`, or the caret line `| ^`.
fn is_code_frame(line: &str) -> bool {
    let rest = line.trim_start_matches('>').trim_start();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    rest[digits..].trim_start().starts_with('|')
}

/// What changes between two runs of the same failure taken out, whitespace collapsed.
fn normalize(message: &str) -> String {
    static VOLATILE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
        [
            (r"0x[0-9a-fA-F]{4,}", "0x…"),
            (r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s)\b", "…s"),
            (r"thread '([^']*)' \(\d+\)", "thread '$1'"),
            (r"(?:/tmp|/var/folders|/private/var)/\S+", "/tmp/…"),
            (
                r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
                "…",
            ),
            (r"\bat 0x…", "at 0x…"),
        ]
        .into_iter()
        .filter_map(|(source, with)| Regex::new(source).ok().map(|regex| (regex, with)))
        .collect()
    });
    let mut text = strip_ansi(message).into_owned();
    for (regex, with) in VOLATILE.iter() {
        if let std::borrow::Cow::Owned(changed) = regex.replace_all(&text, *with) {
            text = changed;
        }
    }
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let clipped: String = collapsed.chars().take(MAX_MESSAGE_CHARS).collect();
    if clipped.len() < collapsed.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

/// Literals written as `<num>` and `<str>`, the contents of collections as `…`: two tests
/// that fail on the same wrong code with other values read the same.
fn abstract_literals(text: &str) -> String {
    static STRING: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#"(^|[^\w])(?:'[^'\n]*'|"(?:[^"\\\n]|\\.)*")"#).ok());
    static NUMBER: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"(^|[^\w.…])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b").ok());
    // Innermost first: a collection becomes a placeholder without brackets, so the one
    // around it is innermost next.
    static COLLECTION: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\[[^\[\]]*\]|\{[^{}]*\}").ok());
    const LIST: &str = "\u{E000}";
    const MAP: &str = "\u{E001}";
    let mut text = text.to_owned();
    if let Some(string) = STRING.as_ref() {
        text = string.replace_all(&text, "${1}<str>").into_owned();
    }
    if let Some(number) = NUMBER.as_ref() {
        text = number.replace_all(&text, "${1}<num>").into_owned();
    }
    if let Some(collection) = COLLECTION.as_ref() {
        for _ in 0..MAX_COLLECTION_DEPTH {
            let replaced =
                collection.replace_all(
                    &text,
                    |caps: &regex::Captures<'_>| {
                        if caps[0].starts_with('[') { LIST } else { MAP }
                    },
                );
            match replaced {
                std::borrow::Cow::Owned(changed) => text = changed,
                std::borrow::Cow::Borrowed(_) => break,
            }
        }
    }
    text.replace(LIST, "[…]").replace(MAP, "{…}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(runner: Runner, scope: Option<&str>, text: &str) -> Failure {
        Failure {
            runner,
            name: "t".to_owned(),
            scope: scope.map(str::to_owned),
            text: text.to_owned(),
            message: None,
        }
    }

    fn at(root: &str) -> Context<'_, 'static> {
        Context {
            root,
            ..Context::default()
        }
    }

    #[test]
    fn python_cause_is_the_deepest_frame_outside_the_test() {
        let text = "def test_a():\n>       f()\n\ntests/test_a.py:3: \n_ _ _\n\n    def f():\n>       g()\n\nshop/a.py:2: \n\n    def g():\n>       raise ValueError('x')\nE       ValueError: x\n\nshop/b.py:7: ValueError";
        let cause = cause_of(
            &failure(Runner::Pytest, Some("tests/test_a.py"), text),
            &at(""),
        );
        assert_eq!(
            cause,
            Cause {
                rule: Rule::Frame,
                key: "at shop/b.py:7".to_owned(),
                label: "frame shop/b.py:7: ValueError: x".to_owned()
            }
        );
    }

    #[test]
    fn js_cause_skips_node_modules_and_strips_the_root() {
        let text = "TypeError: nope\n    at helper (/w/p/src/h.js:3:9)\n    at Object.<anonymous> (/w/p/test/a.test.js:5:3)\n    at run (/w/p/node_modules/jest/x.js:1:1)";
        let cause = cause_of(
            &failure(Runner::Jest, Some("test/a.test.js"), text),
            &at("/w/p"),
        );
        assert_eq!(cause.key, "at src/h.js:3");
        let vitest = "TypeError: nope\n ❯ helper src/h.js:3:9\n ❯ test/a.test.js:5:3";
        assert_eq!(
            cause_of(
                &failure(Runner::Vitest, Some("test/a.test.js"), vitest),
                &at("")
            )
            .key,
            "at src/h.js:3"
        );
    }

    #[test]
    fn assertion_in_the_test_groups_by_normalized_message() {
        let a = "thread 'a' (123) panicked at tests/a.rs:5:5:\nassertion failed: x at 0xdeadbeef\nstack backtrace:\n";
        let b = "thread 'b' (999) panicked at tests/b.rs:9:5:\nassertion failed: x at 0xfeedface\n";
        let ca = cause_of(&failure(Runner::Cargo, Some("c::a"), a), &at(""));
        let cb = cause_of(&failure(Runner::Cargo, Some("c::b"), b), &at(""));
        assert_eq!(ca.key, cb.key);
        assert_eq!(ca.label, "message assertion failed: x at 0x…");
    }

    #[test]
    fn messages_that_differ_by_their_literals_share_a_cause() {
        let messages = [
            ("E       assert 0 == 1", "E       assert 3 == 12"),
            (
                "E       assert 0.66 == 1\nE        +  where 0.66 = mean([1, 1])",
                "E       assert 2.5 == 3\nE        +  where 2.5 = mean([2, [3, 4]])",
            ),
            (
                "E       AssertionError: assert 'a_b' == 'a-b'",
                "E       AssertionError: assert \"x_y_z\" == \"x-y-z\"",
            ),
            (
                "E       assert {'a': 1} == {'a': 2, 'b': 3}",
                "E       assert {'c': 4} == {}",
            ),
        ];
        for (a, b) in messages {
            let ca = cause_of(&failure(Runner::Pytest, Some("t.py"), a), &at(""));
            let cb = cause_of(&failure(Runner::Pytest, Some("t.py"), b), &at(""));
            assert_eq!(ca.key, cb.key, "{a} / {b}");
            assert_eq!(ca.rule, Rule::Message);
        }
        let label =
            |text: &str| cause_of(&failure(Runner::Pytest, Some("t.py"), text), &at("")).label;
        assert_eq!(
            label("E       assert 0.66 == 1\nE        +  where 0.66 = mean([1, 1])"),
            "message assert <num> == <num> + where <num> = mean([…])"
        );
        // Words with digits, versions and the test's own name are not literals.
        assert_eq!(
            label("E       KeyError: h2_settings in test_1"),
            "message KeyError: h2_settings in test_1"
        );
        // Different operators or names stay apart.
        assert_ne!(label("E   assert 1 == 2"), label("E   assert 1 != 2"));
    }

    #[test]
    fn a_forced_rule_is_tried_alone_then_the_test_file() {
        let text = "tests/test_a.py:3: \n\nshop/b.py:7: ValueError\nE       ValueError: x";
        let forced = |rule| Context {
            forced: Some(rule),
            ..at("")
        };
        let failure = failure(Runner::Pytest, Some("tests/test_a.py"), text);
        assert_eq!(cause_of(&failure, &forced(Rule::Frame)).rule, Rule::Frame);
        let message = cause_of(&failure, &forced(Rule::Message));
        assert_eq!(
            (message.rule, message.label.as_str()),
            (Rule::Message, "message ValueError: x")
        );
        // No repository: the target rule cannot apply, the test's file does.
        let target = cause_of(&failure, &forced(Rule::Target));
        assert_eq!(
            (target.rule, target.label.as_str()),
            (Rule::File, "file tests/test_a.py")
        );
    }

    #[test]
    fn no_text_falls_back_to_the_test_file() {
        let cause = cause_of(&failure(Runner::Go, Some("example.com/m/p"), ""), &at(""));
        assert_eq!(cause.key, "file example.com/m/p");
    }
}
