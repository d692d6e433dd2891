//! Python: imports (`import sys as s`, `from os import environ as E`, `from os import *`),
//! assignments and walrus bindings, helper functions and lambdas returning a module, and the
//! dynamic spellings of a member (`getattr(m, NAME)`, `vars(m)[...]`, `m.__dict__[...]`,
//! `__import__("sys")`, `importlib.import_module(...)`, `sys.modules["sys"]`) with names built
//! from constants (`"_get" + "frame"`, f-strings, `"".join([...])`).

use tree_sitter::Node;

use super::scope::{
    MAX_DEPTH, Resolver, Scope, UNKNOWN, Value, called, descendants, extend, inside, member,
    named_children, push, returned, unescape,
};

pub(super) struct Python<'t> {
    scope: Scope<'t>,
}

impl<'t> Python<'t> {
    pub(super) fn new(root: Node<'t>, text: &'t str) -> Self {
        let mut scope = Scope::new(text);
        for node in descendants(root) {
            match node.kind() {
                "import_statement" => imports(&mut scope, node, None),
                "import_from_statement" => {
                    let module = node
                        .child_by_field_name("module_name")
                        .filter(|m| m.kind() == "dotted_name")
                        .map(|m| scope.text(m).to_owned())
                        .unwrap_or_else(|| UNKNOWN.to_owned());
                    if named_children(node)
                        .iter()
                        .any(|c| c.kind() == "wildcard_import")
                    {
                        scope.globs.push(module.clone());
                    }
                    imports(&mut scope, node, Some(&module));
                }
                "assignment" => {
                    if let (Some(left), Some(right)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) {
                        assign(&mut scope, left, right);
                    }
                }
                "named_expression" => {
                    if let (Some(name), Some(value)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("value"),
                    ) {
                        scope.bind(name, Value::Node(value));
                    }
                }
                "function_definition" => {
                    if let (Some(name), Some(body)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("body"),
                    ) {
                        let name = scope.text(name);
                        for value in returned(
                            body,
                            &["function_definition", "lambda", "class_definition"],
                            "return_statement",
                        ) {
                            scope.add_return(name, value);
                        }
                    }
                }
                _ => {}
            }
        }
        Python { scope }
    }
}

/// Bind the names an import statement brings in; `from` is the module of `from x import`.
fn imports<'t>(scope: &mut Scope<'t>, node: Node<'t>, from: Option<&str>) {
    let mut cursor = node.walk();
    let names: Vec<Node<'t>> = node.children_by_field_name("name", &mut cursor).collect();
    for name in names {
        let (dotted, alias) = match name.kind() {
            "aliased_import" => (
                name.child_by_field_name("name"),
                name.child_by_field_name("alias"),
            ),
            _ => (Some(name), None),
        };
        let Some(dotted) = dotted else { continue };
        let dotted_text = scope.text(dotted);
        let full = match from {
            Some(module) => format!("{module}.{dotted_text}"),
            None => dotted_text.to_owned(),
        };
        match (alias, from) {
            (Some(alias), _) => scope.bind(alias, Value::Path(full)),
            // `from os import environ` binds `environ`.
            (None, Some(_)) => scope.bind(dotted, Value::Path(full)),
            // `import os.path` binds `os`.
            (None, None) => {
                let first = dotted_text.split('.').next().unwrap_or(dotted_text);
                scope.bind_name(first, Value::Path(first.to_owned()));
            }
        }
    }
}

/// Bind the names of an assignment's target: one name, or a tuple of names taking a tuple of
/// values element by element.
fn assign<'t>(scope: &mut Scope<'t>, left: Node<'t>, right: Node<'t>) {
    match left.kind() {
        "identifier" => {
            if right.kind() == "lambda"
                && let Some(body) = right.child_by_field_name("body")
            {
                let name = scope.text(left);
                scope.add_return(name, body);
            }
            scope.bind(left, Value::Node(right));
        }
        "pattern_list" | "tuple_pattern" => {
            let names = named_children(left);
            let values = match right.kind() {
                "expression_list" | "tuple" => named_children(right),
                _ => Vec::new(),
            };
            if names.len() == values.len() {
                for (name, value) in names.into_iter().zip(values) {
                    assign(scope, name, value);
                }
            }
        }
        _ => {}
    }
}

/// The builtins that reach a member or a module by name.
const GETATTR: &[&str] = &["getattr", "builtins.getattr", "operator.attrgetter"];
const IMPORT: &[&str] = &[
    "__import__",
    "builtins.__import__",
    "importlib.import_module",
    "importlib.__import__",
];

impl<'t> Resolver<'t> for Python<'t> {
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
            "attribute" => {
                let (Some(object), Some(attribute)) = (field("object"), field("attribute")) else {
                    return Vec::new();
                };
                let bases = self.paths(object, depth + 1);
                match self.scope.text(attribute) {
                    // A module's `__dict__` holds its members by name.
                    "__dict__" => bases,
                    key => member(&bases, key, &[]),
                }
            }
            "subscript" => {
                let Some(value) = field("value") else {
                    return Vec::new();
                };
                let bases = self.paths(value, depth + 1);
                match field("subscript").and_then(|k| self.constant(k, depth + 1)) {
                    Some(key) => {
                        let mut out = member(&bases, &key, &[]);
                        // `sys.modules["os"]` is the module itself.
                        if bases.iter().any(|b| b == "sys.modules") {
                            push(&mut out, key);
                        }
                        out
                    }
                    None => member(&bases, "[]", &[]),
                }
            }
            "call" => self.call_paths(node, depth),
            "parenthesized_expression" | "await" => node
                .named_child(0)
                .map(|inner| self.paths(inner, depth + 1))
                .unwrap_or_default(),
            "boolean_operator" => {
                let mut out = Vec::new();
                for side in ["left", "right"] {
                    if let Some(n) = field(side) {
                        extend(&mut out, self.paths(n, depth + 1));
                    }
                }
                out
            }
            "conditional_expression" => {
                let children = named_children(node);
                let mut out = Vec::new();
                for n in [children.first(), children.get(2)].into_iter().flatten() {
                    extend(&mut out, self.paths(*n, depth + 1));
                }
                out
            }
            "assignment" => field("right")
                .map(|n| self.paths(n, depth + 1))
                .unwrap_or_default(),
            "named_expression" => field("value")
                .map(|n| self.paths(n, depth + 1))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn constant(&self, node: Node<'t>, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        match node.kind() {
            "string" => {
                let mut out = String::new();
                for part in named_children(node) {
                    match part.kind() {
                        "string_content" => out.push_str(&unescape(self.scope.text(part))),
                        "escape_sequence" => out.push_str(&unescape(self.scope.text(part))),
                        "interpolation" => {
                            let expression = part.child_by_field_name("expression")?;
                            out.push_str(&self.constant(expression, depth + 1)?);
                        }
                        _ => {}
                    }
                }
                Some(out)
            }
            "concatenated_string" => named_children(node)
                .into_iter()
                .map(|s| self.constant(s, depth + 1))
                .collect(),
            "binary_operator" => {
                let operator = node.child_by_field_name("operator")?;
                if self.scope.text(operator) != "+" {
                    return None;
                }
                let left = self.constant(node.child_by_field_name("left")?, depth + 1)?;
                let right = self.constant(node.child_by_field_name("right")?, depth + 1)?;
                Some(left + &right)
            }
            "parenthesized_expression" => self.constant(node.named_child(0)?, depth + 1),
            "identifier" => self.name_constant(self.scope.text(node), depth),
            "call" => {
                // `"sep".join([...])` of constants.
                let function = node.child_by_field_name("function")?;
                if function.kind() != "attribute"
                    || self.scope.text(function.child_by_field_name("attribute")?) != "join"
                {
                    return None;
                }
                let separator =
                    self.constant(function.child_by_field_name("object")?, depth + 1)?;
                let arguments = node.child_by_field_name("arguments")?;
                let list = arguments.named_child(0)?;
                if !matches!(list.kind(), "list" | "tuple") {
                    return None;
                }
                let parts: Option<Vec<String>> = named_children(list)
                    .into_iter()
                    .map(|e| self.constant(e, depth + 1))
                    .collect();
                Some(parts?.join(&separator))
            }
            _ => None,
        }
    }

    fn is_reference(&self, node: Node<'t>) -> bool {
        let Some(parent) = node.parent() else {
            return true;
        };
        if node.kind() == "identifier" {
            let is_field = |name: &str| parent.child_by_field_name(name) == Some(node);
            let bound = match parent.kind() {
                "attribute" => is_field("attribute"),
                "keyword_argument" | "function_definition" | "class_definition" => is_field("name"),
                "assignment" | "augmented_assignment" => is_field("left"),
                "named_expression" => is_field("name"),
                "parameters"
                | "lambda_parameters"
                | "default_parameter"
                | "typed_parameter"
                | "typed_default_parameter"
                | "global_statement"
                | "nonlocal_statement" => true,
                _ => false,
            };
            if bound {
                return false;
            }
        }
        !inside(
            node,
            &[
                "import_statement",
                "import_from_statement",
                "future_import_statement",
            ],
            3,
        )
    }

    fn is_documentation(&self, node: Node<'t>) -> bool {
        node.parent()
            .is_some_and(|p| p.kind() == "expression_statement" && p.named_child_count() == 1)
    }
}

impl<'t> Python<'t> {
    fn call_paths(&self, node: Node<'t>, depth: usize) -> Vec<String> {
        let Some(function) = node.child_by_field_name("function") else {
            return Vec::new();
        };
        let arguments: Vec<Node<'t>> = node
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.kind() != "comment")
            .collect();
        let functions = self.paths(function, depth + 1);
        let names = |list: &[&str]| functions.iter().any(|f| list.contains(&f.as_str()));
        let mut out = Vec::new();
        if names(GETATTR) {
            if let (Some(object), Some(key)) = (arguments.first(), arguments.get(1)) {
                let key = self
                    .constant(*key, depth + 1)
                    .unwrap_or_else(|| UNKNOWN.to_owned());
                out = member(&self.paths(*object, depth + 1), &key, &[]);
            }
        } else if names(&["vars", "builtins.vars"]) {
            if let Some(object) = arguments.first() {
                out = self.paths(*object, depth + 1);
            }
        } else if names(IMPORT)
            && let Some(module) = arguments.first().and_then(|m| self.constant(*m, depth + 1))
        {
            out.push(module);
        }
        if function.kind() == "identifier" {
            extend(
                &mut out,
                self.returned_paths(self.scope.text(function), depth + 1),
            );
        }
        extend(&mut out, called(&functions));
        out
    }
}
