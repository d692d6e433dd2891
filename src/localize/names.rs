//! Names the failure output talks about: identifiers quoted by error messages (a Python
//! `TypeError: from_x() got an unexpected keyword argument`, an `AttributeError: 'Foo'
//! object has no attribute 'bar'`, a JS `TypeError: x.y is not a function`, rustc's and
//! Go's and tsc's "cannot find" errors), modules they name, and functions called in the
//! failing assertion as the runner prints it (pytest's `>` and `E` lines, jest's and
//! vitest's code frames, Rust's `assertion failed: expr`, a Go test's message).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::calls::is_noise;
use super::extract::{clip, strip_ansi};

/// At most this many names are taken from one output.
const MAX_NAMES: usize = 12;
/// At most this many of them are calls read from assertion lines.
const MAX_ASSERTION_CALLS: usize = 6;
/// Output lines are quoted in reasons up to this many characters.
const QUOTE_CHARS: usize = 100;

/// What the output says about a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// An identifier an error message quotes (a missing attribute, an unexpected argument).
    Error,
    /// The class or type an error message names (`'Foo' object has no attribute`).
    Type,
    /// A module an error message names (`module 'pkg.mod' has no attribute`).
    Module,
    /// A function called in the failing assertion.
    Call,
}

/// A name the failure output talks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    pub name: String,
    pub role: Role,
    /// The output line that names it, clipped, for reasons.
    pub quote: String,
}

/// An error-message pattern and the role of each of its groups, in group order.
struct ErrorPattern {
    regex: Regex,
    roles: &'static [Role],
}

static ERRORS: LazyLock<Vec<ErrorPattern>> = LazyLock::new(|| {
    use Role::{Error, Module, Type};
    let specs: &[(&str, &'static [Role])] = &[
        (r"NameError: name '(\w+)' is not defined", &[Error]),
        (
            r"AttributeError: '(\w+)' object has no attribute '(\w+)'",
            &[Type, Error],
        ),
        (
            r"AttributeError: type object '(\w+)' has no attribute '(\w+)'",
            &[Type, Error],
        ),
        (
            r"AttributeError: module '([\w.]+)' has no attribute '(\w+)'",
            &[Module, Error],
        ),
        (r"AttributeError: .*has no attribute '(\w+)'", &[Error]),
        (
            r"ImportError: cannot import name '(\w+)' from '([\w.]+)'",
            &[Error, Module],
        ),
        // Python 3.10+ qualifies methods: `Duration.from_parts() got an unexpected ...`.
        (
            r"TypeError: (?:[\w.]*?(\w+)\.)?(\w+)\(\) (?:got an unexpected keyword|missing \d+ required|takes (?:from )?\d+|got multiple values|got some positional-only|takes no arguments)",
            &[Type, Error],
        ),
        (
            r"TypeError: '(\w+)' object is not (?:callable|subscriptable|iterable)",
            &[Type],
        ),
        (r"ReferenceError: ([\w$]+) is not defined", &[Error]),
        (
            r"TypeError: (?:[\w$.]+\.)?([\w$]+) is not a (?:function|constructor)",
            &[Error],
        ),
        (
            r"TypeError: Class constructor ([\w$]+) cannot be invoked",
            &[Type],
        ),
        (
            r"Cannot read propert(?:y|ies) of \w+ \(reading '([\w$]+)'\)",
            &[Error],
        ),
        (r"does not provide an export named '([\w$]+)'", &[Error]),
        (
            r"cannot find (?:value|function|type|struct|macro|trait) `(\w+)`",
            &[Error],
        ),
        (
            r"no (?:method|field|function|associated item|variant) named `(\w+)` found for (?:\w+ )?`&?(?:mut )?(?:[\w]+::)*(\w+)",
            &[Error, Type],
        ),
        (
            r"struct `(?:\w+::)*(\w+)` has no field named `(\w+)`",
            &[Type, Error],
        ),
        (r"unresolved import `(?:\w+::)*(\w+)`", &[Error]),
        (r"undefined: (\w+)", &[Error]),
        (
            r"\.(\w+) undefined \(type \*?(?:[\w]+\.)?(\w+) has no field or method",
            &[Error, Type],
        ),
        (r"Cannot find name '(\w+)'", &[Error]),
        (
            r"Property '(\w+)' does not exist on type '(\w+)'",
            &[Error, Type],
        ),
        (r"has no exported member '(\w+)'", &[Error]),
    ];
    specs
        .iter()
        .filter_map(|(source, roles)| {
            Regex::new(source)
                .ok()
                .map(|regex| ErrorPattern { regex, roles })
        })
        .collect()
});

/// Lines that show the failing assertion, with the part that holds its code.
static ASSERTION_LINES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // pytest: the failing source line and the explanation lines.
        r"^>\s+(.+)$",
        r"^E\s+(.+)$",
        // jest's code frame marks the line with `>`.
        r"^\s*>\s*\d+\s*\|(.+)$",
        // Rust's `assert!`.
        r"assertion failed: (.+)$",
        // A Go test's own message: `    foo_test.go:18: Reverse("x") = "y", want "z"`.
        r"^\s+\S+_test\.go:\d+: (.+)$",
        // Messages that spell the call out: `expected parse(...) to ...`.
        r"(?i)\bexpected\s+(\w+\(.*)$",
    ]
    .iter()
    .filter_map(|source| Regex::new(source).ok())
    .collect()
});

static CALL_IN_TEXT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:([A-Za-z_$][\w$]*)\s*(?:\.|::))?([A-Za-z_$][\w$]*)\s*\(").ok()
});

/// vitest's code frame: `     10|     expect(camelCase('x')).toBe('y');` above a caret line.
static FRAME_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*\d+\|(.+)$").ok());
static CARET_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\s*\|\s*\^+\s*$").ok());

/// The names `output` talks about, error names first.
pub(crate) fn named(output: &str) -> Vec<Named> {
    let lines: Vec<std::borrow::Cow<'_, str>> =
        output.lines().map(|line| strip_ansi(clip(line))).collect();
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for line in &lines {
        for pattern in ERRORS.iter() {
            let Some(caps) = pattern.regex.captures(line) else {
                continue;
            };
            for (group, role) in pattern.roles.iter().enumerate() {
                let Some(name) = caps.get(group + 1).map(|m| m.as_str()) else {
                    continue;
                };
                // Dunder methods (`__init__`) are everywhere; their class says more.
                if name.len() < 2 || name.starts_with("__") {
                    continue;
                }
                if seen.insert((name.to_owned(), *role as u8)) {
                    found.push(Named {
                        name: name.to_owned(),
                        role: *role,
                        quote: quote(line),
                    });
                }
            }
        }
        if found.len() >= MAX_NAMES {
            found.truncate(MAX_NAMES);
            return found;
        }
    }
    let mut calls = 0;
    for (i, line) in lines.iter().enumerate() {
        for code in assertion_code(&lines, i) {
            for (qualifier, name) in called(code) {
                if calls >= MAX_ASSERTION_CALLS || found.len() >= MAX_NAMES {
                    return found;
                }
                let mut push = |name: &str, role: Role| {
                    // A name an error message already quoted keeps that stronger role.
                    let quoted = found.iter().any(|n: &Named| n.name == name);
                    if !quoted && seen.insert((name.to_owned(), role as u8)) {
                        calls += 1;
                        found.push(Named {
                            name: name.to_owned(),
                            role,
                            quote: quote(line),
                        });
                    }
                };
                // `Duration.from_parts(`: a capitalized qualifier is a type.
                if let Some(qualifier) = qualifier.filter(|q| q.starts_with(char::is_uppercase)) {
                    push(qualifier, Role::Type);
                }
                push(name, Role::Call);
            }
        }
    }
    found
}

/// The code parts of output line `i` that show a failing assertion.
fn assertion_code<'l>(lines: &'l [std::borrow::Cow<'_, str>], i: usize) -> Vec<&'l str> {
    let line: &str = &lines[i];
    let mut code: Vec<&str> = ASSERTION_LINES
        .iter()
        .filter_map(|regex| regex.captures(line)?.get(1).map(|m| m.as_str()))
        .collect();
    let next_is_caret = lines
        .get(i + 1)
        .zip(CARET_LINE.as_ref())
        .is_some_and(|(next, caret)| caret.is_match(next));
    if next_is_caret
        && let Some(part) = FRAME_LINE
            .as_ref()
            .and_then(|frame| frame.captures(line)?.get(1))
    {
        code.push(part.as_str());
    }
    code
}

/// The (qualifier, name) of calls in a piece of code, noise left out.
fn called(code: &str) -> Vec<(Option<&str>, &str)> {
    let Some(regex) = CALL_IN_TEXT.as_ref() else {
        return Vec::new();
    };
    regex
        .captures_iter(code)
        .filter_map(|caps| {
            let name = caps.get(2)?.as_str();
            let qualifier = caps.get(1).map(|m| m.as_str());
            (!is_noise(name)).then_some((qualifier.filter(|q| !is_noise(q)), name))
        })
        .collect()
}

fn quote(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= QUOTE_CHARS {
        return line.to_owned();
    }
    let clipped: String = line.chars().take(QUOTE_CHARS - 1).collect();
    format!("{clipped}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(output: &str) -> Vec<String> {
        named(output)
            .iter()
            .map(|n| format!("{:?} {}", n.role, n.name))
            .collect()
    }

    #[test]
    fn error_messages_name_functions_types_and_modules() {
        let output = "\
E       TypeError: Duration.from_parts() got an unexpected keyword argument 'seconds'
E       AttributeError: 'Item' object has no attribute 'discounted'
AttributeError: module 'pkg.util' has no attribute 'slug'
TypeError: Config.__init__() missing 1 required positional argument: 'path'
    TypeError: cart.totalWithTax is not a function
error[E0599]: no method named `wrap_all` found for struct `Wrapper` in the current scope
";
        assert_eq!(
            render(output),
            [
                "Type Duration",
                "Error from_parts",
                "Type Item",
                "Error discounted",
                "Module pkg.util",
                "Error slug",
                "Type Config",
                "Error totalWithTax",
                "Error wrap_all",
                "Type Wrapper",
            ]
        );
    }

    #[test]
    fn calls_in_the_failing_assertion_are_named() {
        let pytest = "\
    def test_drops_punctuation():
>       assert slugify(\"Hello, World!\") == \"hello-world\"
E       AssertionError: assert 'hello,-world!' == 'hello-world'
";
        assert_eq!(render(pytest), ["Call slugify"]);
        let vitest = "\
 ❯ test/case.test.ts:10:38
      9|   it('lowercases the first word', () => {
     10|     expect(camelCase('Foo-Bar_baz')).toBe('fooBarBaz');
       |                                      ^
     11|   });
";
        assert_eq!(render(vitest), ["Call camelCase"]);
        let go = "    strutil_test.go:18: Reverse(\"héllo\") = \"oll\", want \"olléh\"\n";
        assert_eq!(render(go), ["Call Reverse"]);
        let jest = "    > 11 |     expect(cart.totalWithTax('standard')).toBe(12);\n";
        assert_eq!(render(jest), ["Call totalWithTax"]);
        let rust = "thread 'main' panicked at src/a.rs:3:5:\nassertion failed: is_valid(&config)\n";
        assert_eq!(render(rust), ["Call is_valid"]);
    }
}
