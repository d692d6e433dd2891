//! Messages the failure output quotes, found in the code the failing test reaches: an
//! assertion's actual value (`left: "unexpected end of input while parsing major version
//! number"`), an error's text. The code that produces such a message usually holds it as a
//! template (`"unexpected end of input while parsing {}"`), so runs of four words are
//! looked for, not the whole string. Only the files the test's imports reach are read, so
//! the cost follows the failure, not the repository.

use std::sync::LazyLock;

use regex::Regex;

use super::extract::{clip, strip_ansi};
use super::hit::Hit;
use super::reach::Reached;
use super::resolve::is_test_path;
use super::tree::Tree;

/// Words in a row that must match.
const WINDOW_WORDS: usize = 4;
/// Quoted strings taken from one output.
const MAX_QUOTED: usize = 8;
/// Word windows looked for in all.
const MAX_WINDOWS: usize = 48;
/// A file holding text of a quoted message.
const PHRASE_WEIGHT: f64 = 30.0;
/// Quoted messages are shown in reasons up to this many characters.
const QUOTE_CHARS: usize = 80;

/// A message quoted by the output, with the word runs to look for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Quoted {
    pub text: String,
    pub windows: Vec<String>,
}

/// The quoted messages of `output` that have at least [`WINDOW_WORDS`] words, in order of
/// appearance, each once.
pub(crate) fn quoted(output: &str) -> Vec<Quoted> {
    static QUOTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#""((?:[^"\\\n]|\\.){16,400})"|'([^'\n]{16,400})'|`([^`\n]{16,400})`"#).ok()
    });
    let Some(regex) = QUOTED.as_ref() else {
        return Vec::new();
    };
    let mut found: Vec<Quoted> = Vec::new();
    let mut budget = MAX_WINDOWS;
    for line in output.lines() {
        let line = strip_ansi(clip(line));
        for caps in regex.captures_iter(&line) {
            let Some(text) = caps.get(1).or(caps.get(2)).or(caps.get(3)) else {
                continue;
            };
            let text = text.as_str();
            if found.len() >= MAX_QUOTED || found.iter().any(|q| q.text == text) {
                continue;
            }
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| w.len() >= 2 && w.chars().any(char::is_alphabetic))
                .collect();
            if words.len() < WINDOW_WORDS || budget == 0 {
                continue;
            }
            let windows: Vec<String> = words
                .windows(WINDOW_WORDS)
                .map(|w| w.join(" "))
                .take(budget)
                .collect();
            budget -= windows.len();
            found.push(Quoted {
                text: text.to_owned(),
                windows,
            });
        }
    }
    found
}

/// Hits for the non-test files `reached` by the test whose text holds a word run of a
/// quoted message: one per file and message.
pub(crate) fn hits(tree: &Tree<'_>, reached: &[Reached<'_>], quoted: &[Quoted]) -> Vec<Hit> {
    let mut out = Vec::new();
    for file in reached.iter().map(|r| r.file).filter(|f| !is_test_path(f)) {
        let Some(text) = tree.read(file) else {
            continue;
        };
        for message in quoted {
            let Some((at, window)) = message
                .windows
                .iter()
                .find_map(|w| text.find(w.as_str()).map(|at| (at, w)))
            else {
                continue;
            };
            let line = text[..at].matches('\n').count() as u64 + 1;
            let shown: String = message.text.chars().take(QUOTE_CHARS).collect();
            out.push(Hit {
                path: file.to_owned(),
                line: Some(line),
                weight: PHRASE_WEIGHT,
                reason: format!(
                    "holds \"{window}\" at line {line}, text of the message \"{shown}\" the \
                     failure output quotes"
                ),
                names_failing_test: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quoted_messages_give_their_word_runs_and_short_or_numeric_strings_give_none() {
        let output = "  left: \"unexpected end of input while parsing major version number\"\n \
                      right: \"empty string, expected a semver version\"\nE  assert '1000.0 kB' == '1.0 MB'\n";
        let found = quoted(output);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].windows[0], "unexpected end of input");
        assert_eq!(found[0].windows.len(), 6);
        assert_eq!(
            found[1].windows,
            vec![
                "empty string expected semver",
                "string expected semver version"
            ]
        );
    }
}
