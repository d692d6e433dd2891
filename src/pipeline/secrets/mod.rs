//! Secrets in prompts: the scan and its placeholders for real secrets (`scan`), and which
//! matches are test data rather than secrets (`placeholder`, and `fixtures` for the
//! credential-shaped data the repository's own test files hold).

mod fixtures;
mod placeholder;
mod scan;

pub(crate) use fixtures::Fixtures;
pub(crate) use scan::{Tokens, scan, tokenize};
