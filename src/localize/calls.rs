//! The body of a failing test and the functions it calls.
//!
//! A test's block is found from a line inside it (a stack frame or the test's definition):
//! Python by indentation, the brace languages by counting braces from the enclosing test
//! header (`it('...', () => {`, `fn name()`, `func TestX(`). Calls are `name(`,
//! `qualifier.name(`, `Qualifier::name(` and `new Name(`, minus language keywords and the
//! vocabulary of test frameworks, which the repository does not define.

use std::sync::LazyLock;

use regex::Regex;

use super::defs::{Lang, definition, test_title};

/// A test block is cut after this many lines.
const MAX_BLOCK_LINES: usize = 200;
/// At most this many calls are taken from one block.
const MAX_CALLS: usize = 24;

/// A call in a failing test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub name: String,
    /// What it is called on: `qs` in `qs.parse(`, `Duration` in `Duration.from_parts(`.
    pub qualifier: Option<String>,
    /// The callee as written: `qs.parse`, `Version::parse`.
    pub text: String,
    /// 1-based line of the first such call.
    pub line: u64,
}

static CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:\b(new)\s+)?(?:([A-Za-z_$][\w$]*)\s*(\.|::)\s*)?([A-Za-z_$][\w$]*)\s*(?:::<[^>()]*>)?\(")
        .ok()
});

/// Words that are called but are never the repository's own functions.
const NOISE: &[&str] = &[
    // Keywords and statements that take parentheses.
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "fn",
    "func",
    "def",
    "elif",
    "with",
    "match",
    "typeof",
    "await",
    "yield",
    "super",
    "self",
    "this",
    "not",
    "and",
    "or",
    "in",
    "is",
    "lambda",
    "print",
    "assert",
    // Test frameworks.
    "describe",
    "it",
    "test",
    "suite",
    "context",
    "specify",
    "beforeEach",
    "afterEach",
    "beforeAll",
    "afterAll",
    "before",
    "after",
    "expect",
    "toBe",
    "toEqual",
    "toStrictEqual",
    "toThrow",
    "toMatch",
    "toContain",
    "toHaveLength",
    "toBeCloseTo",
    "toMatchObject",
    "toHaveBeenCalled",
    "toHaveBeenCalledWith",
    "toMatchSnapshot",
    "equal",
    "deepEqual",
    "strictEqual",
    "deepStrictEqual",
    "notEqual",
    "notStrictEqual",
    "ok",
    "throws",
    "rejects",
    "doesNotThrow",
    "same",
    "end",
    "plan",
    "pass",
    "fail",
    "raises",
    "approx",
    "fixture",
    "parametrize",
    "mark",
    "Errorf",
    "Fatalf",
    "Fatal",
    "Error",
    "Log",
    "Logf",
    "Run",
    "Helper",
    "Skip",
    "Parallel",
    "Equal",
    "NoError",
    "True",
    "False",
    "unwrap",
    "expect_err",
    "unwrap_err",
    "is_ok",
    "is_err",
    "is_some",
    "is_none",
    // Builtins and standard constructors.
    "len",
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
    "set",
    "tuple",
    "range",
    "repr",
    "isinstance",
    "type",
    "sorted",
    "sum",
    "min",
    "max",
    "abs",
    "open",
    "iter",
    "next",
    "enumerate",
    "zip",
    "map",
    "filter",
    "require",
    "import",
    "String",
    "Number",
    "Object",
    "Array",
    "Boolean",
    "Promise",
    "Map",
    "Set",
    "Date",
    "JSON",
    "Math",
    "Symbol",
    "Error",
    "RegExp",
    "parseInt",
    "parseFloat",
    "setTimeout",
    "console",
    "log",
    "from",
    "of",
    "push",
    "join",
    "split",
    "slice",
    "keys",
    "values",
    "entries",
    "toString",
    "format",
    "vec",
    "Some",
    "None",
    "Ok",
    "Err",
    "Box",
    "Vec",
    "new",
    "to_string",
    "to_owned",
    "into",
    "clone",
    "iter",
    "collect",
    "make",
    "append",
    "Sprintf",
    "Printf",
    "Println",
    "copy",
    "delete",
    "panic",
    "recover",
    "cap",
];

/// Whether a called name is framework or language vocabulary rather than a candidate for
/// the repository's own code.
pub(crate) fn is_noise(name: &str) -> bool {
    name.len() < 2
        || NOISE.contains(&name)
        || name.starts_with("assert")
        || name.starts_with("expect_")
        || name.starts_with("to_be")
}

/// The 1-based first and last lines of the test block holding `line`.
pub(crate) fn test_block(lang: Lang, text: &str, line: u64) -> Option<(u64, u64)> {
    let lines: Vec<&str> = text.lines().collect();
    let at = usize::try_from(line).ok()?.checked_sub(1)?;
    if at >= lines.len() {
        return None;
    }
    let (start, end) = match lang {
        Lang::Python => python_block(&lines, at)?,
        Lang::Ruby | Lang::CLike => return None,
        _ => brace_block(lang, &lines, at)?,
    };
    Some((start as u64 + 1, end as u64 + 1))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn python_block(lines: &[&str], at: usize) -> Option<(usize, usize)> {
    let is_def = |line: &str| {
        let t = line.trim_start();
        t.starts_with("def ") || t.starts_with("async def ")
    };
    let start = if is_def(lines[at]) {
        at
    } else {
        let depth = indent(lines[at]);
        (0..at)
            .rev()
            .take(MAX_BLOCK_LINES)
            .find(|&i| is_def(lines[i]) && indent(lines[i]) < depth)?
    };
    let depth = indent(lines[start]);
    let mut end = start;
    for (i, line) in lines
        .iter()
        .enumerate()
        .skip(start + 1)
        .take(MAX_BLOCK_LINES)
    {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) <= depth {
            break;
        }
        end = i;
    }
    Some((start, end))
}

/// A test header: a JS test call with a title, or a function definition.
fn is_header(lang: Lang, line: &str) -> bool {
    if lang == Lang::Js && test_title(line.as_bytes()).is_some() {
        let t = line.trim_start();
        return !(t.starts_with("describe") || t.starts_with("suite") || t.starts_with("context"));
    }
    definition(lang, line.as_bytes())
        .is_some_and(|(_, kind)| kind == super::defs::DefKind::Function)
}

fn brace_block(lang: Lang, lines: &[&str], at: usize) -> Option<(usize, usize)> {
    let start = (0..=at)
        .rev()
        .take(MAX_BLOCK_LINES)
        .find(|&i| is_header(lang, lines[i]))?;
    let mut depth = 0i64;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(start).take(MAX_BLOCK_LINES) {
        for c in code_part(line).chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            // The frame must lie inside the block found, or the header was another test's.
            return (i >= at).then_some((start, i));
        }
    }
    opened.then(|| (start, (start + MAX_BLOCK_LINES - 1).min(lines.len() - 1)))
}

/// A line without its string literals and `//` comment, for brace counting.
fn code_part(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => match c {
                '\\' => {
                    chars.next();
                }
                _ if c == q => quote = None,
                _ => {}
            },
            None => match c {
                '"' | '`' | '\'' => quote = Some(c),
                '/' if chars.peek() == Some(&'/') => break,
                _ => out.push(c),
            },
        }
    }
    out
}

/// The calls in lines `first..=last` of `text`, first occurrence of each name.
pub(crate) fn calls(lang: Lang, text: &str, first: u64, last: u64) -> Vec<Call> {
    let Some(regex) = CALL.as_ref() else {
        return Vec::new();
    };
    let mut found: Vec<Call> = Vec::new();
    let skip = usize::try_from(first.saturating_sub(1)).unwrap_or(usize::MAX);
    let take = usize::try_from(last.saturating_sub(first) + 1).unwrap_or(0);
    for (i, line) in text.lines().enumerate().skip(skip).take(take) {
        // A definition line's own name is not a call (`def test_x(self):`).
        let defined = definition(lang, line.as_bytes()).map(|(name, _)| name.to_vec());
        for caps in regex.captures_iter(line) {
            let Some(name) = caps.get(4).map(|m| m.as_str()) else {
                continue;
            };
            if is_noise(name) || defined.as_deref() == Some(name.as_bytes()) {
                continue;
            }
            let qualifier = caps
                .get(2)
                .map(|m| m.as_str().to_owned())
                .filter(|q| q != "self" && q != "this");
            if found
                .iter()
                .any(|call| call.name == name && call.qualifier == qualifier)
            {
                continue;
            }
            let text = match (&qualifier, caps.get(3)) {
                (Some(q), Some(separator)) => format!("{q}{}{name}", separator.as_str()),
                _ => name.to_owned(),
            };
            found.push(Call {
                name: name.to_owned(),
                qualifier,
                text,
                line: i as u64 + 1,
            });
            if found.len() >= MAX_CALLS {
                return found;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(calls: &[Call]) -> Vec<String> {
        calls
            .iter()
            .map(|c| match &c.qualifier {
                Some(q) => format!("{q}.{}@{}", c.name, c.line),
                None => format!("{}@{}", c.name, c.line),
            })
            .collect()
    }

    #[test]
    fn a_python_test_block_ends_where_its_indentation_does() {
        let text = "import x\n\n\ndef test_a():\n    duration = Duration.from_parts(hours=1)\n\n    assert duration.total == 3\n\n\ndef test_b():\n    other()\n";
        assert_eq!(test_block(Lang::Python, text, 7), Some((4, 7)));
        assert_eq!(test_block(Lang::Python, text, 4), Some((4, 7)));
        let (first, last) = test_block(Lang::Python, text, 5).unwrap();
        assert_eq!(
            names(&calls(Lang::Python, text, first, last)),
            ["Duration.from_parts@5"]
        );
    }

    #[test]
    fn a_javascript_test_block_is_the_enclosing_test_call() {
        let text = "describe('parse()', function () {\n    it('a', function () {\n        assert.deepStrictEqual(qs.parse('a=b'), { a: 'b' });\n    });\n\n    it('b', () => {\n        const cart = new Cart().add({ price: 10 });\n        expect(cart.totalWithTax('x')).toBe(12);\n    });\n});\n";
        assert_eq!(test_block(Lang::Js, text, 3), Some((2, 4)));
        assert_eq!(test_block(Lang::Js, text, 8), Some((6, 9)));
        assert_eq!(
            names(&calls(Lang::Js, text, 6, 9)),
            ["Cart@7", "add@7", "cart.totalWithTax@8"]
        );
        assert_eq!(names(&calls(Lang::Js, text, 2, 4)), ["qs.parse@3"]);
    }

    #[test]
    fn rust_and_go_test_blocks_count_braces_outside_strings() {
        let rust = "#[test]\nfn parses() {\n    let v = Version::parse(\"1.2.3-{\").unwrap();\n    assert_eq!(wrap_words(\"a\", 1), vec![\"a\"]);\n}\n\nfn other() {}\n";
        assert_eq!(test_block(Lang::Rust, rust, 4), Some((2, 5)));
        assert_eq!(
            names(&calls(Lang::Rust, rust, 2, 5)),
            ["Version.parse@3", "wrap_words@4"]
        );
        let go = "func TestReverse(t *testing.T) {\n\tif got := Reverse(\"ab\"); got != \"ba\" {\n\t\tt.Errorf(\"Reverse() = %q\", got)\n\t}\n}\n";
        assert_eq!(test_block(Lang::Go, go, 3), Some((1, 5)));
        assert_eq!(names(&calls(Lang::Go, go, 1, 5)), ["Reverse@2"]);
    }
}
