//! JUnit XML (`testsuites`/`testsuite`/`testcase` with `failure`, `error`, `skipped`), read by
//! a small tolerant scanner: reports come from many tools and are often slightly off-spec, and
//! only a handful of elements and attributes matter here.

use super::model::{Builder, TestReport, TestStatus};

/// Parse a JUnit XML report; `None` when the text holds no `testsuite` or `testcase`.
pub fn parse_junit_xml(xml: &str) -> Option<TestReport> {
    let mut builder = Builder::new("junit", true);
    let mut saw_suite = false;
    let mut current: Option<(Option<String>, String, TestStatus)> = None;
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = rest.get(open..).unwrap_or("");
        // Comments, CDATA and declarations may contain `<` and `>`; skip them whole.
        if let Some(skip) = [
            ("<!--", "-->"),
            ("<![CDATA[", "]]>"),
            ("<?", "?>"),
            ("<!", ">"),
        ]
        .iter()
        .find(|(start, _)| rest.starts_with(start))
        {
            match rest.find(skip.1) {
                Some(end) => rest = rest.get(end + skip.1.len()..).unwrap_or(""),
                None => break,
            }
            continue;
        }
        let Some(close) = find_tag_end(rest) else {
            // A stray `<` in text content: step over it and keep scanning.
            rest = rest.get(1..).unwrap_or("");
            continue;
        };
        let tag = rest.get(1..close).unwrap_or("");
        rest = rest.get(close + 1..).unwrap_or("");
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (element, attributes) = match tag.find(|c: char| c.is_whitespace()) {
            Some(at) => (tag.get(..at).unwrap_or(tag), tag.get(at..).unwrap_or("")),
            None => (tag, ""),
        };
        let local = element.rsplit(':').next().unwrap_or(element);
        match local {
            "testsuite" | "testsuites" => saw_suite = true,
            "testcase" => {
                if let Some((file, name, status)) = current.take() {
                    builder.record(file.as_deref(), &name, status);
                }
                let name = attribute(attributes, "name").unwrap_or_default();
                let class = attribute(attributes, "classname").unwrap_or_default();
                let full = if class.is_empty() || name.starts_with(&class) {
                    name
                } else {
                    format!("{class}.{name}")
                };
                let file = attribute(attributes, "file").filter(|file| !file.is_empty());
                let case = (file, full, TestStatus::Passed);
                if self_closing {
                    builder.record(case.0.as_deref(), &case.1, case.2);
                } else {
                    current = Some(case);
                }
            }
            "/testcase" => {
                if let Some((file, name, status)) = current.take() {
                    builder.record(file.as_deref(), &name, status);
                }
            }
            "failure" | "error" => {
                if let Some(case) = current.as_mut() {
                    case.2 = TestStatus::Failed;
                }
            }
            "skipped" => {
                if let Some(case) = current.as_mut().filter(|case| case.2 != TestStatus::Failed) {
                    case.2 = TestStatus::Skipped;
                }
            }
            _ => {}
        }
    }
    if let Some((file, name, status)) = current.take() {
        builder.record(file.as_deref(), &name, status);
    }
    if !saw_suite && builder.is_empty() {
        return None;
    }
    Some(builder.finish())
}

/// The index of the `>` closing the tag at the start of `text`, ignoring `>` inside quoted
/// attribute values.
fn find_tag_end(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices().skip(1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(at),
            (None, '<') => return None,
            _ => {}
        }
    }
    None
}

/// The unescaped value of `key="..."` (or single-quoted) among a tag's attributes.
fn attribute(attributes: &str, key: &str) -> Option<String> {
    let mut rest = attributes;
    loop {
        let trimmed = rest.trim_start();
        let eq = trimmed.find('=')?;
        let name = trimmed.get(..eq)?.trim();
        let after = trimmed.get(eq + 1..)?.trim_start();
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = after.get(1..)?;
        let end = body.find(quote)?;
        if name == key {
            return Some(unescape(body.get(..end)?));
        }
        rest = body.get(end + 1..)?;
    }
}

/// `text` with XML's predefined entities and character references decoded; an unknown or
/// broken entity stays as written.
pub(crate) fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or(""));
        rest = rest.get(at..).unwrap_or("");
        let Some(end) = rest.find(';').filter(|end| *end <= 10) else {
            out.push('&');
            rest = rest.get(1..).unwrap_or("");
            continue;
        };
        let entity = rest.get(1..end).unwrap_or("");
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = rest.get(end + 1..).unwrap_or("");
            }
            None => {
                out.push('&');
                rest = rest.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}
