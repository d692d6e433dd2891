//! Applying parsed hunks to one file's text: strict first, then a bounded ladder of tolerances
//! per hunk (see [`Level`]), with the guards that keep fuzzy application honest: `-` lines are
//! never fuzzed (a hunk quoted at another depth may be shifted as a whole, its context showing
//! the shift), a hunk that matches in two places at its best level is rejected, hunks land
//! in order without overlapping, a change must stay anchored, an added block must not repeat
//! the lines next to it, and every `+` line must be in the result.
//!
//! It works on strings only; it does not read files, check paths or run syntax checks.

use crate::patch::model::{HunkReport, Level};
use crate::patch::parse::{Hunk, HunkLine, Kind};
use crate::patch::text::{Line, Lines, OutLine, indent_len, ws_runs_eq};
use crate::policy::Issue;

mod diagnose;
mod duplicates;

use diagnose::diagnose;
use duplicates::{duplicated_block, near_repeat};

/// How many candidate places an error message lists.
const MAX_LISTED: usize = 5;
/// Context lines the last ladder level may drop at a hunk's edges, in total.
const MAX_DROPPED_CONTEXT: usize = 2;
/// A hunk shifted to another depth and anchored by a single matched line needs that line
/// (trimmed) this long.
const MIN_LONE_ANCHOR_LEN: usize = 20;

/// The result of applying every hunk of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    pub text: String,
    pub hunks: Vec<HunkReport>,
}

/// Why a file's hunks could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub issue: Issue,
    /// The hunk is already in the file (reported, never reversed).
    pub already_applied: bool,
}

/// One way of comparing a hunk's old side with the file.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    level: Level,
    ws: Ws,
    indent: bool,
    skip_blank: bool,
    trim: (usize, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ws {
    Exact,
    Trailing,
    Runs,
}

fn ws_eq(ws: Ws, a: &str, b: &str) -> bool {
    match ws {
        Ws::Exact => a == b,
        Ws::Trailing => a.trim_end() == b.trim_end(),
        // Indentation must still agree: a shifted hunk is the `Indentation` level's job,
        // because its added lines must be shifted too.
        // Indentation must still agree: added lines keep the model's indentation, so
        // context that disagrees with the file on it would put them at the wrong depth.
        Ws::Runs => a.trim_end() == b.trim_end() || (leading(a) == leading(b) && ws_runs_eq(a, b)),
    }
}

fn leading(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// Where a hunk's old lines landed: the file span and, per old line, its file line.
#[derive(Debug, Clone)]
struct Landing {
    start: usize,
    end: usize,
    map: Vec<Option<usize>>,
    shift: i64,
    indent_char: char,
}

fn attempts() -> Vec<Attempt> {
    let base = |level, ws| Attempt {
        level,
        ws,
        indent: false,
        skip_blank: false,
        trim: (0, 0),
    };
    let mut v = vec![
        base(Level::Exact, Ws::Exact),
        base(Level::Offset, Ws::Exact),
        base(Level::TrailingWhitespace, Ws::Trailing),
        Attempt {
            indent: true,
            ..base(Level::Indentation, Ws::Runs)
        },
        base(Level::WhitespaceRuns, Ws::Runs),
        Attempt {
            skip_blank: true,
            ..base(Level::BlankLines, Ws::Runs)
        },
    ];
    for trim in [(1, 0), (0, 1), (1, 1), (2, 0), (0, 2)] {
        debug_assert!(trim.0 + trim.1 <= MAX_DROPPED_CONTEXT);
        v.push(Attempt {
            skip_blank: true,
            trim,
            ..base(Level::TrimmedContext, Ws::Runs)
        });
    }
    v
}

/// Apply `hunks` to `before` (the file `path`); all hunks or nothing.
pub(crate) fn apply_hunks(path: &str, before: &str, hunks: &[Hunk]) -> Result<Applied, Failure> {
    let file = Lines::split(before);
    let mut out: Vec<OutLine> = Vec::new();
    let mut reports = Vec::new();
    let mut cursor = 0usize;
    let mut markers = false;
    let mut prev_hunk_line: Option<u64> = None;
    for (h, hunk) in hunks.iter().enumerate() {
        let n = h + 1;
        markers |= hunk.lines.iter().any(|l| l.no_eol);
        let (landing, trimmed, attempt) = land(path, &file, hunk, n, cursor, prev_hunk_line)?;
        for k in cursor..landing.start {
            out.push(OutLine::kept(&file.lines[k], k));
        }
        let emitted = out.len();
        emit(&file, &trimmed, &landing, &mut out);
        // A hunk at exactly the place its header names is pinned twice over; anywhere else
        // (its line numbers were wrong, or it has no context at all) is where re-added
        // neighbours come from.
        let bare = landing.map.is_empty() && !file.lines.is_empty();
        let inexact = attempt.level > Level::Exact || bare;
        for l in &mut out[emitted..] {
            l.inexact = inexact;
        }
        cursor = landing.end;
        let line = (landing.start + 1) as u64;
        prev_hunk_line = Some(line);
        reports.push(HunkReport {
            index: n,
            level: attempt.level,
            header_line: Some(hunk.old_start as u64),
            line,
            dropped_context: attempt.trim.0 + attempt.trim.1,
            indent_shift: landing.shift,
        });
    }
    for k in cursor..file.lines.len() {
        out.push(OutLine::kept(&file.lines[k], k));
    }
    if let Some(issue) = duplicated_block(path, &out).or_else(|| near_repeat(path, &out)) {
        return Err(Failure {
            issue,
            already_applied: false,
        });
    }
    let text = Lines::join(&out, file.default_eol, file.ends_without_eol() && !markers);
    if let Some(issue) = lost_added_line(path, before, &text, hunks) {
        return Err(Failure {
            issue,
            already_applied: false,
        });
    }
    Ok(Applied {
        text,
        hunks: reports,
    })
}

/// Find where one hunk lands, climbing the ladder; returns the landing, the hunk lines that
/// remain after trimming, and the attempt that succeeded.
fn land(
    path: &str,
    file: &Lines,
    hunk: &Hunk,
    n: usize,
    cursor: usize,
    prev_line: Option<u64>,
) -> Result<(Landing, Vec<HunkLine>, Attempt), Failure> {
    let fail = |issue: Issue| Failure {
        issue: issue.at_path(path),
        already_applied: false,
    };
    let old_len = hunk.lines.iter().filter(|l| l.kind != Kind::Add).count();
    if old_len == 0 {
        // A pure insertion: only the header says where.
        let at = if file.lines.is_empty() {
            0
        } else {
            hunk.old_start
        };
        if at < cursor || at > file.lines.len() {
            return Err(fail(Issue::new(
                "apply.no-match",
                format!(
                    "hunk {n} of {path} inserts at line {at} but the file has {} lines; give \
                     context lines so the insertion point can be found",
                    file.lines.len()
                ),
            )));
        }
        let attempt = attempts()[0];
        let landing = Landing {
            start: at,
            end: at,
            map: Vec::new(),
            shift: 0,
            indent_char: ' ',
        };
        return Ok((landing, hunk.lines.clone(), attempt));
    }
    let hint = hunk.old_start.saturating_sub(1);
    let mut starts = Starts::default();
    // The first landing refused for resting on one short or common line, to explain a
    // failure with.
    let mut weak: Option<(usize, String)> = None;
    // A hunk that ends in a change, with no context after it, ends the file (git's rule, and
    // the exact level's). Models also leave out trailing context elsewhere, and over-declare
    // counts, so only the last hunk of a bare diff (no closing tag or fence vouches for its
    // end) with fewer lines than its header declares is held to it: that is what an answer
    // cut off inside its last hunk looks like.
    let cut_short = hunk.may_be_cut
        && hunk.shorter_than_declared()
        && hunk.lines.last().is_some_and(|l| l.kind != Kind::Context);
    for attempt in attempts() {
        let Some(lines) = trimmed(&hunk.lines, attempt.trim) else {
            continue;
        };
        let old = old_side(&lines);
        let mut found: Vec<Landing> = Vec::new();
        if attempt.level == Level::Exact {
            let anchored_start = hunk.old_start <= 1;
            let trailing = lines
                .iter()
                .rev()
                .take_while(|l| l.kind == Kind::Context)
                .count();
            if hint >= cursor
                && (!anchored_start || hint == 0)
                && let Some(l) = match_at(file, hint, &old, attempt)
                && (trailing > 0 || l.end == file.lines.len())
            {
                found.push(l);
            }
        } else {
            for &p in starts.get(file, &old, attempt.skip_blank, cursor) {
                if let Some(l) = match_at(file, p, &old, attempt)
                    && anchored(&hunk.lines, &lines, &l, attempt)
                {
                    found.push(l);
                }
            }
        }
        // With blank lines skippable, one place can be found from several starting blank
        // lines; it is the same place when the first non-blank matched line is the same.
        // Landings that matched only blank lines are told apart by where they start: every
        // run of blank lines would otherwise count as the same place.
        found.sort_by_key(|l| std::cmp::Reverse(l.map.iter().flatten().count()));
        let mut seen = std::collections::HashSet::new();
        found.retain(|l| seen.insert(first_nonblank_match(file, l).ok_or(l.start)));
        if found.len() > 1 {
            found.sort_by_key(|l| l.start.abs_diff(hint));
            let places: Vec<String> = found
                .iter()
                .take(MAX_LISTED)
                .map(|l| (l.start + 1).to_string())
                .collect();
            return Err(fail(
                Issue::new(
                    "apply.ambiguous",
                    format!(
                        "hunk {n} of {path} matches at lines {} (level {}); add context lines \
                         that occur only at the intended place",
                        places.join(", "),
                        attempt.level.name()
                    ),
                )
                .at_line((found[0].start + 1) as u64),
            ));
        }
        if let Some(l) = found.pop() {
            if attempt.level > Level::Exact
                && let Some(anchor) = weak_anchor(file, &old, &l.map, attempt)
            {
                weak.get_or_insert((l.start, anchor.to_owned()));
                continue;
            }
            if cut_short && l.end != file.lines.len() {
                return Err(fail(
                    Issue::new(
                        "contract.truncated",
                        format!(
                            "hunk {n} of {path}, the answer's last, stops after changed lines \
                             with fewer lines than its header declares and lands at line {} \
                             of {}, not at the end of the file: the answer looks cut off; \
                             send it whole, with the context lines after the change",
                            l.start + 1,
                            file.lines.len()
                        ),
                    )
                    .at_line((l.start + 1) as u64),
                ));
            }
            return Ok((l, lines, attempt));
        }
    }
    let diagnosed = diagnose(path, file, hunk, n, cursor, prev_line);
    if let Some((at, anchor)) = weak.filter(|_| !diagnosed.already_applied) {
        let what = if anchor.is_empty() {
            "only blank lines".to_owned()
        } else {
            format!("only the line {anchor:?}, which is short or occurs elsewhere too")
        };
        return Err(fail(
            Issue::new(
                "apply.weak-anchor",
                format!(
                    "hunk {n} of {path} matches near line {} by {what}, not where its header \
                     says; quote more of the lines around the change, exactly as the numbered \
                     file has them",
                    at + 1
                ),
            )
            .at_line((at + 1) as u64),
        ));
    }
    Err(diagnosed)
}

fn first_nonblank_match(file: &Lines, l: &Landing) -> Option<usize> {
    l.map
        .iter()
        .flatten()
        .copied()
        .find(|&i| !file.lines[i].text.trim().is_empty())
}

/// The hunk's lines with `lead`/`tail` context lines dropped, when it has that many.
fn trimmed(lines: &[HunkLine], (lead, tail): (usize, usize)) -> Option<Vec<HunkLine>> {
    let leading = lines.iter().take_while(|l| l.kind == Kind::Context).count();
    let trailing = lines
        .iter()
        .rev()
        .take_while(|l| l.kind == Kind::Context)
        .count();
    if leading < lead || trailing < tail || leading == lines.len() {
        return None;
    }
    Some(lines[lead..lines.len() - tail].to_vec())
}

/// A fuzzy landing must keep a matched non-blank context line on every side where the hunk
/// had context; measured on real output, unanchored changes land in the wrong place.
///
/// One exception: when trimming removed every context line on one side, that side may be
/// pinned by the change itself if its edge line is a matched non-blank `-` line (never
/// fuzzed, so it is as strong as context), provided the other side keeps a context anchor.
/// Models often get the last context line after a replacement wrong; bare insertions gain
/// nothing from this.
fn anchored(original: &[HunkLine], lines: &[HunkLine], l: &Landing, attempt: Attempt) -> bool {
    if attempt.level <= Level::Offset {
        return true;
    }
    let is_ctx = |h: &&HunkLine| h.kind == Kind::Context;
    let had_lead = original.first().is_some_and(|h| h.kind == Kind::Context);
    let had_trail = original.last().is_some_and(|h| h.kind == Kind::Context);
    let old: Vec<&HunkLine> = lines.iter().filter(|h| h.kind != Kind::Add).collect();
    let lead = lines.iter().take_while(is_ctx).count();
    let trail = lines.iter().rev().take_while(is_ctx).count().min(old.len());
    let matched =
        |i: usize| !old[i].text.trim().is_empty() && l.map.get(i).copied().flatten().is_some();
    let ok = |range: std::ops::Range<usize>| range.into_iter().any(matched);
    let removed_edge = |i: Option<usize>| {
        i.and_then(|i| old.get(i).map(|h| (i, h)))
            .is_some_and(|(i, h)| h.kind == Kind::Remove && matched(i))
    };
    let lead_ctx = ok(0..lead);
    let trail_ctx = ok(old.len() - trail..old.len());
    let lead_ok = !had_lead || lead_ctx || (lead == 0 && trail_ctx && removed_edge(Some(0)));
    let trail_ok = !had_trail
        || trail_ctx
        || (trail == 0 && lead_ctx && removed_edge(old.len().checked_sub(1)));
    lead_ok && trail_ok
}

/// Try to match the old side of `lines` at file line `p`.
fn match_at(file: &Lines, p: usize, old: &[&HunkLine], a: Attempt) -> Option<Landing> {
    if !could_start(file, p, old, a) {
        return None;
    }
    let mut map = Vec::with_capacity(old.len());
    let mut shift: Option<i64> = None;
    let mut indent_char = ' ';
    let mut f = p;
    let mut i = 0;
    while i < old.len() {
        let h = old[i];
        let blank_h = h.text.trim().is_empty();
        let Some(fl) = file.lines.get(f) else {
            if a.skip_blank && h.kind == Kind::Context && blank_h {
                map.push(None);
                i += 1;
                continue;
            }
            return None;
        };
        if line_eq(h, fl, a, &mut shift, &mut indent_char) {
            map.push(Some(f));
            f += 1;
            i += 1;
            continue;
        }
        if !a.skip_blank || (map.is_empty() && !blank_h) {
            return None;
        }
        if h.kind == Kind::Context && blank_h {
            map.push(None);
            i += 1;
        } else if fl.text.trim().is_empty() && !map.is_empty() {
            f += 1;
        } else {
            return None;
        }
    }
    // A landing must start at a matched line so the same place is not found twice.
    if map.iter().flatten().next() != Some(&p) {
        return None;
    }
    let end = map.iter().flatten().last().map_or(p, |&e| e + 1);
    // A shift is the whole hunk's: its context must show it, not its `-` lines alone.
    let witnessed = || {
        old.iter()
            .any(|h| h.kind == Kind::Context && !h.text.trim().is_empty())
    };
    if a.indent && (shift.unwrap_or(0) == 0 || !witnessed()) {
        return None;
    }
    Some(Landing {
        start: p,
        end,
        map,
        shift: shift.unwrap_or(0),
        indent_char,
    })
}

/// A landing away from where the header says rests on what matched: at least two non-blank
/// context or `-` lines, or one that occurs once in the file whatever its indentation (a
/// lone `"""` or `return self` that occurs elsewhere at another depth says little about
/// where the model meant its lines to go). At the indentation level, where the depth itself
/// is inferred from the match, that one line must also be long. `None` when the landing is
/// firm, else the lone anchor's text (empty when only blank lines matched).
fn weak_anchor<'h>(
    file: &Lines,
    old: &[&'h HunkLine],
    map: &[Option<usize>],
    attempt: Attempt,
) -> Option<&'h str> {
    let mut matched = old
        .iter()
        .zip(map)
        .filter(|(h, m)| m.is_some() && !h.text.trim().is_empty())
        .map(|(h, _)| *h);
    match (matched.next(), matched.next()) {
        (Some(_), Some(_)) => None,
        (Some(h), None) => {
            let line = h.text.trim();
            let unique = file.lines.iter().filter(|l| l.text.trim() == line).count() == 1;
            let long = line.chars().count() >= MIN_LONE_ANCHOR_LEN;
            (!(unique && (long || !attempt.indent))).then_some(line)
        }
        _ => Some(""),
    }
}

/// The file lines where a hunk's old side could start, per first line to match: every
/// attempt would otherwise compare that line with every file line again.
#[derive(Default)]
struct Starts {
    known: Vec<(StartKey, Vec<usize>)>,
}

/// The first old-side line to match (`None` when all are blank) and whether the old side
/// begins with a blank line (then any blank file line can start it).
type StartKey = (Option<String>, bool);

impl Starts {
    /// Positions from `cursor` on that pass [`could_start`]'s test for `old`.
    fn get(
        &mut self,
        file: &Lines,
        old: &[&HunkLine],
        skip_blank: bool,
        cursor: usize,
    ) -> &[usize] {
        let first_blank = old.first().is_some_and(|h| h.text.trim().is_empty());
        let target = if skip_blank {
            old.iter().find(|h| !h.text.trim().is_empty())
        } else {
            old.first()
        };
        let key = (target.map(|h| h.text.clone()), first_blank);
        let k = match self.known.iter().position(|(k, _)| *k == key) {
            Some(k) => k,
            None => {
                // Equal first characters are necessary for equal words: a cheap pre-test.
                let first = target.and_then(|h| h.text.trim_start().chars().next());
                let positions = (0..file.lines.len())
                    .filter(|&p| {
                        let fl = &file.lines[p];
                        (first_blank && fl.text.trim().is_empty())
                            || target.is_some_and(|h| {
                                fl.text.trim_start().chars().next() == first
                                    && ws_runs_eq(&h.text, fl.text)
                            })
                    })
                    .collect();
                self.known.push((key, positions));
                self.known.len() - 1
            }
        };
        let all = &self.known[k].1;
        &all[all.partition_point(|&p| p < cursor)..]
    }
}

/// A cheap necessary condition for a landing at `p`, so most positions cost one comparison.
fn could_start(file: &Lines, p: usize, old: &[&HunkLine], a: Attempt) -> bool {
    let Some(fl) = file.lines.get(p) else {
        return false;
    };
    let first_blank = old.first().is_some_and(|h| h.text.trim().is_empty());
    if first_blank && fl.text.trim().is_empty() {
        return true;
    }
    let target = if a.skip_blank {
        old.iter().find(|h| !h.text.trim().is_empty())
    } else {
        old.first()
    };
    target.is_some_and(|h| ws_runs_eq(&h.text, fl.text))
}

/// The old side (context and `-` lines) of hunk lines.
fn old_side(lines: &[HunkLine]) -> Vec<&HunkLine> {
    lines.iter().filter(|l| l.kind != Kind::Add).collect()
}

fn line_eq(h: &HunkLine, fl: &Line, a: Attempt, shift: &mut Option<i64>, ch: &mut char) -> bool {
    let removed = h.kind == Kind::Remove;
    if removed && (!a.indent || h.text.trim().is_empty()) {
        // Never fuzz a removed line: only the whole hunk's uniform shift applies to it.
        return h.text == fl.text;
    }
    if !a.indent {
        return ws_eq(a.ws, &h.text, fl.text);
    }
    let (ht, ft) = if removed {
        (h.text.trim_start(), fl.text.trim_start())
    } else {
        (h.text.trim(), fl.text.trim())
    };
    if ht.is_empty() || ft.is_empty() {
        return ht.is_empty() && ft.is_empty();
    }
    let same = if removed {
        ht == ft
    } else {
        ws_eq(a.ws, ht, ft)
    };
    if !same {
        return false;
    }
    let d = indent_len(fl.text) as i64 - indent_len(&h.text) as i64;
    match *shift {
        None => {
            *shift = Some(d);
            *ch = fl
                .text
                .chars()
                .next()
                .filter(|c| c.is_whitespace())
                .unwrap_or(' ');
            true
        }
        Some(s) => s == d,
    }
}

/// Emit the replacement for `landing`'s span.
fn emit<'a>(file: &Lines<'a>, lines: &[HunkLine], landing: &Landing, out: &mut Vec<OutLine<'a>>) {
    let mut f = landing.start;
    let mut old_i = 0;
    // Whether each run of changed lines (between context lines) removes anything.
    let mut replaces = Vec::with_capacity(lines.len());
    for run in lines.chunk_by(|a, b| (a.kind == Kind::Context) == (b.kind == Kind::Context)) {
        let removes = run.iter().any(|h| h.kind == Kind::Remove);
        replaces.extend(std::iter::repeat_n(removes, run.len()));
    }
    for (h, &replaces) in lines.iter().zip(&replaces) {
        match h.kind {
            Kind::Add => {
                let text = shifted(&h.text, landing.shift, landing.indent_char);
                out.push(OutLine::added(text, h.no_eol, replaces));
            }
            Kind::Context | Kind::Remove => {
                let target = landing.map.get(old_i).copied().flatten();
                old_i += 1;
                let Some(t) = target else { continue };
                while f < t {
                    out.push(OutLine::kept(&file.lines[f], f));
                    f += 1;
                }
                if h.kind == Kind::Context {
                    let mut kept = OutLine::kept(&file.lines[t], t);
                    if h.no_eol {
                        kept.eol = Some("");
                    }
                    out.push(kept);
                }
                f = t + 1;
            }
        }
    }
    while f < landing.end {
        out.push(OutLine::kept(&file.lines[f], f));
        f += 1;
    }
}

fn shifted(text: &str, shift: i64, ch: char) -> String {
    if shift == 0 || text.trim().is_empty() {
        return text.to_owned();
    }
    if shift > 0 {
        let pad: String = std::iter::repeat_n(ch, shift as usize).collect();
        return format!("{pad}{text}");
    }
    let drop = (-shift) as usize;
    let lead = indent_len(text);
    text.chars().skip(drop.min(lead)).collect()
}

/// Every non-blank `+` line must be in the result as often as the patch says.
fn lost_added_line(path: &str, before: &str, after: &str, hunks: &[Hunk]) -> Option<Issue> {
    use std::collections::HashMap;
    // Common leading and trailing lines count the same on both sides, so only the middles
    // need counting: after = before - removed + added holds for them too.
    let (_, before, after) = crate::patch::text::middles(before, after);
    let mut want: HashMap<&str, i64> = HashMap::new();
    for l in before.lines() {
        *want.entry(l.trim()).or_default() += 1;
    }
    for h in hunks.iter().flat_map(|h| &h.lines) {
        match h.kind {
            Kind::Add => *want.entry(h.text.trim()).or_default() += 1,
            Kind::Remove => *want.entry(h.text.trim()).or_default() -= 1,
            Kind::Context => {}
        }
    }
    let mut have: HashMap<&str, i64> = HashMap::new();
    for l in after.lines() {
        *have.entry(l.trim()).or_default() += 1;
    }
    for h in hunks.iter().flat_map(|h| &h.lines) {
        let t = h.text.trim();
        if h.kind == Kind::Add && !t.is_empty() && have.get(t).copied().unwrap_or(0) < want[t] {
            return Some(
                Issue::new(
                    "apply.lost-added-line",
                    format!(
                        "{path}: the added line {t:?} is missing from the result; resend the hunk"
                    ),
                )
                .at_path(path),
            );
        }
    }
    None
}
