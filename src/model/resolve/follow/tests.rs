//! Unit tests of following.

use super::quotes::fold;

#[test]
fn the_probe_folds_typography_on_both_sides() {
    assert_eq!(
        fold("the compiler\u{2019}s  borrow\nchecker"),
        "the compiler's borrow checker"
    );
    assert_eq!(fold("\u{201C}a\u{201D} \u{2014} b\u{00AD}c"), "\"a\" - bc");
    assert_eq!(
        fold("the compiler's borrow checker"),
        "the compiler's borrow checker"
    );
}
