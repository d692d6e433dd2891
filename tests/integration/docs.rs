//! The documentation stays true to the code: every rule id the code emits is named under
//! `docs/`, every relative link in `README.md` and `docs/` leads to a file that exists, and
//! every input and output `action.yml` declares is described in `docs/action.md`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The directory a file's child modules live in: `a/b.rs` → `a/b/`, `a/mod.rs` → `a/`.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => parent.to_path_buf(),
        Some(stem) => parent.join(stem),
        None => parent.to_path_buf(),
    }
}

/// The name of the module an item line declares (`mod x;`, `pub(crate) mod x {`), if any.
fn declared_module(line: &str) -> Option<(&str, bool)> {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix("pub(crate) ")
        .or_else(|| rest.strip_prefix("pub "))
        .unwrap_or(rest);
    let rest = rest.strip_prefix("mod ")?;
    let end = rest.find([';', ' ', '{'])?;
    Some((&rest[..end], rest[end..].trim_start().starts_with(';')))
}

/// The non-test code of every file under `src/`: files whose module is declared under
/// `#[cfg(test)]` are left out, and so is an inline `#[cfg(test)] mod … { … }` to the end of
/// its file (where the crate keeps its unit tests).
fn non_test_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut test_files = BTreeSet::new();
    let mut sources = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let mut kept = String::new();
        let mut under_cfg_test = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed == "#[cfg(test)]" {
                under_cfg_test = true;
                continue;
            }
            if under_cfg_test && (trimmed.starts_with("#[") || trimmed.starts_with("//")) {
                continue;
            }
            if under_cfg_test {
                under_cfg_test = false;
                if let Some((name, external)) = declared_module(line) {
                    if !external {
                        break;
                    }
                    let dir = module_dir(file);
                    test_files.insert(dir.join(format!("{name}.rs")));
                    test_files.insert(dir.join(name).join("mod.rs"));
                    continue;
                }
            }
            kept.push_str(line);
            kept.push('\n');
        }
        sources.push((file.clone(), kept));
    }
    // A test module's own child modules are test code too.
    sources.retain(|(file, _)| {
        !test_files
            .iter()
            .any(|t| file == t || file.starts_with(t.with_extension("")))
    });
    sources
}

/// String literals that look like rule ids: `family.name` with kebab-case segments, not a
/// file name.
fn dotted_literals(text: &str) -> Vec<String> {
    let literal = regex::Regex::new(r#""([a-z]+(?:\.[a-z][a-z0-9-]*)+)""#).unwrap();
    let file_name =
        regex::Regex::new(r"\.(md|js|ts|py|rs|toml|json|ya?ml|txt|diff|cfg|ini|lock|sh)$").unwrap();
    literal
        .captures_iter(text)
        .map(|c| c[1].to_owned())
        .filter(|s| !file_name.is_match(s))
        .collect()
}

/// The rule ids the code emits. The families are those of the ids passed to `Issue::new`, to a
/// check record (`check(`, `record(`, `CheckRecord::…(`) or returned by a check's `fn id`;
/// every literal of those families in non-test code is then an id (ids are also chosen by
/// `match` arms, e.g. one per canary kind or per read family).
fn emitted_rule_ids() -> BTreeSet<String> {
    let sources = non_test_sources();
    let emitting = regex::Regex::new(
        r#"(?:Issue::new|\bcheck|\brecord|CheckRecord::\w+|\bissue)\(\s*"([a-z]+)\.[a-z]|fn id\(&self\) -> &'static str \{\s*"([a-z]+)\."#,
    )
    .unwrap();
    let families: BTreeSet<String> = sources
        .iter()
        .flat_map(|(_, text)| {
            emitting
                .captures_iter(text)
                .map(|c| c.get(1).or_else(|| c.get(2)).unwrap().as_str().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        families.contains("check") && families.contains("prove"),
        "the rule families were not found: {families:?}"
    );
    sources
        .iter()
        .flat_map(|(_, text)| dotted_literals(text))
        .filter(|id| families.contains(id.split('.').next().unwrap()))
        .collect()
}

fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn docs_text() -> String {
    markdown_files()
        .iter()
        .filter(|p| p.parent() == Some(&root().join("docs")))
        .map(|p| fs::read_to_string(p).unwrap())
        .collect()
}

#[test]
fn docs_name_every_rule_id() {
    let ids = emitted_rule_ids();
    assert!(ids.len() > 60, "too few rule ids found: {ids:?}");
    let docs = docs_text();
    let missing: Vec<_> = ids
        .iter()
        .filter(|id| !docs.contains(&format!("`{id}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "rule ids the code emits that docs/ does not name (in backquotes): {missing:?}"
    );
}

#[test]
fn links_in_readme_and_docs_lead_to_existing_files() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for target in link.captures_iter(&text).map(|c| c[1].to_owned()) {
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if !file.parent().unwrap().join(path).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to missing files: {broken:#?}");
}

#[test]
fn action_md_describes_every_input_and_output() {
    let action: yaml_serde::Value =
        yaml_serde::from_str(&fs::read_to_string(root().join("action.yml")).unwrap()).unwrap();
    let page = fs::read_to_string(root().join("docs/action.md")).unwrap();
    let mut missing = Vec::new();
    for section in ["inputs", "outputs"] {
        let names = action[section].as_mapping().unwrap();
        assert!(!names.is_empty());
        for name in names.keys() {
            let name = name.as_str().unwrap();
            if !page.contains(&format!("| `{name}` |")) {
                missing.push(format!("{section}.{name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/action.md does not describe {missing:?}"
    );
}

/// The README links the action's page from where a workflow author starts.
#[test]
fn readme_links_the_action_page_under_use_it_on_github() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let github = readme.find("## Use it on GitHub").unwrap();
    let next = readme[github + 1..]
        .find("\n## ")
        .map_or(readme.len(), |i| i + github + 1);
    assert!(readme[github..next].contains("(docs/action.md)"));
}
