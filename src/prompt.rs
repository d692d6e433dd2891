//! Prompt templates (`prompts/*.md`), compiled in and overridable by config
//! (`prompts.plan`, `prompts.fix`). Placeholders are `{{name}}`; unknown ones are left as is.

use std::collections::BTreeMap;

/// The built-in plan prompt.
pub const PLAN_TEMPLATE: &str = include_str!("../prompts/plan.md");
/// The built-in fix prompt.
pub const FIX_TEMPLATE: &str = include_str!("../prompts/fix.md");

/// Replace each `{{key}}` with its value in one pass, so values containing braces are never
/// expanded again.
pub fn render(template: &str, values: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) if values.contains_key(&after[..end]) => {
                out.push_str(&values[&after[..end]]);
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_known_placeholders_once_and_keeps_unknown_ones() {
        let values = BTreeMap::from([("a", "{{b}}".to_owned()), ("b", "x".to_owned())]);
        assert_eq!(
            render("1 {{a}} 2 {{c}} {{b}}", &values),
            "1 {{b}} 2 {{c}} x"
        );
    }
}
