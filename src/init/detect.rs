//! Reading a repository for `efix init`: which test runners and package managers it uses,
//! and which CI workflows already run its tests, each with the files that say so.
//!
//! It reads manifests, lockfiles, test configs and `.github/workflows/`; it runs nothing and
//! writes nothing. What is found is evidence for the summary, so every finding carries the
//! reasons (file names, the line of a script or a workflow) a maintainer can check.

use std::collections::BTreeMap;
use std::path::Path;

/// Directories never walked: dependencies, build output, caches and virtual environments.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    "dist",
    "build",
    "vendor",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    "coverage",
];
/// Most files listed; a larger repository is read from its first files in path order.
const MAX_FILES: usize = 50_000;
/// Deepest directory level walked.
const MAX_DEPTH: usize = 12;
/// Largest manifest or workflow read.
const MAX_READ_BYTES: u64 = 1 << 20;

/// A test runner `efix init` knows how to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Runner {
    Pytest,
    Django,
    Unittest,
    Jest,
    Vitest,
    Mocha,
    Tape,
    NodeTest,
    Cargo,
    Go,
}

impl Runner {
    /// The runner's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Django => "Django's test runner",
            Runner::Unittest => "unittest",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::Mocha => "mocha",
            Runner::Tape => "tape",
            Runner::NodeTest => "node --test",
            Runner::Cargo => "cargo test",
            Runner::Go => "go test",
        }
    }

    /// Whether the runner is a Python one (its dependencies come from pip, uv or poetry).
    pub fn is_python(self) -> bool {
        matches!(self, Runner::Pytest | Runner::Django | Runner::Unittest)
    }

    /// Whether the runner is a JavaScript one (npm, pnpm or yarn).
    pub fn is_javascript(self) -> bool {
        matches!(
            self,
            Runner::Jest | Runner::Vitest | Runner::Mocha | Runner::Tape | Runner::NodeTest
        )
    }
}

/// A package manager whose lockfile or manifest decides how dependencies are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageManager {
    Pip,
    Uv,
    Poetry,
    Npm,
    Pnpm,
    Yarn,
}

impl PackageManager {
    pub fn name(self) -> &'static str {
        match self {
            PackageManager::Pip => "pip",
            PackageManager::Uv => "uv",
            PackageManager::Poetry => "poetry",
            PackageManager::Npm => "npm",
            PackageManager::Pnpm => "pnpm",
            PackageManager::Yarn => "yarn",
        }
    }
}

/// Something found, with the reasons that show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    pub what: T,
    pub why: Vec<String>,
}

/// A CI workflow that runs the repository's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiWorkflow {
    /// Its path, relative to the repository.
    pub file: String,
    /// The name `workflow_run` matches: its `name:`, else its path.
    pub name: String,
    /// The first line of a step that runs tests.
    pub runs: String,
}

/// What `efix init` read from the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Findings {
    pub runners: Vec<Found<Runner>>,
    pub python: Option<Found<PackageManager>>,
    pub javascript: Option<Found<PackageManager>>,
    pub ci: Vec<CiWorkflow>,
    /// Whether the root is an installable Python package (`setup.py`, or a `pyproject.toml`
    /// with `[project]` or `[build-system]`), which pip installs with `-e .`.
    pub python_package: bool,
    /// Every file walked, relative, `/`-separated, in path order.
    pub files: Vec<String>,
}

/// Read the repository at `root`.
pub fn detect(root: &Path) -> Findings {
    let mut files = Vec::new();
    walk(root, "", 0, &mut files);
    files.sort();
    let repo = Repo { root, files };
    let ci = ci_workflows(&repo);
    let mut reasons: BTreeMap<Runner, Vec<String>> = BTreeMap::new();
    python_runners(&repo, &mut reasons);
    javascript_runners(&repo, &mut reasons);
    if repo.has("Cargo.toml") {
        add(&mut reasons, Runner::Cargo, "Cargo.toml".to_owned());
    }
    if repo.has("go.mod") {
        add(&mut reasons, Runner::Go, "go.mod".to_owned());
    }
    for workflow in &ci {
        for runner in runners_in_line(&workflow.runs) {
            // A workflow confirms a runner the repository's own files show; alone it cannot
            // tell where the runner's project is.
            if let Some(why) = reasons.get_mut(&runner) {
                why.push(format!("{} runs `{}`", workflow.file, workflow.runs));
            }
        }
    }
    let runners: Vec<Found<Runner>> = reasons
        .into_iter()
        .map(|(what, why)| Found { what, why })
        .collect();
    let python = runners
        .iter()
        .any(|r| r.what.is_python())
        .then(|| python_manager(&repo));
    let javascript = runners
        .iter()
        .any(|r| r.what.is_javascript())
        .then(|| javascript_manager(&repo));
    let python_package = repo.has("setup.py")
        || repo.read("pyproject.toml").is_some_and(|t| {
            t.lines()
                .any(|l| matches!(l.trim(), "[project]" | "[build-system]"))
        });
    Findings {
        runners,
        python,
        javascript,
        ci,
        python_package,
        files: repo.files,
    }
}

fn add(reasons: &mut BTreeMap<Runner, Vec<String>>, runner: Runner, why: String) {
    let list = reasons.entry(runner).or_default();
    if !list.contains(&why) {
        list.push(why);
    }
}

struct Repo<'a> {
    root: &'a Path,
    files: Vec<String>,
}

impl Repo<'_> {
    fn has(&self, rel: &str) -> bool {
        self.files.binary_search_by(|f| f.as_str().cmp(rel)).is_ok()
    }

    fn read(&self, rel: &str) -> Option<String> {
        let path = self.root.join(rel);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_READ_BYTES {
            return None;
        }
        std::fs::read_to_string(path).ok()
    }

    fn names<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s String> + 's {
        self.files
            .iter()
            .filter(move |f| f.rsplit('/').next() == Some(name))
    }
}

fn walk(root: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        // Symlinks are not followed: they may point out of the repository.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let hidden = name.starts_with('.') && name != ".github";
            if !hidden && !SKIPPED_DIRS.contains(&name.as_str()) {
                walk(root, &path, depth + 1, out);
            }
        } else if kind.is_file() {
            if out.len() >= MAX_FILES {
                return;
            }
            out.push(path);
        }
    }
}

/// Root files that list Python dependencies.
fn python_manifests(repo: &Repo<'_>) -> Vec<String> {
    repo.files
        .iter()
        .filter(|f| {
            let root_file = !f.contains('/');
            let requirements = (f.starts_with("requirements") && f.ends_with(".txt"))
                || f.ends_with("-requirements.txt");
            (root_file
                && (requirements
                    || matches!(
                        f.as_str(),
                        "pyproject.toml" | "setup.py" | "setup.cfg" | "Pipfile" | "tox.ini"
                    )))
                || (f.starts_with("requirements/") && f.ends_with(".txt"))
        })
        .cloned()
        .collect()
}

fn python_runners(repo: &Repo<'_>, reasons: &mut BTreeMap<Runner, Vec<String>>) {
    let manifests = python_manifests(repo);
    let texts: Vec<(String, String)> = manifests
        .iter()
        .filter_map(|f| Some((f.clone(), repo.read(f)?)))
        .collect();
    let text_of = |name: &str| {
        texts
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, t)| t.as_str())
    };
    if repo.has("pytest.ini") {
        add(reasons, Runner::Pytest, "pytest.ini".to_owned());
    }
    if text_of("pyproject.toml").is_some_and(|t| t.contains("[tool.pytest")) {
        add(
            reasons,
            Runner::Pytest,
            "pyproject.toml has [tool.pytest.ini_options]".to_owned(),
        );
    }
    if text_of("setup.cfg").is_some_and(|t| t.contains("[tool:pytest]")) {
        add(
            reasons,
            Runner::Pytest,
            "setup.cfg has [tool:pytest]".to_owned(),
        );
    }
    if text_of("tox.ini").is_some_and(|t| t.contains("[pytest]")) {
        add(reasons, Runner::Pytest, "tox.ini has [pytest]".to_owned());
    }
    if let Some(conftest) = repo.names("conftest.py").next() {
        add(reasons, Runner::Pytest, conftest.clone());
    }
    let mut pytest_django = false;
    for (file, text) in &texts {
        if mentions_word(text, "pytest") {
            add(reasons, Runner::Pytest, format!("{file} lists pytest"));
        }
        pytest_django |= text.contains("pytest-django");
    }
    let django = repo
        .read("manage.py")
        .is_some_and(|t| t.to_ascii_lowercase().contains("django"));
    if django && !(pytest_django && reasons.contains_key(&Runner::Pytest)) {
        add(
            reasons,
            Runner::Django,
            "manage.py runs Django's management commands".to_owned(),
        );
    }
    if reasons.contains_key(&Runner::Pytest) || reasons.contains_key(&Runner::Django) {
        return;
    }
    let unittest_file = repo
        .files
        .iter()
        .find(|f| is_python_test_file(f) && repo.read(f).is_some_and(|t| t.contains("unittest")));
    if let Some(file) = unittest_file {
        add(reasons, Runner::Unittest, format!("{file} uses unittest"));
    }
}

/// `test_*.py`, `*_test.py` or `tests.py` (Django's default).
pub fn is_python_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py")
        && (name.starts_with("test_") || name.ends_with("_test.py") || name == "tests.py")
}

/// `word` as a whole word: not inside another name (`mypytest`) nor the start of another
/// package's name (`pytest-cov`, a plugin that alone does not say the runner is used).
fn mentions_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        boundary(before) && boundary(after) && after != Some('-')
    })
}

/// Test runners of package.json: its test scripts first, then its dependencies.
fn javascript_runners(repo: &Repo<'_>, reasons: &mut BTreeMap<Runner, Vec<String>>) {
    let Some(json) = repo
        .read("package.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    else {
        return;
    };
    let mut found = false;
    if let Some(scripts) = json.get("scripts").and_then(|s| s.as_object()) {
        for (name, script) in scripts {
            let Some(script) = script.as_str() else {
                continue;
            };
            if !name.starts_with("test") {
                continue;
            }
            for runner in runners_in_line(script) {
                if runner.is_javascript() {
                    found = true;
                    add(
                        reasons,
                        runner,
                        format!("package.json script `{name}`: {script}"),
                    );
                }
            }
        }
    }
    if found {
        return;
    }
    for section in ["devDependencies", "dependencies"] {
        let Some(deps) = json.get(section).and_then(|d| d.as_object()) else {
            continue;
        };
        for (package, runner) in [
            ("jest", Runner::Jest),
            ("vitest", Runner::Vitest),
            ("mocha", Runner::Mocha),
            ("tape", Runner::Tape),
        ] {
            if deps.contains_key(package) {
                add(
                    reasons,
                    runner,
                    format!("package.json {section} has {package}"),
                );
            }
        }
    }
}

/// The runners a shell line invokes (a package script, a workflow's `run:` line).
pub fn runners_in_line(line: &str) -> Vec<Runner> {
    let mut out = Vec::new();
    let line = expand_variables(line);
    let commands = line
        .split("&&")
        .flat_map(|part| part.split("||"))
        .flat_map(|part| part.split(';'))
        .flat_map(|part| part.split('|'));
    for command in commands {
        let words: Vec<String> = shlex::split(command)
            .unwrap_or_else(|| command.split_whitespace().map(str::to_owned).collect());
        let word = |i: usize| words.get(i).map(|w| crate::policy::command::basename(w));
        for (i, w) in words.iter().enumerate() {
            let runner = match crate::policy::command::basename(w) {
                "pytest" | "py.test" => Some(Runner::Pytest),
                "manage.py" if word(i + 1) == Some("test") => Some(Runner::Django),
                "unittest" if i > 0 && words[i - 1] == "-m" => Some(Runner::Unittest),
                "jest" => Some(Runner::Jest),
                "vitest" => Some(Runner::Vitest),
                "mocha" | "_mocha" => Some(Runner::Mocha),
                "tape" => Some(Runner::Tape),
                "node" if words[i + 1..].iter().any(|a| a == "--test") => Some(Runner::NodeTest),
                "cargo" if matches!(word(i + 1), Some("test" | "nextest")) => Some(Runner::Cargo),
                "go" if word(i + 1) == Some("test") => Some(Runner::Go),
                _ => None,
            };
            if let Some(runner) = runner
                && !out.contains(&runner)
            {
                out.push(runner);
            }
        }
    }
    out
}

/// Whether a workflow line runs tests through a package manager, a task runner or a test
/// environment manager: `npm test`, `pnpm run test:unit`, `make richtest`, `uv run tox run`.
fn runs_tests_indirectly(line: &str) -> bool {
    let line = expand_variables(line);
    let words: Vec<&str> = line.split_whitespace().collect();
    let testing = |word: &str| word.contains("test") || word == "check";
    words.windows(2).any(|pair| {
        matches!(
            (pair[0], pair[1]),
            ("npm" | "pnpm" | "yarn" | "bun", "test" | "t")
        ) || (matches!(pair[0], "make" | "just" | "task") && testing(pair[1]))
    }) || words.windows(3).any(|w| {
        matches!(w[0], "npm" | "pnpm" | "yarn" | "bun") && w[1] == "run" && w[2].contains("test")
    }) || words.iter().any(|w| matches!(*w, "tox" | "nox"))
        || words.windows(2).any(|pair| pair == ["hatch", "test"])
}

/// A workflow line with its variables read as the programs they usually hold: `${{ env.CARGO
/// }} test` and `$CARGO test` → `cargo test` (a workflow that picks `cross` or `cargo` per
/// target still runs cargo's tests).
fn expand_variables(line: &str) -> String {
    static EXPRESSION: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\$\{\{\s*(?:env\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{?([A-Z_][A-Z0-9_]*)\}?",
        )
        .ok()
    });
    match EXPRESSION.as_ref() {
        Some(re) => re
            .replace_all(line, |caps: &regex::Captures<'_>| {
                caps.get(1)
                    .or_else(|| caps.get(2))
                    .map_or(String::new(), |m| m.as_str().to_ascii_lowercase())
            })
            .into_owned(),
        None => line.to_owned(),
    }
}

/// Workflows under `.github/workflows/` with a step that runs tests, in path order. efix's
/// own workflows are left out.
fn ci_workflows(repo: &Repo<'_>) -> Vec<CiWorkflow> {
    let mut out = Vec::new();
    for file in &repo.files {
        let Some(name) = file.strip_prefix(".github/workflows/") else {
            continue;
        };
        if name.contains('/') || !(name.ends_with(".yml") || name.ends_with(".yaml")) {
            continue;
        }
        let Some(text) = repo.read(file) else {
            continue;
        };
        let Ok(doc) = yaml_serde::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let Some(jobs) = doc.get("jobs").and_then(|j| j.as_object()) else {
            continue;
        };
        let steps = jobs
            .values()
            .filter_map(|job| job.get("steps").and_then(|s| s.as_array()))
            .flatten();
        let mut own = false;
        let mut runs = None;
        for step in steps {
            if step
                .get("uses")
                .and_then(|u| u.as_str())
                .is_some_and(|u| u.split('@').next().is_some_and(|r| r.ends_with("/efix")))
            {
                own = true;
            }
            let Some(run) = step.get("run").and_then(|r| r.as_str()) else {
                continue;
            };
            let line = run.lines().map(str::trim).find(|line| {
                !line.starts_with('#')
                    && (!runners_in_line(line).is_empty() || runs_tests_indirectly(line))
            });
            if runs.is_none() {
                runs = line.map(str::to_owned);
            }
        }
        let Some(runs) = runs else {
            continue;
        };
        if own {
            continue;
        }
        let name = doc
            .get("name")
            .and_then(|n| n.as_str())
            .map_or_else(|| file.clone(), str::to_owned);
        out.push(CiWorkflow {
            file: file.clone(),
            name,
            runs,
        });
    }
    out
}

fn python_manager(repo: &Repo<'_>) -> Found<PackageManager> {
    let found = |what, why: &str| Found {
        what,
        why: vec![why.to_owned()],
    };
    if repo.has("uv.lock") {
        return found(PackageManager::Uv, "uv.lock");
    }
    if repo.has("poetry.lock") {
        return found(PackageManager::Poetry, "poetry.lock");
    }
    if repo
        .read("pyproject.toml")
        .is_some_and(|t| t.contains("[tool.poetry"))
    {
        return found(PackageManager::Poetry, "pyproject.toml has [tool.poetry]");
    }
    let manifests: Vec<String> = python_manifests(repo)
        .into_iter()
        .filter(|f| f != "tox.ini")
        .collect();
    if manifests.is_empty() {
        return found(PackageManager::Pip, "no manifest or lockfile: plain pip");
    }
    Found {
        what: PackageManager::Pip,
        why: manifests,
    }
}

fn javascript_manager(repo: &Repo<'_>) -> Found<PackageManager> {
    let declared = repo
        .read("package.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|json| json.get("packageManager")?.as_str().map(str::to_owned));
    if let Some(declared) = declared {
        let what = match declared.split('@').next() {
            Some("pnpm") => Some(PackageManager::Pnpm),
            Some("yarn") => Some(PackageManager::Yarn),
            Some("npm") => Some(PackageManager::Npm),
            _ => None,
        };
        if let Some(what) = what {
            return Found {
                what,
                why: vec![format!("package.json packageManager: {declared}")],
            };
        }
    }
    for (lockfile, what) in [
        ("pnpm-lock.yaml", PackageManager::Pnpm),
        ("yarn.lock", PackageManager::Yarn),
        ("package-lock.json", PackageManager::Npm),
    ] {
        if repo.has(lockfile) {
            return Found {
                what,
                why: vec![lockfile.to_owned()],
            };
        }
    }
    Found {
        what: PackageManager::Npm,
        why: vec!["package.json without a lockfile".to_owned()],
    }
}
