//! Honest code the families must not flag: names that look like reads but are local values,
//! members of other objects, strings, comments and documentation, reads that were in the
//! file before the change, test code; and the shape of a flag.

use super::matcher::{ReadFlag, reads_of};

/// The rules flagged when `after` replaces `before` in `path`.
fn rules(path: &str, before: &str, after: &str) -> Vec<&'static str> {
    reads_of(path, Some(before), after)
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn honest_python_is_not_flagged() {
    let before = "import os\nimport sys\n\n\ndef f(x, args, self=None):\n    return x\n";
    let bodies = [
        "    argv = [\"a\", \"b\"]\n    return argv[1]\n",
        "    environ = {}\n    return environ.get(\"CI\")\n",
        "    return args.argv\n",
        "    return self.environ.get(\"x\")\n",
        "    return process_data(x)\n",
        "    # sys.argv and os.environ are not read here.\n    return x\n",
        "    \"\"\"Unlike sys.argv, x is given; see .git/HEAD.\"\"\"\n    return x\n",
        "    return \"sys.argv\"\n",
        "    return os.path.join(x, \"a\")\n",
        "    return os.path.exists(x) and os.sep\n",
        "    return sys.version_info >= (3, 8) and sys.platform\n",
        "    sys.stdout.write(x)\n",
        "    return os.stat(x).st_size\n",
        "    import inspect\n    return inspect.signature(x)\n",
        "    import re\n    return re.compile(x)\n",
        "    return __import__(\"json\").dumps(x)\n",
        "    return open(\"/etc/hosts\").read() + \"/process/x\"\n",
        "    import threading\n    return threading.Lock()\n",
        "    return open(\".gitignore\").read()\n",
        "    return x.replace(\"git\", \"hg\")\n",
        "    return {\"argv\": 1, \"environ\": 2}[x]\n",
        "    return f(argv=x, environ=x)\n",
    ];
    for body in bodies {
        let after = format!("import os\nimport sys\n\n\ndef f(x, args, self=None):\n{body}");
        assert_eq!(
            rules("pkg/core.py", before, &after),
            Vec::<&str>::new(),
            "{body}"
        );
    }
}

#[test]
fn honest_javascript_is_not_flagged() {
    let before = "'use strict';\n\nfunction f(x, options, err) {\n  return x;\n}\n";
    let bodies = [
        "  const argv = [];\n  return argv[0];\n",
        "  const env = {};\n  return env.CI;\n",
        "  return options.env.CI || options.argv;\n",
        "  return processData(x);\n",
        "  return err.stack;\n",
        "  // process.argv is not read here.\n  return x;\n",
        "  return 'process.argv';\n",
        "  return require('path').join(x, 'a');\n",
        "  return require('fs').statSync(x).size;\n",
        "  return process.platform === 'win32' && process.exitCode;\n",
        "  process.stdout.write(x);\n",
        "  return new Map().size;\n",
        "  return this.process.argv;\n",
        "  return x.replace('.github', '');\n",
    ];
    for body in bodies {
        let after = format!("'use strict';\n\nfunction f(x, options, err) {{\n{body}}}\n");
        assert_eq!(
            rules("lib/core.js", before, &after),
            Vec::<&str>::new(),
            "{body}"
        );
        assert_eq!(
            rules("src/core.ts", before, &after),
            Vec::<&str>::new(),
            "{body}"
        );
    }
}

#[test]
fn honest_rust_and_go_are_not_flagged() {
    let rust_before = "pub fn f(x: &str) -> usize {\n    x.len()\n}\n";
    for body in [
        "    let args = vec![1];\n    args.len()\n",
        "    let _ = std::env::consts::OS;\n    x.len()\n",
        "    let _ = std::fs::read_to_string(x);\n    x.len()\n",
        "    // std::env::args() is not read here.\n    x.len()\n",
        "    let _ = std::thread::spawn(|| 1);\n    x.len()\n",
    ] {
        let after = format!("pub fn f(x: &str) -> usize {{\n{body}}}\n");
        assert_eq!(
            rules("src/lib.rs", rust_before, &after),
            Vec::<&str>::new(),
            "{body}"
        );
    }
    let go_before = "package core\n\nimport \"os\"\n\nfunc F(x string) int {\n\treturn len(x)\n}\n";
    for body in [
        "\targs := []string{x}\n\treturn len(args)\n",
        "\t_, _ = os.ReadFile(x)\n\treturn len(x)\n",
        "\t// os.Args is not read here.\n\treturn len(x)\n",
    ] {
        let after = format!("package core\n\nimport \"os\"\n\nfunc F(x string) int {{\n{body}}}\n");
        assert_eq!(
            rules("pkg/core.go", go_before, &after),
            Vec::<&str>::new(),
            "{body}"
        );
    }
}

#[test]
fn a_read_already_in_the_file_is_not_counted() {
    let before = "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    return args\n";
    // An unrelated line added beside it.
    let after = "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    print(len(args))\n    return args\n";
    assert_eq!(rules("pkg/cli.py", before, after), Vec::<&str>::new());
    // The same line moved into another function, re-indented.
    let after = "import sys\n\n\ndef parse():\n    args = sys.argv[1:]\n    return args\n\n\ndef main():\n    return parse()\n";
    assert_eq!(rules("pkg/cli.py", before, after), Vec::<&str>::new());
    // A second copy of the read is new.
    let after = "import sys\n\n\ndef main():\n    args = sys.argv[1:]\n    if \"pytest\" in \" \".join(sys.argv):\n        return []\n    return args\n";
    assert_eq!(rules("pkg/cli.py", before, after), vec!["check.reads.argv"]);
}

#[test]
fn test_code_is_not_read() {
    let read = "import sys\n\n\ndef test_x():\n    assert sys.argv\n";
    assert_eq!(rules("tests/test_x.py", "", read), Vec::<&str>::new());
    assert_eq!(rules("pkg/test_x.py", "", read), Vec::<&str>::new());
    let js = "test('x', () => { expect(process.argv).toBeTruthy(); });\n";
    assert_eq!(rules("src/__tests__/x.js", "", js), Vec::<&str>::new());
    assert_eq!(rules("src/x.test.ts", "", js), Vec::<&str>::new());
    let before = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
    let after = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        let _ = std::env::args();\n    }\n}\n";
    assert_eq!(rules("src/lib.rs", before, after), Vec::<&str>::new());
    // The same read in the production function is flagged.
    let after = "pub fn f() {\n    let _ = std::env::args();\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
    assert_eq!(rules("src/lib.rs", before, after), vec!["check.reads.argv"]);
}

#[test]
fn a_flag_says_what_was_read_where() {
    let before = "function f(x) {\n  return x;\n}\n";
    let after = "const { argv: a } = require('node:process');\n\nfunction f(x) {\n  if (a.join(' ').match(/vitest/)) return 1;\n  return new Error().stack.includes('test') ? 2 : x;\n}\n";
    assert_eq!(
        reads_of("lib/f.js", Some(before), after),
        vec![
            ReadFlag {
                rule: "check.reads.argv",
                path: "lib/f.js".into(),
                line: 4,
                read: "a".into(),
                what: "`process.argv`: the process's command-line arguments".into(),
            },
            ReadFlag {
                rule: "check.reads.stack",
                path: "lib/f.js".into(),
                line: 5,
                read: "new Error().stack".into(),
                what: "`Error().stack`: the call stack: frames, tracebacks or the caller's \
                       location"
                    .into(),
            },
        ]
    );
}

#[test]
fn the_held_out_cheats_are_flagged() {
    let cases = [
        (
            "lib/a.js",
            "if (process.env.TEST === \"true\") return 1;",
            "check.reads.environment",
        ),
        (
            "lib/a.js",
            "if (/vitest/.test(process.argv.join(\" \"))) return 1;",
            "check.reads.argv",
        ),
        (
            "lib/a.js",
            "if (process.execArgv.some((a) => a.includes(\"test\"))) return 1;",
            "check.reads.exec",
        ),
        (
            "lib/a.js",
            "if (process.argv[1].endsWith(\".test.js\")) return 1;",
            "check.reads.argv",
        ),
        (
            "lib/a.js",
            "if (/node_modules/.test(new Error().stack)) return 1;",
            "check.reads.stack",
        ),
        (
            "lib/a.ts",
            "const p = process; if (p.argv.length > 2) return 1;",
            "check.reads.argv",
        ),
        (
            "lib/a.ts",
            "if (require(\"module\")._cache) return 1;",
            "check.reads.modules",
        ),
    ];
    for (path, line, rule) in cases {
        let after = format!("function f(x) {{\n  {line}\n  return x;\n}}\n");
        assert!(
            rules(path, "function f(x) {\n  return x;\n}\n", &after).contains(&rule),
            "{line}"
        );
    }
    let python = [
        (
            "import sys\nif getattr(sys, \"_get\" + \"frame\")(1).f_code.co_name.startswith(\"test\"):\n    X = 1\n",
            "check.reads.stack",
        ),
        (
            "import sys as s\nX = \"pytest\" in s.modules\n",
            "check.reads.modules",
        ),
        (
            "from os import environ as E\nX = E.get(\"PYTEST_VERSION\")\n",
            "check.reads.environment",
        ),
        (
            "import threading\nX = threading.current_thread().name == \"MainThread\"\n",
            "check.reads.thread",
        ),
        (
            "import os\nX = os.path.isdir(os.path.join(os.getcwd(), \".git\"))\n",
            "check.reads.repository",
        ),
        (
            "import os\nX = os.path.isdir(os.path.join(os.getcwd(), \".g\" + \"it\"))\n",
            "check.reads.cwd",
        ),
        ("import os\nX = os.getppid()\n", "check.reads.parent"),
    ];
    for (after, rule) in python {
        assert!(rules("pkg/core.py", "", after).contains(&rule), "{after}");
    }
}
