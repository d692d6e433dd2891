//! The sandbox section of the PR body and `evidence.md`: the tier each command ran under and
//! what it was made of (landlock ABI, seccomp, network, `.git`), what was missing and why,
//! and the processes each command left behind.
//!
//! Every word is read from the recorded [`crate::runner::SandboxReport`]s; nothing is assumed
//! from the configuration.

use std::fmt::Write as _;

use super::model::{CommandRecord, Evidence};
use crate::runner::{Network, SandboxReport, Tier};

/// Write the section, folded under the weakest tier (nothing when no command ran).
pub(super) fn section(out: &mut String, evidence: &Evidence) {
    let ran: Vec<(&CommandRecord, &SandboxReport)> = evidence
        .commands
        .iter()
        .filter_map(|record| Some((record, &record.outcome.as_ref()?.sandbox)))
        .filter(|(_, sandbox)| sandbox.tier > Tier::None)
        .collect();
    if ran.is_empty() {
        return;
    }
    let weakest = ran
        .iter()
        .map(|(_, sandbox)| sandbox.tier)
        .min()
        .unwrap_or_default();
    let required = match evidence.request.sandbox_require {
        Tier::None => "none required".to_owned(),
        tier => format!("`{tier}` required"),
    };
    let mut body = String::from("Each command, as the kernel enforced it:\n\n");
    // Commands that ran alike share a row, which names them all.
    let mut rows: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for (record, sandbox) in &ran {
        let cells = vec![
            super::text::purpose_name(record.purpose).to_owned(),
            sandbox.tier.to_string(),
            landlock_text(sandbox),
            if sandbox.seccomp { "on" } else { "off" }.to_owned(),
            network_text(sandbox).to_owned(),
            git_text(sandbox).to_owned(),
            sandbox.leaked_processes.to_string(),
        ];
        match rows.iter_mut().find(|(seen, _)| *seen == cells) {
            Some((_, ids)) => ids.push(record.id.to_string()),
            None => rows.push((cells, vec![record.id.to_string()])),
        }
    }
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(cells, ids)| std::iter::once(ids.join(", ")).chain(cells).collect())
        .collect();
    super::text::table(
        &mut body,
        &[
            "#", "purpose", "tier", "landlock", "seccomp", "network", "`.git`", "leaked",
        ],
        &rows,
    );
    body.push('\n');
    let (_, first) = ran[0];
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        body,
        "Every command: own process group: {}, parent-death signal: {}, environment cleared: \
         {} ({} variables passed through), no_new_privs: {}; efix non-dumpable: {}.",
        yes_no(ran.iter().all(|(_, s)| s.process_group)),
        yes_no(ran.iter().all(|(_, s)| s.parent_death_signal)),
        yes_no(ran.iter().all(|(_, s)| s.env_cleared)),
        first.env_passed.len(),
        yes_no(ran.iter().all(|(_, s)| s.no_new_privs)),
        yes_no(ran.iter().all(|(_, s)| s.non_dumpable_parent)),
    );
    let mut missing: Vec<&String> = ran.iter().flat_map(|(_, s)| &s.missing).collect();
    missing.sort();
    missing.dedup();
    for reason in missing {
        let _ = writeln!(body, "- missing: {}", super::text::one_line(reason));
    }
    for (record, sandbox) in &ran {
        if sandbox.leaked_processes == 0 {
            continue;
        }
        let listed: Vec<String> = sandbox
            .leaked
            .iter()
            .map(|argv| format!("`{}`", super::text::cell(argv)))
            .collect();
        let more = sandbox.leaked_processes.saturating_sub(listed.len() as u64);
        let _ = writeln!(
            body,
            "- command {} leaked {} process{}, killed by efix: {}{}",
            record.id,
            sandbox.leaked_processes,
            if sandbox.leaked_processes == 1 {
                ""
            } else {
                "es"
            },
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    let leaked: u64 = ran.iter().map(|(_, s)| s.leaked_processes).sum();
    super::text::collapsed(
        out,
        &format!(
            "Sandbox: weakest tier {weakest} ({required}), {} command{}{}",
            ran.len(),
            if ran.len() == 1 { "" } else { "s" },
            if leaked > 0 {
                format!(", {leaked} leaked process(es) killed")
            } else {
                String::new()
            }
        ),
        &body,
    );
}

fn landlock_text(sandbox: &SandboxReport) -> String {
    match sandbox.landlock_abi {
        Some(abi) => format!("ABI {abi}"),
        None => "none".to_owned(),
    }
}

fn network_text(sandbox: &SandboxReport) -> &'static str {
    match sandbox.network {
        Network::Allowed => "allowed",
        Network::Namespace if sandbox.loopback => "namespace, loopback only",
        Network::Namespace => "namespace, no loopback",
        Network::Seccomp => "seccomp fallback, no loopback",
        Network::NotIsolated => "not isolated",
    }
}

fn git_text(sandbox: &SandboxReport) -> &'static str {
    if sandbox.read_only.iter().any(|path| path.ends_with("/.git")) {
        "read-only"
    } else {
        "writable"
    }
}
