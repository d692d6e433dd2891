//! What the syntax nodes of the five grammars mean to the special-case check: one table of
//! node kinds for Python, JavaScript, TypeScript, Rust and Go, so that one matcher
//! ([`super::syntax`]) reads every language. Kinds that mean the same thing in several
//! grammars (`binary_expression`, `if_statement`, `return_statement`) are listed once.

use tree_sitter::{Language, Node};

use super::values::{number, unescape};

/// The grammar for a path; `None` for other languages.
pub(crate) fn grammar(path: &str) -> Option<Language> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "py" | "pyi" => tree_sitter_python::LANGUAGE.into(),
        "js" | "jsx" | "mjs" | "cjs" => tree_sitter_javascript::LANGUAGE.into(),
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        _ => return None,
    })
}

/// The text of a node.
pub(crate) fn text_of<'t>(node: Node<'_>, text: &'t str) -> &'t str {
    text.get(node.byte_range()).unwrap_or("")
}

/// The value of a string or number literal node as its language reads it; `None` for other
/// nodes and for strings with substitutions (`f"{x}"`, `` `${x}` ``).
pub(crate) fn literal_value(node: Node<'_>, text: &str) -> Option<String> {
    let raw = text_of(node, text);
    match node.kind() {
        // Python: a prefix (`r`, `b`, `u`, `f`), then one or three quotes.
        "string" if raw.starts_with(|c: char| c.is_ascii_alphabetic()) || is_python(node) => {
            let quote_at = raw.find(['"', '\''])?;
            let prefix = raw[..quote_at].to_ascii_lowercase();
            let body = &raw[quote_at..];
            let q = if body.starts_with("\"\"\"") || body.starts_with("'''") {
                3
            } else {
                1
            };
            let inner = body.get(q..body.len().checked_sub(q)?)?;
            if prefix.contains('f') && has_child(node, "interpolation") {
                return None;
            }
            Some(if prefix.contains('r') {
                inner.to_owned()
            } else {
                unescape(inner)
            })
        }
        // JavaScript: one kind of quote, escapes always read.
        "string" | "interpreted_string_literal" => {
            Some(unescape(raw.get(1..raw.len().checked_sub(1)?)?))
        }
        "template_string" => {
            if has_child(node, "template_substitution") {
                return None;
            }
            Some(unescape(raw.get(1..raw.len().checked_sub(1)?)?))
        }
        // Rust: `"..."` or `b"..."`.
        "string_literal" => {
            let start = raw.find('"')? + 1;
            Some(unescape(raw.get(start..raw.len().checked_sub(1)?)?))
        }
        // Rust `r#"..."#` and Go `` `...` ``: no escapes.
        "raw_string_literal" => {
            if raw.starts_with('`') {
                return Some(raw.get(1..raw.len().checked_sub(1)?)?.to_owned());
            }
            let start = raw.find('"')? + 1;
            let end = raw.rfind('"')?;
            Some(raw.get(start..end)?.to_owned())
        }
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Option<Vec<String>> = node
                .named_children(&mut cursor)
                .map(|c| literal_value(c, text))
                .collect();
            Some(parts?.concat())
        }
        "integer" | "float" | "number" | "integer_literal" | "float_literal" | "int_literal" => {
            number(raw)
        }
        _ => None,
    }
}

/// Whether a node comes from the Python grammar (its `string` has a `string_start` child).
fn is_python(node: Node<'_>) -> bool {
    has_child(node, "string_start")
}

fn has_child(node: Node<'_>, kind: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|c| c.kind() == kind)
}

/// Whether a node is a string or number literal.
pub(crate) fn is_literal(kind: &str) -> bool {
    matches!(
        kind,
        "string"
            | "template_string"
            | "string_literal"
            | "raw_string_literal"
            | "interpreted_string_literal"
            | "concatenated_string"
            | "integer"
            | "float"
            | "number"
            | "integer_literal"
            | "float_literal"
            | "int_literal"
    )
}

/// Nodes that pass their value through unchanged: parentheses, type casts, references.
pub(crate) fn is_transparent(kind: &str) -> bool {
    matches!(
        kind,
        "parenthesized_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "reference_expression"
            | "type_assertion"
            | "type_cast_expression"
            | "computed_property_name"
    ) || kind.ends_with("_pattern")
}

/// Collection literals: a literal inside one is one of its elements.
pub(crate) fn is_collection(kind: &str) -> bool {
    matches!(
        kind,
        "list"
            | "tuple"
            | "set"
            | "array"
            | "array_expression"
            | "tuple_expression"
            | "composite_literal"
            | "literal_value"
            | "literal_element"
            | "expression_list"
            | "dictionary"
            | "object"
    )
}

/// The key and value of a map entry (`"a": 1` in a dict, an object or a Go map literal).
pub(crate) fn pair_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    matches!(node.kind(), "pair" | "keyed_element")
        .then(|| {
            Some((
                node.child_by_field_name("key")?,
                node.child_by_field_name("value")?,
            ))
        })
        .flatten()
}

/// Calls that build a collection from their arguments: `new Set([...])`, `new Map([...])`,
/// `frozenset(...)`, `HashMap::from([...])`, `Object.fromEntries(...)`, `Object.keys({...})`.
pub(crate) const BUILDERS: &[&str] = &[
    "Set",
    "Map",
    "WeakMap",
    "WeakSet",
    "set",
    "frozenset",
    "tuple",
    "list",
    "dict",
    "OrderedDict",
    "Counter",
    "MappingProxyType",
    "fromEntries",
    "from",
    "from_iter",
    "of",
    "freeze",
    "keys",
    "values",
    "entries",
    "items",
    "iter",
    "into_iter",
    "copied",
    "cloned",
    "collect",
    "to_vec",
    "vec",
    "hashset",
    "hashmap",
    "btreemap",
    "btreeset",
];

/// Methods that look a value up in a collection or compare it with one: the collection (or
/// the compared text) is the receiver or an argument.
pub(crate) const LOOKUPS: &[&str] = &[
    "includes",
    "indexOf",
    "lastIndexOf",
    "has",
    "hasOwnProperty",
    "hasOwn",
    "get",
    "contains",
    "contains_key",
    "__contains__",
    "Contains",
    "index",
    "count",
    "find",
    "Index",
    "getOrDefault",
];

/// Methods whose callback decides them: a comparison in the callback decides the call.
pub(crate) const PREDICATES: &[&str] = &[
    "some",
    "any",
    "find",
    "findIndex",
    "filter",
    "position",
    "all",
    "every",
    "next",
];

/// Functions whose first argument is the collection they look the second up in.
pub(crate) const FUNCTION_LOOKUPS: &[&str] = &["Contains", "ContainsFunc", "Index", "hasOwn"];

/// Methods that compare their receiver with their argument as text: a literal argument is
/// compared whole (`s.startsWith("a  b")`, `s.eq("a  b")`, `strings.HasPrefix(s, "a  b")`).
pub(crate) const COMPARES: &[&str] = &[
    "startsWith",
    "endsWith",
    "startswith",
    "endswith",
    "starts_with",
    "ends_with",
    "HasPrefix",
    "HasSuffix",
    "EqualFold",
    "equals",
    "equalsIgnoreCase",
    "eq",
    "__eq__",
    "eq_ignore_ascii_case",
    "localeCompare",
    "Compare",
];

/// The call kinds and where their callee and arguments are.
pub(crate) fn call_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    match node.kind() {
        "call" | "call_expression" => Some((
            node.child_by_field_name("function")?,
            node.child_by_field_name("arguments")?,
        )),
        "new_expression" => Some((
            node.child_by_field_name("constructor")?,
            node.child_by_field_name("arguments")?,
        )),
        "macro_invocation" => {
            let macro_name = node.child_by_field_name("macro")?;
            let mut cursor = node.walk();
            let tree = node
                .children(&mut cursor)
                .find(|c| c.kind() == "token_tree")?;
            Some((macro_name, tree))
        }
        _ => None,
    }
}

/// The last name of a callee (`Contains` of `slices.Contains`, `from` of `HashMap::from`)
/// and its receiver, when it is a method or a path.
pub(crate) fn callee_name<'t>(callee: Node<'t>, text: &'t str) -> (&'t str, Option<Node<'t>>) {
    let field = match callee.kind() {
        "attribute" => Some(("attribute", "object")),
        "member_expression" => Some(("property", "object")),
        "field_expression" => Some(("field", "value")),
        "selector_expression" => Some(("field", "operand")),
        "scoped_identifier" => Some(("name", "path")),
        _ => None,
    };
    match field {
        Some((name, receiver)) => (
            callee
                .child_by_field_name(name)
                .map_or("", |n| text_of(n, text)),
            callee.child_by_field_name(receiver),
        ),
        None => (text_of(callee, text), None),
    }
}

/// Subscripts: the collection looked up and the key.
pub(crate) fn subscript_parts(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    match node.kind() {
        "subscript" => Some((
            node.child_by_field_name("value")?,
            node.child_by_field_name("subscript")?,
        )),
        "subscript_expression" => Some((
            node.child_by_field_name("object")?,
            node.child_by_field_name("index")?,
        )),
        "index_expression" => {
            if let Some(operand) = node.child_by_field_name("operand") {
                return Some((operand, node.child_by_field_name("index")?));
            }
            let mut cursor = node.walk();
            let mut named = node.named_children(&mut cursor);
            Some((named.next()?, named.next()?))
        }
        _ => None,
    }
}

/// The operators of a comparison or binary node (`==`, `not in`, `&&`).
pub(crate) fn operators(node: Node<'_>, text: &str) -> Vec<String> {
    if let Some(op) = node.child_by_field_name("operator") {
        return vec![text_of(op, text).to_owned()];
    }
    let mut cursor = node.walk();
    let tokens: Vec<&str> = node
        .children(&mut cursor)
        .filter(|c| !c.is_named())
        .map(|c| text_of(c, text))
        .collect();
    // Python spells `not in` and `is not` as two tokens.
    let joined = tokens.join(" ");
    match joined.as_str() {
        "not in" | "is not" => vec![joined],
        _ => tokens.into_iter().map(str::to_owned).collect(),
    }
}

/// Equality and membership operators, and whether each is negated.
pub(crate) fn equality(op: &str) -> Option<bool> {
    match op {
        "==" | "===" | "is" | "in" => Some(false),
        "!=" | "!==" | "is not" | "not in" => Some(true),
        _ => None,
    }
}

/// Nodes a condition passes through on its way to the statement it guards: boolean
/// operators, negation, parentheses.
pub(crate) fn is_boolean(node: Node<'_>, text: &str) -> Option<bool> {
    match node.kind() {
        "boolean_operator" => Some(false),
        "not_operator" => Some(true),
        "unary_expression" => {
            let ops = operators(node, text);
            ops.iter().any(|o| o == "!").then_some(true)
        }
        "binary_expression" => {
            let ops = operators(node, text);
            ops.iter()
                .any(|o| ["&&", "||", "??", "and", "or"].contains(&o.as_str()))
                .then_some(false)
        }
        _ => None,
    }
}

/// Statements that produce a result: a return, an assignment, a declaration with a value.
pub(crate) fn is_result_statement(kind: &str) -> bool {
    matches!(
        kind,
        "return_statement"
            | "return_expression"
            | "assignment"
            | "augmented_assignment"
            | "assignment_expression"
            | "augmented_assignment_expression"
            | "compound_assignment_expr"
            | "assignment_statement"
            | "short_var_declaration"
            | "variable_declarator"
            | "let_declaration"
            | "yield"
            | "yield_expression"
    )
}

/// Statements that throw.
pub(crate) fn is_throw(node: Node<'_>, text: &str) -> bool {
    match node.kind() {
        "raise_statement" | "throw_statement" => true,
        "call_expression" | "macro_invocation" => call_parts(node).is_some_and(|(callee, _)| {
            matches!(
                callee_name(callee, text).0,
                "panic" | "bail" | "Fatal" | "Fatalf" | "Panic" | "Panicf"
            )
        }),
        _ => false,
    }
}

/// Definitions whose bodies run later, not as part of the guarded branch.
pub(crate) fn is_definition(kind: &str) -> bool {
    matches!(
        kind,
        "function_definition"
            | "function_declaration"
            | "function_expression"
            | "arrow_function"
            | "function_item"
            | "closure_expression"
            | "func_literal"
            | "method_declaration"
            | "method_definition"
            | "class_definition"
            | "class_declaration"
            | "lambda"
    )
}

/// Blocks and statement lists: a branch that is not itself a value.
pub(crate) fn is_block(kind: &str) -> bool {
    matches!(
        kind,
        "block" | "statement_block" | "statement_list" | "expression_statement" | "else_clause"
    ) || kind.ends_with("_statement")
}

/// The name and value of a declaration that binds a name to a value (`CASE = "a  b"`,
/// `const CASES = [...]`, `const CASE: &str = "..."`, Go's `const CASE = "..."`).
pub(crate) fn binding<'t>(node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let (name, value) = match node.kind() {
        "assignment" | "assignment_expression" => ("left", "right"),
        "variable_declarator" => ("name", "value"),
        "const_item" | "static_item" => ("name", "value"),
        "let_declaration" => ("pattern", "value"),
        "const_spec" | "var_spec" => ("name", "value"),
        "short_var_declaration" | "assignment_statement" => ("left", "right"),
        "public_field_definition" | "field_definition" => ("name", "value"),
        _ => return None,
    };
    let mut name = node.child_by_field_name(name)?;
    if name.kind() == "expression_list" && name.named_child_count() == 1 {
        name = name.named_child(0)?;
    }
    matches!(
        name.kind(),
        "identifier" | "property_identifier" | "field_identifier"
    )
    .then_some((name, node.child_by_field_name(value)?))
}

/// Names: identifiers that may be a use of a bound constant.
pub(crate) fn is_name(kind: &str) -> bool {
    matches!(
        kind,
        "identifier" | "property_identifier" | "field_identifier" | "shorthand_property_identifier"
    )
}

/// The parts of a match arm, switch case or `case` clause whose pattern a node is in: the
/// arm node and the nodes that run when it matches.
pub(crate) fn arm_body<'t>(arm: Node<'t>) -> Option<Vec<Node<'t>>> {
    match arm.kind() {
        "case_clause" => Some(vec![arm.child_by_field_name("consequence")?]),
        "match_arm" => Some(vec![arm.child_by_field_name("value")?]),
        "switch_case" | "expression_case" => {
            // The statements after the value; an empty case falls through to the next.
            let mut next = Some(arm);
            while let Some(case) = next {
                let value = case.child_by_field_name("value");
                let mut cursor = case.walk();
                let body: Vec<Node<'t>> = case
                    .named_children(&mut cursor)
                    .filter(|c| Some(*c) != value && c.kind() != "comment")
                    .collect();
                if !body.is_empty() {
                    return Some(body);
                }
                next = case.next_named_sibling();
            }
            None
        }
        _ => None,
    }
}

/// Whether a node is an arm, case or `case` clause ([`arm_body`] reads its body).
pub(crate) fn is_arm(kind: &str) -> bool {
    matches!(
        kind,
        "case_clause" | "match_arm" | "switch_case" | "expression_case"
    )
}

/// The branches of a conditional whose condition a node is: what runs when the condition
/// holds, and what runs when it does not (the `else`, or `None`).
pub(crate) fn branches<'t>(
    conditional: Node<'t>,
    condition: Node<'t>,
) -> Option<(Node<'t>, Option<Node<'t>>)> {
    match conditional.kind() {
        "if_statement" | "elif_clause" | "if_expression" | "while_statement"
        | "while_expression" | "ternary_expression" => {
            if conditional.child_by_field_name("condition") != Some(condition) {
                return None;
            }
            Some((
                conditional.child_by_field_name("consequence")?,
                conditional.child_by_field_name("alternative"),
            ))
        }
        // Python's `a if cond else b`: no field names.
        "conditional_expression" => {
            let mut cursor = conditional.walk();
            let named: Vec<Node<'t>> = conditional.named_children(&mut cursor).collect();
            if named.get(1) != Some(&condition) {
                return None;
            }
            Some((*named.first()?, named.get(2).copied()))
        }
        _ => None,
    }
}
