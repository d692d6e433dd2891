//! JUnit XML for triage: every failing `testcase` with its failure text, handed to a callback
//! one at a time, so a run of any size is read with the memory of one file.
//!
//! This departs from `testreport::parse_junit_xml` on purpose: that reader is tolerant and
//! keeps only names and statuses (a before/after comparison needs nothing more), while triage
//! needs each failure's message, stack and captured output, and must refuse a truncated or
//! broken report with the line where it breaks instead of grouping half a run. Entities are
//! decoded by `testreport`'s own decoder.

use std::path::Path;

use super::error::TriageError;
use super::failure::{Failure, Runner, bounded};
use crate::testreport::xml_unescape;

/// Elements nested deeper than this are refused (no JUnit writer nests more than a few).
const MAX_DEPTH: usize = 64;
/// At most this much text is collected per testcase before [`bounded`] cuts it.
const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// One `testcase` being read.
#[derive(Default)]
struct Case {
    name: String,
    classname: String,
    /// The names of the enclosing `testsuite` elements (node:test writes its describe
    /// blocks as nested suites), joined by ` > `.
    suites: String,
    file: Option<String>,
    failed: bool,
    message: Option<String>,
    text: String,
    /// Depth of the element whose text is being captured (`failure`, `error`,
    /// `system-out`, `system-err`), if any.
    capturing: Option<usize>,
}

/// What the report says about its writer.
#[derive(Default)]
struct Hints {
    root_name: Option<String>,
    suite_name: Option<String>,
    go: bool,
    nextest: bool,
    node: bool,
    file_extension: Option<String>,
}

/// Read the JUnit report at `path` (its text is `xml`) and call `found` with every failing
/// testcase. `runner` overrides what the report's content says about its writer.
pub fn read_junit(
    path: &Path,
    xml: &str,
    runner: Option<Runner>,
    found: &mut dyn FnMut(Failure),
) -> Result<usize, TriageError> {
    let mut reader = Reader {
        path,
        xml,
        at: 0,
        line: 1,
        counted: 0,
    };
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut case: Option<Case> = None;
    let mut hints = Hints::default();
    let mut saw_suite = false;
    // (depth, name) of the open `testsuite` elements.
    let mut suites: Vec<(usize, String)> = Vec::new();
    // Failures are held until the runner is known (the root element names it, but `--runner`
    // or a later hint may be needed); one file's failures at most.
    let mut pending: Vec<Case> = Vec::new();
    while let Some(open) = memchr::memchr(b'<', &xml.as_bytes()[reader.at..]) {
        let text_start = reader.at;
        let start = reader.at + open;
        if let Some(case) = case.as_mut().filter(|case| case.capturing.is_some()) {
            capture(case, &xml[text_start..start]);
        }
        reader.at = start;
        let rest = &xml[start..];
        if rest.starts_with("<!--") {
            reader.skip_past(start, "-->", "a comment")?;
        } else if let Some(body) = rest.strip_prefix("<![CDATA[") {
            let end = reader.skip_past(start, "]]>", "a CDATA section")?;
            if let Some(case) = case.as_mut().filter(|case| case.capturing.is_some()) {
                let len = end - start - "<![CDATA[".len() - "]]>".len();
                capture_raw(case, &body[..len]);
            }
        } else if rest.starts_with("<?") {
            reader.skip_past(start, "?>", "a processing instruction")?;
        } else if rest.starts_with("<!") {
            reader.skip_past(start, ">", "a declaration")?;
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = reader.tag_end(start)?;
            let name = after[..end - start - 2].trim();
            let line = reader.line_of(start);
            let Some((opened, opened_line)) = stack.pop() else {
                return Err(reader.error(line, format!("</{name}> closes nothing")));
            };
            if opened != name {
                return Err(reader.error(
                    line,
                    format!("</{name}> closes <{opened}> opened on line {opened_line}"),
                ));
            }
            let depth = stack.len();
            if let Some(current) = case.as_mut()
                && current.capturing == Some(depth)
            {
                current.capturing = None;
            }
            if local(name) == "testsuite" && suites.last().is_some_and(|(at, _)| *at == depth) {
                suites.pop();
            }
            if local(name) == "testcase"
                && let Some(done) = case.take().filter(|case| case.failed)
            {
                pending.push(done);
            }
            reader.at = end + 1;
        } else {
            let end = reader.tag_end(start)?;
            let line = reader.line_of(start);
            let inner = &xml[start + 1..end];
            let self_closing = inner.ends_with('/');
            let inner = inner.trim_end_matches('/');
            let (name, attributes) = match inner.find(|c: char| c.is_whitespace()) {
                Some(at) => (&inner[..at], &inner[at..]),
                None => (inner, ""),
            };
            if name.is_empty() || !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
                return Err(reader.error(
                    line,
                    "a `<` that starts no element; text must write it as &lt;".to_owned(),
                ));
            }
            let attributes = parse_attributes(attributes).map_err(|message| {
                reader.error(line, format!("in the attributes of <{name}>: {message}"))
            })?;
            let get = |key: &str| {
                attributes
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.clone())
            };
            let depth = stack.len();
            match local(name) {
                "testsuites" => {
                    saw_suite = true;
                    hints.root_name = hints.root_name.take().or_else(|| get("name"));
                    hints.nextest |= get("uuid").is_some() && get("name").is_some();
                }
                "testsuite" => {
                    saw_suite = true;
                    if hints.suite_name.is_none() {
                        hints.suite_name = get("name");
                    }
                    if !self_closing {
                        suites.push((depth, get("name").unwrap_or_default()));
                    }
                }
                "property" => {
                    hints.go |= get("name").is_some_and(|name| name == "go.version");
                }
                "testcase" => {
                    saw_suite = true;
                    if let Some(open) = case.take().filter(|case| case.failed) {
                        pending.push(open);
                    }
                    let file = get("file").filter(|file| !file.is_empty());
                    if hints.file_extension.is_none() {
                        hints.file_extension = file
                            .as_deref()
                            .and_then(|file| file.rsplit_once('.'))
                            .map(|(_, ext)| ext.to_owned());
                    }
                    let started = Case {
                        name: get("name").unwrap_or_default(),
                        classname: get("classname").unwrap_or_default(),
                        suites: suites
                            .iter()
                            .map(|(_, name)| name.as_str())
                            .collect::<Vec<_>>()
                            .join(" > "),
                        file,
                        ..Case::default()
                    };
                    if !self_closing {
                        case = Some(started);
                    }
                }
                "failure" | "error" => {
                    // node:test's JUnit reporter types its failures.
                    hints.node |= get("type").is_some_and(|t| t.starts_with("testCodeFailure"));
                    if let Some(current) = case.as_mut() {
                        current.failed = true;
                        if current.message.is_none() {
                            current.message = get("message").filter(|m| !m.trim().is_empty());
                        }
                        if !self_closing {
                            current.capturing = Some(depth);
                        }
                    }
                }
                "system-out" | "system-err" => {
                    if let Some(current) = case.as_mut().filter(|_| !self_closing) {
                        current.capturing = Some(depth);
                    }
                }
                _ => {}
            }
            if !self_closing {
                if stack.len() >= MAX_DEPTH {
                    return Err(reader.error(
                        line,
                        format!("elements nest deeper than {MAX_DEPTH} levels"),
                    ));
                }
                stack.push((name.to_owned(), line));
            }
            reader.at = end + 1;
        }
    }
    if let Some((name, line)) = stack.last() {
        let end = reader.line_of(xml.len());
        return Err(reader.error(
            end,
            format!(
                "the file ends before </{name}> (opened on line {line}); it looks truncated: \
                 pass the complete report"
            ),
        ));
    }
    if !saw_suite {
        return Err(TriageError::NotJunit {
            path: path.to_owned(),
        });
    }
    if pending.is_empty() {
        return Ok(0);
    }
    let runner = match runner.or_else(|| detect(&hints, &pending)) {
        Some(runner) => runner,
        None => {
            return Err(TriageError::UnknownRunner {
                path: path.to_owned(),
            });
        }
    };
    let count = pending.len();
    for case in pending {
        found(failure_of(runner, case));
    }
    Ok(count)
}

/// Position bookkeeping over one file: the byte offset, and the line at `counted`.
struct Reader<'a> {
    path: &'a Path,
    xml: &'a str,
    at: usize,
    line: usize,
    counted: usize,
}

impl Reader<'_> {
    /// The 1-based line of byte `offset` (offsets are asked for in increasing order, so the
    /// count only moves forward).
    fn line_of(&mut self, offset: usize) -> usize {
        if offset >= self.counted {
            self.line +=
                memchr::memchr_iter(b'\n', &self.xml.as_bytes()[self.counted..offset]).count();
            self.counted = offset;
            self.line
        } else {
            1 + memchr::memchr_iter(b'\n', &self.xml.as_bytes()[..offset]).count()
        }
    }

    fn error(&self, line: usize, message: String) -> TriageError {
        TriageError::Malformed {
            path: self.path.to_owned(),
            line,
            message,
        }
    }

    /// Move past `terminator` after `start`; the offset just past it.
    fn skip_past(
        &mut self,
        start: usize,
        terminator: &str,
        what: &str,
    ) -> Result<usize, TriageError> {
        match self.xml[start..].find(terminator) {
            Some(at) => {
                self.at = start + at + terminator.len();
                Ok(self.at)
            }
            None => {
                let line = self.line_of(start);
                Err(self.error(
                    line,
                    format!(
                        "the file ends inside {what} that starts here; it looks truncated: \
                         pass the complete report"
                    ),
                ))
            }
        }
    }

    /// The offset of the `>` that ends the tag at `start`, outside quoted values.
    fn tag_end(&mut self, start: usize) -> Result<usize, TriageError> {
        let bytes = self.xml.as_bytes();
        let mut quote: Option<u8> = None;
        for (index, byte) in bytes.iter().enumerate().skip(start + 1) {
            match (quote, *byte) {
                (Some(q), b) if b == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(*byte),
                (None, b'>') => return Ok(index),
                (None, b'<') => {
                    let line = self.line_of(start);
                    return Err(self.error(
                        line,
                        "a tag that is not closed with `>` before the next `<`".to_owned(),
                    ));
                }
                _ => {}
            }
        }
        let line = self.line_of(start);
        Err(self.error(
            line,
            "the file ends inside the tag that starts here; it looks truncated: pass the \
             complete report"
                .to_owned(),
        ))
    }
}

/// `key="value"` pairs (either quote), decoded.
fn parse_attributes(text: &str) -> Result<Vec<(&str, String)>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            return Err(format!("`{}` has no value", clip(rest)));
        };
        let key = rest[..eq].trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("`{}` is not an attribute", clip(rest)));
        }
        let after = rest[eq + 1..].trim_start();
        let quote = match after.chars().next() {
            Some(q @ ('"' | '\'')) => q,
            _ => return Err(format!("the value of {key} is not quoted")),
        };
        let body = &after[1..];
        let Some(end) = body.find(quote) else {
            return Err(format!("the value of {key} is not closed"));
        };
        out.push((key, xml_unescape(&body[..end])));
        rest = body[end + 1..].trim_start();
    }
    Ok(out)
}

fn clip(text: &str) -> &str {
    let mut end = text.len().min(40);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

fn capture(case: &mut Case, raw: &str) {
    if case.text.len() < MAX_CAPTURE_BYTES && !raw.is_empty() {
        case.text.push_str(&xml_unescape(raw));
    }
}

fn capture_raw(case: &mut Case, text: &str) {
    if case.text.len() < MAX_CAPTURE_BYTES {
        case.text.push_str(text);
    }
}

/// The writer of a report, from what its writers put in it.
fn detect(hints: &Hints, cases: &[Case]) -> Option<Runner> {
    let root = hints.root_name.as_deref().unwrap_or("");
    let suite = hints.suite_name.as_deref().unwrap_or("");
    if root == "pytest tests" || suite == "pytest" {
        return Some(Runner::Pytest);
    }
    if root == "jest tests" {
        return Some(Runner::Jest);
    }
    if root == "vitest tests" {
        return Some(Runner::Vitest);
    }
    if hints.nextest || root == "nextest-run" {
        return Some(Runner::Cargo);
    }
    if hints.go {
        return Some(Runner::Go);
    }
    if hints.node {
        return Some(Runner::Node);
    }
    match hints.file_extension.as_deref() {
        Some("py") => return Some(Runner::Pytest),
        Some("rs") => return Some(Runner::Cargo),
        Some("go") => return Some(Runner::Go),
        _ => {}
    }
    // go-junit-report without properties: Go test names in import-path suites.
    let go_names = cases.iter().all(|case| {
        case.name.starts_with("Test") && case.classname.contains('/') && !case.name.contains(' ')
    });
    go_names.then_some(Runner::Go)
}

/// The failure of a read testcase, named the way `runner`'s selector needs.
fn failure_of(runner: Runner, case: Case) -> Failure {
    let name = case.name.trim().to_owned();
    let classname = case.classname.trim().to_owned();
    let (name, scope) = match runner {
        Runner::Pytest => pytest_node(&classname, &name, case.file.as_deref()),
        // jest-junit writes the full name (describe blocks and title); its `file` attribute
        // is optional (`addFileAttribute`).
        Runner::Jest => (name, case.file),
        // vitest: `describe > title`, the file as classname; `-t` matches the names joined
        // by spaces.
        Runner::Vitest => (
            name.split(" > ").collect::<Vec<_>>().join(" "),
            case.file.or(Some(classname).filter(|c| !c.is_empty())),
        ),
        Runner::Cargo => (name, Some(classname).filter(|c| !c.is_empty())),
        Runner::Go => (name, Some(classname).filter(|c| !c.is_empty())),
        // node:test: the describe blocks are the enclosing suites.
        Runner::Node if !case.suites.is_empty() => (format!("{} > {name}", case.suites), case.file),
        Runner::Node => (name, case.file),
    };
    Failure {
        runner,
        name,
        scope,
        text: bounded(case.text),
        message: case.message,
    }
}

/// A pytest node id from a testcase: `tests.test_a.TestB` + `test_c[1]` becomes
/// `tests/test_a.py::TestB::test_c[1]` (modules are lowercase by convention, classes start
/// with an upper-case letter; the `file` attribute of `junit_family=xunit1` wins when present).
fn pytest_node(classname: &str, name: &str, file: Option<&str>) -> (String, Option<String>) {
    let parts: Vec<&str> = classname.split('.').filter(|p| !p.is_empty()).collect();
    let split = parts
        .iter()
        .position(|part| part.starts_with(|c: char| c.is_uppercase()))
        .unwrap_or(parts.len());
    let module = parts[..split].join("/");
    let file = match file {
        Some(file) => file.to_owned(),
        None if module.is_empty() => return (name.to_owned(), None),
        None => format!("{module}.py"),
    };
    let mut id = file.clone();
    for class in &parts[split..] {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(name);
    (id, Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(xml: &str) -> Result<Vec<Failure>, TriageError> {
        let mut out = Vec::new();
        read_junit(Path::new("r.xml"), xml, None, &mut |f| out.push(f))?;
        Ok(out)
    }

    #[test]
    fn pytest_classnames_become_node_ids() {
        assert_eq!(
            pytest_node("tests.test_a.TestB", "test_c[1]", None),
            (
                "tests/test_a.py::TestB::test_c[1]".to_owned(),
                Some("tests/test_a.py".to_owned())
            )
        );
        assert_eq!(
            pytest_node("test_a", "test_x", None).0,
            "test_a.py::test_x".to_owned()
        );
    }

    #[test]
    fn failure_text_message_and_cdata_are_kept() {
        let xml = "<testsuites name=\"pytest tests\"><testsuite name=\"pytest\">\n\
                   <testcase classname=\"t.test_a\" name=\"test_ok\"/>\n\
                   <testcase classname=\"t.test_a\" name=\"test_bad\">\
                   <failure message=\"boom &amp; bust\">line &lt;1&gt;<![CDATA[ <raw> ]]></failure>\
                   </testcase></testsuite></testsuites>";
        let failures = read(xml).unwrap();
        assert_eq!(
            failures,
            vec![Failure {
                runner: Runner::Pytest,
                name: "t/test_a.py::test_bad".to_owned(),
                scope: Some("t/test_a.py".to_owned()),
                text: "line <1> <raw> ".to_owned(),
                message: Some("boom & bust".to_owned()),
            }]
        );
    }

    #[test]
    fn truncated_report_names_the_line_of_the_unclosed_element() {
        let xml = "<testsuites name=\"jest tests\">\n<testsuite name=\"a\">\n<testcase name=\"x\">\n<failure>boom";
        let err = read(xml).unwrap_err().to_string();
        assert!(err.contains("r.xml:4"), "{err}");
        assert!(err.contains("</failure> (opened on line 4)"), "{err}");
        let cut = "<testsuites>\n<testsuite name=\"a\"\n tests=\"1";
        let err = read(cut).unwrap_err().to_string();
        assert!(
            err.contains("r.xml:2") && err.contains("ends inside the tag"),
            "{err}"
        );
    }

    #[test]
    fn mismatched_close_and_bad_attributes_are_errors_with_lines() {
        let err = read("<testsuites>\n<testsuite>\n</testcase>").unwrap_err();
        assert!(
            err.to_string()
                .contains("r.xml:3: </testcase> closes <testsuite> opened on line 2")
        );
        let err = read("<testsuites>\n<testsuite name=x>").unwrap_err();
        assert!(err.to_string().contains("r.xml:2") && err.to_string().contains("not quoted"));
        let err = read("<testsuites>\n< testsuite>").unwrap_err();
        assert!(err.to_string().contains("r.xml:2"));
    }

    /// Every prefix of the real runners' reports (in steps) is either the whole report or an
    /// error naming a line the prefix has; flipped bytes never panic.
    #[test]
    fn every_truncation_of_real_reports_is_an_error_naming_a_line_inside_it() {
        let reports = [
            include_str!("../../tests/fixtures/triage/pytest/junit.xml"),
            include_str!("../../tests/fixtures/triage/jest/junit.xml"),
            include_str!("../../tests/fixtures/triage/vitest/junit.xml"),
            include_str!("../../tests/fixtures/triage/nextest/junit.xml"),
            include_str!("../../tests/fixtures/triage/go/junit.xml"),
            include_str!("../../tests/fixtures/triage/node/junit.xml"),
        ];
        for report in reports {
            let complete = report.trim_end().len();
            let mut cut = 0;
            while cut < complete {
                while !report.is_char_boundary(cut) {
                    cut += 1;
                }
                let prefix = &report[..cut];
                match read(prefix) {
                    Err(TriageError::Malformed { line, .. }) => {
                        // A prefix ending in a line break ends on the empty line after it.
                        let lines = prefix.matches('\n').count() + 1;
                        assert!(line >= 1 && line <= lines, "{cut}: line {line} of {lines}");
                    }
                    Err(TriageError::NotJunit { .. }) => {}
                    other => panic!("a cut at {cut} of {complete} bytes gave {other:?}"),
                }
                cut += 61;
            }
            assert!(read(report).is_ok());
            let mut bytes = report.as_bytes().to_vec();
            for at in (0..bytes.len()).step_by(37) {
                bytes[at] ^= 0x5a;
                let text = String::from_utf8_lossy(&bytes);
                let _ = read(&text);
                let _ = read_junit(Path::new("r.xml"), &text, Some(Runner::Go), &mut |_| {});
                bytes[at] ^= 0x5a;
            }
        }
    }

    #[test]
    fn not_junit_and_unknown_runner_are_refused() {
        assert!(matches!(
            read("<html></html>"),
            Err(TriageError::NotJunit { .. })
        ));
        let unknown = "<testsuites><testsuite name=\"s\"><testcase name=\"it works\" classname=\"c\">\
                       <failure/></testcase></testsuite></testsuites>";
        assert!(matches!(
            read(unknown),
            Err(TriageError::UnknownRunner { .. })
        ));
        let mut out = Vec::new();
        read_junit(Path::new("r.xml"), unknown, Some(Runner::Node), &mut |f| {
            out.push(f)
        })
        .unwrap();
        assert_eq!(out.len(), 1);
    }
}
