//! Parses `key = value` configuration text.

/// One `key = value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: String,
}

/// Parse `key = value` lines. Blank lines and lines starting with `#` are skipped; spaces
/// around keys and values are not part of them.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            entries.push(Entry {
                key: key.trim_end().to_string(),
                value: value.trim_start().to_string(),
            });
        }
    }
    entries
}

/// The value of `key`, if present (the last one wins).
pub fn get<'a>(entries: &'a [Entry], key: &str) -> Option<&'a str> {
    entries.iter().rev().find(|e| e.key == key).map(|e| e.value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_keys_and_values() {
        let entries = parse("name = efix\n# a comment\n\nmode = strict\n");
        assert_eq!(get(&entries, "name"), Some("efix"));
        assert_eq!(get(&entries, "mode"), Some("strict"));
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn last_value_wins() {
        let entries = parse("a = 1\na = 2\n");
        assert_eq!(get(&entries, "a"), Some("2"));
    }

    #[test]
    fn crlf_files_parse_like_unix_files() {
        let unix = parse("name = efix\nmode = strict\n");
        let windows = parse("name = efix\r\nmode = strict\r\n");
        assert_eq!(windows, unix);
    }
}
