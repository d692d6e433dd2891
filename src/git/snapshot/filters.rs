//! Which tracked files a checkout filter may have made differ from their blob: LFS and other
//! filter drivers, `ident`, `working-tree-encoding`, and CRLF line endings (`eol=crlf`, or
//! `text` files under `core.autocrlf=true` / `core.eol=crlf`).
//!
//! Such a file is clean to git although its bytes are not its blob's, so a restore could not
//! rebuild it from the blob: the snapshot hashes it and, when the bytes differ, keeps them.
//! Asking the attribute rules about every file would cost as much as hashing the tree, so the
//! rules are first read whole (every `.gitattributes`, `info/attributes`, the global and
//! system files): only the attribute names that occur there are asked about, and in most
//! repositories none does.

use std::path::{Path, PathBuf};

use git2::{AttrCheckFlags, AttrValue, Repository};

use super::super::repo::raw_path;

/// Attributes that can change a file's bytes on checkout.
const FILTER_ATTRIBUTES: &[&str] = &["filter", "ident", "working-tree-encoding", "eol", "crlf"];
/// Attributes that change bytes on checkout only when the configuration asks for CRLF.
const CRLF_ATTRIBUTES: &[&str] = &["text", "crlf"];

/// The attribute names worth asking about in one repository.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filters {
    names: Vec<&'static str>,
    /// `core.autocrlf=true`: every file git takes for text is checked out with CRLF.
    autocrlf: bool,
    /// `core.eol=crlf`: files marked `text` are checked out with CRLF.
    eol_crlf: bool,
}

impl Filters {
    /// Read the configuration and every attribute file; `attribute_files` are the tracked
    /// `.gitattributes` files (repository-relative).
    pub(crate) fn of<'p>(
        repo: &Repository,
        root: &Path,
        attribute_files: impl Iterator<Item = &'p [u8]>,
    ) -> Filters {
        let config = repo.config().ok();
        let autocrlf = config
            .as_ref()
            .and_then(|c| c.get_string("core.autocrlf").ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let eol_crlf = config
            .as_ref()
            .and_then(|c| c.get_string("core.eol").ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("crlf"));
        let mut sources: Vec<PathBuf> = attribute_files.map(|p| root.join(raw_path(p))).collect();
        sources.push(repo.commondir().join("info").join("attributes"));
        match config
            .as_ref()
            .and_then(|c| c.get_path("core.attributesFile").ok())
        {
            Some(path) => sources.push(path),
            None => sources.extend(
                git2::Config::find_xdg()
                    .ok()
                    .and_then(|p| p.parent().map(|d| d.join("attributes"))),
            ),
        }
        sources.extend(
            git2::Config::find_system()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("gitattributes"))),
        );
        let crlf = autocrlf || eol_crlf;
        let mut names: Vec<&'static str> = Vec::new();
        for source in sources {
            let Ok(text) = std::fs::read(&source) else {
                continue;
            };
            for name in named_attributes(&text) {
                let wanted = FILTER_ATTRIBUTES
                    .iter()
                    .chain(if crlf { CRLF_ATTRIBUTES } else { &[] })
                    .find(|known| **known == name);
                if let Some(known) = wanted
                    && !names.contains(known)
                {
                    names.push(known);
                }
            }
        }
        Filters {
            names,
            autocrlf,
            eol_crlf,
        }
    }

    /// Whether no file can be touched by a checkout filter.
    pub(crate) fn none(&self) -> bool {
        self.names.is_empty() && !self.autocrlf
    }

    /// Whether a checkout filter may apply to `path` (a regular file).
    pub(crate) fn may_apply(&self, repo: &Repository, path: &[u8]) -> bool {
        if self.autocrlf {
            // Every file git detects as text is converted; detecting text means reading it.
            return true;
        }
        let path = raw_path(path);
        self.names.iter().any(|name| {
            let value = repo
                .get_attr_bytes(path, name, AttrCheckFlags::FILE_THEN_INDEX)
                .ok()
                .flatten();
            match (*name, AttrValue::from_bytes(value)) {
                (_, AttrValue::Unspecified | AttrValue::False) => false,
                ("eol", AttrValue::String(v)) => v.eq_ignore_ascii_case("crlf"),
                ("eol", _) => false,
                ("text" | "crlf", _) => self.eol_crlf,
                _ => true,
            }
        })
    }
}

/// Names of the attributes a `.gitattributes`-style file sets, unsets or specifies, macro
/// definitions included (their bodies may set a filter).
fn named_attributes(text: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        for token in line.split_whitespace().skip(1) {
            let token = token.trim_start_matches(['-', '!']);
            let name = token.split('=').next().unwrap_or(token);
            names.push(name.to_ascii_lowercase());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::named_attributes;

    #[test]
    fn attribute_names_are_read_from_every_line_and_macro() {
        let text = b"# comment\n*.psd filter=lfs diff=lfs merge=lfs -text\n[attr]crlfy eol=crlf\n*.bat crlfy\n\n*.sh !ident\n";
        assert_eq!(
            named_attributes(text),
            ["filter", "diff", "merge", "text", "eol", "crlfy", "ident"]
        );
    }
}
