//! The result file efix's mocha reporter writes (`integrity::channel`): the full titles and
//! files of the passes, failures and pending tests, and `end` once the run finished. mocha's
//! own JSON reporter writes the same three lists.

use std::path::Path;

use serde::Deserialize;

use super::model::{Builder, TestReport, TestStatus};

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    passes: Vec<Entry>,
    #[serde(default)]
    failures: Vec<Entry>,
    #[serde(default)]
    pending: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    full_title: String,
    #[serde(default)]
    file: Option<String>,
}

/// Parse a mocha result file; `None` when the text is not one (cut short, another format).
/// Files are made relative to `root` when under it.
pub fn parse_mocha_json(text: &str, root: &Path) -> Option<TestReport> {
    let results: Results = serde_json::from_str(text).ok()?;
    let mut builder = Builder::new("mocha", true);
    let lists = [
        (&results.passes, TestStatus::Passed),
        (&results.pending, TestStatus::Skipped),
        // Last, so a test that passed and then failed in a hook reads as failed.
        (&results.failures, TestStatus::Failed),
    ];
    for (entries, status) in lists {
        for entry in entries {
            let file = entry.file.as_deref().map(|file| {
                let path = Path::new(file);
                path.strip_prefix(root)
                    .unwrap_or(path)
                    .display()
                    .to_string()
            });
            builder.record(file.as_deref(), &entry.full_title, status);
        }
    }
    Some(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_with_files_relative_to_the_root() {
        let text = r#"{"passes":[{"fullTitle":"top","file":"/r/test/a.test.js"}],"failures":[{"fullTitle":"grp two","file":"/r/test/a.test.js"}],"pending":[{"fullTitle":"grp three","file":null}],"end":true}"#;
        let Some(report) = parse_mocha_json(text, Path::new("/r")) else {
            panic!("not read")
        };
        let got: Vec<(String, TestStatus)> =
            report.tests.iter().map(|c| (c.id(), c.status)).collect();
        assert_eq!(
            got,
            vec![
                ("test/a.test.js::top".to_owned(), TestStatus::Passed),
                ("grp three".to_owned(), TestStatus::Skipped),
                ("test/a.test.js::grp two".to_owned(), TestStatus::Failed),
            ]
        );
        assert_eq!(parse_mocha_json(&text[..40], Path::new("/r")), None);
    }
}
