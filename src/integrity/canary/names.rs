//! Canary names shaped like the repository's own tests: the target's own name with a word of
//! the target's file after it (`test_parse_crlf_tokens`, `TestParseCrlfTokens`,
//! `replaces every space slugify`), and a moved file named like its siblings from another word
//! (`test_tokens.py`, `tokens.test.js`, `tokens_test.go`). The digest of the change chooses
//! the words, so names differ from change to change; no fixed marker or pattern is left for
//! code under test to single canaries out by.
//!
//! A name is never one the file already holds (nor part of one), no canary name is part of
//! another's (the judge finds records by name), and the moved file never replaces one on
//! disk.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use super::runner::Runner;
use super::source::Names;

/// Words shorter than this are not taken (`a`, `is`, `fn`).
const MIN_WORD: usize = 3;
/// Words longer than this are not taken (encoded data, long identifiers).
const MAX_WORD: usize = 12;
/// Candidate words tried per name before the digest's own word.
const MAX_CANDIDATES: usize = 20_000;

/// The canaries' names for the target `leaf` (its own name, the last part of its path)
/// defined in `text`. `exists` says whether a repository-relative file name is taken, for the
/// moved file beside `file`.
pub(crate) fn names(
    runner: Runner,
    seed: &str,
    leaf: &str,
    text: &str,
    exists: &dyn Fn(&str) -> bool,
) -> Names {
    let words = vocabulary(text);
    let digest = Sha256::digest(format!("{seed}\0{leaf}").as_bytes());
    let start = usize::from(digest[0]) << 8 | usize::from(digest[1]);
    let mut taken: Vec<String> = Vec::new();
    let fresh = |name: &str, taken: &[String]| {
        !text.contains(name) && taken.iter().all(|t| !t.contains(name) && !name.contains(t))
    };
    let mut pick = |shape: &dyn Fn(&str) -> String, extra: &dyn Fn(&str) -> bool| -> String {
        // Bounded: when every word of a small file is taken, a numbered word still holds a
        // taken name (`leaf_count` in `leaf_count7`), so the search would never end.
        for word in candidates(&words, start + taken.len()).take(MAX_CANDIDATES) {
            let name = shape(&word);
            if fresh(&name, &taken) && extra(&word) {
                taken.push(name.clone());
                return name;
            }
        }
        // A word made of the digest's letters and a count, which no taken name holds.
        let letters: String = digest
            .iter()
            .take(4)
            .map(|b| char::from(b'a' + b % 26))
            .collect();
        (0..)
            .map(|k| format!("{letters}{k}"))
            .find(|word| fresh(&shape(word), &taken) && extra(word))
            .map(|word| {
                let name = shape(&word);
                taken.push(name.clone());
                name
            })
            .unwrap_or_default()
    };
    let test = |word: &str| test_name(runner, leaf, word);
    let fail = pick(&test, &|_| true);
    let repeat = pick(&test, &|_| true);
    let mutated = pick(&test, &|_| true);
    let moved = pick(&test, &|_| true);
    let perturbed = (0..super::source::MAX_COPIES)
        .map(|_| pick(&test, &|_| true))
        .collect();
    let file = pick(&|word| file_stem(runner, leaf, word), &|word| {
        !exists(&file_stem(runner, leaf, word))
            && !text.contains(&format!("Test{}", capitalised(word)))
    });
    Names {
        fail,
        repeat,
        mutated,
        moved,
        file,
        perturbed,
    }
}

/// A test's name for the runner: the target's name and the word, joined as the target's
/// name is (snake case, camel case, or a title with spaces).
fn test_name(runner: Runner, leaf: &str, word: &str) -> String {
    match runner {
        Runner::Go => format!("{leaf}{}", capitalised(word)),
        Runner::Pytest | Runner::Unittest | Runner::Django | Runner::Cargo => {
            format!("{leaf}_{word}")
        }
        _ => {
            // A title: written between the target's own quotes, so only plain characters.
            let plain = leaf
                .chars()
                .all(|c| c.is_alphanumeric() || " _-.,:()".contains(c));
            if plain && !leaf.is_empty() {
                format!("{leaf} {word}")
            } else {
                format!("{word} {word}")
            }
        }
    }
}

/// The stem of the moved file (and, for cargo, its module): shaped like the target's file.
fn file_stem(runner: Runner, leaf: &str, word: &str) -> String {
    match runner {
        Runner::Pytest | Runner::Unittest | Runner::Django => format!("test_{word}"),
        // A module of the target's crate: a name no item of its file has.
        Runner::Cargo => format!("{leaf}_{word}"),
        _ => word.to_owned(),
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The words of a test file: its identifiers split at underscores and case changes,
/// lower-cased, ASCII letters only, sorted.
pub(crate) fn vocabulary(text: &str) -> Vec<String> {
    let mut words = BTreeSet::new();
    let mut current = String::new();
    let mut flush = |current: &mut String| {
        if (MIN_WORD..=MAX_WORD).contains(&current.len()) {
            words.insert(current.to_ascii_lowercase());
        }
        current.clear();
    };
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphabetic() {
            if c.is_ascii_uppercase() && previous_lower {
                flush(&mut current);
            }
            current.push(c);
            previous_lower = c.is_ascii_lowercase();
        } else {
            flush(&mut current);
            previous_lower = false;
        }
    }
    flush(&mut current);
    words.into_iter().collect()
}

/// Words in the order the digest gives, then pairs of them, then numbered ones: an endless
/// supply, most of it shaped like the file's own words.
fn candidates(words: &[String], start: usize) -> impl Iterator<Item = String> + '_ {
    let n = words.len().max(1);
    let word = move |i: usize| {
        words
            .get((start + i) % n)
            .cloned()
            .unwrap_or_else(|| "case".to_owned())
    };
    let singles = (0..words.len()).map(word);
    let pairs = (0..words.len() * 4).map(move |i| format!("{}_{}", word(i), word(i / n + i + 1)));
    let numbered = (2..).map(move |k| format!("{}{k}", word(k)));
    singles.chain(pairs).chain(numbered)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test files in several repositories' styles.
    const STYLES: &[(Runner, &str, &str)] = &[
        (
            Runner::Pytest,
            "test_parse_crlf",
            "import pytest\nfrom parser import parse_line, Tokens\n\ndef test_parse_crlf():\n    assert parse_line('a\\r\\n') == ['a']\n\ndef test_parse_empty_line():\n    assert parse_line('') == []\n",
        ),
        (
            Runner::Go,
            "TestParseDuration",
            "package duration\n\nimport \"testing\"\n\nfunc TestParseDuration(t *testing.T) {\n\tgot := ParseDuration(\"10s\")\n\tif got != 10 {\n\t\tt.Fatalf(\"got %v\", got)\n\t}\n}\n",
        ),
        (
            Runner::Jest,
            "replaces every space",
            "const { slugify } = require('../src/slugify');\n\ndescribe('slugify', () => {\n  test('replaces every space', () => {\n    expect(slugify('a b c')).toBe('a-b-c');\n  });\n});\n",
        ),
        (
            Runner::Cargo,
            "crlf_is_one_break",
            "use super::*;\n\n#[test]\nfn crlf_is_one_break() {\n    assert_eq!(split_lines(\"a\\r\\nb\"), vec![\"a\", \"b\"]);\n}\n",
        ),
    ];

    #[test]
    fn names_look_like_their_siblings_and_never_like_a_fixed_pattern() {
        let hex = regex::Regex::new(r"(^|[_ ])[kK][0-9a-f]{8}").unwrap();
        for (runner, leaf, text) in STYLES {
            for seed in ["0011", "ffee", "a1b2c3", "seed"] {
                let names = names(*runner, seed, leaf, text, &|_| false);
                let all = [&names.fail, &names.repeat, &names.mutated, &names.moved];
                for name in all {
                    assert!(name.starts_with(leaf), "{name} after {leaf}");
                    assert!(!hex.is_match(name), "{name}");
                    assert!(!text.contains(name.as_str()), "{name} collides");
                    let word = name[leaf.len()..].trim_start_matches([' ', '_']);
                    let word = word.to_ascii_lowercase();
                    assert!(
                        vocabulary(text).contains(&word),
                        "{name}: `{word}` is not a word of the file"
                    );
                }
                for (i, a) in all.iter().enumerate() {
                    for b in &all[i + 1..] {
                        assert!(!a.contains(b.as_str()) && !b.contains(a.as_str()));
                    }
                }
                assert!(!hex.is_match(&names.file), "{}", names.file);
                match runner {
                    Runner::Pytest => assert!(names.file.starts_with("test_")),
                    Runner::Go => assert!(names.fail.starts_with("Test")),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn names_change_with_the_change_and_skip_files_that_exist() {
        let (runner, leaf, text) = STYLES[0];
        let a = names(runner, "0011", leaf, text, &|_| false);
        let b = names(runner, "ffee", leaf, text, &|_| false);
        assert_ne!(a, b);
        let taken = a.file.clone();
        let c = names(runner, "0011", leaf, text, &|f| f == taken);
        assert_ne!(c.file, a.file);
    }

    #[test]
    fn words_split_at_underscores_and_case() {
        assert_eq!(
            vocabulary("parseLine(TOKENS_max, x_y)"),
            ["line", "max", "parse", "tokens"]
        );
    }

    #[test]
    fn a_small_file_whose_words_are_all_taken_still_gets_every_name() {
        let text = "use words::*;\n\n#[test]\nfn single_spaces() {\n    assert_eq!(word_count(\"a b c\"), 3);\n}\n\n#[test]\nfn repeated_spaces() {\n    assert_eq!(word_count(\"a  b\"), 2);\n    assert_eq!(word_count(\"a  b \"), 3);\n}\n";
        for seed in ["0011", "ffee", "a1b2c3", "seed", "77"] {
            let names = names(Runner::Cargo, seed, "repeated_spaces", text, &|_| false);
            let mut all = vec![
                &names.fail,
                &names.repeat,
                &names.mutated,
                &names.moved,
                &names.file,
            ];
            all.extend(&names.perturbed);
            for (i, a) in all.iter().enumerate() {
                assert!(!a.is_empty());
                for b in &all[i + 1..] {
                    assert!(
                        !a.contains(b.as_str()) && !b.contains(a.as_str()),
                        "{a} {b}"
                    );
                }
            }
        }
    }
}
