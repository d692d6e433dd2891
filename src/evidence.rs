//! evidence (being written).
