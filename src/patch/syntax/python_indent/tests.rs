use super::*;

fn check(text: &str) -> Option<(u64, Problem)> {
    scan(text).err().map(|e| (e.line, e.problem))
}

#[test]
fn consistent_files_pass_whatever_they_hide_in_strings_brackets_and_comments() {
    let files = [
        "def f(x):\n    if x:\n        return 1\n    return 2\n",
        // Inside brackets, strings, comments and after a backslash nothing is indentation.
        "x = [\n  1,\n        2,\n]\ny = '''\n  a\n\tb\n'''\nz = 1 + \\\n        2\n   # c\n",
        "def f():\n\tif x:\n\t\tpass\n\treturn f'{x!r:>{w}} {{ }}' + \"}\"\n",
        "s = f\"{ {'a': 1}['a'] }\"\nt = rb'\\d+' + Rb\"\\\"\"\nu = f'{x:%H:%M}'\n",
        "if x:  # header: comment\n    y = {1: 2}\nclass A: pass\n",
        "\u{feff}import os\r\nif os:\r\n    pass\r\n",
        "if x:\n    a = 1\n\x0c    b = 2\n",
        "x = f'{a!=b}' f'\\N{BULLET} {x}'\nif x:\n    pass\n",
        "def f(a,\nb):\n    pass\n",
        "",
        "\n\n   \n",
    ];
    for f in files {
        assert_eq!(check(f), None, "{f:?}");
    }
}

#[test]
fn each_cpython_indentation_error_is_found_at_its_line() {
    let cases: [(&str, (u64, Problem)); 9] = [
        (
            "def f():\n    if x:\n        a = 1\n      b = 2\n",
            (
                4,
                Problem::Dedent {
                    col: 6,
                    levels: vec![0, 4, 8],
                },
            ),
        ),
        ("if x:\n        a = 1\n\tb = 2\n", (3, Problem::Tabs)),
        ("if x:\n\ta = 1\n        b = 2\n", (3, Problem::Tabs)),
        ("a = 1\n    b = 2\n", (2, Problem::Unexpected)),
        (
            "def f():\n    a = 1\n     b = 2\n",
            (3, Problem::Unexpected),
        ),
        ("if x:\ny = 1\n", (2, Problem::Expected { header: 1 })),
        ("if x:\n# c\n\n", (3, Problem::Expected { header: 1 })),
        ("a = 'abc\nb = 1\n", (1, Problem::Unterminated { start: 1 })),
        (
            "a = 1\nb = '''abc\nc = 1\n",
            (2, Problem::Unterminated { start: 2 }),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(check(text), Some(want), "{text:?}");
    }
}

/// xorshift64*: deterministic cases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Statements that are valid anywhere, some hiding colons, braces, quotes and indentation
/// in strings, brackets and continuation lines (`{I}` is a random indentation).
const SIMPLE: &[&str] = &[
    "x = 1",
    "y = \"a: {b}\"",
    "z = {1: 2, 'k': [3]}",
    "s = f\"{x!r:>{w}} {{literal}}\" + '}'",
    "t = 'it\\'s' + r'\\d' + rb\"\\\"\"",
    "pass",
    "print(x)  # note:",
    "u = f'{ {\"a\": 1}[\"a\"] }'",
    "v: int = 3",
    "w = lambda: 0",
    "a = [\n{I}1,\n{I}2]",
    "b = (1 +\n{I}# inside brackets\n{I}2)",
    "c = 1 + \\\n{I}2",
    "d = '''doc:\n{I}indented text\n\tmore'''",
    "e = f\"\"\"{x}\n{I}{y:>4}\n\"\"\"",
    "f = (\n{I}lambda: 1)",
];

/// f-strings as Python 3.12 reads them (PEP 701): the same quotes nested, replacement fields
/// over several lines, comments inside them. Used when the python3 at hand is 3.12 or later
/// (older versions refuse them), and checked against 3.12 and 3.13 when this was written.
const PEP_701: &[&str] = &[
    "g = f\"{x[\"a\"]:{'>'}{w}} {f'{\"q\"}'}\"",
    "h = f'{\n{I}x:\n{I}}' if 0 else f\"{'''\n{I}'''}\"",
    "k = f'{x # c:\n{I}}'",
];

const HEADERS: &[&str] = &[
    "if x:",
    "while y:",
    "for i in z:",
    "def f(a):",
    "class C:",
    "with a as b:",
    "if x:  # comment",
    "def g(a,\n{I}b):",
    "if (x and\n{I}y):",
];

const INDENTS: &[&str] = &[
    "",
    " ",
    "  ",
    "   ",
    "    ",
    "     ",
    "      ",
    "       ",
    "        ",
    "\t",
    " \t",
    "\t ",
    "\t\t",
    "\t    ",
    "    \t",
    "        \t",
    "\x0c    ",
    "\t\t\t",
    "            ",
];

/// Per-depth indentation styles: consistent ones and the mixes models produce.
const STYLES: &[&[&str]] = &[
    &["", "    ", "        ", "            "],
    &["", "\t", "\t\t", "\t\t\t"],
    &["", "  ", "    ", "      "],
    &["", "\t", "\t    ", "\t\t"],
    &["", "        ", "\t        ", "\t\t\t"],
    &["", "    ", "\t", "\t    "],
];

fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = String::new();
    for (i, part) in template.split("{I}").enumerate() {
        if i > 0 {
            out.push_str(rng.pick(INDENTS));
        }
        out.push_str(part);
    }
    out
}

/// One generated program: lines with their depth (for re-indentation).
fn block(rng: &mut Rng, depth: usize, pep701: bool, out: &mut Vec<(usize, String)>) {
    for _ in 0..1 + rng.below(3) {
        match rng.below(10) {
            0..=4 => {
                let k = rng.below(SIMPLE.len() + if pep701 { PEP_701.len() } else { 0 });
                let template = SIMPLE.get(k).unwrap_or_else(|| &PEP_701[k - SIMPLE.len()]);
                let line = fill(rng, template);
                out.push((depth, line));
            }
            5..=7 if depth < 3 => {
                let k = rng.below(HEADERS.len());
                let line = fill(rng, HEADERS[k]);
                out.push((depth, line));
                block(rng, depth + 1, pep701, out);
                // `else:` continues the headers that take one (if, while, for).
                if k <= 2 && rng.below(4) == 0 {
                    out.push((depth, "else:".to_owned()));
                    block(rng, depth + 1, pep701, out);
                }
            }
            8 => out.push((usize::MAX, format!("{}# comment:", rng.pick(INDENTS)))),
            _ => out.push((usize::MAX, rng.pick(&["", "   ", "\t"]).to_owned())),
        }
    }
}

/// A program in a random style, then damaged the way models damage indentation.
fn generated(rng: &mut Rng, pep701: bool) -> String {
    let mut lines = Vec::new();
    block(rng, 0, pep701, &mut lines);
    let style = STYLES[rng.below(STYLES.len())];
    let mut text: Vec<String> = lines
        .iter()
        .map(|(d, l)| match style.get(*d) {
            Some(ind) => format!("{ind}{l}"),
            None => l.clone(),
        })
        .collect();
    for _ in 0..rng.below(3) {
        let k = rng.below(text.len());
        let body = text[k].trim_start_matches([' ', '\t', '\x0c']).to_owned();
        text[k] = match rng.below(4) {
            0 => format!(" {}", text[k]),
            1 => text[k].strip_prefix(' ').unwrap_or(&text[k]).to_owned(),
            _ => format!("{}{body}", rng.pick(INDENTS)),
        };
    }
    if rng.below(8) == 0 {
        // An unterminated string or a header that lost its body.
        let k = rng.below(text.len());
        text[k].push_str(rng.pick(&[" + 'open", " + '''open", ":"]));
    }
    let mut s = text.join("\n");
    s.push('\n');
    s
}

/// Whether the python3 on PATH is 3.12 or later; `None` when there is none.
fn python_reads_pep_701() -> Option<bool> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.version_info >= (3, 12))"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim() == "True")
}

/// What CPython says about each file: `None` when it compiles, else the exception class,
/// message and line.
fn cpython_verdicts(files: &[String]) -> Option<Vec<Option<(String, String, u64)>>> {
    let dir = tempfile::tempdir().ok()?;
    for (i, f) in files.iter().enumerate() {
        std::fs::write(dir.path().join(format!("{i}.py")), f).ok()?;
    }
    let script = "import sys, json\n\
                  for i in range(int(sys.argv[2])):\n\
                  \x20   p = f'{sys.argv[1]}/{i}.py'\n\
                  \x20   try:\n\
                  \x20       compile(open(p, 'rb').read(), p, 'exec')\n\
                  \x20       print('null')\n\
                  \x20   except SyntaxError as e:\n\
                  \x20       print(json.dumps([type(e).__name__, e.msg, e.lineno]))\n";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.path())
        .arg(files.len().to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(
        text.lines()
            .map(|l| {
                serde_json::from_str::<Option<(String, String, u64)>>(l)
                    .ok()
                    .flatten()
            })
            .collect(),
    )
}

/// The problem CPython's message names, when it is one this module knows.
fn known(class: &str, msg: &str) -> Option<&'static str> {
    Some(match (class, msg) {
        ("TabError", _) => "tabs",
        (_, m) if m.starts_with("unindent does not match") => "dedent",
        (_, "unexpected indent") => "unexpected",
        (_, m) if m.starts_with("expected an indented block") => "expected",
        (_, "too many levels of indentation") => "too-deep",
        (_, m) if m.starts_with("unterminated") => "unterminated",
        // Before 3.10 CPython names the line where the file ended, not where the string began.
        (_, m) if m.starts_with("EOF while scanning") || m.starts_with("EOL while scanning") => {
            "unterminated (old message)"
        }
        _ => return None,
    })
}

fn name(p: &Problem) -> &'static str {
    match p {
        Problem::Dedent { .. } => "dedent",
        Problem::Tabs => "tabs",
        Problem::Unexpected => "unexpected",
        Problem::Expected { .. } => "expected",
        Problem::TooDeep => "too-deep",
        Problem::Unterminated { .. } => "unterminated",
    }
}

#[test]
#[expect(
    clippy::print_stderr,
    reason = "says what CPython decided, or that python3 is missing"
)]
fn generated_programs_get_cpythons_verdict() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // python3 is on every machine efix targets; without it the cases above still hold.
    let Some(pep701) = python_reads_pep_701() else {
        eprintln!("python3 not found: generated programs not compared with CPython");
        return;
    };
    let files: Vec<String> = (0..3000).map(|_| generated(&mut rng, pep701)).collect();
    let verdicts = cpython_verdicts(&files).expect("python3 runs");
    assert_eq!(verdicts.len(), files.len());
    let mut mismatches = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for (f, v) in files.iter().zip(&verdicts) {
        let ours = check(f).map(|(line, p)| (name(&p), line));
        let theirs = v
            .as_ref()
            .map(|(class, msg, line)| (known(class, msg), *line));
        let kind = theirs.map_or("compiles", |t| t.0.unwrap_or("other"));
        *counts
            .entry(kind.trim_end_matches(" (old message)"))
            .or_insert(0) += 1;
        let agree = match (ours, theirs) {
            (None, None) => true,
            (Some((o, ol)), Some((Some(t), tl))) if o == t => ol == tl,
            (Some(("unterminated", ol)), Some((Some("unterminated (old message)"), tl))) => {
                ol <= tl
            }
            // CPython's parser reads ahead before it reports its own two indentation errors,
            // so an error its tokenizer finds further on is reported first.
            (Some(("expected" | "unexpected", ol)), Some((Some(_), tl))) => ol <= tl,
            // Another syntax error first: ours must not claim an earlier line.
            (o, Some((None, tl))) => o.is_none_or(|(_, ol)| ol >= tl),
            _ => false,
        };
        if !agree {
            mismatches.push(format!("{f:?}\n  ours {ours:?}\n  cpython {v:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ from CPython:\n{}",
        mismatches.len(),
        files.len(),
        mismatches[..mismatches.len().min(8)].join("\n")
    );
    // The generator must exercise every rule, and mostly valid programs.
    for kind in [
        "compiles",
        "tabs",
        "dedent",
        "unexpected",
        "expected",
        "unterminated",
    ] {
        assert!(counts.get(kind).copied().unwrap_or(0) >= 30, "{counts:?}");
    }
    assert!(
        counts.get("other").copied().unwrap_or(0) < 150,
        "{counts:?}"
    );
    eprintln!("CPython's verdicts on the generated programs: {counts:?}");
}

#[test]
fn statements_right_after_a_block_ending_statement_are_noted() {
    let pairs = |text: &str| -> Vec<(u64, u64)> {
        scan(text)
            .map(|v| v.iter().map(|u| (u.ender, u.line)).collect())
            .unwrap_or_default()
    };
    assert_eq!(pairs("def f(x):\n    return x\n    y = 1\n"), vec![(2, 3)]);
    // The statement after a return that spans lines, after a blank and a comment line.
    assert_eq!(
        pairs("def f(x):\n    return (x +\n        1)\n\n    # n\n    y = 1\n"),
        vec![(2, 6)]
    );
    assert_eq!(
        pairs("for x in y:\n    if x:\n        continue\n        z()\n    break\n"),
        vec![(3, 4)]
    );
    // Code after the block, `return` then `yield` (an empty generator), a name that starts
    // like a keyword, and a one-line `if x: return` run.
    for text in [
        "def f(x):\n    if x:\n        return 1\n    return 2\n",
        "def f():\n    return\n    yield\n",
        "def f():\n    returned = 1\n    raised = 2\n",
        "def f(x):\n    if x: return 1\n    return 2\n",
    ] {
        assert_eq!(pairs(text), vec![], "{text:?}");
    }
}
