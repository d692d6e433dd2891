//! A lenient unified-diff parser that never panics: it recounts hunk bodies instead of
//! trusting header counts, accepts missing `diff --git`, missing `a/`/`b/`, headers without
//! counts, bare blank lines as empty context, and ends a hunk at junk such as
//! `[end of patch]`, `--cut--`, closing tags or fences.
//!
//! It does not check paths against policy (see `paths`) and does not apply anything.

use crate::patch::contract::is_known_junk;
use crate::patch::git_quote::{unquote, unquote_whole};
use crate::policy::Issue;

/// What a hunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Context,
    Remove,
    Add,
}

/// One body line of a hunk, without its prefix or line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HunkLine {
    pub kind: Kind,
    pub text: String,
    /// Followed by `\ No newline at end of file`.
    pub no_eol: bool,
    /// A bare empty line (no leading space) read as empty context.
    pub bare: bool,
}

/// One hunk with its recounted body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// 1-based old start from the header (0 for an insertion at the top).
    pub old_start: usize,
    pub lines: Vec<HunkLine>,
    /// Old and new line counts the header declares, when it gives both.
    pub declared: Option<(usize, usize)>,
    /// The last hunk of a bare diff, whose end nothing vouches for: an answer cut off
    /// mid-stream cuts this one (set by the caller, which knows how the answer ended).
    pub may_be_cut: bool,
}

impl Hunk {
    /// Whether the body has fewer old or new lines than the header declares: the sign of an
    /// answer cut off inside this hunk (or of a miscount, which models also make).
    pub fn shorter_than_declared(&self) -> bool {
        let (old, new) = counts(&self.lines);
        self.declared
            .is_some_and(|(d_old, d_new)| old < d_old || new < d_new)
    }
}

/// Everything a patch says about one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FilePatch {
    /// Path before (`None` = the file is created).
    pub old_path: Option<String>,
    /// Path after (`None` = the file is deleted).
    pub new_path: Option<String>,
    pub rename: bool,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// 1-based line in the diff where the file's header starts.
    pub line: usize,
}

impl FilePatch {
    /// The path the change is reported under.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }
}

/// Parse a whole diff (LF line endings; a stray `\r` at line ends is dropped).
pub(crate) fn parse(diff: &str) -> Result<Vec<FilePatch>, Issue> {
    let mut lines: Vec<&str> = diff
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // The text after the final newline is not a line.
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut files: Vec<FilePatch> = Vec::new();
    let mut cur: Option<FilePatch> = None;
    // Whether `cur` was opened by `diff --git` and still waits for its `---`/`+++` pair.
    let mut git_open = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") || line.starts_with("diff -") {
            if let Some(f) = cur.take() {
                files.push(f);
            }
            let (a, b) = git_header_paths(line);
            cur = Some(FilePatch {
                old_path: a,
                new_path: b,
                line: i + 1,
                ..Default::default()
            });
            git_open = true;
            i += 1;
            continue;
        }
        if let Some(old) = old_header(line)
            && lines.get(i + 1).is_some_and(|n| new_header(n))
        {
            let new = header_path(lines[i + 1].trim_start_matches('+'));
            let old = header_path(old);
            let reuse = git_open;
            git_open = false;
            let mut f = match cur.take() {
                Some(f) if reuse => f,
                Some(f) => {
                    files.push(f);
                    FilePatch {
                        line: i + 1,
                        ..Default::default()
                    }
                }
                None => FilePatch {
                    line: i + 1,
                    ..Default::default()
                },
            };
            f.old_path = old;
            f.new_path = new;
            cur = Some(f);
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(f) = cur.as_mut() else {
                return Err(Issue::new(
                    "parse.no-file-header",
                    format!(
                        "hunk on line {} has no file header; put `--- a/PATH` and `+++ b/PATH` \
                         before the first @@ line",
                        i + 1
                    ),
                ));
            };
            let Some((old_start, old_count, new_count)) = hunk_header(line) else {
                return Err(Issue::new(
                    "parse.bad-hunk-header",
                    format!(
                        "hunk header on line {} is not `@@ -OLD,COUNT +NEW,COUNT @@`: {:?}; give \
                         numeric line numbers from the numbered file",
                        i + 1,
                        truncate(line, 60)
                    ),
                ))
                .map_err(|e| e.at_path(f.path().to_owned()));
            };
            git_open = false;
            let (hunk, next) = hunk_body(&lines, i + 1, old_start, old_count, new_count);
            f.hunks.push(hunk);
            i = next;
            continue;
        }
        if let Some(f) = cur.as_mut() {
            if let Some(rest) = line.strip_prefix("rename from ") {
                f.old_path = Some(clean_path(rest));
                f.rename = true;
            } else if let Some(rest) = line.strip_prefix("rename to ") {
                f.new_path = Some(clean_path(rest));
                f.rename = true;
            } else if line.starts_with("new file mode") {
                f.old_path = None;
            } else if line.starts_with("deleted file mode") {
                f.new_path = None;
            } else if line.starts_with("GIT binary patch")
                || (line.starts_with("Binary files ") && line.ends_with(" differ"))
            {
                f.binary = true;
            }
        }
        let meta = line.starts_with("index ")
            || line.starts_with("Index: ")
            || line.starts_with("====")
            || line.starts_with("old mode")
            || line.starts_with("new mode")
            || line.starts_with("new file mode")
            || line.starts_with("deleted file mode")
            || line.starts_with("similarity index")
            || line.starts_with("dissimilarity index")
            || line.starts_with("rename ")
            || line.starts_with("copy ")
            || line.starts_with("GIT binary patch")
            || line.starts_with("Binary files ");
        let in_binary = cur.as_ref().is_some_and(|f| f.binary);
        if meta || in_binary || line.trim().is_empty() || is_known_junk(line) {
            i += 1;
            continue;
        }
        if line == "-- " || line == "--" {
            // A mail signature (`git format-patch`) ends the patch.
            break;
        }
        return Err(Issue::new(
            "parse.stray-line",
            format!(
                "line {} of the diff is not part of a hunk: {:?}; prefix context lines with one \
                 space and write no text after the diff",
                i + 1,
                truncate(line, 60)
            ),
        ));
    }
    if let Some(f) = cur.take() {
        files.push(f);
    }
    Ok(files)
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A `+++ path` line, also the malformed `++ path`.
fn new_header(line: &str) -> bool {
    line.starts_with("+++") || line.starts_with("++ ")
}

/// The text after `--- `, also for the malformed `-- path` and `---> path` forms.
fn old_header(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("---") {
        return Some(rest.trim_start_matches('>'));
    }
    line.strip_prefix("-- ").filter(|r| !r.trim().is_empty())
}

/// A name as git writes it on `rename from`/`rename to` lines: C-style quoted when it holds
/// special characters (decoded as git decodes it), else verbatim. Quotes that do not form a
/// valid quoted name are dropped, as before git's rules were followed.
fn clean_path(raw: &str) -> String {
    if let Some(name) = unquote_whole(raw) {
        return name;
    }
    let mut p = raw.trim();
    if p.len() >= 2 && p.starts_with('"') && p.ends_with('"') {
        p = &p[1..p.len() - 1];
    }
    p.to_owned()
}

/// A `---`/`+++` path: drop a timestamp, quotes and the `a/`/`b/` prefix; `/dev/null` is none.
/// A quoted name (`"a/\303\251.py"`) is decoded, and what follows its closing quote (a
/// timestamp) is ignored.
fn header_path(raw: &str) -> Option<String> {
    if let Some((name, _)) = unquote(raw.trim_start()) {
        return (!name.is_empty()).then(|| strip_ab(&name).to_owned());
    }
    let raw = raw.split('\t').next().unwrap_or("");
    let p = clean_path(raw);
    if p == "/dev/null" || p.is_empty() {
        return None;
    }
    Some(strip_ab(&p).to_owned())
}

fn strip_ab(p: &str) -> &str {
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
}

fn git_header_paths(line: &str) -> (Option<String>, Option<String>) {
    let rest = line.strip_prefix("diff --git ").unwrap_or("");
    // Either name may be quoted (git quotes each side on its own: `a/x "b/\303\251"`).
    if let Some((a, after)) = unquote(rest) {
        let after = after.trim_start();
        let b = unquote_whole(after).unwrap_or_else(|| after.trim_end().to_owned());
        return (Some(strip_ab(&a).to_owned()), Some(strip_ab(&b).to_owned()));
    }
    if rest.trim_end().ends_with('"') {
        let quoted_b = rest.match_indices(" \"").find_map(|(pos, _)| {
            unquote_whole(&rest[pos + 1..]).map(|b| (rest[..pos].to_owned(), b))
        });
        if let Some((a, b)) = quoted_b {
            return (Some(strip_ab(&a).to_owned()), Some(strip_ab(&b).to_owned()));
        }
    }
    // `a/X b/X`: split at the ` b/` that halves the rest when the names are equal.
    if let Some(pos) = rest.find(" b/") {
        let a = strip_ab(&rest[..pos]).to_owned();
        let b = rest[pos + 3..].to_owned();
        return (Some(clean_path(&a)), Some(clean_path(&b)));
    }
    let mut parts = rest.split_whitespace();
    let a = parts.next().map(|s| strip_ab(s).to_owned());
    let b = parts.next().map(|s| strip_ab(s).to_owned());
    (a, b)
}

/// `@@ -a[,b] +c[,d] @@...` to `(a, b, d)`; counts default to 1. Stray `@` between the
/// ranges and a missing `+` range are tolerated; a header without a numeric `-` range is not.
fn hunk_header(line: &str) -> Option<(usize, Option<usize>, Option<usize>)> {
    let rest = line.trim_start_matches('@').trim_start_matches([' ', '@']);
    let rest = rest.strip_prefix('-')?;
    let range = |s: &str| -> Option<(usize, Option<usize>)> {
        let s = s.trim_end_matches('@');
        let (start, count) = match s.split_once(',') {
            Some((a, b)) => (a, Some(b.parse::<usize>().ok()?)),
            None => (s, None),
        };
        Some((start.parse::<usize>().ok()?, count))
    };
    let mut words = rest.split_whitespace();
    let (old_start, old_count) = range(words.next()?)?;
    let new_count = match words.next().map(|w| w.trim_start_matches('@')) {
        Some(w) if w.starts_with('+') => range(&w[1..])?.1,
        Some(_) | None => old_count,
    };
    Some((old_start, old_count, new_count))
}

/// Read a hunk body from `start`; returns the hunk and the index of the first line after it.
fn hunk_body(
    lines: &[&str],
    start: usize,
    old_start: usize,
    old_count: Option<usize>,
    new_count: Option<usize>,
) -> (Hunk, usize) {
    let declared_old = old_count.unwrap_or(1);
    let declared_new = new_count.unwrap_or(1);
    let mut body: Vec<HunkLine> = Vec::new();
    let (mut old_seen, mut new_seen) = (0usize, 0usize);
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        let counts_left = old_seen < declared_old || new_seen < declared_new;
        // A line that starts with a space is context even when it reads like junk: a markdown
        // file's own " ```python" fence is part of the file.
        let junk = !line.starts_with(' ') && is_known_junk(line);
        if line.starts_with("@@") || line.starts_with("diff --git ") || junk {
            break;
        }
        // `--- path` followed by `+++ path` starts the next file once the counts are used up;
        // inside the declared counts it is a removed line (git's rule).
        if !counts_left
            && old_header(line).is_some()
            && lines.get(i + 1).is_some_and(|n| new_header(n))
        {
            break;
        }
        if !counts_left && (line == "-- " || line == "--") {
            break;
        }
        let (kind, text, bare) = match line.as_bytes().first() {
            None => (Kind::Context, "", true),
            Some(b' ') => (Kind::Context, &line[1..], false),
            Some(b'+') => (Kind::Add, &line[1..], false),
            Some(b'-') => (Kind::Remove, &line[1..], false),
            Some(b'\\') => {
                if let Some(last) = body.last_mut() {
                    last.no_eol = true;
                }
                i += 1;
                continue;
            }
            _ => break,
        };
        match kind {
            Kind::Context => {
                old_seen += 1;
                new_seen += 1;
            }
            Kind::Remove => old_seen += 1,
            Kind::Add => new_seen += 1,
        }
        body.push(HunkLine {
            kind,
            text: text.to_owned(),
            no_eol: false,
            bare,
        });
        i += 1;
    }
    // Trailing bare blank lines are separators, not context, unless the counts need them.
    while body.last().is_some_and(|l| l.bare) {
        let (o, n) = counts(&body[..body.len() - 1]);
        if old_count.is_some() && new_count.is_some() && o < declared_old && n < declared_new {
            break;
        }
        body.pop();
    }
    (
        Hunk {
            old_start,
            lines: body,
            declared: old_count.zip(new_count),
            may_be_cut: false,
        },
        i,
    )
}

fn counts(body: &[HunkLine]) -> (usize, usize) {
    let old = body.iter().filter(|l| l.kind != Kind::Add).count();
    let new = body.iter().filter(|l| l.kind != Kind::Remove).count();
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: Kind, text: &str) -> HunkLine {
        HunkLine {
            kind,
            text: text.into(),
            no_eol: false,
            bare: false,
        }
    }

    #[test]
    fn wrong_counts_are_recounted_and_junk_ends_the_hunk() {
        let diff =
            "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,9 +1,2 @@\n a\n-b\n+c\n+d\n[end of patch]\n";
        assert_eq!(
            parse(diff).ok(),
            Some(vec![FilePatch {
                old_path: Some("src/x.py".into()),
                new_path: Some("src/x.py".into()),
                hunks: vec![Hunk {
                    old_start: 1,
                    declared: Some((9, 2)),
                    may_be_cut: false,
                    lines: vec![
                        line(Kind::Context, "a"),
                        line(Kind::Remove, "b"),
                        line(Kind::Add, "c"),
                        line(Kind::Add, "d")
                    ]
                }],
                line: 1,
                ..Default::default()
            }])
        );
    }

    #[test]
    fn non_numeric_hunk_header_is_rejected() {
        let diff = "--- a/x\n+++ b/x\n@@ at the end of the file @@\n+a\n";
        assert_eq!(
            parse(diff).err().map(|i| i.rule),
            Some("parse.bad-hunk-header".into())
        );
    }

    #[test]
    fn removed_line_that_looks_like_a_header_stays_inside_the_counts() {
        let diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- a\n+++ b\n";
        let files = parse(diff).unwrap_or_default();
        assert_eq!(files.len(), 1);
        assert_eq!(
            files[0].hunks[0].lines,
            vec![line(Kind::Remove, "-- a"), line(Kind::Add, "++ b")]
        );
    }

    #[test]
    fn git_metadata_marks_new_deleted_renamed_and_binary_files() {
        let diff = "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\
                    diff --git a/d b/d\ndeleted file mode 100644\n\
                    diff --git a/o b/r\nsimilarity index 100%\nrename from o\nrename to r\n\
                    diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n";
        assert_eq!(
            headers(diff),
            vec![
                (None, Some("n".into()), false, false, 1),
                (Some("d".into()), None, false, false, 0),
                (Some("o".into()), Some("r".into()), true, false, 0),
                (Some("bin".into()), Some("bin".into()), false, true, 0),
            ]
        );
    }

    #[test]
    fn names_git_quotes_are_decoded_on_every_header_line() {
        // As `git diff -M` (2.47) writes a rename to a non-ASCII name, a change to one, and a
        // rename from a plain name to one with a tab.
        let diff = "diff --git \"a/\\303\\251.py\" \"b/\\303\\261ew.py\"\n\
                    similarity index 94%\n\
                    rename from \"\\303\\251.py\"\n\
                    rename to \"\\303\\261ew.py\"\n\
                    index 0ff3bbb..d4de868 100644\n\
                    --- \"a/\\303\\251.py\"\n\
                    +++ \"b/\\303\\261ew.py\"\n\
                    @@ -1 +1,2 @@\n 1\n+2\n\
                    diff --git \"a/d\\303\\251j\\303\\240 vu.py\" \"b/d\\303\\251j\\303\\240 vu.py\"\n\
                    --- \"a/d\\303\\251j\\303\\240 vu.py\"\t\n\
                    +++ \"b/d\\303\\251j\\303\\240 vu.py\"\t\n\
                    @@ -1 +1 @@\n-a\n+b\n\
                    diff --git a/plain.py \"b/x\\ty.py\"\n\
                    similarity index 100%\n\
                    rename from plain.py\n\
                    rename to \"x\\ty.py\"\n\
                    diff --git \"a/q\\\"uote.py\" \"b/q\\\"uote.py\"\n\
                    deleted file mode 100644\n";
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            headers(diff),
            vec![
                (some("é.py"), some("ñew.py"), true, false, 1),
                (some("déjà vu.py"), some("déjà vu.py"), false, false, 1),
                (some("plain.py"), some("x\ty.py"), true, false, 0),
                (some("q\"uote.py"), None, false, false, 0),
            ]
        );
    }

    type Header = (Option<String>, Option<String>, bool, bool, usize);

    /// Each parsed file's paths, rename and binary flags, and hunk count.
    fn headers(diff: &str) -> Vec<Header> {
        let files = parse(diff).unwrap_or_default();
        files
            .iter()
            .map(|f| {
                (
                    f.old_path.clone(),
                    f.new_path.clone(),
                    f.rename,
                    f.binary,
                    f.hunks.len(),
                )
            })
            .collect()
    }
}
