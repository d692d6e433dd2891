//! Go: imports (`import o "os"`, `import . "os"`, `"runtime/debug"` bound as `debug`),
//! `:=`, `var`, `const` and plain assignments, functions returning a value, selectors
//! (`os.Args`) and calls (`runtime.Caller(0)`). A package path keeps its slashes
//! (`runtime/debug.Stack`).

use tree_sitter::Node;

use super::scope::{
    MAX_DEPTH, Resolver, Scope, Value, called, descendants, extend, inside, member, named_children,
    returned,
};

pub(super) struct Go<'t> {
    scope: Scope<'t>,
}

impl<'t> Go<'t> {
    pub(super) fn new(root: Node<'t>, text: &'t str) -> Self {
        let mut go = Go {
            scope: Scope::new(text),
        };
        for node in descendants(root) {
            match node.kind() {
                "import_spec" => go.import(node),
                "short_var_declaration" | "assignment_statement" => {
                    if let (Some(left), Some(right)) = (
                        node.child_by_field_name("left"),
                        node.child_by_field_name("right"),
                    ) {
                        go.pair(named_children(left), named_children(right));
                    }
                }
                "var_spec" | "const_spec" => {
                    let mut cursor = node.walk();
                    let names: Vec<Node<'t>> =
                        node.children_by_field_name("name", &mut cursor).collect();
                    let values = node
                        .child_by_field_name("value")
                        .map(named_children)
                        .unwrap_or_default();
                    go.pair(names, values);
                }
                "function_declaration" => {
                    if let (Some(name), Some(body)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("body"),
                    ) {
                        let name = go.scope.text(name);
                        for value in returned(body, &["func_literal"], "return_statement") {
                            // `return a, b` returns an expression list: each is a value.
                            if value.kind() == "expression_list" {
                                for v in named_children(value) {
                                    go.scope.add_return(name, v);
                                }
                            } else {
                                go.scope.add_return(name, value);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        go
    }

    /// Bind names to values element by element; `v, ok := f()` binds both to the call.
    fn pair(&mut self, names: Vec<Node<'t>>, values: Vec<Node<'t>>) {
        for (i, name) in names.into_iter().enumerate() {
            let value = if values.len() == 1 {
                values.first()
            } else {
                values.get(i)
            };
            if let Some(value) = value
                && name.kind() == "identifier"
            {
                self.scope.bind(name, Value::Node(*value));
            }
        }
    }

    fn import(&mut self, node: Node<'t>) {
        let Some(path) = node
            .child_by_field_name("path")
            .and_then(|p| self.constant(p, 0))
        else {
            return;
        };
        match node.child_by_field_name("name") {
            Some(name) if name.kind() == "dot" => self.scope.globs.push(path),
            Some(name) if name.kind() == "package_identifier" => {
                self.scope.bind(name, Value::Path(path))
            }
            Some(_) => {}
            None => {
                let last = path.rsplit('/').next().unwrap_or(&path);
                // The package's name is the path's last segment, which the path node holds.
                if let Some(at) = self
                    .scope
                    .text
                    .get(node.byte_range())
                    .and_then(|t| t.rfind(last).map(|i| i + node.start_byte()))
                    && let Some(key) = self.scope.text.get(at..at + last.len())
                {
                    self.scope.bind_name(key, Value::Path(path.clone()));
                }
            }
        }
    }
}

impl<'t> Resolver<'t> for Go<'t> {
    fn scope(&self) -> &Scope<'t> {
        &self.scope
    }

    fn paths(&self, node: Node<'t>, depth: usize) -> Vec<String> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let field = |name: &str| node.child_by_field_name(name);
        match node.kind() {
            "identifier" | "package_identifier" => self.name_paths(self.scope.text(node), depth),
            "selector_expression" => {
                let (Some(operand), Some(name)) = (field("operand"), field("field")) else {
                    return Vec::new();
                };
                member(&self.paths(operand, depth + 1), self.scope.text(name), &[])
            }
            "call_expression" => {
                let Some(function) = field("function") else {
                    return Vec::new();
                };
                let mut out = Vec::new();
                if function.kind() == "identifier" {
                    extend(
                        &mut out,
                        self.returned_paths(self.scope.text(function), depth + 1),
                    );
                }
                extend(&mut out, called(&self.paths(function, depth + 1)));
                out
            }
            "parenthesized_expression" => node
                .named_child(0)
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
            "interpreted_string_literal" => Some(
                named_children(node)
                    .into_iter()
                    .map(|p| self.scope.text(p))
                    .collect(),
            ),
            "raw_string_literal" => Some(self.scope.text(node).trim_matches('`').to_owned()),
            "binary_expression" => {
                let operator = node.child_by_field_name("operator")?;
                if self.scope.text(operator) != "+" {
                    return None;
                }
                let left = self.constant(node.child_by_field_name("left")?, depth + 1)?;
                let right = self.constant(node.child_by_field_name("right")?, depth + 1)?;
                Some(left + &right)
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
            "function_declaration" | "parameter_declaration" | "var_spec" | "const_spec" => {
                is_field("name")
            }
            "expression_list" => parent.parent().is_some_and(|g| {
                matches!(g.kind(), "short_var_declaration")
                    && g.child_by_field_name("left") == Some(parent)
            }),
            _ => false,
        };
        !bound && !inside(node, &["import_declaration"], 4)
    }
}
