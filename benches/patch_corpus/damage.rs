//! Gold patches damaged the way models damage patches, replayed through `evaluate`.
//!
//! Every gold record (`gold_patch`, `gold_test_patch`) whose diff git applies gives one
//! variant per kind of damage that fits it; the intended result of every variant is the gold
//! result (byte-identical to `git apply`, as the main bench checks). An acceptance whose
//! result differs from it is harmful: the patch applied, but not as the model meant, or into
//! a file that no longer runs. Rejections are fine here (the model gets feedback and tries
//! again); what this measures is how often efix accepts a damaged patch wrongly.
//!
//! Damages that models make (each kind's doc says what it does; most also shift the hunk
//! headers' line numbers, as models' numbers are rarely right):

use std::collections::BTreeMap;

use efix::patch::{MemoryFiles, PatchOutcome, PatchPolicy, evaluate};

/// One kind of damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Hunk headers' line numbers off by up to 30.
    LineNumbers,
    /// Wrong hunk counts as well.
    Counts,
    /// One hunk quoted 4 columns shallower or deeper (context, `-` and `+` alike).
    Reindent,
    /// One hunk quoted at another depth with a single context line kept.
    ReindentOneAnchor,
    /// One hunk's `+` lines one column deeper than meant.
    PlusOffByOne,
    /// One hunk's `+` lines indented with tabs in a file indented with spaces.
    PlusTabs,
    /// One hunk's first non-blank context line invented.
    InventedContext,
    /// Every hunk cut to one context line on each side.
    OneContextLine,
    /// One context line indented one column off.
    ContextOffByOne,
    /// A replaced line kept as context: the model forgot its `-`.
    MinusAsContext,
    /// A replaced line left out of the hunk altogether.
    MinusDropped,
    /// A context line next to the change re-added with `+`.
    ReaddedNeighbour,
    /// The patch text with CRLF line endings.
    Crlf,
    /// Blank context lines without their leading space.
    BlankContextBare,
    /// The file has a non-ASCII name, quoted by git on every header line.
    QuotedPath,
    /// The answer cut off after a `+` line inside its last hunk (a bare diff).
    Truncated,
    /// The same, inside a ```diff fence that is never closed.
    TruncatedFence,
    /// Cut off at a context line between two changes of its last hunk, inside `<patch>`
    /// tags that are never closed: the second change is lost.
    TruncatedBetweenChanges,
    /// The hunks of a file in reverse order.
    HunksReversed,
    /// All but the first of three or more added lines replaced by `# ... existing code ...`.
    Elided,
    /// Every hunk line prefixed with its number as the prompt shows it (`12| `).
    NumberedLines,
}

pub const KINDS: [Kind; 21] = [
    Kind::LineNumbers,
    Kind::Counts,
    Kind::Reindent,
    Kind::ReindentOneAnchor,
    Kind::PlusOffByOne,
    Kind::PlusTabs,
    Kind::InventedContext,
    Kind::OneContextLine,
    Kind::ContextOffByOne,
    Kind::MinusAsContext,
    Kind::MinusDropped,
    Kind::ReaddedNeighbour,
    Kind::Crlf,
    Kind::BlankContextBare,
    Kind::QuotedPath,
    Kind::Truncated,
    Kind::TruncatedFence,
    Kind::TruncatedBetweenChanges,
    Kind::HunksReversed,
    Kind::Elided,
    Kind::NumberedLines,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::LineNumbers => "line-numbers",
            Kind::Counts => "counts",
            Kind::Reindent => "reindent",
            Kind::ReindentOneAnchor => "reindent-one-anchor",
            Kind::PlusOffByOne => "plus-off-by-one",
            Kind::PlusTabs => "plus-tabs",
            Kind::InventedContext => "invented-context",
            Kind::OneContextLine => "one-context-line",
            Kind::ContextOffByOne => "context-off-by-one",
            Kind::MinusAsContext => "minus-as-context",
            Kind::MinusDropped => "minus-dropped",
            Kind::ReaddedNeighbour => "readded-neighbour",
            Kind::Crlf => "crlf",
            Kind::BlankContextBare => "blank-context-bare",
            Kind::QuotedPath => "quoted-path",
            Kind::Truncated => "truncated",
            Kind::TruncatedFence => "truncated-fence",
            Kind::TruncatedBetweenChanges => "truncated-between-changes",
            Kind::HunksReversed => "hunks-reversed",
            Kind::Elided => "elided",
            Kind::NumberedLines => "numbered-lines",
        }
    }
}

/// xorshift64*: deterministic variants without a dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Debug, Clone)]
struct Hunk {
    old_start: usize,
    new_start: usize,
    /// Counts to print instead of the recounted ones.
    counts: Option<(usize, usize)>,
    section: String,
    /// Body lines with their prefix (` `, `-`, `+`, `\`).
    lines: Vec<String>,
}

#[derive(Debug, Clone)]
struct FilePart {
    /// Header lines (`diff --git`, `index`, `---`, `+++`, ...).
    header: Vec<String>,
    path: String,
    created: bool,
    hunks: Vec<Hunk>,
}

fn parse(patch: &str) -> Option<Vec<FilePart>> {
    let mut files: Vec<FilePart> = Vec::new();
    for line in patch.lines() {
        if line.starts_with("diff --git ") {
            files.push(FilePart {
                header: vec![line.to_owned()],
                path: String::new(),
                created: false,
                hunks: Vec::new(),
            });
            continue;
        }
        let f = files.last_mut()?;
        if let Some(rest) = line.strip_prefix("@@ -") {
            let (ranges, section) = rest.split_once(" @@")?;
            let (old, new) = ranges.split_once(" +")?;
            let start = |r: &str| r.split(',').next()?.parse::<usize>().ok();
            f.hunks.push(Hunk {
                old_start: start(old)?,
                new_start: start(new)?,
                counts: None,
                section: section.to_owned(),
                lines: Vec::new(),
            });
        } else if let Some(h) = f.hunks.last_mut() {
            h.lines.push(line.to_owned());
        } else {
            if let Some(p) = line.strip_prefix("+++ b/") {
                f.path = p.to_owned();
            }
            if line == "--- /dev/null" {
                f.created = true;
            }
            f.header.push(line.to_owned());
        }
    }
    Some(files)
}

fn render(files: &[FilePart]) -> String {
    let mut out = String::new();
    for f in files {
        for h in &f.header {
            out.push_str(h);
            out.push('\n');
        }
        for h in &f.hunks {
            let old = h.lines.iter().filter(|l| l.starts_with([' ', '-'])).count();
            let new = h.lines.iter().filter(|l| l.starts_with([' ', '+'])).count();
            let (old, new) = h.counts.unwrap_or((old, new));
            out.push_str(&format!(
                "@@ -{},{old} +{},{new} @@{}\n",
                h.old_start, h.new_start, h.section
            ));
            for l in &h.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

/// Like [`render`], but the last hunk keeps the counts of the undamaged patch's last hunk.
fn render_with_counts(files: &[FilePart], patch: &str) -> String {
    let whole = parse(patch).unwrap_or_default();
    let counts = whole.last().and_then(|f| f.hunks.last()).map(|h| {
        let old = h.lines.iter().filter(|l| l.starts_with([' ', '-'])).count();
        let new = h.lines.iter().filter(|l| l.starts_with([' ', '+'])).count();
        (old, new)
    });
    let mut files = files.to_vec();
    if let Some(h) = files.last_mut().and_then(|f| f.hunks.last_mut()) {
        h.counts = counts;
    }
    render(&files)
}

/// Shift every hunk header of every modified file by one random offset.
fn shift_numbers(files: &mut [FilePart], rng: &mut Rng) {
    let d = 1 + rng.below(30) as i64;
    let d = if rng.below(2) == 0 { d } else { -d };
    for f in files.iter_mut().filter(|f| !f.created) {
        for h in &mut f.hunks {
            h.old_start = (h.old_start as i64 + d).max(1) as usize;
            h.new_start = (h.new_start as i64 + d).max(1) as usize;
        }
    }
}

fn indent_of(s: &str) -> usize {
    s.len() - s.trim_start_matches(' ').len()
}

/// The hunks of modified files, as (file, hunk) indexes, that `ok` accepts.
fn eligible(files: &[FilePart], ok: impl Fn(&Hunk) -> bool) -> Vec<(usize, usize)> {
    files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.created)
        .flat_map(|(fi, f)| {
            f.hunks
                .iter()
                .enumerate()
                .filter(|(_, h)| ok(h))
                .map(move |(hi, _)| (fi, hi))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn pick(rng: &mut Rng, v: &[(usize, usize)]) -> Option<(usize, usize)> {
    (!v.is_empty()).then(|| v[rng.below(v.len())])
}

/// Body lines re-indented by `by` columns (spaces), prefix kept.
fn reindent(lines: &mut [String], by: i64) {
    for l in lines.iter_mut() {
        let (p, body) = l.split_at(1.min(l.len()));
        if p == "\\" || body.trim().is_empty() {
            continue;
        }
        let body = if by >= 0 {
            format!("{}{body}", " ".repeat(by as usize))
        } else {
            body[(-by) as usize..].to_owned()
        };
        *l = format!("{p}{body}");
    }
}

fn can_dedent(lines: &[String], by: usize) -> bool {
    lines
        .iter()
        .filter(|l| !l.starts_with('\\') && !l[1.min(l.len())..].trim().is_empty())
        .all(|l| indent_of(&l[1..]) >= by)
}

/// Runs of `-` lines directly followed by `+` lines in a hunk: (first `-`, first `+`, end).
fn replacements(h: &Hunk) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < h.lines.len() {
        if !h.lines[i].starts_with('-') {
            i += 1;
            continue;
        }
        let start = i;
        while i < h.lines.len() && h.lines[i].starts_with('-') {
            i += 1;
        }
        let plus = i;
        while i < h.lines.len() && h.lines[i].starts_with('+') {
            i += 1;
        }
        if i > plus {
            out.push((start, plus, i));
        }
    }
    out
}

/// The damaged answer for `kind`, or `None` when the damage does not fit this patch.
/// `rename` is set when the variant renames files (old path, new path).
pub fn damage(kind: Kind, patch: &str, seed: u64) -> Option<(String, Option<(String, String)>)> {
    let mut files = parse(patch)?;
    if files.is_empty() || files.iter().any(|f| f.path.is_empty() && !f.created) {
        return None;
    }
    let mut rng = Rng::new(seed ^ (kind as u64) << 32);
    let any_text = |l: &str| !l[1.min(l.len())..].trim().is_empty();
    // A non-blank context line, which the damages that move context need.
    let text_context = |l: &String| l.starts_with(' ') && any_text(l);
    match kind {
        Kind::LineNumbers => shift_numbers(&mut files, &mut rng),
        Kind::Counts => {
            shift_numbers(&mut files, &mut rng);
            for f in &mut files {
                for h in &mut f.hunks {
                    let old = h.lines.iter().filter(|l| l.starts_with([' ', '-'])).count();
                    let new = h.lines.iter().filter(|l| l.starts_with([' ', '+'])).count();
                    let wrong =
                        |n: usize, r: &mut Rng| (n + 1 + r.below(3)).saturating_sub(2 * r.below(2));
                    h.counts = Some((wrong(old, &mut rng), wrong(new, &mut rng)));
                }
            }
        }
        Kind::Reindent | Kind::ReindentOneAnchor => {
            let (fi, hi) = pick(
                &mut rng,
                &eligible(&files, |h| h.lines.iter().any(text_context)),
            )?;
            let h = &mut files[fi].hunks[hi];
            if kind == Kind::ReindentOneAnchor {
                // Keep the one non-blank context line nearest the change (and blank ones).
                let first_change = h.lines.iter().position(|l| l.starts_with(['-', '+']))?;
                let last_change = h.lines.iter().rposition(|l| l.starts_with(['-', '+']))?;
                let keep = (0..first_change).rev().find(|&k| any_text(&h.lines[k]));
                let mut lines = Vec::new();
                if let Some(k) = keep {
                    lines.extend(h.lines[k..first_change].iter().cloned());
                    h.old_start += k;
                    h.new_start += k;
                }
                lines.extend(h.lines[first_change..=last_change].iter().cloned());
                // The trailing blank context lines, up to the first non-blank one.
                lines.extend(
                    h.lines[last_change + 1..]
                        .iter()
                        .take_while(|l| !any_text(l))
                        .cloned(),
                );
                keep?;
                h.lines = lines;
            }
            let by = if can_dedent(&h.lines, 4) { -4 } else { 4 };
            reindent(&mut h.lines, by);
            shift_numbers(&mut files, &mut rng);
        }
        Kind::PlusOffByOne | Kind::PlusTabs => {
            let tabs = kind == Kind::PlusTabs;
            let (fi, hi) = pick(
                &mut rng,
                &eligible(&files, |h| {
                    h.lines.iter().any(|l| {
                        l.starts_with('+') && any_text(l) && (!tabs || l.starts_with("+    "))
                    })
                }),
            )?;
            for l in files[fi].hunks[hi].lines.iter_mut() {
                if !l.starts_with('+') || !any_text(l) {
                    continue;
                }
                *l = if tabs {
                    let n = indent_of(&l[1..]);
                    format!(
                        "+{}{}{}",
                        "\t".repeat(n / 4),
                        " ".repeat(n % 4),
                        &l[1 + n..]
                    )
                } else {
                    format!("+ {}", &l[1..])
                };
            }
            shift_numbers(&mut files, &mut rng);
        }
        Kind::InventedContext => {
            let (fi, hi) = pick(
                &mut rng,
                &eligible(&files, |h| {
                    h.lines.first().is_some_and(|l| l.starts_with(' '))
                }),
            )?;
            let h = &mut files[fi].hunks[hi];
            let k = h
                .lines
                .iter()
                .take_while(|l| l.starts_with(' '))
                .position(|l| any_text(l))?;
            let l = &h.lines[k];
            let ind = indent_of(&l[1..]);
            h.lines[k] = format!(
                " {}# see above: {}",
                " ".repeat(ind),
                l[1 + ind..].chars().rev().collect::<String>()
            );
            shift_numbers(&mut files, &mut rng);
        }
        Kind::OneContextLine => {
            for f in files.iter_mut().filter(|f| !f.created) {
                for h in &mut f.hunks {
                    let lead = h.lines.iter().take_while(|l| l.starts_with(' ')).count();
                    let trail = h
                        .lines
                        .iter()
                        .rev()
                        .take_while(|l| l.starts_with(' ') || l.starts_with('\\'))
                        .count();
                    if lead + trail >= h.lines.len() {
                        continue;
                    }
                    let cut_lead = lead.saturating_sub(1);
                    let cut_trail = trail.saturating_sub(1);
                    h.lines.truncate(h.lines.len() - cut_trail);
                    h.lines.drain(..cut_lead);
                    h.old_start += cut_lead;
                    h.new_start += cut_lead;
                }
            }
            shift_numbers(&mut files, &mut rng);
        }
        Kind::ContextOffByOne => {
            let (fi, hi) = pick(
                &mut rng,
                &eligible(&files, |h| h.lines.iter().any(text_context)),
            )?;
            let h = &mut files[fi].hunks[hi];
            let ks: Vec<usize> = (0..h.lines.len())
                .filter(|&k| text_context(&h.lines[k]))
                .collect();
            let k = ks[rng.below(ks.len())];
            h.lines[k] = format!("  {}", &h.lines[k][1..]);
            shift_numbers(&mut files, &mut rng);
        }
        Kind::MinusAsContext | Kind::MinusDropped => {
            let (fi, hi) = pick(&mut rng, &eligible(&files, |h| !replacements(h).is_empty()))?;
            let h = &mut files[fi].hunks[hi];
            let reps = replacements(h);
            let (start, plus, _) = reps[rng.below(reps.len())];
            if kind == Kind::MinusAsContext {
                // The old lines stay, after the new ones would be too obvious: before them.
                for l in &mut h.lines[start..plus] {
                    *l = format!(" {}", &l[1..]);
                }
            } else {
                h.lines.drain(start..plus);
            }
            shift_numbers(&mut files, &mut rng);
        }
        Kind::ReaddedNeighbour => {
            let (fi, hi) = pick(
                &mut rng,
                &eligible(&files, |h| {
                    h.lines
                        .windows(2)
                        .any(|w| w[0].starts_with(' ') && any_text(&w[0]) && w[1].starts_with('+'))
                }),
            )?;
            let h = &mut files[fi].hunks[hi];
            let k = h
                .lines
                .windows(2)
                .position(|w| w[0].starts_with(' ') && any_text(&w[0]) && w[1].starts_with('+'))?;
            let again = format!("+{}", &h.lines[k][1..]);
            h.lines.insert(k + 1, again);
            shift_numbers(&mut files, &mut rng);
        }
        Kind::Crlf => return Some((render(&files).replace('\n', "\r\n"), None)),
        Kind::BlankContextBare => {
            let mut any = false;
            for f in &mut files {
                for h in &mut f.hunks {
                    for l in &mut h.lines {
                        if l.starts_with(' ') && l.trim().is_empty() {
                            l.clear();
                            any = true;
                        }
                    }
                }
            }
            if !any {
                return None;
            }
        }
        Kind::QuotedPath => {
            let f = files
                .iter_mut()
                .find(|f| !f.created && !f.path.contains('"'))?;
            let old = f.path.clone();
            let new = match old.rsplit_once('.') {
                Some((stem, ext)) => format!("{stem}_\u{e9}t\u{e9}.{ext}"),
                None => format!("{old}_\u{e9}t\u{e9}"),
            };
            let octal: String = new
                .bytes()
                .map(|b| {
                    if b.is_ascii() {
                        (b as char).to_string()
                    } else {
                        format!("\\{b:03o}")
                    }
                })
                .collect();
            for l in &mut f.header {
                *l = l
                    .replace(&format!("a/{old}"), &format!("\"a/{octal}\""))
                    .replace(&format!("b/{old}"), &format!("\"b/{octal}\""));
            }
            return Some((render(&files), Some((old, new))));
        }
        Kind::Truncated | Kind::TruncatedFence => {
            let f = files.last_mut()?;
            let h = f.hunks.last()?;
            // Cut after a `+` line that still has lines of its hunk after it.
            let cuts: Vec<usize> = (0..h.lines.len().saturating_sub(1))
                .filter(|&k| {
                    h.lines[k].starts_with('+') && h.lines[k + 1..].iter().any(text_context)
                })
                .collect();
            if cuts.is_empty() || f.created {
                return None;
            }
            let cut = cuts[rng.below(cuts.len())];
            let h = f.hunks.last_mut()?;
            h.lines.truncate(cut + 1);
            shift_numbers(&mut files, &mut rng);
            // The counts the model wrote before it was cut off: the whole hunk's.
            let text = render_with_counts(&files, patch);
            if kind == Kind::TruncatedFence {
                return Some((format!("```diff\n{text}"), None));
            }
            return Some((text, None));
        }
        Kind::TruncatedBetweenChanges => {
            let f = files.last_mut()?;
            let h = f.hunks.last_mut()?;
            let changed = |l: &String| l.starts_with(['-', '+']);
            let first = h.lines.iter().position(changed)?;
            let last = h.lines.iter().rposition(changed)?;
            let cuts: Vec<usize> = (first..last)
                .filter(|&k| h.lines[k].starts_with(' ') && changed(&h.lines[k - 1]))
                .collect();
            if cuts.is_empty() || f.created {
                return None;
            }
            let cut = cuts[rng.below(cuts.len())];
            h.lines.truncate(cut + 1);
            shift_numbers(&mut files, &mut rng);
            // The counts the model wrote before it was cut off: the whole hunk's.
            let text = render_with_counts(&files, patch);
            return Some((format!("<patch>\n{text}"), None));
        }
        Kind::Elided => {
            let runs = |h: &Hunk| {
                h.lines
                    .windows(3)
                    .position(|w| w.iter().all(|l| l.starts_with('+') && any_text(l)))
            };
            let (fi, hi) = pick(&mut rng, &eligible(&files, |h| runs(h).is_some()))?;
            let marker = if files[fi].path.ends_with(".py") {
                "#"
            } else {
                "//"
            };
            let h = &mut files[fi].hunks[hi];
            let at = runs(h)?;
            let end = at
                + h.lines[at..]
                    .iter()
                    .take_while(|l| l.starts_with('+'))
                    .count();
            let ind = " ".repeat(indent_of(&h.lines[at][1..]));
            h.lines.splice(
                at + 1..end,
                [format!("+{ind}{marker} ... existing code ...")],
            );
            shift_numbers(&mut files, &mut rng);
        }
        Kind::NumberedLines => {
            for f in files.iter_mut().filter(|f| !f.created) {
                for h in &mut f.hunks {
                    let (mut old, mut new) = (h.old_start, h.new_start);
                    for l in &mut h.lines {
                        let (p, body) = l.split_at(1.min(l.len()));
                        let n = if p == "+" { new } else { old };
                        match p {
                            " " => {
                                old += 1;
                                new += 1;
                            }
                            "-" => old += 1,
                            "+" => new += 1,
                            _ => continue,
                        }
                        *l = format!("{p}{n}| {body}");
                    }
                }
            }
        }
        Kind::HunksReversed => {
            let f = files.iter_mut().find(|f| f.hunks.len() > 1)?;
            f.hunks.reverse();
        }
    }
    Some((render(&files), None))
}

/// Per kind: variants, applied as intended (byte for byte, or with only whitespace that
/// Python ignores), applied otherwise (harmful), rejected by rule.
#[derive(Default)]
pub struct Tally {
    pub variants: usize,
    pub intended: usize,
    /// Of `intended`: Python files that differ only where CPython's AST does not look.
    pub equivalent: usize,
    pub harmful: Vec<i64>,
    pub rejected: BTreeMap<String, usize>,
}

/// An acceptance whose result is not byte-identical to the intended one.
struct Different {
    kind: Kind,
    id: i64,
    /// (intended, got) per differing file, `None` when a file is not Python (or is missing
    /// on one side): then only bytes count.
    pairs: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    raw: String,
    diff: String,
}

/// One gold record: its id, its patch, the files before it and the intended files after it.
pub type Gold = (i64, String, MemoryFiles, BTreeMap<String, Vec<u8>>);

/// Replay every damaged variant of the gold records.
pub fn run(
    gold: &[Gold],
    policy: &PatchPolicy,
    dump: Option<&std::path::Path>,
) -> BTreeMap<Kind, Tally> {
    let mut tallies: BTreeMap<Kind, Tally> = BTreeMap::new();
    let mut different: Vec<Different> = Vec::new();
    for (id, patch, files, intended) in gold {
        for kind in KINDS {
            let Some((raw, rename)) = damage(kind, patch, *id as u64) else {
                continue;
            };
            let (files, intended) = match &rename {
                Some((old, new)) => {
                    let move_key = |m: &BTreeMap<String, Vec<u8>>| {
                        let mut m = m.clone();
                        if let Some(v) = m.remove(old) {
                            m.insert(new.clone(), v);
                        }
                        m
                    };
                    (MemoryFiles(move_key(&files.0)), move_key(intended))
                }
                None => (files.clone(), intended.clone()),
            };
            let t = tallies.entry(kind).or_default();
            t.variants += 1;
            let report = evaluate(&files, &raw, policy).expect("memory files never fail");
            let name = format!("{}-{id}", kind.name());
            if report.outcome != PatchOutcome::Applied {
                let rule = report
                    .issues
                    .first()
                    .map_or("?".to_owned(), |i| i.rule.clone());
                if let Some(dir) = dump {
                    let why = report.issues.first().map_or("", |i| i.message.as_str());
                    let _ = std::fs::write(
                        dir.join(format!("{name}.refused.diff")),
                        format!("{why}\n\n{raw}"),
                    );
                }
                *t.rejected.entry(rule).or_default() += 1;
                continue;
            }
            let mut after = files.0.clone();
            for c in &report.changes {
                match &c.after {
                    Some(a) => after.insert(c.path.clone(), a.clone()),
                    None => after.remove(&c.path),
                };
            }
            if after == intended {
                t.intended += 1;
                continue;
            }
            let mut paths: Vec<&String> = after.keys().chain(intended.keys()).collect();
            paths.sort_unstable();
            paths.dedup();
            let pairs = paths
                .into_iter()
                .filter(|p| after.get(*p) != intended.get(*p))
                .map(|p| match (intended.get(p), after.get(p)) {
                    (Some(w), Some(g)) if p.ends_with(".py") => Some((w.clone(), g.clone())),
                    _ => None,
                })
                .collect();
            different.push(Different {
                kind,
                id: *id,
                pairs,
                raw,
                diff: report.diff,
            });
        }
    }
    let all_pairs: Vec<&(Vec<u8>, Vec<u8>)> = different
        .iter()
        .flat_map(|d| d.pairs.iter().flatten())
        .collect();
    let same_ast = same_python_ast(&all_pairs);
    let mut k = 0;
    for d in different {
        let t = tallies.entry(d.kind).or_default();
        let n = d.pairs.as_ref().map_or(0, Vec::len);
        let equivalent = d.pairs.is_some()
            && same_ast
                .as_ref()
                .is_some_and(|v| v[k..k + n].iter().all(|&same| same));
        k += n;
        if equivalent {
            t.intended += 1;
            t.equivalent += 1;
            continue;
        }
        t.harmful.push(d.id);
        if let Some(dir) = dump {
            let name = format!("{}-{}", d.kind.name(), d.id);
            let _ = std::fs::write(dir.join(format!("{name}.diff")), &d.raw);
            let _ = std::fs::write(dir.join(format!("{name}.got.diff")), &d.diff);
        }
    }
    tallies
}

/// Whether each pair of Python sources has the same AST (`ast.dump`, which leaves out
/// positions and comments), asked of one python3 process; `None` without python3.
fn same_python_ast(pairs: &[&(Vec<u8>, Vec<u8>)]) -> Option<Vec<bool>> {
    let dir = tempfile::tempdir().ok()?;
    for (i, (a, b)) in pairs.iter().enumerate() {
        std::fs::write(dir.path().join(format!("{i}.a")), a).ok()?;
        std::fs::write(dir.path().join(format!("{i}.b")), b).ok()?;
    }
    let script = "import ast, sys, warnings\n\
                  warnings.simplefilter('ignore')\n\
                  def tree(p):\n\
                  \x20   try:\n\
                  \x20       return ast.dump(ast.parse(open(p, 'rb').read()))\n\
                  \x20   except (SyntaxError, ValueError):\n\
                  \x20       return None\n\
                  for i in range(int(sys.argv[2])):\n\
                  \x20   a, b = (tree(f'{sys.argv[1]}/{i}.{s}') for s in 'ab')\n\
                  \x20   print(int(a is not None and a == b))\n";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.path())
        .arg(pairs.len().to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let v: Vec<bool> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim() == "1")
        .collect();
    (v.len() == pairs.len()).then_some(v)
}
