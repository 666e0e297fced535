#![allow(dead_code)]
//! The ~2 MB book the scale benchmarks build: rust-by-example with every chapter filled up
//! from the corpus (nomicon's chapters after its own), and its generated comments. Included
//! by `scale.rs` and `serve_chapter.rs` (it uses the shared test `support`, which they mount).

use mdbook_driver::MDBook;
use mdbook_driver::config::Config;
use std::path::{Path, PathBuf};

use crate::support::common::{chapter_files, corpus, stage};
use crate::support::preprocess::*;

/// Size each chapter is filled up to.
pub const CHAPTER_BYTES: usize = 10_300;

/// Stages rust-by-example with every chapter filled up to [`CHAPTER_BYTES`] from the corpus.
pub fn big_book(tmp: &Path) -> (PathBuf, Config) {
    let root = stage(&corpus("rust-by-example"), tmp, "big-book");
    let mut base = neutral_config(&root);
    install_client(&root, &mut base);
    let md = MDBook::load_with_config(&root, base.clone()).unwrap();
    let src = root.join("src");
    let own: Vec<PathBuf> = chapters(&md)
        .iter()
        .map(|c| src.join(&c.source_path))
        .collect();
    let mut pool: Vec<String> = own
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let nomicon = corpus("nomicon").join("src");
    pool.extend(
        chapter_files(&nomicon)
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap()),
    );
    for (i, path) in own.iter().enumerate() {
        let mut text = pool[i].clone();
        let mut k = i + 1;
        while text.len() < CHAPTER_BYTES {
            text.push_str("\n\n");
            text.push_str(&pool[k % pool.len()]);
            k += 1;
        }
        std::fs::write(path, text).unwrap();
    }
    (root, base)
}

/// Generates `n` comments into the book's store (text anchors, one in ten with a typo).
pub fn generate_into(root: &Path, md: &MDBook, n: usize) {
    let chapters = chapters(md).len();
    let gens = generate(
        root,
        md,
        &GenOptions {
            per_chapter: n.div_ceil(chapters) + 2,
            max_text: Some(n),
            typo_every: 10,
            overlap: true,
            blocks: false,
            seed: 12,
            ..GenOptions::default()
        },
    );
    assert_eq!(gens.len(), n);
}
