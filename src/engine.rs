//! engine (being written).
