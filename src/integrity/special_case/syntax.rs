//! The special-case matcher on syntax trees: a literal of added code that ties to a literal
//! of the failing test ([`super::values::tie`]), **compared or looked up** (an equality or
//! membership test, `includes`/`has`/`get`/`indexOf`/`startsWith`, a subscript, a match arm,
//! a switch case, a map key), **guarding** a return, a throw or an assignment (or a key whose
//! value is what the lookup produces).
//!
//! From each tied literal the matcher walks up the tree: through parentheses, casts and
//! collections (`["a  b", "x"]`, `new Set([...])`, a map's key), through a constant's name
//! to every use of it (`const CASE = "a  b"`), to the node that compares or looks it up.
//! From there it walks on through boolean operators and negations to the condition of an
//! `if`, a ternary or a loop, or to the arm or case it is the pattern of, and reads what that
//! branch does: whether it returns, throws or assigns, and the literals it produces. A
//! literal that is an argument of any other call (`s.split("a  b")`) or sits anywhere else
//! is how code works, not a comparison, and the walk stops there.

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser};

use super::kinds::{
    BUILDERS, COMPARES, FUNCTION_LOOKUPS, LOOKUPS, PREDICATES, arm_body, binding, branches,
    call_parts, callee_name, equality, grammar, is_arm, is_block, is_boolean, is_collection,
    is_definition, is_literal, is_name, is_result_statement, is_throw, is_transparent,
    literal_value, operators, pair_parts, subscript_parts, text_of,
};
use super::values::{Tie, answers, is_trivial, number, tie};

/// Most uses of one constant followed.
const MAX_USES: usize = 50;
/// Most constants followed from one literal (a constant of a constant...).
const MAX_HOPS: usize = 3;

/// What the failing tests give the matcher: their literals, their expected values, and
/// whether they expect an error.
#[derive(Debug, Clone, Default)]
pub(crate) struct TestValues {
    pub literals: Vec<String>,
    pub answers: Vec<String>,
    pub raises: bool,
}

/// One special case found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The 0-based line of the comparison or lookup.
    pub line: usize,
    /// The value compared (as the language reads it).
    pub value: String,
    /// The test literal it ties to.
    pub test_literal: String,
    /// What the guarded branch does: `returns`, `throws`, `assigns`, `produces`.
    pub action: &'static str,
    /// The expected value the branch produces, when it produces one, and whether it is only
    /// a part of what the test expects.
    pub answer: Option<(String, bool)>,
}

/// What a guarded branch does.
#[derive(Debug, Default)]
struct Outcome {
    action: Option<&'static str>,
    throws: bool,
    results: Vec<String>,
}

/// The special cases in `text` (the file at `path` after the change) whose comparison or
/// literal is on one of the `added` lines (0-based).
pub(crate) fn findings(
    path: &str,
    text: &str,
    added: &BTreeSet<usize>,
    test: &TestValues,
) -> Vec<Finding> {
    let Some(language) = grammar(path) else {
        return Vec::new();
    };
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(text, None) else {
        return Vec::new();
    };
    let matcher = Matcher { text, added, test };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if is_literal(node.kind()) {
            if let Some(found) = matcher.literal(node) {
                out.push(found);
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort_by_key(|f| f.line);
    out.dedup_by(|a, b| a.line == b.line);
    out
}

struct Matcher<'a> {
    text: &'a str,
    added: &'a BTreeSet<usize>,
    test: &'a TestValues,
}

/// A place the walk up from a tied literal has reached.
#[derive(Clone)]
struct Step<'t> {
    node: Node<'t>,
    /// Map values whose key is the tied literal: what a lookup of it produces.
    values: Vec<Node<'t>>,
    /// Whether a line of the path so far was added by the change.
    added: bool,
    hops: usize,
}

impl<'a> Matcher<'a> {
    /// The special case a literal node makes, if it ties to the test and is compared.
    fn literal(&self, node: Node<'_>) -> Option<Finding> {
        let value = literal_value(node, self.text)?;
        let (strength, test_literal) = self
            .test
            .literals
            .iter()
            .filter_map(|t| Some((tie(&value, t)?, t)))
            .max_by_key(|(s, t)| (*s, t.len()))?;
        let start = Step {
            node,
            values: Vec::new(),
            added: self.is_added(node),
            hops: 0,
        };
        let mut work = vec![start];
        while let Some(step) = work.pop() {
            let Some((probe, negated, step)) = self.probe(step, &mut work) else {
                continue;
            };
            if !step.added && !self.is_added(probe) {
                continue;
            }
            let outcome = self.guarded(probe, negated, &step.values);
            let Some(action) = outcome.action else {
                continue;
            };
            let answer = outcome.results.iter().find_map(|r| {
                if strength == Tie::Weak && is_trivial(r) {
                    return None;
                }
                let e = self.test.answers.iter().find(|e| answers(r, e))?;
                Some((
                    r.clone(),
                    number(r).map_or(r != e, |n| Some(n) != number(e)),
                ))
            });
            let thrown = outcome.throws && self.test.raises;
            if strength == Tie::Strong || answer.is_some() || thrown {
                return Some(Finding {
                    line: probe.start_position().row,
                    value,
                    test_literal: test_literal.clone(),
                    action,
                    answer,
                });
            }
        }
        None
    }

    fn is_added(&self, node: Node<'_>) -> bool {
        (node.start_position().row..=node.end_position().row).any(|r| self.added.contains(&r))
    }

    /// Walk up from a step to the node that compares or looks it up: that node and whether
    /// the comparison is negated. Uses of a constant the walk reaches are pushed on `work`.
    fn probe<'t>(
        &self,
        mut step: Step<'t>,
        work: &mut Vec<Step<'t>>,
    ) -> Option<(Node<'t>, bool, Step<'t>)> {
        loop {
            let cur = step.node;
            let parent = cur.parent()?;
            step.added |= self.is_added(parent) && parent.end_byte() - parent.start_byte() < 400;
            let kind = parent.kind();
            if is_transparent(kind) || is_collection(kind) {
                // A two-element tuple or array in a collection is a map entry
                // (`new Map([["a  b", 2]])`, `HashMap::from([("a  b", 2)])`).
                if matches!(kind, "array" | "tuple" | "tuple_expression" | "list")
                    && parent.named_child_count() == 2
                    && parent.named_child(0) == Some(cur)
                    && parent.parent().is_some_and(|g| is_collection(g.kind()))
                {
                    step.values.extend(parent.named_child(1));
                }
                step.node = parent;
                continue;
            }
            if let Some((key, value)) = pair_parts(parent) {
                if key != cur {
                    return None;
                }
                step.values.push(value);
                step.node = parent;
                continue;
            }
            if kind == "unary_expression" && is_literal(cur.kind()) {
                // `-37`: the number's sign.
                step.node = parent;
                continue;
            }
            if kind == "for_in_clause" && parent.child_by_field_name("right") == Some(cur) {
                // `any(s == c for c in ("a  b",))`: the comprehension decides the call.
                let generator = parent.parent()?;
                let call = generator.parent()?;
                let (callee, _) = call_parts(call)?;
                let name = callee_name(callee, self.text).0;
                return PREDICATES.contains(&name).then_some((call, false, step));
            }
            if let Some((name, value)) = binding(parent) {
                if value != cur || step.hops >= MAX_HOPS {
                    return None;
                }
                for use_ in self.uses(parent, name) {
                    work.push(Step {
                        node: use_,
                        values: step.values.clone(),
                        added: step.added,
                        hops: step.hops + 1,
                    });
                }
                return None;
            }
            if matches!(kind, "arguments" | "argument_list" | "token_tree") {
                let call = parent.parent()?;
                let (callee, _) = call_parts(call)?;
                let (name, _) = callee_name(callee, self.text);
                if BUILDERS.contains(&name) {
                    step.node = call;
                    continue;
                }
                // `slices.Contains([]string{...}, x)`, `Object.hasOwn({...}, x)`: the
                // collection is the first argument. A method's first argument is the key it
                // looks up (`headers.get("Content-Type")` reads a field), not a probe.
                if FUNCTION_LOOKUPS.contains(&name) && parent.named_child(0) == Some(cur) {
                    return Some((call, false, step));
                }
                if COMPARES.contains(&name) {
                    return Some((call, false, step));
                }
                return None;
            }
            if matches!(
                kind,
                "attribute" | "member_expression" | "field_expression" | "selector_expression"
            ) {
                // A method of the value: `["a  b"].includes(x)`, `CASES.has(x)`,
                // `"a  b".startsWith(s)`.
                let object = ["object", "value", "operand"]
                    .iter()
                    .find_map(|f| parent.child_by_field_name(f));
                if object != Some(cur) {
                    return None;
                }
                let call = parent.parent()?;
                let (callee, _) = call_parts(call)?;
                if callee != parent {
                    return None;
                }
                let (name, _) = callee_name(parent, self.text);
                if LOOKUPS.contains(&name) || COMPARES.contains(&name) || PREDICATES.contains(&name)
                {
                    return Some((call, false, step));
                }
                if BUILDERS.contains(&name) {
                    step.node = call;
                    continue;
                }
                return None;
            }
            if let Some((collection, _)) = subscript_parts(parent) {
                return (collection == cur).then_some((parent, false, step));
            }
            if matches!(
                kind,
                "comparison_operator" | "binary_expression" | "in_expression"
            ) {
                let negated = operators(parent, self.text)
                    .iter()
                    .find_map(|o| equality(o))?;
                return Some((parent, negated, step));
            }
            if is_arm(kind) {
                // The pattern or case value, not the arm's body.
                let pattern = ["pattern", "value"]
                    .iter()
                    .find_map(|f| parent.child_by_field_name(f));
                let is_pattern = match kind {
                    "case_clause" => cur.kind() == "case_pattern",
                    "match_arm" => pattern == Some(cur),
                    _ => parent.child_by_field_name("value") == Some(cur),
                };
                return is_pattern.then_some((parent, false, step));
            }
            return None;
        }
    }

    /// The uses of the name a binding declares, in the whole file: names with the same
    /// text, other than the declaration's own.
    fn uses<'t>(&self, declaration: Node<'t>, name: Node<'t>) -> Vec<Node<'t>> {
        let wanted = text_of(name, self.text);
        let mut root = declaration;
        while let Some(p) = root.parent() {
            root = p;
        }
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if out.len() >= MAX_USES {
                break;
            }
            if is_name(node.kind()) && node != name && text_of(node, self.text) == wanted {
                // `self.CASES` and `Config.CASES`: the use is the whole attribute.
                let use_ = match node.parent() {
                    Some(p)
                        if matches!(
                            p.kind(),
                            "attribute" | "member_expression" | "field_expression"
                        ) && p.child_by_field_name("object") != Some(node)
                            && p.child_by_field_name("value") != Some(node) =>
                    {
                        p
                    }
                    _ => node,
                };
                out.push(use_);
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        out
    }

    /// What the comparison or lookup `probe` guards.
    fn guarded(&self, probe: Node<'_>, mut negated: bool, values: &[Node<'_>]) -> Outcome {
        if is_arm(probe.kind()) {
            return self.outcome(&arm_body(probe).unwrap_or_default(), values);
        }
        let mut cur = probe;
        // `indexOf(x) !== -1` and `find(...) >= 0`: the comparison with -1 or 0 decides.
        for _ in 0..8 {
            let Some(parent) = cur.parent() else {
                break;
            };
            if is_transparent(parent.kind()) || parent.kind() == "expression_list" {
                cur = parent;
                continue;
            }
            if is_definition(parent.kind())
                && let Some(call) = parent.parent().and_then(|a| a.parent())
                && let Some((callee, _)) = call_parts(call)
                && PREDICATES.contains(&callee_name(callee, self.text).0)
            {
                // `CASES.some(c => c === s)`, `["a  b"].iter().any(|c| *c == s)`: the
                // comparison decides the predicate.
                cur = call;
                continue;
            }
            if let Some(flip) = is_boolean(parent, self.text) {
                negated ^= flip;
                cur = parent;
                continue;
            }
            if matches!(parent.kind(), "binary_expression" | "comparison_operator")
                && let Some(flip) = self.index_comparison(parent)
            {
                negated ^= flip;
                cur = parent;
                continue;
            }
            if let Some((then, otherwise)) = branches(parent, cur) {
                let branch = if negated {
                    // `if s != "a  b": return f(s)` then `return 2`: what runs after.
                    otherwise.or_else(|| next_statement(parent))
                } else {
                    Some(then)
                };
                return branch.map_or_else(Outcome::default, |b| self.outcome(&[b], values));
            }
            if parent.kind() == "match_pattern" || parent.kind() == "if_clause" {
                cur = parent;
                continue;
            }
            if is_arm(parent.kind()) {
                return self.outcome(&arm_body(parent).unwrap_or_default(), values);
            }
            if is_result_statement(parent.kind()) && !values.is_empty() {
                // `return KNOWN.get(s, s)`: the lookup's value is the result.
                return Outcome {
                    action: Some(action_word(parent.kind())),
                    throws: false,
                    results: self.values_of(values),
                };
            }
            if !values.is_empty()
                && parent.kind() == "block"
                && parent.named_child(parent.named_child_count().saturating_sub(1)) == Some(cur)
            {
                // A Rust block's tail: the lookup's value is what the block produces.
                return Outcome {
                    action: Some("returns"),
                    throws: false,
                    results: self.values_of(values),
                };
            }
            if !values.is_empty() && !is_block(parent.kind()) {
                // `return fmt(KNOWN[s])`: the lookup inside an expression.
                cur = parent;
                continue;
            }
            break;
        }
        Outcome::default()
    }

    /// For a comparison of a lookup's index with -1 or 0 (`indexOf(x) !== -1`), whether it
    /// means "not found".
    fn index_comparison(&self, node: Node<'_>) -> Option<bool> {
        let ops = operators(node, self.text);
        let op = ops.first()?;
        let mut cursor = node.walk();
        let bound = node
            .named_children(&mut cursor)
            .find_map(|c| number(text_of(c, self.text)))?;
        match (op.as_str(), bound.as_str()) {
            ("!=" | "!==" | ">", "-1") | (">=", "0") => Some(false),
            ("==" | "===", "-1") | ("<", "0") => Some(true),
            _ => None,
        }
    }

    /// What a branch does: its returns, throws and assignments (not those of functions it
    /// defines), or, for a branch that is an expression, that value.
    fn outcome(&self, branch: &[Node<'_>], values: &[Node<'_>]) -> Outcome {
        let mut out = Outcome {
            results: self.values_of(values),
            ..Outcome::default()
        };
        let mut stack: Vec<Node<'_>> = branch.to_vec();
        while let Some(node) = stack.pop() {
            if is_definition(node.kind()) {
                continue;
            }
            if is_throw(node, self.text) {
                out.throws = true;
                out.action = Some("throws");
                out.results.extend(self.literals_in(node));
                continue;
            }
            if is_result_statement(node.kind()) {
                out.action.get_or_insert(action_word(node.kind()));
                let value = node
                    .child_by_field_name("right")
                    .or_else(|| node.child_by_field_name("value"))
                    .unwrap_or(node);
                out.results.extend(self.literals_in(value));
                continue;
            }
            if node.kind() == "block" && node.named_child_count() > 0 {
                // A Rust block's tail expression is its value.
                let count = node.named_child_count();
                if let Some(tail) = node.named_child(count - 1)
                    && !is_block(tail.kind())
                    && !tail.kind().ends_with("_item")
                    && !tail.kind().ends_with("_declaration")
                    && tail.kind() != "comment"
                {
                    out.action.get_or_insert("produces");
                    out.results.extend(self.literals_in(tail));
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        if out.action.is_none() {
            // A branch that is a value: a ternary's, an arm's, a map entry's.
            for node in branch {
                if !is_block(node.kind()) && !is_definition(node.kind()) {
                    out.action = Some("produces");
                    out.results.extend(self.literals_in(*node));
                }
            }
        }
        out
    }

    /// The literal values of map entries' values.
    fn values_of(&self, values: &[Node<'_>]) -> Vec<String> {
        values.iter().flat_map(|v| self.literals_in(*v)).collect()
    }

    /// The literal values in a node, and the values of constants it names (`return ANSWER`).
    fn literals_in(&self, node: Node<'_>) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if is_literal(n.kind()) {
                out.extend(literal_value(n, self.text));
                continue;
            }
            if is_definition(n.kind()) {
                continue;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        out
    }
}

/// The word for what a result statement does.
fn action_word(kind: &str) -> &'static str {
    match kind {
        "return_statement" | "return_expression" => "returns",
        "yield" | "yield_expression" => "yields",
        _ => "assigns",
    }
}

/// The statement after a conditional (a Rust `if` sits in an expression statement).
fn next_statement(node: Node<'_>) -> Option<Node<'_>> {
    let statement = match node.parent() {
        Some(p) if p.kind() == "expression_statement" => p,
        _ => node,
    };
    let mut next = statement.next_named_sibling();
    while let Some(n) = next {
        if n.kind() != "comment" {
            return Some(n);
        }
        next = n.next_named_sibling();
    }
    None
}
