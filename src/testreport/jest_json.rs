//! jest's `--json` result object, which vitest's `json` reporter also writes: per file
//! (`testResults[].name`, `status`, `message`) the tests with their describe blocks
//! (`ancestorTitles`), `title` and `status`.

use std::path::Path;

use serde::Deserialize;

use super::model::{Builder, TestReport, TestStatus};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Results {
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
}

/// Parse a jest/vitest JSON report; `None` when the text is not one (truncated, or another
/// format). Names are the describe blocks and the title joined by `separator` (jest's ` › `,
/// vitest's ` > `), files relative to `root` when under it.
pub fn parse_jest_json(text: &str, format: &'static str, root: &Path) -> Option<TestReport> {
    let results: Results = serde_json::from_str(text).ok()?;
    let separator = if format == "jest" { " › " } else { " > " };
    let mut builder = Builder::new(format, true);
    let mut errors = 0;
    for file in &results.test_results {
        let path = Path::new(&file.name);
        let relative = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        for test in &file.assertion_results {
            let status = match test.status.as_str() {
                "passed" => TestStatus::Passed,
                "failed" => TestStatus::Failed,
                // pending, skipped, todo, disabled, focused-out.
                _ => TestStatus::Skipped,
            };
            let mut name = test.ancestor_titles.join(separator);
            if !name.is_empty() {
                name.push_str(separator);
            }
            name.push_str(&test.title);
            builder.record(Some(&relative), &name, status);
        }
        if file.status == "failed"
            && !file
                .assertion_results
                .iter()
                .any(|test| test.status == "failed")
        {
            // The file failed outside any test (syntax or import error, a hook).
            errors += 1;
            builder.record(Some(&relative), &relative, TestStatus::Failed);
        }
    }
    let mut report = builder.finish();
    report.errors = errors;
    report.failed = report.failed.saturating_sub(errors);
    Some(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_report_is_not_read_as_a_shorter_run() {
        let text = r#"{"numTotalTests":1,"testResults":[{"name":"/r/a.test.js","status":"passed","assertionResults":[{"ancestorTitles":[],"title":"t","status":"passed"}]}]}"#;
        let whole = parse_jest_json(text, "jest", Path::new("/r"));
        assert_eq!(
            whole.map(|r| (r.passed, r.tests[0].id())),
            Some((1, "a.test.js::t".to_owned()))
        );
        assert_eq!(
            parse_jest_json(&text[..text.len() - 3], "jest", Path::new("/r")),
            None
        );
    }
}
