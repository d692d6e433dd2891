//! Rust: `use` trees (`use std::env as e`, `use std::{env, fs}`, `use std::env::*`), `let`
//! bindings, functions returning a value, paths (`std::env::args`, `e::args`) and method
//! chains (`std::thread::current().name()`, `fs::metadata(p)?.modified()`). Paths are written
//! with dots, as in the other languages (`std.env.args`).

use tree_sitter::Node;

use super::scope::{
    MAX_DEPTH, Resolver, Scope, Value, called, descendants, extend, inside, member, named_children,
    returned,
};

pub(super) struct Rust<'t> {
    scope: Scope<'t>,
}

impl<'t> Rust<'t> {
    pub(super) fn new(root: Node<'t>, text: &'t str) -> Self {
        let mut scope = Scope::new(text);
        for node in descendants(root) {
            match node.kind() {
                "use_declaration" => {
                    if let Some(argument) = node.child_by_field_name("argument") {
                        use_tree(&mut scope, argument, "");
                    }
                }
                "let_declaration" => {
                    if let (Some(pattern), Some(value)) = (
                        node.child_by_field_name("pattern"),
                        node.child_by_field_name("value"),
                    ) && pattern.kind() == "identifier"
                    {
                        scope.bind(pattern, Value::Node(value));
                    }
                }
                "function_item" => {
                    if let (Some(name), Some(body)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("body"),
                    ) {
                        let name = scope.text(name);
                        let mut values = returned(
                            body,
                            &["function_item", "closure_expression"],
                            "return_expression",
                        );
                        // The block's tail expression is returned too.
                        values.extend(named_children(body).last().filter(|n| {
                            !n.kind().ends_with("statement") && n.kind() != "let_declaration"
                        }));
                        for value in values {
                            scope.add_return(name, value);
                        }
                    }
                }
                _ => {}
            }
        }
        Rust { scope }
    }
}

/// A `::` path as a dotted path, without a leading `::`.
fn dotted(path: &str) -> String {
    path.trim_start_matches("::")
        .split("::")
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(".")
}

/// Bind the names one `use` tree brings in under `prefix` (a dotted path, or empty).
fn use_tree<'t>(scope: &mut Scope<'t>, node: Node<'t>, prefix: &str) {
    let join = |rest: &str| {
        if prefix.is_empty() {
            dotted(rest)
        } else {
            format!("{prefix}.{}", dotted(rest))
        }
    };
    match node.kind() {
        "identifier" | "scoped_identifier" => {
            let full = join(scope.text(node));
            let last = full.rsplit('.').next().unwrap_or(&full).to_owned();
            if last == "self" {
                let module = full.trim_end_matches(".self").to_owned();
                let name = module.rsplit('.').next().unwrap_or(&module).to_owned();
                bind_owned(scope, name, module);
            } else {
                bind_owned(scope, last, full);
            }
        }
        "self" => {
            let name = prefix.rsplit('.').next().unwrap_or(prefix).to_owned();
            bind_owned(scope, name, prefix.to_owned());
        }
        "use_as_clause" => {
            if let (Some(path), Some(alias)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) {
                let full = join(scope.text(path));
                scope.bind(alias, Value::Path(full));
            }
        }
        "scoped_use_list" => {
            let inner = node
                .child_by_field_name("path")
                .map(|p| join(scope.text(p)))
                .unwrap_or_else(|| prefix.to_owned());
            if let Some(list) = node.child_by_field_name("list") {
                use_tree(scope, list, &inner);
            }
        }
        "use_list" => {
            for child in named_children(node) {
                use_tree(scope, child, prefix);
            }
        }
        "use_wildcard" => {
            let path = named_children(node)
                .first()
                .map(|p| join(scope.text(*p)))
                .unwrap_or_else(|| prefix.to_owned());
            scope.globs.push(path);
        }
        _ => {}
    }
}

/// Bind a name that is not a node of the file (the last segment of a `use` path).
fn bind_owned(scope: &mut Scope<'_>, name: String, path: String) {
    // The scope keys borrow the file's text; a name from a `use` path is always a segment of
    // it, so look it up there.
    if let Some(at) = scope.text.find(name.as_str()) {
        let text = scope.text;
        if let Some(key) = text.get(at..at + name.len()) {
            scope.bind_name(key, Value::Path(path));
        }
    }
}

impl<'t> Resolver<'t> for Rust<'t> {
    fn scope(&self) -> &Scope<'t> {
        &self.scope
    }

    fn paths(&self, node: Node<'t>, depth: usize) -> Vec<String> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let field = |name: &str| node.child_by_field_name(name);
        match node.kind() {
            "identifier" => self.name_paths(self.scope.text(node), depth),
            "scoped_identifier" => {
                let Some(name) = field("name") else {
                    return Vec::new();
                };
                let name = self.scope.text(name);
                match field("path") {
                    Some(path) => member(&self.paths(path, depth + 1), name, &[]),
                    // `::std::env::args`: a path from the crate root.
                    None => vec![name.to_owned()],
                }
            }
            "field_expression" => {
                let (Some(value), Some(name)) = (field("value"), field("field")) else {
                    return Vec::new();
                };
                member(&self.paths(value, depth + 1), self.scope.text(name), &[])
            }
            "call_expression" => {
                let Some(function) = field("function") else {
                    return Vec::new();
                };
                let functions = self.paths(function, depth + 1);
                let mut out = Vec::new();
                if function.kind() == "identifier" {
                    extend(
                        &mut out,
                        self.returned_paths(self.scope.text(function), depth + 1),
                    );
                }
                extend(&mut out, called(&functions));
                out
            }
            "generic_function" => field("function")
                .map(|f| self.paths(f, depth + 1))
                .unwrap_or_default(),
            "try_expression"
            | "reference_expression"
            | "parenthesized_expression"
            | "await_expression" => named_children(node)
                .into_iter()
                .find(|c| c.kind() != "mutable_specifier")
                .map(|inner| self.paths(inner, depth + 1))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn constant(&self, node: Node<'t>, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        match node.kind() {
            "string_literal" | "raw_string_literal" => {
                let parts: String = named_children(node)
                    .into_iter()
                    .map(|p| self.scope.text(p))
                    .collect();
                Some(parts)
            }
            "identifier" => self.name_constant(self.scope.text(node), depth),
            _ => None,
        }
    }

    fn is_reference(&self, node: Node<'t>) -> bool {
        let Some(parent) = node.parent() else {
            return true;
        };
        let is_field = |name: &str| parent.child_by_field_name(name) == Some(node);
        let bound = match parent.kind() {
            "scoped_identifier" => is_field("name"),
            "let_declaration" => is_field("pattern"),
            "function_item" | "parameter" => is_field("name") || is_field("pattern"),
            _ => false,
        };
        !bound && !inside(node, &["use_declaration"], 6)
    }
}
