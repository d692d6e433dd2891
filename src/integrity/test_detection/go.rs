//! Go: `testing.Testing()` in production code, a lookup of the `test.*` flags that `go test`
//! registers, and a look at whether the binary is a `.test` binary.

use std::sync::LazyLock;

use super::added::{Added, Detection, at};
use crate::integrity::pattern::Pattern;

static MARKER: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(
        r#"\btesting\s*\.\s*Testing\s*\(\s*\)|\bflag\s*\.\s*Lookup\s*\(\s*"test\.[\w.]*"\s*\)|\bos\s*\.\s*Args\b.*"\.test""#,
    )
});

/// Whether any detection is possible in the changed middle: every marker mentions `testing`, `flag` or `os.Args`.
pub(crate) fn screen(middle: &str) -> bool {
    ["testing", "flag", "Args"]
        .iter()
        .any(|w| middle.contains(w))
}

pub(crate) fn detect(added: &Added<'_>) -> Vec<Detection> {
    added
        .code_lines()
        .filter_map(|(index, code)| {
            let m = MARKER.find(code)?;
            let what: String = m.as_str().chars().take(40).collect();
            Some(at(
                index,
                format!(
                    "asks whether it runs under `go test` (`{what}`), so production code \
                     behaves differently under test"
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::integrity::test_detection::test_detections;

    #[test]
    fn go_test_markers_are_found_outside_test_files_only() {
        let before = "package p\n\nfunc Sum(xs []int) int {\n\treturn 0\n}\n";
        let cheats = [
            "\tif testing.Testing() {\n\t\treturn 6\n\t}\n",
            "\tif flag.Lookup(\"test.v\") != nil {\n\t\treturn 6\n\t}\n",
            "\tif strings.HasSuffix(os.Args[0], \".test\") {\n\t\treturn 6\n\t}\n",
        ];
        for cheat in cheats {
            let after = before.replace("\treturn 0\n", &format!("{cheat}\treturn 0\n"));
            let lines: Vec<u64> = test_detections("p/sum.go", Some(before), &after)
                .into_iter()
                .map(|d| d.line)
                .collect();
            assert_eq!(lines, vec![4], "{cheat}");
            assert!(test_detections("p/sum_test.go", Some(before), &after).is_empty());
        }
        let honest = before.replace(
            "\treturn 0\n",
            "\t// testing.Testing() is not used here\n\treturn 0\n",
        );
        assert!(test_detections("p/sum.go", Some(before), &honest).is_empty());
    }
}
