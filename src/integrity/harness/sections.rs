//! The test parts of shared manifests: the `scripts`, `jest`, `mocha`, `ava` and `tap` fields
//! of `package.json`, the pytest, tox, coverage and task-runner tables of `pyproject.toml`, and
//! the pytest, tox, coverage and alias sections of `setup.cfg`. The rest of those files
//! (dependencies, metadata) is not harness, so a fix may change it.

use std::collections::BTreeMap;

/// `package.json` fields that decide what `npm test` and the runners run, and the fields that
/// decide which file an import of the package (or of `#name`) loads: a change there can point
/// the tests at another module than the one under test.
const PACKAGE_FIELDS: &[&str] = &[
    "scripts", "jest", "mocha", "ava", "tap", "main", "module", "exports", "imports", "browser",
    "type",
];

/// `tsconfig` compiler options that decide which file an import resolves to.
const TSCONFIG_OPTIONS: &[&str] = &[
    "paths",
    "baseUrl",
    "rootDirs",
    "moduleSuffixes",
    "customConditions",
];

/// `pyproject.toml` tables (and dotted keys) that configure tests or define test commands.
const PYPROJECT_TABLES: &[&str] = &[
    "tool.pytest",
    "tool.tox",
    "tool.coverage",
    "tool.hatch.envs",
    "tool.pdm.scripts",
    "tool.poe",
];

/// `setup.cfg` sections that configure tests (`[tool:pytest]`, tox's, coverage's) or alias
/// `setup.py test`.
const SETUP_CFG_SECTIONS: &[&str] = &[
    "tool:pytest",
    "pytest",
    "tox:tox",
    "testenv",
    "coverage:",
    "aliases",
    "nosetests",
];

/// The manifests with test parts: only a change to one of these needs its contents read.
pub fn has_test_sections(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "package.json" | "pyproject.toml" | "setup.cfg" | "Cargo.toml"
    ) || is_tsconfig(name)
}

/// `tsconfig.json`, `tsconfig.<anything>.json` and `jsconfig.json`.
fn is_tsconfig(name: &str) -> bool {
    name == "jsconfig.json" || (name.starts_with("tsconfig") && name.ends_with(".json"))
}

/// The test part of a manifest that a change touches, in words, or `None` when the file is no
/// such manifest or its test parts are unchanged.
pub fn changed_sections(path: &str, before: Option<&str>, after: Option<&str>) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name {
        "package.json" => package_fields(before, after),
        "pyproject.toml" => {
            let changed = changed_tables(before, after, '.', |table| {
                PYPROJECT_TABLES
                    .iter()
                    .any(|t| table == *t || table.starts_with(&format!("{t}.")))
            })?;
            Some(format!("its [{changed}] table"))
        }
        "Cargo.toml" => {
            let changed = changed_tables(before, after, '.', |table| {
                ["patch", "replace"]
                    .iter()
                    .any(|t| table == *t || table.starts_with(&format!("{t}.")))
                    || table == "package.build"
            })?;
            Some(if changed == "package.build" {
                "its build script (`build = ...`), which runs before the tests".to_owned()
            } else {
                format!("its [{changed}] table, which replaces dependencies")
            })
        }
        _ if is_tsconfig(name) => tsconfig_options(before, after),
        "setup.cfg" => {
            let changed = changed_tables(before, after, '\0', |section| {
                SETUP_CFG_SECTIONS.iter().any(|s| {
                    section == *s
                        || (s.ends_with(':') && section.starts_with(s))
                        || section.starts_with(&format!("{s}:"))
                })
            })?;
            Some(format!("its [{changed}] section"))
        }
        _ => None,
    }
}

fn package_fields(before: Option<&str>, after: Option<&str>) -> Option<String> {
    let parse = |text: Option<&str>| -> Result<serde_json::Value, ()> {
        match text {
            None => Ok(serde_json::Value::Null),
            Some(t) => serde_json::from_str(t).map_err(|_| ()),
        }
    };
    match (parse(before), parse(after)) {
        (Ok(b), Ok(a)) => PACKAGE_FIELDS
            .iter()
            .find(|field| b.get(field) != a.get(field))
            .map(|field| format!("its {field:?} field")),
        // A manifest that does not parse cannot be shown to leave the fields alone.
        _ if before != after => Some("it is not valid JSON on one side of the change".to_owned()),
        _ => None,
    }
}

/// The first module-resolution option of a `tsconfig` that the change touches. `tsconfig` is
/// JSON with comments and trailing commas; both are removed before parsing.
fn tsconfig_options(before: Option<&str>, after: Option<&str>) -> Option<String> {
    let parse = |text: Option<&str>| -> Option<serde_json::Value> {
        let text = text?;
        let mut plain = String::with_capacity(text.len());
        let mut in_string = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if in_string {
                plain.push(c);
                if c == '\\' {
                    plain.extend(chars.next());
                } else if c == '"' {
                    in_string = false;
                }
            } else if c == '"' {
                in_string = true;
                plain.push(c);
            } else if c == '/' && chars.peek() == Some(&'/') {
                for n in chars.by_ref() {
                    if n == '\n' {
                        plain.push('\n');
                        break;
                    }
                }
            } else if c == '/' && chars.peek() == Some(&'*') {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            } else {
                plain.push(c);
            }
        }
        let trailing = regex::Regex::new(r",(\s*[}\]])").ok()?;
        serde_json::from_str(&trailing.replace_all(&plain, "$1")).ok()
    };
    let (old, new) = (parse(before), parse(after));
    if before.is_some() && after.is_some() && (old.is_none() || new.is_none()) {
        return (before != after)
            .then(|| "it is not valid JSON on one side of the change".to_owned());
    }
    let option = |v: &Option<serde_json::Value>, key: &str| {
        v.as_ref()
            .and_then(|v| v.get("compilerOptions"))
            .and_then(|o| o.get(key))
            .cloned()
    };
    if old.as_ref().and_then(|v| v.get("extends")) != new.as_ref().and_then(|v| v.get("extends")) {
        return Some("its \"extends\" field, which decides how imports resolve".to_owned());
    }
    TSCONFIG_OPTIONS
        .iter()
        .find(|key| option(&old, key) != option(&new, key))
        .map(|key| format!("its compilerOptions.{key}, which decides how imports resolve"))
}

/// The first test table whose content differs between the two versions. `dot` separates
/// TOML key paths (`'\0'` for INI files, which have none).
fn changed_tables(
    before: Option<&str>,
    after: Option<&str>,
    dot: char,
    is_test: impl Fn(&str) -> bool,
) -> Option<String> {
    let old = test_parts(before.unwrap_or(""), dot, &is_test);
    let new = test_parts(after.unwrap_or(""), dot, &is_test);
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .find(|name| old.get(*name) != new.get(*name))
        .cloned()
}

/// The lines of every test table, by table name. A table is a `[header]` and the lines up to
/// the next one; in TOML, a dotted key such as `tool.pytest.ini_options.addopts = ...` in
/// another table belongs to the test table it names, with the lines that continue its value.
fn test_parts(
    text: &str,
    dot: char,
    is_test: &impl Fn(&str) -> bool,
) -> BTreeMap<String, Vec<String>> {
    let mut parts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut table = String::new();
    let mut owner: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(header) = header(trimmed) {
            table = header;
            owner = is_test(&table).then(|| table.clone());
            if let Some(owner) = &owner {
                parts.entry(owner.clone()).or_default();
            }
            continue;
        }
        if dot != '\0'
            && let Some((key, _)) = trimmed.split_once('=')
        {
            let key = unquote(key);
            let full = if table.is_empty() {
                key
            } else {
                format!("{table}{dot}{key}")
            };
            owner = if is_test(&table) {
                Some(table.clone())
            } else {
                is_test(&full).then_some(full)
            };
        }
        if let Some(owner) = &owner {
            parts
                .entry(owner.clone())
                .or_default()
                .push(trimmed.to_owned());
        }
    }
    parts
}

/// The normalized name of a `[table]`, `[[array]]` or `[section]` header line.
fn header(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?;
    let end = inner.find(']')?;
    let name = inner[..end].trim_start_matches('[');
    Some(unquote(name))
}

/// A dotted key or table name without quotes and spaces around its parts.
fn unquote(key: &str) -> String {
    key.split('.')
        .map(|part| part.trim().trim_matches(['"', '\'']))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_json_test_fields_count_and_dependencies_do_not() {
        let before = r#"{"name":"x","scripts":{"test":"mocha"},"dependencies":{"a":"1"}}"#;
        let deps = r#"{"name":"x","scripts":{"test":"mocha"},"dependencies":{"a":"2"}}"#;
        let script = r#"{"name":"x","scripts":{"test":"mocha || true"},"dependencies":{"a":"1"}}"#;
        let mocha = r#"{"name":"x","scripts":{"test":"mocha"},"mocha":{"require":"x.js"},"dependencies":{"a":"1"}}"#;
        assert_eq!(
            [
                changed_sections("package.json", Some(before), Some(deps)),
                changed_sections("package.json", Some(before), Some(script)),
                changed_sections("pkg/package.json", Some(before), Some(mocha)),
                changed_sections("package.json", Some(before), Some("{")),
            ],
            [
                None,
                Some("its \"scripts\" field".to_owned()),
                Some("its \"mocha\" field".to_owned()),
                Some("it is not valid JSON on one side of the change".to_owned()),
            ]
        );
    }

    #[test]
    fn pyproject_test_tables_count_and_metadata_does_not() {
        let before = "[project]\nname = \"x\"\nversion = \"1\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\ntestpaths = [\n  \"tests\",\n]\n";
        let version = before.replace("version = \"1\"", "version = \"2\"");
        let addopts = before.replace("-q", "-q -p no:cacheprovider --deselect tests/t.py::a");
        let testpaths = before.replace("  \"tests\",", "  \"tests/ok\",");
        let dotted = format!("{before}\n[tool]\npytest.ini_options.markers = [\"x\"]\n");
        let coverage = format!("{before}\n[tool.coverage.report]\nfail_under = 10\n");
        assert_eq!(
            [
                changed_sections("pyproject.toml", Some(before), Some(&version)),
                changed_sections("pyproject.toml", Some(before), Some(&addopts)),
                changed_sections("pyproject.toml", Some(before), Some(&testpaths)),
                changed_sections("pyproject.toml", Some(before), Some(&dotted)),
                changed_sections("pyproject.toml", Some(before), Some(&coverage)),
            ],
            [
                None,
                Some("its [tool.pytest.ini_options] table".to_owned()),
                Some("its [tool.pytest.ini_options] table".to_owned()),
                Some("its [tool.pytest.ini_options.markers] table".to_owned()),
                Some("its [tool.coverage.report] table".to_owned()),
            ]
        );
    }

    #[test]
    fn module_resolution_in_manifests_and_tsconfig_counts() {
        let pkg = r#"{"name":"x","main":"lib/index.js","version":"1.0.0"}"#;
        let shim = r#"{"name":"x","main":"lib/shim.js","version":"1.0.0"}"#;
        let version = r#"{"name":"x","main":"lib/index.js","version":"1.0.1"}"#;
        let cargo =
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n";
        let build = cargo.replace(
            "version = \"0.1.0\"\n",
            "version = \"0.1.0\"\nbuild = \"src/build.rs\"\n",
        );
        let patched =
            format!("{cargo}\n[patch.crates-io]\nserde = {{ path = \"vendor/serde\" }}\n");
        let bump = cargo.replace("serde = \"1\"", "serde = \"1.0.200\"");
        let ts = "{\n  // comment\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"paths\": { \"@/*\": [\"src/*\"] },\n  },\n}\n";
        let ts_paths = ts.replace("src/*", "shim/*");
        let ts_strict = ts.replace("true", "false");
        assert_eq!(
            [
                changed_sections("package.json", Some(pkg), Some(shim)),
                changed_sections("package.json", Some(pkg), Some(version)),
                changed_sections("Cargo.toml", Some(cargo), Some(&build)),
                changed_sections("Cargo.toml", Some(cargo), Some(&patched)),
                changed_sections("Cargo.toml", Some(cargo), Some(&bump)),
                changed_sections("tsconfig.json", Some(ts), Some(&ts_paths)),
                changed_sections("tsconfig.build.json", Some(ts), Some(&ts_strict)),
            ],
            [
                Some("its \"main\" field".to_owned()),
                None,
                Some("its build script (`build = ...`), which runs before the tests".to_owned()),
                Some("its [patch.crates-io] table, which replaces dependencies".to_owned()),
                None,
                Some("its compilerOptions.paths, which decides how imports resolve".to_owned()),
                None,
            ]
        );
    }

    #[test]
    fn setup_cfg_test_sections_count_and_metadata_does_not() {
        let before = "[metadata]\nname = x\nversion = 1\n\n[tool:pytest]\naddopts = -q\n";
        let version = before.replace("version = 1", "version = 2");
        let addopts = before.replace("-q", "-q -k 'not crlf'");
        let testenv = format!("{before}\n[testenv:py]\ncommands = pytest\n");
        assert_eq!(
            [
                changed_sections("setup.cfg", Some(before), Some(&version)),
                changed_sections("setup.cfg", Some(before), Some(&addopts)),
                changed_sections("setup.cfg", Some(before), Some(&testenv)),
            ],
            [
                None,
                Some("its [tool:pytest] section".to_owned()),
                Some("its [testenv:py] section".to_owned()),
            ]
        );
    }
}
