//! The store's one way of reading a file (`read_file`, `read_in`): what it refuses.

use super::*;

#[test]
fn reads_regular_files_only_never_through_a_link_and_at_most_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.json"), b"{}").unwrap();
    assert_eq!(read_file(&root.join("a.json"), 2).unwrap().bytes, b"{}");
    assert!(matches!(
        read_file(&root.join("a.json"), 1),
        Err(ReadFailure::TooLarge(1))
    ));
    std::os::unix::fs::symlink(root.join("a.json"), root.join("l.json")).unwrap();
    assert!(matches!(
        read_file(&root.join("l.json"), 10),
        Err(ReadFailure::Symlink)
    ));
    std::os::unix::fs::symlink("/dev/zero", root.join("z.json")).unwrap();
    assert!(matches!(
        read_file(&root.join("z.json"), 10),
        Err(ReadFailure::Symlink)
    ));
    assert!(matches!(
        read_file(Path::new("/dev/zero"), 10),
        Err(ReadFailure::NotRegular("a device"))
    ));
    fs::create_dir(root.join("d.json")).unwrap();
    assert!(matches!(
        read_file(&root.join("d.json"), 10),
        Err(ReadFailure::NotRegular("a directory"))
    ));
    let fifo = root.join("f.json");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert!(matches!(
        read_file(&fifo, 10),
        Err(ReadFailure::NotRegular("a FIFO"))
    ));
    assert!(matches!(
        read_file(&root.join("none.json"), 10),
        Err(ReadFailure::Missing)
    ));
    // A symlinked directory on the way.
    fs::create_dir(root.join("real")).unwrap();
    fs::write(root.join("real/c.json"), b"[]").unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("page")).unwrap();
    assert!(matches!(
        read_in(root, Path::new("page/c.json"), 10),
        Err(ReadFailure::Symlink)
    ));
    assert_eq!(
        read_in(root, Path::new("real/c.json"), 10).unwrap().bytes,
        b"[]"
    );
    assert_eq!(
        ReadFailure::TooLarge(MAX_JOURNAL)
            .to_error("journal.json")
            .message(),
        "journal.json is over 64 MiB (journal.json)"
    );
}

#[test]
fn a_file_longer_than_its_fstat_said_is_read_to_its_end_within_the_cap() {
    // Linux's /proc files say a size of 0, then read as more: the read goes on past the size.
    let cmdline = Path::new("/proc/self/cmdline");
    if !cfg!(target_os = "linux") {
        return;
    }
    let whole = fs::read(cmdline).unwrap();
    assert!(whole.len() > 2, "{whole:?}");
    assert_eq!(read_file(cmdline, 1 << 20).unwrap().bytes, whole);
    let cap = whole.len() as u64 - 1;
    assert!(matches!(read_file(cmdline, cap), Err(ReadFailure::TooLarge(c)) if c == cap));
    assert_eq!(read_file(cmdline, cap + 1).unwrap().bytes, whole);
    // A file of the size its `fstat` gave is read whole (and an empty one is empty).
    let dir = tempfile::tempdir().unwrap();
    for len in [0, 1, 4095, 4096, 70_000] {
        let path = dir.path().join(format!("{len}.json"));
        let bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        fs::write(&path, &bytes).unwrap();
        let read = read_file(&path, 1 << 20).unwrap();
        assert_eq!(read.bytes, bytes);
        assert_eq!(read.metadata().len(), len as u64);
    }
}
