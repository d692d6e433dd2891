//! User-facing output, in one place: machine output on stdout, progress and errors on stderr
//! (as `::group::` blocks when `GITHUB_ACTIONS=true`, with a live indicator on a terminal).
//!
//! Library code elsewhere never prints; it calls this module or `tracing`.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the live indicator redraws.
const TICK: Duration = Duration::from_millis(500);

/// Where progress goes and how it looks.
#[derive(Debug, Clone, Copy)]
pub struct Reporter {
    github: bool,
    terminal: bool,
    quiet: bool,
}

impl Reporter {
    /// A reporter for this process: GitHub Actions groups when `github` is set, a live
    /// indicator when stderr is a terminal.
    pub fn new(github: bool) -> Reporter {
        Reporter {
            github,
            terminal: std::io::stderr().is_terminal(),
            quiet: false,
        }
    }

    /// A reporter that prints nothing (tests, nested runs).
    pub fn quiet() -> Reporter {
        Reporter {
            github: false,
            terminal: false,
            quiet: true,
        }
    }

    /// Start a phase.
    pub fn phase(&self, name: &str) {
        if self.quiet {
            return;
        }
        if self.github {
            eprint_line(&format!("::group::efix: {name}"));
        } else {
            eprint_line(&format!("efix: {name}"));
        }
    }

    /// End the current phase.
    pub fn end_phase(&self) {
        if self.github && !self.quiet {
            eprint_line("::endgroup::");
        }
    }

    /// A progress line.
    pub fn info(&self, message: &str) {
        if !self.quiet {
            eprint_line(&format!("  {message}"));
        }
    }

    /// A warning line (also an annotation on GitHub).
    pub fn warn(&self, message: &str) {
        if self.quiet {
            return;
        }
        if self.github {
            eprint_line(&format!("::warning::{message}"));
        } else {
            eprint_line(&format!("efix: warning: {message}"));
        }
    }

    /// Show a live indicator while a command runs; it stops when the guard is dropped.
    pub fn running(&self, label: &str) -> Ticker {
        if self.quiet {
            return Ticker {
                stop: None,
                handle: None,
            };
        }
        self.info(&format!("running {label}"));
        if !self.terminal || self.github {
            return Ticker {
                stop: None,
                handle: None,
            };
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let started = Instant::now();
        let handle = std::thread::spawn(move || {
            let mut printed = false;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let mut stderr = std::io::stderr().lock();
                let _ = write!(stderr, "\r  … {}s", started.elapsed().as_secs());
                let _ = stderr.flush();
                printed = true;
            }
            if printed {
                let mut stderr = std::io::stderr().lock();
                let _ = write!(stderr, "\r\x1b[K");
                let _ = stderr.flush();
            }
        });
        Ticker {
            stop: Some(stop),
            handle: Some(handle),
        }
    }
}

/// Stops the live indicator when dropped.
pub struct Ticker {
    stop: Option<Arc<AtomicBool>>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        if let Some(stop) = &self.stop {
            stop.store(true, Ordering::Relaxed);
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// Print machine output (one document) on stdout.
pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// Print an error with its cause chain, once, on stderr.
pub fn error(err: &dyn std::error::Error) {
    let mut text = format!("efix: error: failed to {err}");
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!("\n  caused by: {cause}"));
        source = cause.source();
    }
    eprint_line(&text);
}

/// Whether a person is at the keyboard: stdin and stderr are both terminals.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Ask a question on stderr and read one line of answer from stdin, trimmed; `None` when
/// stdin is closed.
pub fn ask(question: &str) -> Option<String> {
    {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{question}");
        let _ = err.flush();
    }
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// Print a plain message on stderr.
pub fn message(text: &str) {
    eprint_line(text);
}

fn eprint_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// Append `name=value` lines to a GitHub Actions output file (`$GITHUB_OUTPUT`), the way a
/// step hands values to the workflow. Values are single lines; a line break would let a value
/// set another output, so it is replaced by a space.
pub fn github_output(file: &std::path::Path, pairs: &[(&str, String)]) -> std::io::Result<()> {
    let mut text = String::new();
    for (name, value) in pairs {
        let value: String = value
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        text.push_str(&format!("{name}={value}\n"));
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    out.write_all(text.as_bytes())
}
