//! JavaScript and TypeScript: `require("process")`, `import(...)`, ES imports (default,
//! namespace and named, `node:` or not), `const`/`let`/`var` and plain assignments,
//! destructuring (`const {argv: a, env: {CI}} = process`), helper functions and arrows
//! returning a value, the global object (`globalThis.process`, `global["process"]`), optional
//! chaining, TypeScript's `!`/`as`/`satisfies`, `Reflect.get`, and member names built from
//! constants (`"ar" + "gv"`, templates, `[...].join("")`, `.concat`, `String.fromCharCode`).

use tree_sitter::Node;

use super::scope::{
    MAX_DEPTH, Resolver, Scope, UNKNOWN, Value, called, descendants, extend, inside, member,
    named_children, returned, unescape,
};

/// Names of the global object.
const GLOBALS: &[&str] = &["globalThis", "global", "window", "self"];

/// Node kinds of functions, whose returns belong to them alone.
const FUNCTIONS: &[&str] = &[
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "class_declaration",
];

pub(super) struct JavaScript<'t> {
    scope: Scope<'t>,
}

/// A module specifier as a path: `node:fs/promises` is `fs.promises`.
fn module_path(specifier: &str) -> String {
    specifier
        .trim_start_matches("node:")
        .trim_end_matches('/')
        .replace('/', ".")
}

impl<'t> JavaScript<'t> {
    pub(super) fn new(root: Node<'t>, text: &'t str) -> Self {
        let mut js = JavaScript {
            scope: Scope::new(text),
        };
        for node in descendants(root) {
            match node.kind() {
                "variable_declarator" => {
                    if let (Some(name), Some(value)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("value"),
                    ) {
                        js.bind_pattern(name, Value::Node(value));
                        js.function_value(name, value);
                    }
                }
                "assignment_expression" => {
                    if let (Some(left), Some(right)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) {
                        js.bind_pattern(left, Value::Node(right));
                        js.function_value(left, right);
                    }
                }
                "import_statement" => js.import(node),
                "function_declaration" | "generator_function_declaration" => {
                    if let (Some(name), Some(body)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("body"),
                    ) {
                        let name = js.scope.text(name);
                        for value in returned(body, FUNCTIONS, "return_statement") {
                            js.scope.add_return(name, value);
                        }
                    }
                }
                _ => {}
            }
        }
        js
    }

    /// Bind every name of a binding pattern to the member of `value` it takes.
    fn bind_pattern(&mut self, pattern: Node<'t>, value: Value<'t>) {
        match pattern.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                self.scope.bind(pattern, value)
            }
            "object_pattern" => {
                for part in named_children(pattern) {
                    match part.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let key = self.scope.text(part).to_owned();
                            self.scope
                                .bind(part, Value::Field(Box::new(value.clone()), key));
                        }
                        "object_assignment_pattern" => {
                            if let Some(left) = part.child_by_field_name("left") {
                                let key = self.scope.text(left).to_owned();
                                self.scope
                                    .bind(left, Value::Field(Box::new(value.clone()), key));
                            }
                        }
                        "pair_pattern" => {
                            let (Some(key), Some(target)) = (
                                part.child_by_field_name("key"),
                                part.child_by_field_name("value"),
                            ) else {
                                continue;
                            };
                            let key = self.key(key);
                            let target = match target.kind() {
                                "assignment_pattern" => {
                                    target.child_by_field_name("left").unwrap_or(target)
                                }
                                _ => target,
                            };
                            self.bind_pattern(target, Value::Field(Box::new(value.clone()), key));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A property key as written or computed from constants.
    fn key(&self, key: Node<'t>) -> String {
        match key.kind() {
            "property_identifier" | "identifier" => self.scope.text(key).to_owned(),
            "computed_property_name" => key
                .named_child(0)
                .and_then(|k| self.constant(k, 0))
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            _ => self.constant(key, 0).unwrap_or_else(|| UNKNOWN.to_owned()),
        }
    }

    /// Record what a function bound to a name returns (`const m = () => process`).
    fn function_value(&mut self, name: Node<'t>, value: Node<'t>) {
        if name.kind() != "identifier" {
            return;
        }
        let Some(body) = value.child_by_field_name("body") else {
            return;
        };
        if !matches!(
            value.kind(),
            "arrow_function" | "function_expression" | "function"
        ) {
            return;
        }
        let name = self.scope.text(name);
        if body.kind() == "statement_block" {
            for value in returned(body, FUNCTIONS, "return_statement") {
                self.scope.add_return(name, value);
            }
        } else {
            self.scope.add_return(name, body);
        }
    }

    fn import(&mut self, node: Node<'t>) {
        let Some(source) = node
            .child_by_field_name("source")
            .and_then(|s| self.constant(s, 0))
        else {
            return;
        };
        let module = module_path(&source);
        let Some(clause) = named_children(node)
            .into_iter()
            .find(|c| c.kind() == "import_clause")
        else {
            return;
        };
        for part in named_children(clause) {
            match part.kind() {
                // A default import of a Node module is the module itself.
                "identifier" => self.scope.bind(part, Value::Path(module.clone())),
                "namespace_import" => {
                    if let Some(name) = part.named_child(0) {
                        self.scope.bind(name, Value::Path(module.clone()));
                    }
                }
                "named_imports" => {
                    for specifier in named_children(part) {
                        let Some(name) = specifier.child_by_field_name("name") else {
                            continue;
                        };
                        let key = self.key(name);
                        let local = specifier.child_by_field_name("alias").unwrap_or(name);
                        self.scope
                            .bind(local, Value::Path(format!("{module}.{key}")));
                    }
                }
                _ => {}
            }
        }
    }

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
        let first_constant = || arguments.first().and_then(|a| self.constant(*a, depth + 1));
        if function.kind() == "import" {
            return first_constant()
                .map(|m| vec![module_path(&m)])
                .unwrap_or_default();
        }
        let functions = self.paths(function, depth + 1);
        let names = |name: &str| functions.iter().any(|f| f == name);
        let mut out = Vec::new();
        if names("require") || names("module.require") {
            if let Some(module) = first_constant() {
                out.push(module_path(&module));
            }
        } else if names("Reflect.get")
            && let (Some(object), Some(key)) = (arguments.first(), arguments.get(1))
        {
            let key = self
                .constant(*key, depth + 1)
                .unwrap_or_else(|| UNKNOWN.to_owned());
            out = member(&self.paths(*object, depth + 1), &key, GLOBALS);
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

impl<'t> Resolver<'t> for JavaScript<'t> {
    fn scope(&self) -> &Scope<'t> {
        &self.scope
    }

    fn globals(&self) -> &'static [&'static str] {
        GLOBALS
    }

    fn paths(&self, node: Node<'t>, depth: usize) -> Vec<String> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let field = |name: &str| node.child_by_field_name(name);
        match node.kind() {
            "identifier" => self.name_paths(self.scope.text(node), depth),
            "member_expression" => {
                let (Some(object), Some(property)) = (field("object"), field("property")) else {
                    return Vec::new();
                };
                member(
                    &self.paths(object, depth + 1),
                    self.scope.text(property),
                    GLOBALS,
                )
            }
            "subscript_expression" => {
                let Some(object) = field("object") else {
                    return Vec::new();
                };
                let key = field("index")
                    .and_then(|k| self.constant(k, depth + 1))
                    .unwrap_or_else(|| "[]".to_owned());
                member(&self.paths(object, depth + 1), &key, GLOBALS)
            }
            "call_expression" => self.call_paths(node, depth),
            "new_expression" => field("constructor")
                .map(|c| called(&self.paths(c, depth + 1)))
                .unwrap_or_default(),
            "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "as_expression"
            | "satisfies_expression"
            | "type_assertion" => named_children(node)
                .into_iter()
                .find(|c| !c.kind().ends_with("type") && c.kind() != "type_arguments")
                .map(|inner| self.paths(inner, depth + 1))
                .unwrap_or_default(),
            "sequence_expression" => named_children(node)
                .last()
                .map(|n| self.paths(*n, depth + 1))
                .unwrap_or_default(),
            "binary_expression" => {
                let operator = field("operator").map(|o| self.scope.text(o));
                if !matches!(operator, Some("||" | "??" | "&&")) {
                    return Vec::new();
                }
                let mut out = Vec::new();
                for side in ["left", "right"] {
                    if let Some(n) = field(side) {
                        extend(&mut out, self.paths(n, depth + 1));
                    }
                }
                out
            }
            "ternary_expression" => {
                let mut out = Vec::new();
                for side in ["consequence", "alternative"] {
                    if let Some(n) = field(side) {
                        extend(&mut out, self.paths(n, depth + 1));
                    }
                }
                out
            }
            "assignment_expression" => field("right")
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
                    out.push_str(&unescape(self.scope.text(part)));
                }
                Some(out)
            }
            "template_string" => {
                let mut out = String::new();
                for part in named_children(node) {
                    match part.kind() {
                        "template_substitution" => {
                            out.push_str(&self.constant(part.named_child(0)?, depth + 1)?)
                        }
                        _ => out.push_str(&unescape(self.scope.text(part))),
                    }
                }
                Some(out)
            }
            "number" => Some(self.scope.text(node).to_owned()),
            "binary_expression" => {
                let operator = node.child_by_field_name("operator")?;
                if self.scope.text(operator) != "+" {
                    return None;
                }
                let left = self.constant(node.child_by_field_name("left")?, depth + 1)?;
                let right = self.constant(node.child_by_field_name("right")?, depth + 1)?;
                Some(left + &right)
            }
            "parenthesized_expression" | "as_expression" | "non_null_expression" => {
                self.constant(node.named_child(0)?, depth + 1)
            }
            "identifier" => self.name_constant(self.scope.text(node), depth),
            "call_expression" => self.call_constant(node, depth),
            _ => None,
        }
    }

    fn is_reference(&self, node: Node<'t>) -> bool {
        let Some(parent) = node.parent() else {
            return true;
        };
        let is_field = |name: &str| parent.child_by_field_name(name) == Some(node);
        let bound = match parent.kind() {
            "variable_declarator" => is_field("name"),
            "assignment_expression" => is_field("left") && node.kind() == "identifier",
            "function_declaration" | "function_expression" | "class_declaration" => {
                is_field("name")
            }
            "formal_parameters"
            | "required_parameter"
            | "optional_parameter"
            | "object_pattern"
            | "array_pattern"
            | "rest_pattern"
            | "object_assignment_pattern"
            | "catch_clause" => true,
            "pair_pattern" => is_field("value"),
            "assignment_pattern" => is_field("left"),
            "arrow_function" => is_field("parameter"),
            "for_in_statement" => is_field("left"),
            _ => false,
        };
        !bound && !inside(node, &["import_statement", "import_clause"], 3)
    }
}

impl<'t> JavaScript<'t> {
    /// Constant strings built by calls: `[...].join(sep)`, `"a".concat("b")`,
    /// `String.fromCharCode(...)`.
    fn call_constant(&self, node: Node<'t>, depth: usize) -> Option<String> {
        let function = node.child_by_field_name("function")?;
        let arguments: Vec<Node<'t>> = named_children(node.child_by_field_name("arguments")?);
        if function.kind() != "member_expression" {
            return None;
        }
        let object = function.child_by_field_name("object")?;
        let method = self.scope.text(function.child_by_field_name("property")?);
        match method {
            "join" if object.kind() == "array" => {
                let separator = match arguments.first() {
                    Some(s) => self.constant(*s, depth + 1)?,
                    None => ",".to_owned(),
                };
                let parts: Option<Vec<String>> = named_children(object)
                    .into_iter()
                    .map(|e| self.constant(e, depth + 1))
                    .collect();
                Some(parts?.join(&separator))
            }
            "concat" => {
                let mut out = self.constant(object, depth + 1)?;
                for argument in arguments {
                    out.push_str(&self.constant(argument, depth + 1)?);
                }
                Some(out)
            }
            "fromCharCode" if self.scope.text(object) == "String" => arguments
                .into_iter()
                .map(|a| {
                    let code: u32 = self.constant(a, depth + 1)?.parse().ok()?;
                    char::from_u32(code)
                })
                .collect(),
            _ => None,
        }
    }
}
