//! Rounds of several candidates (`--candidates K`, K > 1): K independent answers, each applied
//! in its own scratch copy of the base commit (never the user's tree) and taken through the
//! same round as a single fix there (policy checks, Prevent, Prove, canaries, channels), J at
//! a time. The winner is decided by proof alone: among the fully proven candidates (a proof
//! that would give `fixed`, not a weakened status), the smallest change (lines, then files,
//! then the earliest answer). It is then applied to the working tree and proven there once
//! more as a single fix is, before anything is claimed. When none is proven, the round's
//! issues name each candidate's refusal, so the next round's prompt learns from all of them.
//!
//! The answers are asked one after the other in the working tree as a single answer is (an
//! agent that edits files is restored after each call, under the journal); only the proofs
//! run side by side. A K round does not give an answer that breaks the contract a second
//! chance: the other candidates are its retries.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use crate::engine::{Engine, FixResponse};
use crate::evidence::{
    Attempt, CandidateRecord, CandidateVerdict, Explanation, PatchRecord, Round, RoundVerdict,
};
use crate::git::Repo;
use crate::patch::{self, Mode, PatchOutcome};
use crate::policy::Issue;
use crate::report::Reporter;

use super::PipelineError;
use super::answer::answer;
use super::call::Failure;
use super::checkpoint::Stage;
use super::checks::check;
use super::ctx::Ctx;
use super::fix::{self, Source};
use super::scratch::Scratch;
use super::shared::SharedRuns;

/// How often the proving threads' supervisor looks at the run's cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// One answer of the round.
struct Answered {
    /// 1-based position among the round's answers.
    number: u32,
    call_index: usize,
    response: FixResponse,
}

/// A candidate's round in its scratch copy, and the commands it ran there.
struct Proof {
    round: Round,
    commands: Vec<crate::evidence::CommandRecord>,
    /// Whether its proof was cut short (budget, interrupt, or another candidate won first).
    stopped: bool,
    /// Order in which fully proven candidates finished (for `--first-proven`).
    finished: usize,
    /// The smaller candidate whose full proof made this one's pointless (it could no longer
    /// win), when that stopped or skipped its proof.
    outranked_by: Option<u32>,
}

/// Run one round of `ctx.config.candidates.count` candidates.
pub(crate) fn round(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: &mut usize,
) -> Result<Round, PipelineError> {
    let (answered, early) = ask(ctx, engine, number, call_index)?;
    if answered.is_empty() {
        let mut round = fix::new_round(number);
        (round.verdict, round.issues) = ended_without_answers(&early);
        round.candidates = early;
        return Ok(round);
    }
    let planned: Vec<Planned> = answered.iter().map(|a| plan(ctx, a)).collect();
    let proofs = prove_all(ctx, number, &answered, &planned)?;
    let mut records: Vec<(CandidateRecord, usize)> =
        early.into_iter().map(|r| (r, usize::MAX)).collect();
    records.extend(
        answered
            .iter()
            .zip(&planned)
            .zip(proofs)
            .map(|((answer, planned), proof)| record(number, answer, planned, proof)),
    );
    records.sort_by_key(|(r, _)| r.number);
    let first_proven = ctx.config.candidates.first_proven;
    let winner = choose(&records, first_proven);
    let mut records: Vec<CandidateRecord> = records.into_iter().map(|(r, _)| r).collect();
    let Some(winner) = winner else {
        return Ok(refused_round(ctx, number, records));
    };
    let loser_reason = |r: &CandidateRecord, w: &CandidateRecord| -> String {
        if first_proven {
            format!("candidate {} was proven first", w.number)
        } else if (r.lines, r.files) == (w.lines, w.files) {
            format!(
                "as small as candidate {} ({}), which was answered first",
                w.number,
                size(w.lines, w.files)
            )
        } else {
            format!(
                "larger than candidate {} ({} against {})",
                w.number,
                size(r.lines, r.files),
                size(w.lines, w.files)
            )
        }
    };
    let winning = records[winner].clone();
    for (i, r) in records.iter_mut().enumerate() {
        if i == winner {
            r.verdict = CandidateVerdict::Won;
        } else if r.verdict == CandidateVerdict::Proven {
            r.lost = loser_reason(r, &winning);
        }
    }
    ctx.reporter.info(&format!(
        "candidate {} of {} won ({} lines); proving it in the working tree",
        winning.number,
        records.len(),
        winning.lines
    ));
    let Some(chosen) = answered.iter().find(|a| a.number == winning.number) else {
        return Ok(refused_round(ctx, number, records));
    };
    // The winner's own answer index, so its attempt reads as the answer it was.
    let mut index = chosen.call_index;
    let mut round = fix::run_round(
        ctx,
        Source::Given(Some(chosen.response.clone())),
        number,
        &mut index,
    )?;
    if round.verdict != RoundVerdict::Proven {
        let why = round
            .issues
            .iter()
            .map(|i| i.rule.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        records[winner].verdict = CandidateVerdict::Proven;
        records[winner].lost = format!(
            "proven in its scratch copy but not again in the working tree ({})",
            if why.is_empty() { "stopped" } else { &why }
        );
    }
    round.candidates = records;
    Ok(round)
}

/// Ask for up to K answers, one after the other; the answers, and the records of answers
/// that could not be used as they came. Asking stops at the first failed call (budget,
/// engine error): the candidates already received still count.
fn ask(
    ctx: &mut Ctx<'_>,
    engine: &mut dyn Engine,
    number: u32,
    call_index: &mut usize,
) -> Result<(Vec<Answered>, Vec<CandidateRecord>), PipelineError> {
    let count = ctx.config.candidates.count;
    let mut answered = Vec::new();
    let mut early = Vec::new();
    for position in 1..=count {
        if ctx.stop_reason().is_some() {
            break;
        }
        ctx.reporter
            .info(&format!("asking for candidate {position} of {count}"));
        let index = *call_index;
        let got = answer(ctx, engine, number, index, &[])?;
        *call_index += 1;
        ctx.save_checkpoint(Stage::Fixing)?;
        match got {
            Ok(response) => answered.push(Answered {
                number: position,
                call_index: index,
                response,
            }),
            Err(Failure::Contract(issue)) => {
                early.push(unusable(position, number, index, issue));
            }
            Err(failure) => {
                early.push(failed(position, number, index, failure));
                break;
            }
        }
    }
    Ok((answered, early))
}

/// The record of an answer cut off or empty: refused by the contract.
fn unusable(position: u32, round: u32, index: usize, issue: Issue) -> CandidateRecord {
    let mut record = empty_record(position, round, index);
    record
        .round
        .checks
        .push(check("patch.contract", false, &issue.message));
    record.round.issues.push(issue);
    record.lost = "its answer could not be used".to_owned();
    record
}

/// The record of a call that failed: no answer, and no more candidates this round.
fn failed(position: u32, round: u32, index: usize, failure: Failure) -> CandidateRecord {
    let mut record = empty_record(position, round, index);
    let (verdict, issue) = match failure {
        Failure::Budget(spent) => (RoundVerdict::Stopped, Issue::new(spent.rule, spent.reason)),
        Failure::Secrets(reason) => (
            RoundVerdict::EngineFailed,
            Issue::new("security.secrets-in-prompt", reason),
        ),
        Failure::Engine(message) | Failure::Fatal(message) => (
            RoundVerdict::EngineFailed,
            Issue::new("engine.error", message),
        ),
        Failure::Contract(issue) => (RoundVerdict::Rejected, issue),
    };
    record.round.verdict = verdict;
    record.round.issues.push(issue);
    record.verdict = CandidateVerdict::NotJudged;
    record.lost = "the engine gave no answer".to_owned();
    record
}

fn empty_record(position: u32, round: u32, index: usize) -> CandidateRecord {
    let mut candidate_round = fix::new_round(round);
    candidate_round.attempts.push(Attempt {
        call_index: index,
        contract_retry: false,
        patch: PatchRecord {
            outcome: PatchOutcome::Rejected,
            files: serde_json::Value::Null,
            issues: Vec::new(),
            diff: String::new(),
        },
        explanation: Explanation::from(&FixResponse::default()),
    });
    CandidateRecord {
        number: position,
        round: candidate_round,
        commands: Vec::new(),
        lines: 0,
        files: 0,
        verdict: CandidateVerdict::Refused,
        lost: String::new(),
    }
}

/// With no answer at all: the verdict and issues of the call that failed (a budget stops the
/// round, an engine error fails it), as a single round would end; stopped when the run had
/// to stop before the first call.
fn ended_without_answers(records: &[CandidateRecord]) -> (RoundVerdict, Vec<Issue>) {
    let Some(last) = records.last() else {
        return (RoundVerdict::Stopped, Vec::new());
    };
    match last.round.verdict {
        RoundVerdict::Stopped | RoundVerdict::EngineFailed => {
            (last.round.verdict, last.round.issues.clone())
        }
        _ => (RoundVerdict::Rejected, issues_of(records)),
    }
}

/// A candidate's change as the patch engine reads it against the base, before any proof:
/// its size orders the proofs, and a candidate whose proof is skipped still shows its diff.
struct Planned {
    /// (lines, files, answer number); `None` when the patch engine refuses the answer (its
    /// proof ends at once, so it is tried first and never skipped).
    rank: Option<(u64, u64, u32)>,
    /// The attempt as its proof would record it when applied.
    attempt: Option<Attempt>,
}

/// Read a candidate's answer against the working tree, which holds the base between answers,
/// without writing anything.
fn plan(ctx: &Ctx<'_>, answer: &Answered) -> Planned {
    let policy = super::prevent::patch_policy(&ctx.config.patch, &ctx.command, &ctx.suites);
    let report = answer
        .response
        .patch_text()
        .ok()
        .and_then(|text| patch::process(&ctx.root, &text, &policy, Mode::Check).ok())
        .filter(|report| report.outcome == PatchOutcome::Applied);
    let Some(report) = report else {
        return Planned {
            rank: None,
            attempt: None,
        };
    };
    let record = PatchRecord::from(&report);
    let (lines, files) = diff_size(&record.diff);
    Planned {
        rank: Some((lines, files, answer.number)),
        attempt: Some(Attempt {
            call_index: answer.call_index,
            contract_retry: false,
            patch: record,
            explanation: Explanation::from(&answer.response),
        }),
    }
}

/// The order proofs start in: answers the patch engine refuses first (their proofs end at
/// once and their refusals are feedback), then the smallest change first, since the smallest
/// fully proven candidate wins and every larger one's proof can then be skipped.
fn proof_order(planned: &[Planned]) -> VecDeque<usize> {
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by_key(|&i| (planned[i].rank.is_some(), planned[i].rank));
    order.into()
}

/// The shared state of a round's proofs: which to start next, which to stop.
struct Schedule<'p> {
    planned: &'p [Planned],
    queue: Mutex<VecDeque<usize>>,
    /// Each candidate's cancel flag, the `cancel` of its proof's context.
    stop: Vec<AtomicBool>,
    /// For each candidate, the number of the smaller one whose full proof outranked it (0: none).
    outranked_by: Vec<AtomicU32>,
    finished: AtomicUsize,
    running: AtomicUsize,
    first_proven: bool,
}

impl Schedule<'_> {
    /// Record that candidate `i` was fully proven: with `--first-proven` every other proof
    /// stops; otherwise every larger candidate's, which can no longer win.
    fn proven(&self, i: usize) {
        if self.first_proven {
            self.stop_all();
            return;
        }
        let Some(rank) = self.planned[i].rank else {
            return;
        };
        for (j, other) in self.planned.iter().enumerate() {
            if other.rank.is_some_and(|r| r > rank) {
                // The first outranking stays: it is the one that stopped the proof.
                let _ = self.outranked_by[j].compare_exchange(
                    0,
                    rank.2,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                self.stop[j].store(true, Ordering::SeqCst);
            }
        }
    }

    fn stop_all(&self) {
        for flag in &self.stop {
            flag.store(true, Ordering::SeqCst);
        }
    }

    fn outranked(&self, i: usize) -> Option<u32> {
        Some(self.outranked_by[i].load(Ordering::SeqCst)).filter(|&n| n != 0)
    }
}

/// Prove every answer in its own scratch copy, `jobs` at a time, smallest change first; the
/// proofs in the order of `answered` (a candidate whose copy could not be made or proven is
/// not judged; one that could no longer win is skipped). The scratch directory is removed
/// before this returns, whatever happens.
fn prove_all(
    ctx: &mut Ctx<'_>,
    number: u32,
    answered: &[Answered],
    planned: &[Planned],
) -> Result<Vec<Result<Proof, PipelineError>>, PipelineError> {
    let scratch = Scratch::create(&ctx.root)?;
    let jobs = (ctx.config.candidates.jobs as usize).clamp(1, answered.len());
    ctx.reporter.phase(&format!(
        "proving {} candidates, {jobs} at a time, in scratch copies",
        answered.len()
    ));
    let shared = SharedRuns::default();
    let template = Template {
        ctx: &*ctx,
        base: ctx.evidence.repo.base_commit.clone(),
        scratch: scratch.path(),
        number,
        shared: &shared,
    };
    let schedule = Schedule {
        planned,
        queue: Mutex::new(proof_order(planned)),
        stop: (0..answered.len())
            .map(|_| AtomicBool::new(false))
            .collect(),
        outranked_by: (0..answered.len()).map(|_| AtomicU32::new(0)).collect(),
        finished: AtomicUsize::new(0),
        running: AtomicUsize::new(jobs),
        first_proven: ctx.config.candidates.first_proven,
    };
    let results: Mutex<Vec<Option<Result<Proof, PipelineError>>>> =
        Mutex::new((0..answered.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let next = schedule.queue.lock().ok().and_then(|mut q| q.pop_front());
                    let Some(i) = next else { break };
                    let proof = if schedule.stop[i].load(Ordering::SeqCst) {
                        Ok(Proof::skipped(template.number))
                    } else {
                        template.prove(&answered[i], &schedule.stop[i], &schedule.finished)
                    };
                    let proof = proof.map(|mut proof| {
                        if fully_proven(&proof.round) {
                            schedule.proven(i);
                        } else {
                            proof.outranked_by = schedule.outranked(i);
                        }
                        proof
                    });
                    if let Ok(mut results) = results.lock() {
                        results[i] = Some(proof);
                    }
                }
                schedule.running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        // The run's own cancel flag (a signal) reaches the candidates' commands through theirs.
        while schedule.running.load(Ordering::SeqCst) > 0 {
            if template.ctx.cancel.load(Ordering::Relaxed) {
                schedule.stop_all();
            }
            std::thread::sleep(CANCEL_POLL);
        }
    });
    ctx.reporter.end_phase();
    drop(scratch);
    let results = results.into_inner().unwrap_or_default();
    Ok(results
        .into_iter()
        .map(|result| {
            result.unwrap_or_else(|| {
                Err(PipelineError::Artifacts {
                    what: "prove a candidate".to_owned(),
                    source: std::io::Error::other("a proving thread stopped early"),
                })
            })
        })
        .collect())
}

impl Proof {
    /// A proof never started: it was stopped before its turn came.
    fn skipped(round: u32) -> Proof {
        let mut round = fix::new_round(round);
        round.verdict = RoundVerdict::Stopped;
        Proof {
            round,
            commands: Vec::new(),
            stopped: true,
            finished: usize::MAX,
            outranked_by: None,
        }
    }
}

/// What every candidate's scratch run starts from.
struct Template<'c, 'a> {
    ctx: &'c Ctx<'a>,
    base: Option<String>,
    scratch: &'c Path,
    number: u32,
    /// The runs candidates with the same test side make once.
    shared: &'c SharedRuns,
}

impl Template<'_, '_> {
    /// Copy the base commit into the candidate's own directory and run its round there, with
    /// `stop` as its cancel flag.
    fn prove(
        &self,
        answer: &Answered,
        stop: &AtomicBool,
        finished: &AtomicUsize,
    ) -> Result<Proof, PipelineError> {
        let dir = self.scratch.join(format!("candidate-{}", answer.number));
        let root = dir.join("repo");
        let artifacts = dir.join("artifacts");
        std::fs::create_dir_all(&artifacts).map_err(|source| PipelineError::Artifacts {
            what: format!("create {}", artifacts.display()),
            source,
        })?;
        let source = Repo::open(&self.ctx.root)?;
        let copy = source.copy_to(&root, self.base.as_deref())?;
        let linked = super::scratch::link_installs(&source, &root)?;
        tracing::debug!(
            candidate = answer.number,
            ?linked,
            "dependency installs linked"
        );
        let snapshot = copy.snapshot()?;
        let parent = self.ctx;
        let mut ctx = Ctx {
            config: parent.config,
            // Side by side, their progress lines would interleave; the evidence has it all.
            reporter: Reporter::quiet(),
            root,
            artifacts,
            cancel: stop,
            deadline: parent.deadline,
            snapshot,
            journal: None,
            commands_since_restore: false,
            evidence: parent.evidence.clone(),
            checkpoint: parent.checkpoint.clone(),
            command: parent.command.clone(),
            suites: parent.suites.clone(),
            repeat: parent.repeat,
            // The scratch copy is thrown away; nothing is left applied in it.
            dry_run: true,
            shared: Some(self.shared),
        };
        let first = ctx.evidence.commands.len();
        let mut index = answer.call_index;
        let round = fix::run_round(
            &mut ctx,
            Source::Given(Some(answer.response.clone())),
            self.number,
            &mut index,
        )?;
        let stopped = round.verdict == RoundVerdict::Stopped
            || (round.verdict != RoundVerdict::Proven && ctx.stop_reason().is_some());
        let commands = ctx.evidence.commands.split_off(first);
        Ok(Proof {
            round,
            commands,
            stopped,
            finished: finished.fetch_add(1, Ordering::SeqCst),
            outranked_by: None,
        })
    }
}

/// Whether a round is proven with every check vouching for it (its status would be `fixed`).
fn fully_proven(round: &Round) -> bool {
    round.verdict == RoundVerdict::Proven && round.checks.iter().all(|c| c.weakens.is_none())
}

/// A candidate's record from its answer, its plan and its proof, and the order its proof
/// finished in.
fn record(
    number: u32,
    answer: &Answered,
    planned: &Planned,
    proof: Result<Proof, PipelineError>,
) -> (CandidateRecord, usize) {
    let mut proof = match proof {
        Ok(proof) => proof,
        Err(err) => {
            let mut record = empty_record(answer.number, number, answer.call_index);
            record.round.verdict = RoundVerdict::Stopped;
            record.round.issues.push(Issue::new(
                "candidate.not-judged",
                format!("its scratch copy could not be proven: {err}"),
            ));
            record.verdict = CandidateVerdict::NotJudged;
            record.lost = "its proof could not run".to_owned();
            return (record, usize::MAX);
        }
    };
    // A proof skipped before it applied anything still shows the change it would have proven.
    if proof.round.attempts.is_empty() {
        proof.round.attempts.extend(planned.attempt.clone());
    }
    let diff = proof
        .round
        .attempts
        .last()
        .map(|a| a.patch.diff.as_str())
        .unwrap_or_default();
    let (lines, files) = diff_size(diff);
    let weakening: Vec<&str> = proof
        .round
        .checks
        .iter()
        .filter(|c| c.weakens.is_some())
        .map(|c| c.id.as_str())
        .collect();
    let (verdict, lost) = match proof.round.verdict {
        RoundVerdict::Proven if weakening.is_empty() => (CandidateVerdict::Proven, String::new()),
        RoundVerdict::NoChange => (
            CandidateVerdict::NoChange,
            "the engine answered NO_CHANGE".to_owned(),
        ),
        // Stopped midway, whatever its proof had shown so far: a cut proof weakens or fails.
        _ if proof.outranked_by.is_some() => (
            CandidateVerdict::NotJudged,
            format!(
                "stopped once candidate {} was fully proven: it comes first by size (lines, \
                 then files, then answer), so this one could no longer win",
                proof.outranked_by.unwrap_or_default(),
            ),
        ),
        RoundVerdict::Proven => (
            CandidateVerdict::Weakened,
            format!(
                "its proof is weakened ({}): only a fully proven candidate is chosen",
                weakening.join(", ")
            ),
        ),
        _ if proof.stopped => (
            CandidateVerdict::NotJudged,
            "its proof could not finish (budget, interrupt or an earlier proven candidate)"
                .to_owned(),
        ),
        _ => (
            CandidateVerdict::Refused,
            format!("refused by {}", rules(&proof.round.issues)),
        ),
    };
    let record = CandidateRecord {
        number: answer.number,
        round: proof.round,
        commands: proof.commands,
        lines,
        files,
        verdict,
        lost,
    };
    (record, proof.finished)
}

/// Lines added plus removed, and files, of a unified diff.
fn diff_size(diff: &str) -> (u64, u64) {
    let mut lines = 0u64;
    let mut files = 0u64;
    for line in diff.lines() {
        if line.starts_with("+++ ") {
            files += 1;
        } else if line.starts_with("--- ") {
            continue;
        } else if line.starts_with('+') || line.starts_with('-') {
            lines += 1;
        }
    }
    (lines, files)
}

/// A change's size in words: `3 lines in 1 file`.
fn size(lines: u64, files: u64) -> String {
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    format!(
        "{lines} line{} in {files} file{}",
        plural(lines),
        plural(files)
    )
}

/// The distinct rule ids of `issues`, in order, comma-separated.
fn rules(issues: &[Issue]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for issue in issues {
        if !ids.contains(&issue.rule.as_str()) {
            ids.push(&issue.rule);
        }
    }
    if ids.is_empty() {
        "its proof".to_owned()
    } else {
        ids.join(", ")
    }
}

/// The winner's index in `records`: among the fully proven candidates, the first to finish
/// with `first_proven`, else the smallest change (lines, then files, then the earliest
/// answer).
fn choose(records: &[(CandidateRecord, usize)], first_proven: bool) -> Option<usize> {
    let proven = records
        .iter()
        .enumerate()
        .filter(|(_, (r, _))| r.verdict == CandidateVerdict::Proven);
    if first_proven {
        proven.min_by_key(|(_, (r, finished))| (*finished, r.number))
    } else {
        proven.min_by_key(|(_, (r, _))| (r.lines, r.files, r.number))
    }
    .map(|(i, _)| i)
}

/// The round when no candidate was fully proven: nothing is applied to the working tree, and
/// its issues (the next round's feedback) hold one line per candidate.
fn refused_round(ctx: &Ctx<'_>, number: u32, records: Vec<CandidateRecord>) -> Round {
    let mut round = fix::new_round(number);
    round.attempts = records
        .iter()
        .flat_map(|r| r.round.attempts.iter().cloned())
        .collect();
    let all = |verdict: CandidateVerdict| records.iter().all(|r| r.verdict == verdict);
    round.verdict = if all(CandidateVerdict::NoChange) {
        RoundVerdict::NoChange
    } else if all(CandidateVerdict::NotJudged) && ctx.stop_reason().is_some() {
        RoundVerdict::Stopped
    } else {
        RoundVerdict::ProofFailed
    };
    round.checks.push(check(
        "candidates.proof",
        false,
        &format!("none of {} candidates was fully proven", records.len()),
    ));
    round.issues = issues_of(&records);
    round.candidates = records;
    round
}

/// One issue per candidate: the rule ids that refused it and the first reason, so the next
/// prompt names every candidate's refusal.
fn issues_of(records: &[CandidateRecord]) -> Vec<Issue> {
    records
        .iter()
        .map(|r| {
            let first = r
                .round
                .issues
                .first()
                .map(|i| fix::first_line(&i.message).to_owned())
                .unwrap_or_else(|| r.lost.clone());
            let rule = match r.verdict {
                CandidateVerdict::Weakened => "candidate.weakened".to_owned(),
                CandidateVerdict::NotJudged => "candidate.not-judged".to_owned(),
                CandidateVerdict::NoChange => "candidate.no-change".to_owned(),
                _ => r
                    .round
                    .issues
                    .first()
                    .map_or_else(|| "candidate.refused".to_owned(), |i| i.rule.clone()),
            };
            Issue::new(
                rule,
                format!(
                    "candidate {} ({}) was refused by {}: {first}",
                    r.number,
                    size(r.lines, r.files),
                    rules(&r.round.issues)
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(
        number: u32,
        verdict: CandidateVerdict,
        lines: u64,
        files: u64,
    ) -> CandidateRecord {
        let mut record = empty_record(number, 1, number as usize - 1);
        record.verdict = verdict;
        record.lines = lines;
        record.files = files;
        record
    }

    #[test]
    fn the_smallest_proven_candidate_wins_by_lines_then_files_then_answer() {
        let records = vec![
            (candidate(1, CandidateVerdict::Refused, 1, 1), 0),
            (candidate(2, CandidateVerdict::Proven, 9, 1), 1),
            (candidate(3, CandidateVerdict::Proven, 4, 2), 2),
            (candidate(4, CandidateVerdict::Weakened, 2, 1), 3),
            (candidate(5, CandidateVerdict::Proven, 4, 1), 4),
            (candidate(6, CandidateVerdict::Proven, 4, 1), 5),
        ];
        assert_eq!(choose(&records, false), Some(4));
        // With --first-proven, the first proof to finish wins, whatever its size.
        let mut first = records.clone();
        first[1].1 = 9;
        first[2].1 = 0;
        assert_eq!(choose(&first, true), Some(2));
    }

    fn planned(ranks: &[Option<(u64, u64)>]) -> Vec<Planned> {
        ranks
            .iter()
            .enumerate()
            .map(|(i, rank)| Planned {
                rank: rank.map(|(lines, files)| (lines, files, i as u32 + 1)),
                attempt: None,
            })
            .collect()
    }

    fn schedule(planned: &[Planned], first_proven: bool) -> Schedule<'_> {
        Schedule {
            planned,
            queue: Mutex::new(proof_order(planned)),
            stop: planned.iter().map(|_| AtomicBool::new(false)).collect(),
            outranked_by: planned.iter().map(|_| AtomicU32::new(0)).collect(),
            finished: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            first_proven,
        }
    }

    #[test]
    fn refused_answers_are_proven_first_then_the_smallest_change() {
        let plan = planned(&[Some((9, 1)), None, Some((4, 2)), Some((4, 1)), Some((4, 1))]);
        assert_eq!(Vec::from(proof_order(&plan)), vec![1, 3, 4, 2, 0]);
    }

    #[test]
    fn a_full_proof_stops_every_larger_candidate_and_no_smaller_one() {
        let plan = planned(&[Some((9, 1)), None, Some((4, 2)), Some((4, 1)), Some((2, 1))]);
        let schedule = schedule(&plan, false);
        // Candidate 4 (4 lines in 1 file) is proven: 1 (9 lines) and 3 (4 lines, 2 files)
        // cannot win any more; 5 (smaller) and 2 (refused by the patch engine) still run.
        schedule.proven(3);
        let stopped: Vec<bool> = schedule
            .stop
            .iter()
            .map(|f| f.load(Ordering::SeqCst))
            .collect();
        assert_eq!(stopped, vec![true, false, true, false, false]);
        assert_eq!(schedule.outranked(0), Some(4));
        assert_eq!(schedule.outranked(2), Some(4));
        assert_eq!(schedule.outranked(4), None);
        // A smaller proof later does not rename what stopped the others.
        schedule.proven(4);
        assert_eq!(schedule.outranked(0), Some(4));
        assert_eq!(schedule.outranked(3), Some(5));
    }

    #[test]
    fn with_first_proven_any_full_proof_stops_every_other() {
        let plan = planned(&[Some((9, 1)), Some((1, 1))]);
        let schedule = schedule(&plan, true);
        schedule.proven(0);
        assert!(schedule.stop.iter().all(|f| f.load(Ordering::SeqCst)));
        assert_eq!(schedule.outranked(1), None);
    }

    #[test]
    fn no_candidate_wins_without_a_full_proof() {
        let records = vec![
            (candidate(1, CandidateVerdict::Refused, 1, 1), 0),
            (candidate(2, CandidateVerdict::Weakened, 1, 1), 1),
            (candidate(3, CandidateVerdict::NotJudged, 1, 1), 2),
            (candidate(4, CandidateVerdict::NoChange, 0, 0), 3),
        ];
        assert_eq!(choose(&records, false), None);
        assert_eq!(choose(&records, true), None);
    }

    #[test]
    fn a_diff_is_measured_in_changed_lines_and_files() {
        let diff = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/t.py\n+++ b/t.py\n@@ -1 +1,2 @@\n x\n+y\n";
        assert_eq!(diff_size(diff), (3, 2));
        assert_eq!(diff_size(""), (0, 0));
    }

    #[test]
    fn each_refused_candidate_becomes_one_issue_naming_its_rules() {
        let mut refused = candidate(1, CandidateVerdict::Refused, 3, 1);
        refused.round.issues = vec![
            Issue::new("prove.regression", "test_a broke\nmore"),
            Issue::new("prevent.no-guard", "no guard"),
            Issue::new("prove.regression", "test_b broke"),
        ];
        let mut weakened = candidate(2, CandidateVerdict::Weakened, 2, 1);
        weakened.lost = "its proof is weakened (canary.built)".to_owned();
        let issues = issues_of(&[refused, weakened]);
        assert_eq!(
            issues,
            vec![
                Issue::new(
                    "prove.regression",
                    "candidate 1 (3 lines in 1 file) was refused by prove.regression, \
                     prevent.no-guard: test_a broke"
                ),
                Issue::new(
                    "candidate.weakened",
                    "candidate 2 (2 lines in 1 file) was refused by its proof: its proof is \
                     weakened (canary.built)"
                ),
            ]
        );
    }
}
