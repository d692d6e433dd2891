//! What the language resolvers share: the names a file binds (imports, assignments,
//! destructuring, helper functions) and the paths an expression can stand for.
//!
//! A path is the dotted name of what an expression reads, whatever it was spelled as:
//! `sys.argv`, `process.env`, `std.env.args`, `os.Args`; a call adds `()` to its segment
//! (`threading.current_thread().name`, `Error().stack`), and a root the file does not bind to
//! anything known is `?`. Bindings are read from the whole file without scopes: a name bound
//! several times stands for every value it was bound to, so a cheat cannot hide a read behind
//! a second binding of the same name.

use std::collections::HashMap;

use tree_sitter::Node;

/// How deep alias chains, helper functions and built names are followed.
pub(super) const MAX_DEPTH: usize = 12;

/// At most this many paths per expression (a name bound many times, unions of `||`).
const MAX_PATHS: usize = 24;

/// The root of a path whose base is not known.
pub(super) const UNKNOWN: &str = "?";

/// What a name was bound to.
#[derive(Debug, Clone)]
pub(super) enum Value<'t> {
    /// An expression of the file.
    Node(Node<'t>),
    /// A module or a member of one, by path (`import sys as s`, `use std::env as e`).
    Path(String),
    /// A member of a value (`const {argv} = process`).
    Field(Box<Value<'t>>, String),
}

/// The names of one file.
pub(super) struct Scope<'t> {
    pub text: &'t str,
    /// Every value each name was bound to.
    pub names: HashMap<&'t str, Vec<Value<'t>>>,
    /// The expressions each named function (or lambda) returns.
    pub returns: HashMap<&'t str, Vec<Node<'t>>>,
    /// Modules imported whole into the file (`from os import *`, `use std::env::*`, Go's
    /// dot import): a free name may be a member of any.
    pub globs: Vec<String>,
}

impl<'t> Scope<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Scope {
            text,
            names: HashMap::new(),
            returns: HashMap::new(),
            globs: Vec::new(),
        }
    }

    pub(super) fn text(&self, node: Node<'_>) -> &'t str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    pub(super) fn bind(&mut self, name: Node<'t>, value: Value<'t>) {
        let name = self.text(name);
        if !name.is_empty() {
            self.names.entry(name).or_default().push(value);
        }
    }

    pub(super) fn bind_name(&mut self, name: &'t str, value: Value<'t>) {
        self.names.entry(name).or_default().push(value);
    }

    pub(super) fn add_return(&mut self, function: &'t str, value: Node<'t>) {
        self.returns.entry(function).or_default().push(value);
    }
}

/// The paths of `key` read on each of `bases`; a read on the global object (`globalThis.x`)
/// is the global `x`.
pub(super) fn member(bases: &[String], key: &str, globals: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for base in bases {
        let path = if globals.contains(&base.as_str()) {
            key.to_owned()
        } else {
            format!("{base}.{key}")
        };
        push(&mut out, path);
    }
    out
}

/// The paths of calling each of `bases`.
pub(super) fn called(bases: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for base in bases {
        push(&mut out, format!("{base}()"));
    }
    out
}

/// Add `path` once, up to the limit.
pub(super) fn push(out: &mut Vec<String>, path: String) {
    if out.len() < MAX_PATHS && !out.contains(&path) {
        out.push(path);
    }
}

/// Add every path of `more`.
pub(super) fn extend(out: &mut Vec<String>, more: Vec<String>) {
    for path in more {
        push(out, path);
    }
}

/// The named children of `node`.
pub(super) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Every node under `root` in document order, `root` included.
pub(super) fn descendants(root: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// The `return` values under a function body, not those of functions nested in it.
pub(super) fn returned<'t>(body: Node<'t>, nested: &[&str], kind: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if node.kind() == kind {
            out.extend(node.named_child(0));
            continue;
        }
        if node != body && nested.contains(&node.kind()) {
            continue;
        }
        stack.extend(named_children(node));
    }
    out
}

/// Whether `node` has an ancestor of one of `kinds` at most `levels` levels up.
pub(super) fn inside(node: Node<'_>, kinds: &[&str], levels: usize) -> bool {
    let mut current = node.parent();
    for _ in 0..levels {
        let Some(n) = current else {
            return false;
        };
        if kinds.contains(&n.kind()) {
            return true;
        }
        current = n.parent();
    }
    false
}

/// The text of a string literal's body with the common escapes undone.
pub(super) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// One language's reading of a file: the paths an expression stands for, the constant string
/// it builds, and whether a node is read at all (not a name being bound).
pub(super) trait Resolver<'t> {
    fn scope(&self) -> &Scope<'t>;

    /// The paths `node` can stand for; empty when it is not a reference.
    fn paths(&self, node: Node<'t>, depth: usize) -> Vec<String>;

    /// The string `node` builds when it is constant (literals, concatenation, joins,
    /// templates of constants, names bound to constants).
    fn constant(&self, node: Node<'t>, depth: usize) -> Option<String>;

    /// Whether `node` is read where it stands, rather than bound, imported or named as a
    /// member of something else.
    fn is_reference(&self, node: Node<'t>) -> bool;

    /// Whether a string node is documentation rather than a value.
    fn is_documentation(&self, _node: Node<'t>) -> bool {
        false
    }

    /// The roots that name the global object (`globalThis`): a member of one is a global.
    fn globals(&self) -> &'static [&'static str] {
        &[]
    }

    /// The paths of a bound value.
    fn value_paths(&self, value: &Value<'t>, depth: usize) -> Vec<String> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        match value {
            Value::Node(node) => self.paths(*node, depth + 1),
            Value::Path(path) => vec![path.clone()],
            Value::Field(base, key) => {
                member(&self.value_paths(base, depth + 1), key, self.globals())
            }
        }
    }

    /// The paths of a free name: itself (a global or a module the file may use unbound),
    /// every value it was bound to, and its member in every module imported whole.
    fn name_paths(&self, name: &str, depth: usize) -> Vec<String> {
        let scope = self.scope();
        let mut out = vec![name.to_owned()];
        match scope.names.get(name) {
            Some(values) => {
                for value in values {
                    extend(&mut out, self.value_paths(value, depth + 1));
                }
            }
            None => {
                for glob in &scope.globs {
                    push(&mut out, format!("{glob}.{name}"));
                }
            }
        }
        out
    }

    /// The paths of what a named function or lambda returns when called.
    fn returned_paths(&self, name: &str, depth: usize) -> Vec<String> {
        let mut out = Vec::new();
        if depth > MAX_DEPTH {
            return out;
        }
        if let Some(values) = self.scope().returns.get(name) {
            for value in values {
                extend(&mut out, self.paths(*value, depth + 1));
            }
        }
        out
    }

    /// The first constant a name was bound to.
    fn name_constant(&self, name: &str, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.scope().names.get(name)?.iter().find_map(|v| match v {
            Value::Node(node) => self.constant(*node, depth + 1),
            _ => None,
        })
    }
}
