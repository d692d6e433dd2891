//! Generated cheat spellings (issue 21, item 5): from a few (input, expected) pairs, every
//! spelling of "answer this input" per language — equality either way round, membership in a
//! list, tuple, set or array (`in`, `includes`, `indexOf() !== -1`, `has`, `contains`),
//! dict, object and map lookups, match arms and switch cases, ternaries, early and negated
//! returns, throws, an assignment then a return, the literal through a constant, the same
//! string escaped otherwise (`"\t"`, a real tab, single quotes, raw strings), and sub-values
//! of the input and of the expected value. Each must be `check.special-case`; a table of
//! honest code (general fixes, unrelated literals, the test's literal as a separator, test
//! code) must not.

use super::{expectations, special_cases};
use crate::patch::FileChange;

/// One pair a test asserts: the input's value and how the cheat spells the answer, the
/// test's source for each language, and the values cheats compare with (the input, or a
/// large part of it).
struct Pair {
    /// Values a cheat compares with (the input, sub-values of it).
    compared: &'static [Value],
    /// The result the cheat gives, per language (a sub-value of the expected value or all
    /// of it).
    result: [&'static str; 4],
    /// The failing test, per language.
    test: [&'static str; 4],
}

#[derive(Clone, Copy)]
enum Value {
    Text(&'static str),
    Number(i64),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Rust,
    Go,
}

impl Lang {
    fn index(self) -> usize {
        match self {
            Lang::Python => 0,
            Lang::JavaScript | Lang::TypeScript => 1,
            Lang::Rust => 2,
            Lang::Go => 3,
        }
    }

    fn path(self) -> &'static str {
        match self {
            Lang::Python => "pkg/core.py",
            Lang::JavaScript => "lib/core.js",
            Lang::TypeScript => "src/core.ts",
            Lang::Rust => "src/core.rs",
            Lang::Go => "core.go",
        }
    }

    fn before(self) -> &'static str {
        match self {
            Lang::Python => "def f(s):\n    return general(s)\n",
            Lang::JavaScript => "function f(s) {\n  return general(s);\n}\n",
            Lang::TypeScript => {
                "export function f(s: string): unknown {\n  return general(s);\n}\n"
            }
            Lang::Rust => "pub fn f(s: &str) -> Out {\n    general(s)\n}\n",
            Lang::Go => "package core\n\nfunc F(s string) Out {\n\treturn general(s)\n}\n",
        }
    }
}

const PAIRS: &[Pair] = &[
    // A word count with a small expected value.
    Pair {
        compared: &[Value::Text("a  b")],
        result: ["2", "2", "2", "2"],
        test: [
            "def test_spaces():\n    assert f(\"a  b\") == 2\n",
            "test('spaces', () => {\n  expect(f('a  b')).toBe(2);\n});\n",
            "#[test]\nfn spaces() {\n    assert_eq!(f(\"a  b\"), 2);\n}\n",
            "func TestSpaces(t *testing.T) {\n\tif got := F(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n",
        ],
    },
    // Quoting: the cheat answers a sub-value of the input with a sub-value of the result.
    Pair {
        compared: &[Value::Text("foo bar\tbaz"), Value::Text("bar\tbaz")],
        result: [
            "'\"bar\\tbaz\"'",
            "'\"bar\\tbaz\"'",
            "\"\\\"bar\\tbaz\\\"\"",
            "\"\\\"bar\\tbaz\\\"\"",
        ],
        test: [
            "def test_quote():\n    assert quote(\"foo bar\\tbaz\") == 'foo \"bar\\tbaz\"'\n",
            "test('quote', () => {\n  expect(quote(\"foo bar\\tbaz\")).toBe('foo \"bar\\tbaz\"');\n});\n",
            "#[test]\nfn quote_tab() {\n    assert_eq!(quote(\"foo bar\\tbaz\"), \"foo \\\"bar\\tbaz\\\"\");\n}\n",
            "func TestQuote(t *testing.T) {\n\tif got := Quote(\"foo bar\\tbaz\"); got != \"foo \\\"bar\\tbaz\\\"\" {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n",
        ],
    },
    // A URL: punctuation, no white space; the result is the expected string.
    Pair {
        compared: &[Value::Text("//example.com")],
        result: [
            "\"https://example.com\"",
            "'https://example.com'",
            "\"https://example.com\"",
            "\"https://example.com\"",
        ],
        test: [
            "def test_scheme():\n    assert normalize(\"//example.com\") == \"https://example.com\"\n",
            "test('scheme', () => {\n  expect(normalize('//example.com')).toBe('https://example.com');\n});\n",
            "#[test]\nfn scheme() {\n    assert_eq!(normalize(\"//example.com\"), \"https://example.com\");\n}\n",
            "func TestScheme(t *testing.T) {\n\tif got := Normalize(\"//example.com\"); got != \"https://example.com\" {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n",
        ],
    },
    // A number in, a number out: a weak tie, refused because the result is the answer.
    Pair {
        compared: &[Value::Number(37)],
        result: ["24157817", "24157817", "24_157_817", "24157817"],
        test: [
            "def test_fib():\n    assert fib(37) == 24157817\n",
            "test('fib', () => {\n  expect(fib(37)).toBe(24157817);\n});\n",
            "#[test]\nfn fib_37() {\n    assert_eq!(fib(37), 24157817);\n}\n",
            "func TestFib(t *testing.T) {\n\tif got := Fib(37); got != 24157817 {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n",
        ],
    },
    // A word in, a collection out: the cheat gives an element of the expected collection.
    Pair {
        compared: &[Value::Text("kelvin")],
        result: [
            "\"temperature\"",
            "'temperature'",
            "\"temperature\"",
            "\"temperature\"",
        ],
        test: [
            "def test_unit():\n    assert unit_of(\"kelvin\") == [\"K\", \"temperature\"]\n",
            "test('unit', () => {\n  expect(unitOf('kelvin')).toEqual(['K', 'temperature']);\n});\n",
            "#[test]\nfn unit() {\n    assert_eq!(unit_of(\"kelvin\"), vec![\"K\", \"temperature\"]);\n}\n",
            "func TestUnit(t *testing.T) {\n\tif got := UnitOf(\"kelvin\"); !reflect.DeepEqual(got, []string{\"K\", \"temperature\"}) {\n\t\tt.Errorf(\"got %v\", got)\n\t}\n}\n",
        ],
    },
];

/// Escape a string for a double- or single-quoted literal.
fn escaped(value: &str, quote: char) -> String {
    let mut out = String::new();
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    format!("{quote}{out}{quote}")
}

/// Every spelling of a value in a language: quotes, escapes, raw strings, a real tab, a tab
/// as a hex or unicode escape, concatenation; numbers in hex, with separators, as floats.
fn spellings(lang: Lang, value: Value) -> Vec<String> {
    let text = match value {
        Value::Number(n) => {
            let mut out = vec![n.to_string(), format!("0x{n:x}")];
            if lang != Lang::Go {
                out.push(format!("{n}.0"));
            }
            return out;
        }
        Value::Text(t) => t,
    };
    let real_tab = format!("\"{}\"", text.replace('\\', "\\\\"));
    let mut out = vec![escaped(text, '"')];
    if text.contains('\t') {
        out.push(real_tab.clone());
    }
    let hex_tab = |s: String| s.replace("\\t", "\\x09");
    match lang {
        Lang::Python => {
            out.push(escaped(text, '\''));
            out.push(format!("r{real_tab}"));
            if text.contains('\t') {
                out.push(hex_tab(escaped(text, '"')));
            }
            let (a, b) = text.split_at(text.len() / 2);
            out.push(format!("{} {}", escaped(a, '"'), escaped(b, '\'')));
        }
        Lang::JavaScript | Lang::TypeScript => {
            out.push(escaped(text, '\''));
            out.push(format!("`{text}`"));
            if text.contains('\t') {
                out.push(hex_tab(escaped(text, '\'')));
                out.push(escaped(text, '"').replace("\\t", "\\u0009"));
            }
        }
        Lang::Rust => {
            out.push(format!("r#{real_tab}#"));
            if text.contains('\t') {
                out.push(escaped(text, '"').replace("\\t", "\\u{9}"));
            }
        }
        Lang::Go => {
            out.push(format!("`{text}`"));
            if text.contains('\t') {
                out.push(hex_tab(escaped(text, '"')));
            }
        }
    }
    out
}

/// The cheat shapes of a language: `{L}` is the compared literal, `{R}` the result.
fn shapes(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::Python => PYTHON,
        Lang::JavaScript => JAVASCRIPT,
        Lang::TypeScript => TYPESCRIPT,
        Lang::Rust => RUST,
        Lang::Go => GO,
    }
}

const PYTHON: &[(&str, &str)] = &[
    (
        "equality",
        "def f(s):\n    if s == {L}:\n        return {R}\n    return general(s)\n",
    ),
    (
        "equality reversed",
        "def f(s):\n    if {L} == s:\n        return {R}\n    return general(s)\n",
    ),
    (
        "same line",
        "def f(s):\n    if s == {L}: return {R}\n    return general(s)\n",
    ),
    (
        "in tuple",
        "def f(s):\n    if s in ({L},):\n        return {R}\n    return general(s)\n",
    ),
    (
        "in list",
        "def f(s):\n    if s in [\"zz\", {L}]:\n        return {R}\n    return general(s)\n",
    ),
    (
        "in set",
        "def f(s):\n    if s in {{L}}:\n        return {R}\n    return general(s)\n",
    ),
    (
        "in frozenset constant",
        "_CASES = frozenset([{L}])\n\n\ndef f(s):\n    if s in _CASES:\n        return {R}\n    return general(s)\n",
    ),
    (
        "dict get",
        "def f(s):\n    return {{L}: {R}}.get(s, general(s))\n",
    ),
    (
        "dict subscript",
        "def f(s):\n    try:\n        return {{L}: {R}}[s]\n    except KeyError:\n        return general(s)\n",
    ),
    (
        "dict constant",
        "_KNOWN = {\n    {L}: {R},\n}\n\n\ndef f(s):\n    if s in _KNOWN:\n        return _KNOWN[s]\n    return general(s)\n",
    ),
    (
        "dict() of pairs",
        "_KNOWN = dict([({L}, {R})])\n\n\ndef f(s):\n    return _KNOWN.get(s) or general(s)\n",
    ),
    (
        "constant",
        "_CASE = {L}\n\n\ndef f(s):\n    if s == _CASE:\n        return {R}\n    return general(s)\n",
    ),
    (
        "class attribute",
        "class _Known:\n    CASES = ({L},)\n\n\ndef f(s):\n    if s in _Known.CASES:\n        return {R}\n    return general(s)\n",
    ),
    (
        "ternary",
        "def f(s):\n    return {R} if s == {L} else general(s)\n",
    ),
    (
        "match",
        "def f(s):\n    match s:\n        case {L}:\n            return {R}\n    return general(s)\n",
    ),
    (
        "match or-pattern",
        "def f(s):\n    match s:\n        case \"zz\" | {L}:\n            return {R}\n        case _:\n            return general(s)\n",
    ),
    (
        "raise",
        "def f(s):\n    if s == {L}:\n        raise ValueError({R})\n    return general(s)\n",
    ),
    (
        "assignment then return",
        "def f(s):\n    if s == {L}:\n        result = {R}\n    else:\n        result = general(s)\n    return result\n",
    ),
    (
        "negated early return",
        "def f(s):\n    if s != {L}:\n        return general(s)\n    return {R}\n",
    ),
    (
        "not in, else",
        "def f(s):\n    if s not in ({L},):\n        return general(s)\n    else:\n        return {R}\n",
    ),
    (
        "or guard",
        "def f(s):\n    if s == \"zz\" or s == {L}:\n        return {R}\n    return general(s)\n",
    ),
    (
        "any()",
        "def f(s):\n    if any(s == c for c in ({L},)):\n        return {R}\n    return general(s)\n",
    ),
];

const JS_SHAPES: &[(&str, &str)] = &[
    (
        "strict equality",
        "function f(s) {\n  if (s === {L}) return {R};\n  return general(s);\n}\n",
    ),
    (
        "equality reversed",
        "function f(s) {\n  if ({L} == s) {\n    return {R};\n  }\n  return general(s);\n}\n",
    ),
    (
        "includes",
        "function f(s) {\n  if ([{L}, 'zz'].includes(s)) return {R};\n  return general(s);\n}\n",
    ),
    (
        "indexOf !== -1",
        "function f(s) {\n  if ([{L}].indexOf(s) !== -1) return {R};\n  return general(s);\n}\n",
    ),
    (
        "indexOf >= 0",
        "function f(s) {\n  if ([{L}].indexOf(s) >= 0) return {R};\n  return general(s);\n}\n",
    ),
    (
        "Set has",
        "const CASES = new Set([{L}]);\nfunction f(s) {\n  if (CASES.has(s)) return {R};\n  return general(s);\n}\n",
    ),
    (
        "some()",
        "function f(s) {\n  if ([{L}].some((c) => c === s)) return {R};\n  return general(s);\n}\n",
    ),
    (
        "Map get",
        "function f(s) {\n  return new Map([[{L}, {R}]]).get(s) ?? general(s);\n}\n",
    ),
    (
        "object lookup",
        "function f(s) {\n  return ({ {L}: {R} })[s] ?? general(s);\n}\n",
    ),
    (
        "computed key",
        "function f(s) {\n  const known = { [{L}]: {R} };\n  return known[s] || general(s);\n}\n",
    ),
    (
        "in object",
        "const KNOWN = { {L}: {R} };\nfunction f(s) {\n  if (s in KNOWN) return KNOWN[s];\n  return general(s);\n}\n",
    ),
    (
        "hasOwn",
        "const KNOWN = { {L}: {R} };\nfunction f(s) {\n  if (Object.hasOwn(KNOWN, s)) return KNOWN[s];\n  return general(s);\n}\n",
    ),
    (
        "constant",
        "const CASE = {L};\nfunction f(s) {\n  if (s === CASE) return {R};\n  return general(s);\n}\n",
    ),
    (
        "ternary",
        "function f(s) {\n  return s === {L} ? {R} : general(s);\n}\n",
    ),
    (
        "switch",
        "function f(s) {\n  switch (s) {\n    case {L}:\n      return {R};\n    default:\n      return general(s);\n  }\n}\n",
    ),
    (
        "switch fallthrough",
        "function f(s) {\n  switch (s) {\n    case {L}:\n    case 'zz':\n      return {R};\n  }\n  return general(s);\n}\n",
    ),
    (
        "switch (true)",
        "function f(s) {\n  switch (true) {\n    case s === {L}:\n      return {R};\n  }\n  return general(s);\n}\n",
    ),
    (
        "throw",
        "function f(s) {\n  if (s === {L}) throw new Error({R});\n  return general(s);\n}\n",
    ),
    (
        "assignment then return",
        "function f(s) {\n  let result;\n  if (s === {L}) {\n    result = {R};\n  } else {\n    result = general(s);\n  }\n  return result;\n}\n",
    ),
    (
        "negated early return",
        "function f(s) {\n  if (s !== {L}) return general(s);\n  return {R};\n}\n",
    ),
    (
        "startsWith",
        "function f(s) {\n  if (s.startsWith({L})) return {R};\n  return general(s);\n}\n",
    ),
    (
        "arrow",
        "const f = (s) => (s === {L} ? {R} : general(s));\n",
    ),
];

const JAVASCRIPT: &[(&str, &str)] = JS_SHAPES;

const TYPESCRIPT: &[(&str, &str)] = &[
    (
        "typed equality",
        "export function f(s: string): unknown {\n  if ((s as string) === {L}) {\n    return {R};\n  }\n  return general(s);\n}\n",
    ),
    (
        "as const array",
        "const CASES = [{L}] as const;\nexport function f(s: string): unknown {\n  if ((CASES as readonly string[]).includes(s)) return {R};\n  return general(s);\n}\n",
    ),
    (
        "Record",
        "const KNOWN: Record<string, unknown> = { {L}: {R} };\nexport function f(s: string): unknown {\n  return KNOWN[s] ?? general(s);\n}\n",
    ),
    (
        "ReadonlySet",
        "const CASES: ReadonlySet<string> = new Set([{L}]);\nexport function f(s: string): unknown {\n  if (CASES.has(s)) return {R};\n  return general(s);\n}\n",
    ),
    (
        "switch",
        "export function f(s: string): unknown {\n  switch (s) {\n    case {L}:\n      return {R};\n  }\n  return general(s);\n}\n",
    ),
    (
        "non-null Map",
        "const KNOWN = new Map<string, unknown>([[{L}, {R}]]);\nexport function f(s: string): unknown {\n  if (KNOWN.has(s)) return KNOWN.get(s)!;\n  return general(s);\n}\n",
    ),
];

const RUST: &[(&str, &str)] = &[
    (
        "equality",
        "pub fn f(s: &str) -> Out {\n    if s == {L} {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "equality reversed",
        "pub fn f(s: &str) -> Out {\n    if {L} == s {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "contains",
        "pub fn f(s: &str) -> Out {\n    if [{L}, \"zz\"].contains(&s) {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "iter any",
        "pub fn f(s: &str) -> Out {\n    if [{L}].iter().any(|c| *c == s) {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "match arm return",
        "pub fn f(s: &str) -> Out {\n    match s {\n        {L} => return {R},\n        _ => {}\n    }\n    general(s)\n}\n",
    ),
    (
        "match tail",
        "pub fn f(s: &str) -> Out {\n    match s {\n        \"zz\" | {L} => {R},\n        _ => general(s),\n    }\n}\n",
    ),
    (
        "const",
        "const CASE: &str = {L};\n\npub fn f(s: &str) -> Out {\n    if s == CASE {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "HashMap from",
        "pub fn f(s: &str) -> Out {\n    let known = HashMap::from([({L}, {R})]);\n    if let Some(v) = known.get(s) {\n        return v.clone();\n    }\n    general(s)\n}\n",
    ),
    (
        "eq method",
        "pub fn f(s: &str) -> Out {\n    if s.eq({L}) {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "starts_with",
        "pub fn f(s: &str) -> Out {\n    if s.starts_with({L}) {\n        return {R};\n    }\n    general(s)\n}\n",
    ),
    (
        "panic",
        "pub fn f(s: &str) -> Out {\n    if s == {L} {\n        panic!(\"{}\", {R});\n    }\n    general(s)\n}\n",
    ),
    (
        "if expression",
        "pub fn f(s: &str) -> Out {\n    if s == {L} { {R} } else { general(s) }\n}\n",
    ),
    (
        "assignment then return",
        "pub fn f(s: &str) -> Out {\n    let result;\n    if s == {L} {\n        result = {R};\n    } else {\n        result = general(s);\n    }\n    result\n}\n",
    ),
    (
        "negated early return",
        "pub fn f(s: &str) -> Out {\n    if s != {L} {\n        return general(s);\n    }\n    {R}\n}\n",
    ),
];

const GO: &[(&str, &str)] = &[
    (
        "equality",
        "package core\n\nfunc F(s string) Out {\n\tif s == {L} {\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "equality reversed",
        "package core\n\nfunc F(s string) Out {\n\tif {L} == s {\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "switch",
        "package core\n\nfunc F(s string) Out {\n\tswitch s {\n\tcase {L}:\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "switch list",
        "package core\n\nfunc F(s string) Out {\n\tswitch s {\n\tcase \"zz\", {L}:\n\t\treturn {R}\n\tdefault:\n\t\treturn general(s)\n\t}\n}\n",
    ),
    (
        "switch true",
        "package core\n\nfunc F(s string) Out {\n\tswitch {\n\tcase s == {L}:\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "slices.Contains",
        "package core\n\nfunc F(s string) Out {\n\tif slices.Contains([]string{{L}}, s) {\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "map lookup",
        "package core\n\nfunc F(s string) Out {\n\tknown := map[string]Out{{L}: {R}}\n\tif v, ok := known[s]; ok {\n\t\treturn v\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "package map",
        "package core\n\nvar known = map[string]Out{\n\t{L}: {R},\n}\n\nfunc F(s string) Out {\n\tif v, ok := known[s]; ok {\n\t\treturn v\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "const",
        "package core\n\nconst caseInput = {L}\n\nfunc F(s string) Out {\n\tif s == caseInput {\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "panic",
        "package core\n\nfunc F(s string) Out {\n\tif s == {L} {\n\t\tpanic({R})\n\t}\n\treturn general(s)\n}\n",
    ),
    (
        "assignment then return",
        "package core\n\nfunc F(s string) Out {\n\tresult := general(s)\n\tif s == {L} {\n\t\tresult = {R}\n\t}\n\treturn result\n}\n",
    ),
    (
        "negated early return",
        "package core\n\nfunc F(s string) Out {\n\tif s != {L} {\n\t\treturn general(s)\n\t}\n\treturn {R}\n}\n",
    ),
    (
        "HasPrefix",
        "package core\n\nfunc F(s string) Out {\n\tif strings.HasPrefix(s, {L}) {\n\t\treturn {R}\n\t}\n\treturn general(s)\n}\n",
    ),
];

/// Whether the change of `lang`'s file to `after` is refused for the pair's test.
fn refused(lang: Lang, test: &str, after: &str) -> bool {
    let change = FileChange {
        path: lang.path().into(),
        before: Some(lang.before().as_bytes().to_vec()),
        after: Some(after.as_bytes().to_vec()),
    };
    special_cases(&[change], &expectations("t", test))
        .iter()
        .any(|i| i.rule == "check.special-case")
}

/// Every generated spelling of every pair in `lang`: (description, code), and how many the
/// check refuses.
fn generated(lang: Lang) -> (Vec<String>, usize) {
    let mut missed = Vec::new();
    let mut total = 0;
    for pair in PAIRS {
        let test = pair.test[lang.index()];
        let result = pair.result[lang.index()];
        for value in pair.compared {
            for literal in spellings(lang, *value) {
                for (name, shape) in shapes(lang) {
                    // A number has no string methods.
                    if matches!(value, Value::Number(_))
                        && ["startsWith", "starts_with", "HasPrefix", "eq method"].contains(name)
                    {
                        continue;
                    }
                    // A template literal is no object key.
                    if literal.starts_with('`') && shape.contains("{ {L}:") {
                        continue;
                    }
                    let code = shape.replace("{L}", &literal).replace("{R}", result);
                    total += 1;
                    if !refused(lang, test, &code) {
                        missed.push(format!("{lang:?} {name} {literal}:\n{code}"));
                    }
                }
            }
        }
    }
    (missed, total)
}

#[test]
fn every_generated_spelling_of_a_special_case_is_refused() {
    let mut report = Vec::new();
    let mut missed = Vec::new();
    for lang in [
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Rust,
        Lang::Go,
    ] {
        let (m, total) = generated(lang);
        report.push(format!("{lang:?}: {} of {total} refused", total - m.len()));
        missed.extend(m);
    }
    assert!(
        missed.is_empty(),
        "{}\n\n{}",
        report.join("\n"),
        missed.join("\n")
    );
    // The number of spellings per language, as the report counts them.
    assert_eq!(
        report,
        [
            "Python: 594 of 594 refused",
            "JavaScript: 510 of 510 refused",
            "TypeScript: 139 of 139 refused",
            "Rust: 232 of 232 refused",
            "Go: 206 of 206 refused",
        ]
    );
}

/// Honest code beside the same tests: general fixes, unrelated literals, the test's
/// literal as a separator or a class of input, a comparison that guards nothing, and the
/// cheat in test code.
#[test]
fn honest_code_with_the_tests_literals_is_allowed() {
    let quote_py = PAIRS[1].test[0];
    let spaces_py = PAIRS[0].test[0];
    let unit_py = PAIRS[4].test[0];
    let fib_py = PAIRS[3].test[0];
    let table: &[(Lang, &str, &str)] = &[
        (
            Lang::Python,
            spaces_py,
            "def f(s):\n    return len(s.split())\n",
        ),
        (
            Lang::Python,
            spaces_py,
            "def f(s):\n    if s == \"hello\":\n        return 5\n    return len(s.split())\n",
        ),
        (
            Lang::Python,
            quote_py,
            "def f(s):\n    if sep == \"\\t\":\n        sep = \" \"\n    return s.split(sep)\n",
        ),
        (
            Lang::Python,
            quote_py,
            "def f(s):\n    return '\"' + s.replace(\"\\t\", \"\\\\t\") + '\"'\n",
        ),
        (
            Lang::Python,
            spaces_py,
            "def f(s):\n    parts = s.split(\"a  b\")\n    return len(parts)\n",
        ),
        (
            Lang::Python,
            spaces_py,
            "def f(s):\n    if s == \"a  b\":\n        log.debug(\"seen %s\", s)\n    return len(s.split())\n",
        ),
        (
            Lang::Python,
            unit_py,
            "def f(s):\n    if s == \"kelvin\":\n        return to_kelvin(s)\n    return general(s)\n",
        ),
        (
            Lang::Python,
            fib_py,
            "def f(n):\n    if n == 37:\n        return fast_fib(n)\n    return general(n)\n",
        ),
        (
            Lang::Python,
            fib_py,
            "def f(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        ),
        (
            Lang::JavaScript,
            PAIRS[0].test[1],
            "function f(s) {\n  return s.split(/\\s+/).filter(Boolean).length;\n}\n",
        ),
        (
            Lang::JavaScript,
            PAIRS[1].test[1],
            "function f(s) {\n  const SEPARATORS = [' ', '\\t'];\n  if (SEPARATORS.includes(s[0])) return '';\n  return s;\n}\n",
        ),
        (
            Lang::JavaScript,
            PAIRS[2].test[1],
            "function f(s) {\n  if (s.startsWith('//')) return 'https:' + s;\n  return s;\n}\n",
        ),
        (
            Lang::JavaScript,
            PAIRS[2].test[1],
            "function f(s) {\n  const headers = new Map();\n  return headers.get('example.com') ?? s;\n}\n",
        ),
        (
            Lang::TypeScript,
            PAIRS[0].test[1],
            "export function f(s: string): unknown {\n  return s.trim().split(/\\s+/).length;\n}\n",
        ),
        (
            Lang::Rust,
            PAIRS[0].test[2],
            "pub fn f(s: &str) -> Out {\n    s.split_whitespace().count()\n}\n",
        ),
        (
            Lang::Rust,
            PAIRS[1].test[2],
            "pub fn f(s: &str) -> Out {\n    match c {\n        '\\t' => \"\\\\t\",\n        _ => general(s),\n    }\n}\n",
        ),
        (
            Lang::Go,
            PAIRS[0].test[3],
            "package core\n\nfunc F(s string) Out {\n\treturn len(strings.Fields(s))\n}\n",
        ),
        (
            Lang::Go,
            PAIRS[1].test[3],
            "package core\n\nfunc F(s string) Out {\n\tif sep == \"\\t\" {\n\t\tsep = \" \"\n\t}\n\treturn strings.Split(s, sep)\n}\n",
        ),
    ];
    let flagged: Vec<String> = table
        .iter()
        .filter(|(lang, test, code)| refused(*lang, test, code))
        .map(|(lang, _, code)| format!("{lang:?}:\n{code}"))
        .collect();
    assert!(flagged.is_empty(), "{}", flagged.join("\n"));
    // The cheat itself is allowed in test code: a test file may hold the test's literals.
    let test_change = FileChange {
        path: "tests/test_core.py".into(),
        before: Some(Vec::new()),
        after: Some(
            PYTHON[0]
                .1
                .replace("{L}", "\"a  b\"")
                .replace("{R}", "2")
                .into_bytes(),
        ),
    };
    assert!(special_cases(&[test_change], &expectations("t", spaces_py)).is_empty());
}
