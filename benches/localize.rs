//! Localization: recall on real failures, and its cost on large repositories.
//!
//! 1. Recall: for every captured case (`tests/fixtures/localize/`, real runner output on
//!    small real-world-shaped projects, plus the bundled example), the rank of the file the
//!    real fix changes among efix's candidates: recall@1 and recall@3, and the time of one
//!    localization.
//! 2. Scale: the same cases placed in a generated tree with 0, 20,000 and 100,000 extra
//!    tracked source files (Python, JavaScript, TypeScript, Rust and Go modules of a few KiB,
//!    some of them defining the cases' own names as decoys). A fresh process per size
//!    localizes every case and reports its time (median of the cases) and its peak RSS
//!    (`VmHWM`). The extra files are written once, outside the repository, and deleted.
//!
//! Run with `cargo bench --bench localize` (`-- quick` stops at 2,000 extra files;
//! `-- sizes=0,20000` measures the sizes given, the last one case by case).

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up should stop loudly"
)]
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its figures on stdout"
)]

#[path = "../tests/integration/localize_cases.rs"]
mod localize_cases;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use localize_cases::{Case, cases, rank_of};

/// Localizations timed per case and size; the median is reported.
const RUNS: usize = 3;
/// Extra files per generated directory.
const FILES_PER_DIR: usize = 200;
/// Names the cases' fixes live in, defined again by some generated files as decoys.
const DECOYS: &[&str] = &[
    "slugify",
    "camelCase",
    "roundTo",
    "Duration",
    "from_parts",
    "Version",
    "parse",
    "Reverse",
    "wrap_words",
    "toFahrenheit",
    "dedent",
    "padStart",
    "median",
    "Item",
    "Cart",
    "sumCents",
];
/// Common module words for generated file names.
const WORDS: &[&str] = &[
    "parse", "format", "slug", "case", "round", "cart", "version", "wrap", "reverse", "convert",
    "duration", "models", "util", "index", "core", "config", "client", "server", "router", "store",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--scale-child") {
        let root = Path::new(&args[at + 1]);
        let extra: usize = args[at + 2].parse().unwrap();
        scale_child(root, extra);
        return;
    }
    let quick = args.iter().any(|a| a == "quick");
    // `sizes=0,20000` measures those sizes (the last one case by case).
    let chosen: Option<Vec<usize>> = args
        .iter()
        .find_map(|a| a.strip_prefix("sizes="))
        .map(|list| list.split(',').map(|n| n.parse().unwrap()).collect());
    recall();
    let sizes: Vec<usize> = match chosen {
        Some(sizes) => sizes,
        None if quick => vec![0, 2_000],
        None => vec![0, 20_000, 100_000],
    };
    scale(&sizes);
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn localize(root: &Path, case: &localize_cases::Placed) -> Vec<efix::localize::Candidate> {
    efix::localize::localize(root, &case.tracked, &case.output, &case.failing)
}

/// The 1-based rank of the fixed file among the candidates that are not test files (efix's
/// test-path rule, plus Rust's `tests.rs` test-module files): where the code under test ranks.
fn source_rank(candidates: &[efix::localize::Candidate], fixed: &[String]) -> Option<usize> {
    let is_test = |path: &str| {
        efix::integrity::test_policy::is_test_path(path)
            || path == "tests.rs"
            || path.ends_with("/tests.rs")
    };
    let sources: Vec<efix::localize::Candidate> = candidates
        .iter()
        .filter(|c| !is_test(&c.path))
        .cloned()
        .collect();
    rank_of(&sources, fixed)
}

fn recall() {
    let cases = cases();
    let mut top1 = 0;
    let mut top3 = 0;
    let mut source_top1 = 0;
    let mut rows = String::new();
    for case in &cases {
        let loaded = case.load();
        let mut times = Vec::new();
        let mut candidates = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            candidates = localize(&loaded.root, &loaded.placed);
            times.push(started.elapsed());
        }
        let rank = rank_of(&candidates, &case.fixed);
        let source = source_rank(&candidates, &case.fixed);
        top1 += usize::from(rank == Some(1));
        top3 += usize::from(rank.is_some_and(|r| r <= 3));
        source_top1 += usize::from(source == Some(1));
        let shown = |rank: Option<usize>| rank.map_or("not found".to_owned(), |r| r.to_string());
        writeln!(
            rows,
            "| {} | `{}` | {} | {} | {} | {:.2} ms |",
            case.name,
            case.command,
            case.fixed.join(", "),
            shown(rank),
            shown(source),
            ms(median(times))
        )
        .unwrap();
    }
    let n = cases.len();
    println!("## recall on {n} captured failures");
    println!(
        "| case | command | fixed file | rank | rank among non-test files | time (median of {RUNS}) |"
    );
    println!("|---|---|---|---|---|---|");
    print!("{rows}");
    println!();
    let percent = |k: usize| 100.0 * k as f64 / n as f64;
    println!(
        "recall@1 {top1}/{n} ({:.0} %), recall@3 {top3}/{n} ({:.0} %), \
         first non-test candidate is the fixed file {source_top1}/{n} ({:.0} %)",
        percent(top1),
        percent(top3),
        percent(source_top1)
    );
    println!();
}

fn scale(sizes: &[usize]) {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("repo");
    let started = Instant::now();
    let mut bytes_by_size = vec![0u64; sizes.len()];
    for i in 0..largest {
        let (path, content) = extra_file(i);
        let abs = root.join(&path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, &content).unwrap();
        for (slot, size) in sizes.iter().enumerate() {
            if i < *size {
                bytes_by_size[slot] += content.len() as u64;
            }
        }
    }
    std::fs::create_dir_all(&root).unwrap();
    println!(
        "## scale: every case inside N extra tracked source files (generated in {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    println!(
        "| extra files | their size | localization (wall), median of the cases | CPU (all threads), median | slowest case (wall) | cases in the top 3 | peak RSS (`VmHWM`) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().unwrap();
    let mut largest_rows = String::new();
    for (slot, size) in sizes.iter().enumerate() {
        let output = Command::new(&exe)
            .args(["--scale-child", &root.to_string_lossy(), &size.to_string()])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8_lossy(&output.stdout);
        let mut times = Vec::new();
        let mut cpu = Vec::new();
        let mut in_top3 = 0;
        let mut total = 0;
        let mut hwm_kib = 0u64;
        for line in text.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                ["case", name, rank, micros, cpu_micros] => {
                    if *size == largest {
                        writeln!(
                            largest_rows,
                            "| {name} | {rank} | {:.1} ms | {:.1} ms |",
                            micros.parse::<f64>().unwrap() / 1000.0,
                            cpu_micros.parse::<f64>().unwrap() / 1000.0
                        )
                        .unwrap();
                    }
                    total += 1;
                    in_top3 += usize::from(rank.parse::<usize>().is_ok_and(|r| r <= 3));
                    times.push(Duration::from_micros(micros.parse().unwrap()));
                    cpu.push(Duration::from_micros(cpu_micros.parse().unwrap()));
                }
                ["hwm", kib] => hwm_kib = kib.parse().unwrap(),
                _ => {}
            }
        }
        let slowest = times.iter().max().copied().unwrap_or_default();
        println!(
            "| {size} | {:.0} MiB | {:.1} ms | {:.1} ms | {:.1} ms | {in_top3}/{total} | {:.1} MiB |",
            bytes_by_size[slot] as f64 / (1024.0 * 1024.0),
            ms(median(times)),
            ms(median(cpu)),
            ms(slowest),
            hwm_kib as f64 / 1024.0
        );
    }
    println!();
    println!("### per case, among {largest} extra files (median of {RUNS})");
    println!("| case | rank | wall | CPU |");
    println!("|---|---|---|---|");
    print!("{largest_rows}");
    println!();
}

/// In a fresh process: localize every case placed in `root` among the first `extra`
/// generated files; print `case NAME RANK WALL_MICROS CPU_MICROS` lines and `hwm KIB`.
fn scale_child(root: &Path, extra: usize) {
    let extra_paths: Vec<String> = (0..extra).map(extra_file_path).collect();
    for case in cases() {
        report_case(root, &case, &extra_paths);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("0");
    println!("hwm {hwm}");
}

fn report_case(root: &Path, case: &Case, extra_paths: &[String]) {
    let mut placed = case.place(root);
    // The case's own files, taken out of the shared tree again afterwards.
    let own = placed.tracked.clone();
    placed.tracked.extend(extra_paths.iter().cloned());
    placed.tracked.sort();
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut rank = None;
    for _ in 0..RUNS {
        let (started, cpu_before) = (Instant::now(), cpu_time());
        let candidates = localize(root, &placed);
        times.push(started.elapsed());
        cpu.push(cpu_time().saturating_sub(cpu_before));
        rank = rank_of(&candidates, &case.fixed);
    }
    for path in own {
        std::fs::remove_file(root.join(path)).unwrap();
    }
    println!(
        "case {} {} {} {}",
        case.name,
        rank.map_or(0, |r| r),
        median(times).as_micros(),
        median(cpu).as_micros()
    );
}

/// CPU time (user and system) of this process so far, every thread included.
fn cpu_time() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).unwrap();
    let to_duration = |time: nix::sys::time::TimeVal| {
        Duration::from_secs(time.tv_sec().max(0) as u64)
            + Duration::from_micros(time.tv_usec().max(0) as u64)
    };
    to_duration(usage.user_time()) + to_duration(usage.system_time())
}

fn extension(i: usize) -> &'static str {
    ["py", "js", "ts", "rs", "go"][i % 5]
}

fn extra_file_path(i: usize) -> String {
    let ext = extension(i);
    let sub = match ext {
        "py" => "lib",
        "go" => "internal",
        _ => "src",
    };
    format!(
        "packages/pkg{:04}/{sub}/{}_{i}.{ext}",
        i / FILES_PER_DIR,
        WORDS[(i / 5) % WORDS.len()]
    )
}

/// A generated module of a few KiB: functions, a class with methods, imports, comments;
/// every 25th file also defines one of the cases' names.
fn extra_file(i: usize) -> (String, String) {
    let ext = extension(i);
    let word = WORDS[(i / 5) % WORDS.len()];
    // 3 to 9 blocks of about 700 bytes.
    let blocks = 3 + (i * 7919) % 7;
    let mut text = String::new();
    let decoy = i
        .is_multiple_of(25)
        .then(|| DECOYS[(i / 25) % DECOYS.len()]);
    match ext {
        "py" => writeln!(
            text,
            "\"\"\"Generated module {i}.\"\"\"\n\nimport os\nfrom .util_{} import helper\n",
            i / 7
        )
        .unwrap(),
        "js" => writeln!(
            text,
            "'use strict';\n\nconst helper = require('./util_{}');\n",
            i / 7
        )
        .unwrap(),
        "ts" => writeln!(text, "import {{ helper }} from './util_{}';\n", i / 7).unwrap(),
        "rs" => writeln!(
            text,
            "//! Generated module {i}.\n\nuse crate::util::helper;\n"
        )
        .unwrap(),
        _ => writeln!(
            text,
            "// Package pkg{} is generated.\npackage pkg{}\n\nimport \"strings\"\n",
            i / FILES_PER_DIR,
            i / FILES_PER_DIR
        )
        .unwrap(),
    }
    for b in 0..blocks {
        let name = match (b, decoy) {
            (0, Some(decoy)) => decoy.to_owned(),
            (1, _) => "parse".to_owned(),
            _ => format!("{word}_{i}_{b}"),
        };
        let class = format!("{}{i}x{b}", capitalize(word));
        let block = match ext {
            "py" => format!(
                "def {name}(value, options=None):\n    \"\"\"Turn value into a list of {word} items.\"\"\"\n    result = []\n    for item in value or []:\n        # Skip what the caller filtered out already.\n        if options and item in options.get(\"skip\", ()):\n            continue\n        result.append(helper(item, os.sep))\n    return result\n\n\nclass {class}:\n    \"\"\"A {word} holder.\"\"\"\n\n    def __init__(self, items):\n        self.items = list(items)\n\n    def total(self):\n        return sum(len(str(item)) for item in self.items)\n\n    def describe(self):\n        return f\"{class}({{len(self.items)}} items, total {{self.total()}})\"\n\n\n"
            ),
            "js" => format!(
                "function {name}(value, options) {{\n  // Turn value into a list of {word} items.\n  const result = [];\n  for (const item of value || []) {{\n    if (options && options.skip && options.skip.includes(item)) {{\n      continue;\n    }}\n    result.push(helper(item));\n  }}\n  return result;\n}}\n\nclass {class} {{\n  constructor(items) {{\n    this.items = [...items];\n  }}\n\n  total() {{\n    return this.items.reduce((sum, item) => sum + String(item).length, 0);\n  }}\n\n  describe() {{\n    return `{class}(${{this.items.length}} items, total ${{this.total()}})`;\n  }}\n}}\n\nmodule.exports.{name} = {name};\n\n"
            ),
            "ts" => format!(
                "export function {name}(value: string[], options?: {{ skip?: string[] }}): string[] {{\n  // Turn value into a list of {word} items.\n  const result: string[] = [];\n  for (const item of value ?? []) {{\n    if (options?.skip?.includes(item)) {{\n      continue;\n    }}\n    result.push(helper(item));\n  }}\n  return result;\n}}\n\nexport class {class} {{\n  private readonly items: string[];\n\n  constructor(items: string[]) {{\n    this.items = [...items];\n  }}\n\n  total(): number {{\n    return this.items.reduce((sum, item) => sum + item.length, 0);\n  }}\n\n  describe(): string {{\n    return `{class}(${{this.items.length}} items, total ${{this.total()}})`;\n  }}\n}}\n\n"
            ),
            "rs" => format!(
                "/// Turn `value` into a list of {word} items.\npub fn {name}(value: &[String], skip: &[String]) -> Vec<String> {{\n    let mut result = Vec::new();\n    for item in value {{\n        // Skip what the caller filtered out already.\n        if skip.contains(item) {{\n            continue;\n        }}\n        result.push(helper(item));\n    }}\n    result\n}}\n\npub struct {class} {{\n    items: Vec<String>,\n}}\n\nimpl {class} {{\n    pub fn new(items: Vec<String>) -> Self {{\n        {class} {{ items }}\n    }}\n\n    pub fn total(&self) -> usize {{\n        self.items.iter().map(String::len).sum()\n    }}\n}}\n\n"
            ),
            _ => format!(
                "// {name} turns value into a list of {word} items.\nfunc {name}(value []string, skip map[string]bool) []string {{\n\tvar result []string\n\tfor _, item := range value {{\n\t\t// Skip what the caller filtered out already.\n\t\tif skip[item] {{\n\t\t\tcontinue\n\t\t}}\n\t\tresult = append(result, strings.ToUpper(item))\n\t}}\n\treturn result\n}}\n\n// {class} holds {word} items.\ntype {class} struct {{\n\titems []string\n}}\n\n// Total is the summed length of the items.\nfunc (c *{class}) Total() int {{\n\tn := 0\n\tfor _, item := range c.items {{\n\t\tn += len(item)\n\t}}\n\treturn n\n}}\n\n"
            ),
        };
        text.push_str(&block);
    }
    (extra_file_path(i), text)
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
