//! The base tier: what knows nothing of mdBook. The shared helpers ([`util`]), the `.notabene`
//! store of contract v3 ([`store`]), the text model of one chapter ([`text`]) and anchoring
//! on one page ([`anchor`]). Layers, bottom up, in [`crate::LAYERS`].

pub mod anchor;
pub mod store;
pub mod text;
pub mod util;
