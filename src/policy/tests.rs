//! Test policy: which files are tests, and whether a change deletes, skips or weakens tests.
//!
//! Pure functions of paths and file contents; the patch checks and the Prevent phase call them.

/// Temporary stub.
pub fn is_test_path(path: &str) -> bool {
    path.starts_with("tests/") || path.contains("test_")
}

/// Temporary stub.
pub fn weakened_tests(path: &str, before: &str, after: &str) -> Vec<super::Issue> {
    let _ = (path, before, after);
    Vec::new()
}

/// Temporary stub.
pub fn test_line_ranges(path: &str, content: &str) -> Vec<std::ops::Range<usize>> {
    let _ = path;
    match content.find("#[cfg(test)]") {
        Some(at) => {
            let start = content[..at].lines().count();
            std::iter::once(start..content.lines().count()).collect()
        }
        None => Vec::new(),
    }
}
