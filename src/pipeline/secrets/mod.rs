//! Secrets in prompts: the scan and its placeholders for real secrets (`scan`), and which
//! matches are test data rather than secrets (`placeholder`).

mod placeholder;
mod scan;

pub(crate) use scan::{Tokens, scan, tokenize};
