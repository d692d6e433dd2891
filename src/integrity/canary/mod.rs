//! Canary runs in the same session: once the whole change passes the proof, the
//! reproduction's failing tests run again beside canaries that efix writes into the user's
//! own tree, where the proof ran, and each canary must behave as it does under an honest fix:
//!
//! - an always-failing test beside the target (same file, module, invocation) is reported
//!   failed with its own record, and the run's exit code says failure: a patched runner or
//!   assertion library, an early exit or printed result lines cannot hide it;
//! - the target copied under a new name into a new file beside its own, its lines moved,
//!   passes: code that answers by the caller's name, file or source line, or reads the test
//!   file, does not;
//! - the target itself, called twice from one test in the session (Python, Rust, Go: the same
//!   function object, code object and class; on one thread), passes, and so does the target
//!   beside its canaries and alone in its own invocation: state keyed on the caller's frame,
//!   the thread, a class or a call count does not;
//! - a copy whose expected literal is changed fails: values that equal everything do not.
//!
//! Why this shape:
//! - One environment (ARCHITECTURE §6b). The canary commands run in the repository's own
//!   directory through the same recorded runner, sandbox and environment as the certifying
//!   run (`Ctx::run_command_within`), with the same `.git`, ignored files and real
//!   dependency directories (an editable install points at this very tree). The canary
//!   files are noted in the run's journal before they are written (in place: an edited test
//!   file keeps its inode and permissions), and the tree is restored exactly afterwards with
//!   the change written back, as Prove leaves it; a kill meanwhile is undone by
//!   `efix restore` like any other. Build output that git ignores (`target/`,
//!   `__pycache__`) stays, as after the certifying run.
//! - A target that fails beside its canaries is refused (`prove.canary.repeated`); one that
//!   fails alone, or any canary that cannot be built or judged, makes the claim weaker and
//!   says why (`prove.canary.not-built`, a `not_judged` check: the run ends
//!   `fixed-not-judged`), never silent and never `fixed`.
//! - Sources are edited with tree-sitter (`source`), per language, so a test is copied
//!   whole; tests whose source is not a plain function (parametrized, generated, doctests)
//!   get a reason in the evidence instead of a canary.
//! - Commands are the reproduction's own argv (`runner`), with its test selection replaced
//!   and per-test output turned on, recorded in the evidence with their own purpose.
//! - Names (`names`) are the target's own name and a word of its file, chosen by a digest of
//!   the change; the moved file is named like its siblings. No fixed marker or pattern.
//! - Verdicts are read per test from the runner's report (`judge`); a canary with no record of
//!   its own fails its check.
//!
//! Differences that remain between the certifying run and a canary run, and why each is not
//! a switch a cheat can use to pass:
//! - Path, `.git`, ignored files, dependencies, environment variables, working directory,
//!   sandbox and process tree: none (same directory, same runner and options of the run).
//! - Argv: the test selection is replaced (the target and its canaries, or the target
//!   alone), and options that hide records are swapped for per-test output (`-v`, `-p
//!   no:cacheprovider`, `--verbose --runTestsByPath`, `-t`, `--reporter spec`). Code that
//!   reads argv to switch itself off only while checked makes the target fail beside its
//!   canaries, which refuses the change; reading argv in non-test code is also a static
//!   family's read. Closing it fully means folding the canaries into the certifying
//!   invocation itself (not done yet).
//! - Files: while the session runs, the target's file holds the canaries after the target and
//!   a new file sits beside it; both have fresh mtimes (as the change's files have in the
//!   certifying run). Code that notices (reads the test files, lists the directory, compares
//!   mtimes) and switches itself off fails the target beside its canaries: refused. Those
//!   reads are static families' too.
//! - Time and run count: the canary runs come after the certifying one, so the runner has
//!   run more often; state kept outside the tree (a counter in `/tmp` or an ignored cache)
//!   can tell. Behaving honestly from then on fails the target beside its canaries
//!   (refused); behaving the same passes the always-failing and mutated canaries only if the
//!   code is honest.
//! - The repeated call runs the target's body twice inside one test: fixtures and `setUp`
//!   are made once for both calls (a test that consumes its fixture can fail the second
//!   time, which refuses an honest fix; the evidence names the canary). Decorated, async and
//!   parametrized Python tests, async or parametrized Rust tests and parallel Go tests get a
//!   renamed copy instead; JavaScript's repeated canary is still a renamed copy of the body
//!   in the same file (a call-count toggle is caught, a toggle keyed on the callback object
//!   is not).
//!
//! - Perturbed copies (`perturbed`, `prove.perturbed`): the target with one input literal
//!   moved to a neighbour, run alone on the base and on the change; if every copy runs the
//!   same on both, the change only acts on the test's exact input (a special case however it
//!   is spelled). Two more invocations per proof, after the canaries pass.
//!
//! What it does not do: run canaries for a reproduction that is not a runner invocation
//! efix recognises (`npm test`, `make test`), or for more than [`plan::MAX_TARGETS`] failing
//! tests; the evidence says so and the run ends `fixed-not-judged`.

mod judge;
mod names;
mod perturbed;
mod plan;
mod runner;
mod source;

pub(crate) use judge::{judge, not_applicable, not_built};
pub(crate) use perturbed::{RULE as PERTURBED, judge_perturbed, perturbed_not_run};
pub(crate) use plan::{Plan, plan};
