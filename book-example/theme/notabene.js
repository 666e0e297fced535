/* mdbook-notabene 0.1.0 — managed by `mdbook-notabene install`; do not edit */
// The notabene reader client (being written).
