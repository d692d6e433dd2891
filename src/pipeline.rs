//! pipeline (being written).
