//! Anchoring: re-finds every stored anchor of a page in the page's current text.

pub mod myers;
