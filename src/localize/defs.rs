//! What a line of source defines: `def name`, `class Name`, `function name`, `name(...) {`,
//! `fn name`, `func name`, and the titles JS test files give their tests (`it('title', ...)`).
//!
//! Line-based and byte-based on purpose: it runs over every tracked source file of a large
//! repository once per run, so it must be cheap and must not care about encodings. It is a
//! recognizer of the common definition shapes of each language, not a parser; what it misses
//! is still found by the failure output's own locations.

use std::sync::LazyLock;

use memchr::memmem::Finder;

/// Languages whose definitions are recognized, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    /// JavaScript and TypeScript, every module flavour.
    Js,
    Rust,
    Go,
    Ruby,
    /// C, C++, Java, Kotlin, C#: `Type name(args) {` functions and `class Name`.
    CLike,
}

impl Lang {
    pub(crate) fn of(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, ext)| ext)?;
        Some(match ext {
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Lang::Js,
            "rs" => Lang::Rust,
            "go" => Lang::Go,
            "rb" => Lang::Ruby,
            "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "java" | "kt" | "cs" => Lang::CLike,
            _ => return None,
        })
    }
}

/// What a definition defines; it only changes the words of a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DefKind {
    /// A function, method or macro.
    Function = 0,
    /// A class, struct, enum, trait, interface or type alias.
    Type = 1,
    /// A module-level constant, variable or assignment.
    Value = 2,
    /// A Rust `mod`.
    Module = 3,
    /// The title a JS test file gives a test or suite (`it('adds', ...)`).
    TestTitle = 4,
}

impl DefKind {
    /// The noun a reason uses, e.g. "defines function `parse`".
    pub(crate) fn noun(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Type => "type",
            DefKind::Value => "value",
            DefKind::Module => "module",
            DefKind::TestTitle => "test",
        }
    }
}

/// Lines longer than this are not scanned (data, minified code).
const MAX_SCANNED_LINE: usize = 1000;

/// The name a line defines, if any.
pub(crate) fn definition(lang: Lang, line: &[u8]) -> Option<(&[u8], DefKind)> {
    if line.len() > MAX_SCANNED_LINE {
        return None;
    }
    let (indent, text) = trim_start(line);
    // Every definition starts with a keyword or a name (or `*` for a generator method);
    // this turns away most lines (closing braces, comments, calls on `this`) at once.
    match text.first() {
        Some(b) if is_ident_byte(*b) || *b == b'*' => {}
        _ => return None,
    }
    match lang {
        Lang::Python => python(indent, text),
        Lang::Js => js(text),
        Lang::Rust => rust(text),
        Lang::Go => go(text),
        Lang::Ruby => ruby(text),
        Lang::CLike => c_like(text),
    }
}

fn python(indent: usize, text: &[u8]) -> Option<(&[u8], DefKind)> {
    let text = strip_word(text, b"async").unwrap_or(text);
    if let Some(rest) = strip_word(text, b"def") {
        return ident(rest).map(|name| (name, DefKind::Function));
    }
    if let Some(rest) = strip_word(text, b"class") {
        return ident(rest).map(|name| (name, DefKind::Type));
    }
    if indent == 0 {
        // A module-level assignment (`parse = _parse`, `DEFAULTS: dict = {}`).
        let name = ident(text)?;
        let rest = trim_start(&text[name.len()..]).1;
        let rest = match rest.first() {
            Some(b':') => {
                let at = rest.iter().position(|b| *b == b'=')?;
                &rest[at..]
            }
            _ => rest,
        };
        if rest.starts_with(b"=") && !rest.starts_with(b"==") {
            return Some((name, DefKind::Value));
        }
    }
    None
}

/// Modifiers that may precede a JS/TS declaration or class member.
const JS_MODIFIERS: &[&[u8]] = &[
    b"export",
    b"default",
    b"declare",
    b"abstract",
    b"async",
    b"public",
    b"private",
    b"protected",
    b"static",
    b"readonly",
    b"override",
];

/// Words that look like a method shorthand (`name(...) {`) but are statements.
const JS_STATEMENTS: &[&[u8]] = &[
    b"if",
    b"for",
    b"while",
    b"switch",
    b"catch",
    b"function",
    b"return",
    b"with",
    b"do",
    b"else",
    b"try",
    b"typeof",
    b"new",
    b"await",
    b"yield",
    b"delete",
    b"void",
    b"super",
    b"import",
    b"require",
    b"throw",
    b"case",
];

fn js(text: &[u8]) -> Option<(&[u8], DefKind)> {
    let mut text = text;
    while let Some(rest) = JS_MODIFIERS.iter().find_map(|m| strip_word(text, m)) {
        text = rest;
    }
    if let Some(rest) = strip_word(text, b"function").or_else(|| text.strip_prefix(b"function*")) {
        let rest = trim_start(rest).1;
        return ident(rest).map(|name| (name, DefKind::Function));
    }
    for keyword in [&b"class"[..], b"interface", b"type", b"enum", b"namespace"] {
        if let Some(rest) = strip_word(text, keyword) {
            return ident(rest).map(|name| (name, DefKind::Type));
        }
    }
    for keyword in [&b"const"[..], b"let", b"var"] {
        if let Some(rest) = strip_word(text, keyword) {
            let name = ident(rest)?;
            let after = trim_start(&rest[name.len()..]).1;
            return (after.starts_with(b"=") || after.starts_with(b":"))
                .then_some((name, DefKind::Value));
        }
    }
    // `exports.name =`, `module.exports.name =`, `Foo.prototype.name =`.
    for prefix in [&b"module.exports."[..], b"exports."] {
        if let Some(rest) = text.strip_prefix(prefix) {
            let name = ident(rest)?;
            return assigned(&rest[name.len()..]).then_some((name, DefKind::Value));
        }
    }
    // Both assign: `Foo.prototype.name = ...`, `module.exports = function parse(`.
    if memchr::memchr(b'=', text).is_some() {
        static PROTOTYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b".prototype."));
        static FUNCTION: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"function "));
        if let Some(at) = PROTOTYPE.find(text) {
            let rest = &text[at + b".prototype.".len()..];
            let name = ident(rest)?;
            return assigned(&rest[name.len()..]).then_some((name, DefKind::Function));
        }
        if let Some(at) = FUNCTION.find(text)
            && at > 0
            && text[at - 1] != b'.'
            && !is_ident_byte(text[at - 1])
        {
            let rest = trim_start(&text[at + b"function ".len()..]).1;
            if let Some(name) = ident(rest) {
                return Some((name, DefKind::Function));
            }
        }
    }
    let text = strip_word(text, b"get")
        .or_else(|| strip_word(text, b"set"))
        .unwrap_or(text);
    let text = text.strip_prefix(b"*").unwrap_or(text);
    let name = ident(text)?;
    if JS_STATEMENTS.contains(&name) {
        return None;
    }
    let rest = trim_start(&text[name.len()..]).1;
    // A class member or object method: `name(args) {`, `name<T>(args): T {`; not a call
    // that passes a callback (`describe('x', () => {`), whose arguments are values.
    if (rest.starts_with(b"(") || rest.starts_with(b"<"))
        && opens_block(text)
        && !trim_start(&rest[1..])
            .1
            .first()
            .is_some_and(|b| matches!(b, b'\'' | b'"' | b'`'))
        && find(rest, b"=>").is_none()
        && find(rest, b"function").is_none()
    {
        return Some((name, DefKind::Function));
    }
    // `name: function (`, `name: (a) =>`, `name = (a) =>`, `name = async function`.
    if let Some(value) = rest.strip_prefix(b":").or_else(|| {
        rest.strip_prefix(b"=")
            .filter(|value| !value.starts_with(b"="))
    }) {
        let value = trim_start(value).1;
        let value = strip_word(value, b"async").unwrap_or(value);
        if value.starts_with(b"function")
            || (value.starts_with(b"(") && find(value, b"=>").is_some())
        {
            return Some((name, DefKind::Function));
        }
        if ident(value).is_some_and(|arg| trim_start(&value[arg.len()..]).1.starts_with(b"=>")) {
            return Some((name, DefKind::Function));
        }
    }
    None
}

fn rust(text: &[u8]) -> Option<(&[u8], DefKind)> {
    let mut text = text;
    loop {
        if let Some(rest) = text.strip_prefix(b"pub(") {
            let close = rest.iter().position(|b| *b == b')')?;
            text = trim_start(&rest[close + 1..]).1;
            continue;
        }
        if let Some(rest) = strip_word(text, b"pub") {
            text = rest;
            continue;
        }
        if let Some(rest) = [&b"async"[..], b"unsafe", b"default", b"extern"]
            .iter()
            .find_map(|word| strip_word(text, word))
        {
            text = rest;
            if text.starts_with(b"\"") {
                let close = text[1..].iter().position(|b| *b == b'"')?;
                text = trim_start(&text[close + 2..]).1;
            }
            continue;
        }
        if let Some(rest) = strip_word(text, b"const")
            && strip_word(rest, b"fn").is_some()
        {
            text = rest;
            continue;
        }
        break;
    }
    let (rest, kind) = if let Some(rest) = strip_word(text, b"fn") {
        (rest, DefKind::Function)
    } else if let Some(rest) = text.strip_prefix(b"macro_rules!") {
        (trim_start(rest).1, DefKind::Function)
    } else if let Some(rest) = [&b"struct"[..], b"enum", b"trait", b"union", b"type"]
        .iter()
        .find_map(|word| strip_word(text, word))
    {
        (rest, DefKind::Type)
    } else if let Some(rest) = strip_word(text, b"mod") {
        (rest, DefKind::Module)
    } else if let Some(rest) = strip_word(text, b"const").or_else(|| strip_word(text, b"static")) {
        let rest = strip_word(rest, b"mut").unwrap_or(rest);
        (rest, DefKind::Value)
    } else {
        return None;
    };
    ident(rest).map(|name| (name, kind))
}

fn go(text: &[u8]) -> Option<(&[u8], DefKind)> {
    if let Some(rest) = strip_word(text, b"func") {
        // A method: `func (r *Reader) Read(`.
        let rest = if rest.starts_with(b"(") {
            let close = rest.iter().position(|b| *b == b')')?;
            trim_start(&rest[close + 1..]).1
        } else {
            rest
        };
        return ident(rest).map(|name| (name, DefKind::Function));
    }
    if let Some(rest) = strip_word(text, b"type") {
        return ident(rest).map(|name| (name, DefKind::Type));
    }
    let rest = strip_word(text, b"var").or_else(|| strip_word(text, b"const"))?;
    ident(rest).map(|name| (name, DefKind::Value))
}

fn ruby(text: &[u8]) -> Option<(&[u8], DefKind)> {
    if let Some(rest) = strip_word(text, b"def") {
        let rest = rest.strip_prefix(b"self.").unwrap_or(rest);
        return ident(rest).map(|name| (name, DefKind::Function));
    }
    let rest = strip_word(text, b"class").or_else(|| strip_word(text, b"module"))?;
    ident(rest).map(|name| (name, DefKind::Type))
}

/// Words that start a C-like statement, never a function definition.
const C_STATEMENTS: &[&[u8]] = &[
    b"if",
    b"for",
    b"while",
    b"switch",
    b"return",
    b"else",
    b"case",
    b"do",
    b"sizeof",
    b"new",
    b"delete",
    b"throw",
    b"catch",
    b"using",
    b"typedef",
    b"goto",
    b"#define",
    b"#include",
];

fn c_like(text: &[u8]) -> Option<(&[u8], DefKind)> {
    for keyword in [
        &b"class"[..],
        b"interface",
        b"enum",
        b"struct",
        b"record",
        b"object",
    ] {
        if let Some(at) = find_word(text, keyword) {
            let rest = trim_start(&text[at + keyword.len()..]).1;
            if let Some(name) = ident(rest) {
                let ends_statement = text.trim_ascii_end().ends_with(b";");
                if !ends_statement {
                    return Some((name, DefKind::Type));
                }
            }
        }
    }
    if let Some(rest) = find_word(text, b"fun").map(|at| trim_start(&text[at + 3..]).1) {
        return ident(rest).map(|name| (name, DefKind::Function));
    }
    // `Type name(args) {` or `Type Class::name(args)` with the brace on the next line.
    let first = ident(text)?;
    if C_STATEMENTS.contains(&first) {
        return None;
    }
    let paren = text.iter().position(|b| *b == b'(')?;
    let before = text[..paren].trim_ascii_end();
    if before.contains(&b'=') || text.trim_ascii_end().ends_with(b";") {
        return None;
    }
    let start = before
        .iter()
        .rposition(|b| !is_ident_byte(*b))
        .map_or(0, |at| at + 1);
    let name = &before[start..];
    // A type must come before the name (a bare `name(args)` line is a call).
    let typed = before[..start].iter().any(|b| is_ident_byte(*b));
    (typed && !name.is_empty() && !name[0].is_ascii_digit() && !C_STATEMENTS.contains(&name))
        .then_some((name, DefKind::Function))
}

/// Callees whose first string argument titles a JS test or suite.
const TEST_CALLEES: &[&[u8]] = &[
    b"it",
    b"test",
    b"describe",
    b"suite",
    b"context",
    b"specify",
    b"bench",
];

/// The title a JS test file gives a test on this line: `it('adds', ...)`,
/// `test.only("adds", ...)`, `t.test(`adds`, ...)`, `describe.each(...)('adds'` is not read.
pub(crate) fn test_title(line: &[u8]) -> Option<&[u8]> {
    if line.len() > MAX_SCANNED_LINE {
        return None;
    }
    let mut from = 0;
    while let Some(at) = line[from..]
        .iter()
        .position(|b| *b == b'(')
        .map(|at| at + from)
    {
        from = at + 1;
        let callee = callee_before(&line[..at]);
        if !TEST_CALLEES.contains(&callee) {
            continue;
        }
        let arg = trim_start(&line[at + 1..]).1;
        let Some(&quote) = arg.first().filter(|q| matches!(q, b'\'' | b'"' | b'`')) else {
            continue;
        };
        let body = &arg[1..];
        let mut escaped = false;
        for (i, byte) in body.iter().enumerate() {
            match byte {
                b'\\' if !escaped => escaped = true,
                b if *b == quote && !escaped => return (i > 0).then_some(&body[..i]),
                _ => escaped = false,
            }
        }
    }
    None
}

/// The callee word before an opening parenthesis: `it`, or `test` in `test.only`,
/// `t.test`, `tap.test`.
fn callee_before(text: &[u8]) -> &[u8] {
    let text = text.trim_ascii_end();
    let start = text
        .iter()
        .rposition(|b| !(is_ident_byte(*b) || *b == b'.'))
        .map_or(0, |at| at + 1);
    let word = &text[start..];
    let mut parts = word.split(|b| *b == b'.');
    let first = parts.next().unwrap_or(word);
    match parts.next() {
        // `test.only`, `it.skip`, `describe.concurrent`: the first part is the callee.
        Some(modifier) if TEST_CALLEES.contains(&first) && !TEST_CALLEES.contains(&modifier) => {
            first
        }
        // `t.test`, `tap.test`: the last part is.
        Some(_) => word.rsplit(|b| *b == b'.').next().unwrap_or(word),
        None => first,
    }
}

pub(crate) fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// The identifier at the start of `text`.
pub(crate) fn ident(text: &[u8]) -> Option<&[u8]> {
    let end = text
        .iter()
        .position(|b| !is_ident_byte(*b))
        .unwrap_or(text.len());
    (end > 0 && !text[0].is_ascii_digit()).then_some(&text[..end])
}

/// Leading spaces and tabs counted, and the rest.
fn trim_start(line: &[u8]) -> (usize, &[u8]) {
    let n = line
        .iter()
        .position(|b| *b != b' ' && *b != b'\t')
        .unwrap_or(line.len());
    (n, &line[n..])
}

/// `text` without a leading `word` followed by whitespace, trimmed.
fn strip_word<'t>(text: &'t [u8], word: &[u8]) -> Option<&'t [u8]> {
    let rest = text.strip_prefix(word)?;
    match rest.first() {
        Some(b' ' | b'\t') => Some(trim_start(rest).1),
        _ => None,
    }
}

fn find(text: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(text, needle)
}

/// `word` as a whole word in `text`.
fn find_word(text: &[u8], word: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = find(&text[from..], word).map(|at| at + from) {
        let before_ok = at == 0 || !is_ident_byte(text[at - 1]);
        let after_ok = text
            .get(at + word.len())
            .is_some_and(|b| *b == b' ' || *b == b'\t');
        if before_ok && after_ok {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `= value` (and not `==`).
fn assigned(rest: &[u8]) -> bool {
    let rest = trim_start(rest).1;
    rest.starts_with(b"=") && !rest.starts_with(b"==")
}

/// The line ends by opening a block (`{`), possibly after a return type.
fn opens_block(text: &[u8]) -> bool {
    text.trim_ascii_end().ends_with(b"{")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(lang: Lang, line: &str) -> Option<(String, DefKind)> {
        definition(lang, line.as_bytes())
            .map(|(name, kind)| (String::from_utf8_lossy(name).into_owned(), kind))
    }

    fn names(lang: Lang, lines: &[&str]) -> Vec<String> {
        lines
            .iter()
            .map(|line| match def(lang, line) {
                Some((name, kind)) => format!("{name}:{}", kind.noun()),
                None => "-".to_owned(),
            })
            .collect()
    }

    #[test]
    fn python_definitions_are_functions_classes_and_module_assignments() {
        assert_eq!(
            names(
                Lang::Python,
                &[
                    "def parse(text):",
                    "    async def fetch(self):",
                    "class Duration:",
                    "DEFAULTS: dict = {}",
                    "parse_all = parse",
                    "    x = 1",
                    "if x == 1:",
                    "print(x)",
                ]
            ),
            [
                "parse:function",
                "fetch:function",
                "Duration:type",
                "DEFAULTS:value",
                "parse_all:value",
                "-",
                "-",
                "-"
            ]
        );
    }

    #[test]
    fn javascript_definitions_cover_declarations_members_and_exports() {
        assert_eq!(
            names(
                Lang::Js,
                &[
                    "export default async function handler(req) {",
                    "function* walk(node) {",
                    "export class Cart extends Base {",
                    "export interface CaseOptions {",
                    "export const camelCase = (input: string): string => {",
                    "const SEPARATORS = /x/;",
                    "  static from(items) {",
                    "  async totalWithTax(rate = 'standard') {",
                    "  get size() {",
                    "  parse: function (str) {",
                    "  render = (props) => {",
                    "exports.parse = parse;",
                    "Cart.prototype.total = function () {",
                    "module.exports = function parse(str, options) {",
                    "  if (x) {",
                    "  for (const item of items) {",
                    "describe('parse()', () => {",
                    "  useEffect(function () {",
                    "  foo(bar);",
                    "  return parse(x);",
                ]
            ),
            [
                "handler:function",
                "walk:function",
                "Cart:type",
                "CaseOptions:type",
                "camelCase:value",
                "SEPARATORS:value",
                "from:function",
                "totalWithTax:function",
                "size:function",
                "parse:function",
                "render:function",
                "parse:value",
                "total:function",
                "parse:function",
                "-",
                "-",
                "-",
                "-",
                "-",
                "-"
            ]
        );
    }

    #[test]
    fn rust_definitions_skip_visibility_and_qualifiers() {
        assert_eq!(
            names(
                Lang::Rust,
                &[
                    "pub fn wrap_words(text: &str) -> Vec<String> {",
                    "    pub(crate) async unsafe fn go() {",
                    "pub const fn max() -> u8 {",
                    "extern \"C\" fn callback() {}",
                    "pub struct Version {",
                    "pub(in crate::a) enum Error {",
                    "mod text;",
                    "macro_rules! ensure {",
                    "static mut COUNT: u32 = 0;",
                    "const LIMIT: usize = 3;",
                    "let x = 1;",
                    "impl Version {",
                ]
            ),
            [
                "wrap_words:function",
                "go:function",
                "max:function",
                "callback:function",
                "Version:type",
                "Error:type",
                "text:module",
                "ensure:function",
                "COUNT:value",
                "LIMIT:value",
                "-",
                "-"
            ]
        );
    }

    #[test]
    fn go_ruby_and_c_like_definitions() {
        assert_eq!(
            names(
                Lang::Go,
                &[
                    "func Reverse(s string) string {",
                    "func (r *Reader) Read(p []byte) (int, error) {",
                    "type Reader struct {",
                    "var ErrShort = errors.New(\"short\")",
                ]
            ),
            [
                "Reverse:function",
                "Read:function",
                "Reader:type",
                "ErrShort:value"
            ]
        );
        assert_eq!(
            names(
                Lang::Ruby,
                &["  def self.parse(text)", "class Parser < Base"]
            ),
            ["parse:function", "Parser:type"]
        );
        assert_eq!(
            names(
                Lang::CLike,
                &[
                    "static int parse_line(const char *s) {",
                    "public List<String> split(String text) {",
                    "std::string Parser::next()",
                    "public final class Parser {",
                    "fun parse(text: String): Int {",
                    "if (parse(x)) {",
                    "    result = compute(a, b);",
                    "int count(void);",
                    "    return helper(x);",
                ]
            ),
            [
                "parse_line:function",
                "split:function",
                "next:function",
                "Parser:type",
                "parse:function",
                "-",
                "-",
                "-",
                "-"
            ]
        );
    }

    #[test]
    fn test_titles_are_read_from_every_common_test_call() {
        let titles: Vec<Option<String>> = [
            "  it('decodes plus signs as spaces', function () {",
            "test(\"totals with tax\", () => {",
            "describe.concurrent(`camelCase`, () => {",
            "test.only('a \\'quoted\\' title', () => {",
            "  t.test('nested', (t) => {",
            "tap.test('tap style', async (t) => {",
            "const x = test(name, () => {});",
            "  assert.equal(parse('a'), 1);",
        ]
        .iter()
        .map(|line| test_title(line.as_bytes()).map(|t| String::from_utf8_lossy(t).into_owned()))
        .collect();
        assert_eq!(
            titles,
            [
                Some("decodes plus signs as spaces".to_owned()),
                Some("totals with tax".to_owned()),
                Some("camelCase".to_owned()),
                Some("a \\'quoted\\' title".to_owned()),
                Some("nested".to_owned()),
                Some("tap style".to_owned()),
                None,
                None,
            ]
        );
    }
}
