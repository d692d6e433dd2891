//! Go (go test): a test is a top-level `func TestX(t *testing.T)`; the canaries are
//! functions written right after it. The moved copy is a new `_test.go` file of the same
//! package holding only the renamed function and the imports it names (Go refuses unused
//! imports), with blank lines before it.

use tree_sitter::Node;

use super::{Built, Names, Target, descendants, mutate_literal, parse, perturb, splice, text_of};

/// Blank lines put before the moved copy, so no line of it keeps its number.
const MOVED_LINES: usize = 7;

/// testify-style calls whose second argument is the expected value.
const EQUALITY_CALLS: &[&str] = &["Equal", "Equalf", "EqualValues", "Exactly"];

pub(super) fn build(target: &Target, text: &str, names: &Names) -> Result<Built, String> {
    let leaf = target
        .path
        .first()
        .ok_or_else(|| "the test has no name".to_owned())?;
    let tree = parse(&tree_sitter_go::LANGUAGE.into(), text)
        .ok_or_else(|| "the file does not parse as Go".to_owned())?;
    let root = tree.root_node();
    let function = root
        .named_children(&mut root.walk())
        .find(|node| {
            node.kind() == "function_declaration"
                && node
                    .child_by_field_name("name")
                    .is_some_and(|n| text_of(n, text) == leaf)
        })
        .ok_or_else(|| format!("no `func {leaf}` in the file"))?;
    let name = function
        .child_by_field_name("name")
        .ok_or_else(|| "the test has no name".to_owned())?;
    let parameters = function
        .child_by_field_name("parameters")
        .ok_or_else(|| "the test has no parameters".to_owned())?;
    let param = parameters
        .named_child(0)
        .and_then(|p| p.child_by_field_name("name"))
        .map_or("t", |n| text_of(n, text));
    let (start, end) = (function.start_byte(), function.end_byte());
    let copy = |new: &str, extra: Vec<(std::ops::Range<usize>, String)>| {
        let mut edits = vec![(name.byte_range(), new.to_owned())];
        edits.extend(extra);
        let changed = splice(text, edits);
        let end = (end as isize + changed.len() as isize - text.len() as isize) as usize;
        changed[start..end].to_owned()
    };
    // The target itself called twice with the same `*testing.T`: a call count changes its
    // answer. A parallel test cannot call `t.Parallel` twice; it gets the renamed copy.
    let repeat = if text_of(function, text).contains(".Parallel()") {
        copy(&names.repeat, Vec::new())
    } else {
        format!(
            "func {}{} {{\n\t{leaf}({param})\n\t{leaf}({param})\n}}",
            names.repeat,
            text_of(parameters, text)
        )
    };
    let mut canaries = vec![repeat];
    let expected = expected_literal(function, text);
    let perturbed = match function.child_by_field_name("body") {
        None => Err(super::NoCopy::NotBuilt("the test has no body".to_owned())),
        Some(body) => {
            let literal = |node: Node<'_>| {
                matches!(
                    node.kind(),
                    "interpreted_string_literal" | "int_literal" | "true" | "false"
                )
            };
            let callee = |node: Node<'_>| {
                (node.kind() == "call_expression")
                    .then(|| node.child_by_field_name("function"))
                    .flatten()
                    .map(|f| text_of(f, text).to_owned())
            };
            let literals = perturb::input_literals(body, text, &literal, &callee, expected);
            perturb::build(
                text,
                &literals,
                &perturb::neighbours,
                &names.perturbed,
                &copy,
                start..end,
                "",
            )
        }
    };
    let mutated = expected
        .and_then(|literal| {
            Some((
                literal,
                mutate_literal(literal.kind(), text_of(literal, text))?,
            ))
        })
        .map(|(literal, new)| copy(&names.mutated, vec![(literal.byte_range(), new)]));
    let no_mutation = match mutated {
        Some(copy) => {
            canaries.push(copy);
            None
        }
        None => Some("the test asserts no equality with a literal".to_owned()),
    };
    canaries.push(format!(
        "func {}{} {{\n\t{param}.Fatal(\"efix canary: this test always fails\")\n}}",
        names.fail,
        text_of(parameters, text)
    ));
    let inserted: String = canaries.iter().map(|c| format!("\n\n{c}")).collect();
    let with_canaries = format!("{}{inserted}{}", &text[..end], &text[end..]);
    let moved_function = copy(&names.moved, Vec::new());
    let package = root
        .named_children(&mut root.walk())
        .find(|n| n.kind() == "package_clause")
        .map(|n| text_of(n, text).to_owned())
        .ok_or_else(|| "the file has no package clause".to_owned())?;
    let imports: Vec<String> = descendants(root)
        .into_iter()
        .filter(|n| n.kind() == "import_spec")
        .filter(|spec| uses(*spec, text, &moved_function))
        .map(|spec| format!("\t{}\n", text_of(spec, text)))
        .collect();
    let import_block = if imports.is_empty() {
        String::new()
    } else {
        format!("import (\n{}\n)\n", imports.concat().trim_end())
    };
    let moved = format!(
        "{package}\n\n{import_block}{}{moved_function}\n",
        "\n".repeat(MOVED_LINES)
    );
    Ok(Built {
        with_canaries,
        moved,
        no_mutation,
        perturbed,
    })
}

/// Whether `function` names the package an import spec brings in (blank and dot imports are
/// kept: they run for their effects or name no package).
fn uses(spec: Node<'_>, text: &str, function: &str) -> bool {
    let path = spec
        .child_by_field_name("path")
        .map(|p| text_of(p, text).trim_matches(['"', '`']))
        .unwrap_or("");
    let name = match spec.child_by_field_name("name") {
        Some(alias) => text_of(alias, text).to_owned(),
        None => {
            let mut parts = path.rsplit('/');
            let mut last = parts.next().unwrap_or(path);
            // `gopkg.in/yaml.v3` and `example.com/m/v2` name the package before the version.
            let is_version = |s: &str| {
                s.strip_prefix('v')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            };
            if is_version(last) {
                last = parts.next().unwrap_or(last);
            }
            let last = last.split(".v").next().unwrap_or(last);
            last.trim_start_matches("go-").replace('-', "_")
        }
    };
    if name == "_" || name == "." {
        return true;
    }
    function.contains(&format!("{name}."))
}

/// The literal the first equality check with one expects: `if got != "a" {`, or testify's
/// `assert.Equal(t, "a", got)`.
fn expected_literal<'t>(function: Node<'t>, text: &str) -> Option<Node<'t>> {
    let body = function.child_by_field_name("body")?;
    for node in descendants(body) {
        let operands: Vec<Node<'t>> = match node.kind() {
            "binary_expression" => {
                let operator = node.child_by_field_name("operator");
                if operator.map(|o| text_of(o, text)) != Some("!=") || !fails_the_test(node, text) {
                    continue;
                }
                [
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ]
                .into_iter()
                .flatten()
                .collect()
            }
            "call_expression" => {
                let Some(callee) = node.child_by_field_name("function") else {
                    continue;
                };
                let field = callee
                    .child_by_field_name("field")
                    .map(|f| text_of(f, text));
                if !field.is_some_and(|f| EQUALITY_CALLS.contains(&f)) {
                    continue;
                }
                let Some(arguments) = node.child_by_field_name("arguments") else {
                    continue;
                };
                let mut cursor = arguments.walk();
                arguments
                    .named_children(&mut cursor)
                    .skip(1)
                    .take(2)
                    .collect()
            }
            _ => continue,
        };
        if let Some(literal) = operands.iter().find(|n| is_literal(n)) {
            return Some(*literal);
        }
    }
    None
}

/// Whether `condition` is the condition of an `if` whose block fails the test (`t.Errorf`,
/// `t.Fatal`): then it is a check, not control flow.
fn fails_the_test(condition: Node<'_>, text: &str) -> bool {
    let Some(statement) = condition.parent().filter(|p| p.kind() == "if_statement") else {
        return false;
    };
    let is_condition = statement
        .child_by_field_name("condition")
        .is_some_and(|c| c.id() == condition.id());
    let block = statement
        .child_by_field_name("consequence")
        .map_or("", |b| text_of(b, text));
    is_condition && (block.contains(".Error") || block.contains(".Fatal"))
}

fn is_literal(node: &Node<'_>) -> bool {
    matches!(
        node.kind(),
        "interpreted_string_literal" | "raw_string_literal" | "int_literal" | "float_literal"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            fail: "TestKf".into(),
            repeat: "TestKr".into(),
            mutated: "TestKm".into(),
            moved: "TestKv".into(),
            file: "kv".into(),
            perturbed: vec!["p1".into(), "p2".into(), "p3".into(), "p4".into()],
        }
    }

    const FILE: &str = "package words\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestCount(t *testing.T) {\n\tif got := Count(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n\nfunc TestTrim(t *testing.T) {\n\t_ = strings.TrimSpace(\"\")\n}\n";

    #[test]
    fn a_comparison_that_is_control_flow_is_not_mutated() {
        let text = "package w\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tfor i := 0; i != 3; i++ {\n\t}\n\tif n := 2; n != 0 {\n\t\treturn\n\t}\n}\n";
        let target = Target {
            file: "w_test.go".into(),
            path: vec!["TestA".into()],
        };
        let built = build(&target, text, &names()).unwrap();
        assert_eq!(
            built.no_mutation.as_deref(),
            Some("the test asserts no equality with a literal")
        );
    }

    #[test]
    fn go_canaries_follow_the_target_and_the_moved_file_imports_only_what_it_names() {
        let target = Target {
            file: "words_test.go".into(),
            path: vec!["TestCount".into()],
        };
        let built = build(&target, FILE, &names()).unwrap();
        assert_eq!(
            built.with_canaries,
            "package words\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestCount(t *testing.T) {\n\tif got := Count(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n\nfunc TestKr(t *testing.T) {\n\tTestCount(t)\n\tTestCount(t)\n}\n\nfunc TestKm(t *testing.T) {\n\tif got := Count(\"a  b\"); got != (2 + 1) {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n\nfunc TestKf(t *testing.T) {\n\tt.Fatal(\"efix canary: this test always fails\")\n}\n\nfunc TestTrim(t *testing.T) {\n\t_ = strings.TrimSpace(\"\")\n}\n"
        );
        assert_eq!(
            built.moved,
            "package words\n\nimport (\n\t\"testing\"\n)\n\n\n\n\n\n\n\nfunc TestKv(t *testing.T) {\n\tif got := Count(\"a  b\"); got != 2 {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n"
        );
    }
}
