//! The order of the /comments list: newest update first, then by id, compared without
//! reading the comments where the first bytes of their strings tell ([`ListKey`]).
//!
//! Owns: [`ListKey`]. Calls: nothing.

/// Where a comment goes in the /comments list: newest update first, then by id. The first
/// bytes of both are held here, with their lengths, so that comparisons read neither comment
/// (a big store's comments lie all over memory): strings that fit in their first bytes and
/// tie on them are ordered by their lengths (the shorter is the other's start, and comes
/// first); only longer ones are compared whole. That orders as comparing the strings does.
pub(super) struct ListKey<'a> {
    updated: Head<'a, 24>,
    id: Head<'a, 16>,
    pub(super) ci: usize,
}

/// A string's first `N` bytes (zeros past its end), with the string.
struct Head<'a, const N: usize> {
    bytes: [u8; N],
    whole: &'a str,
}

impl<'a, const N: usize> Head<'a, N> {
    fn of(s: &'a str) -> Head<'a, N> {
        let mut bytes = [0; N];
        let n = s.len().min(N);
        bytes[..n].copy_from_slice(&s.as_bytes()[..n]);
        Head { bytes, whole: s }
    }

    /// As `self.whole.cmp(other.whole)`.
    fn cmp(&self, other: &Head<N>) -> std::cmp::Ordering {
        self.bytes.cmp(&other.bytes).then_with(|| {
            if self.whole.len() <= N && other.whole.len() <= N {
                self.whole.len().cmp(&other.whole.len())
            } else {
                self.whole.cmp(other.whole)
            }
        })
    }
}

impl<'a> ListKey<'a> {
    pub(super) fn of(ci: usize, updated: &'a str, id: &'a str) -> ListKey<'a> {
        ListKey {
            updated: Head::of(updated),
            id: Head::of(id),
            ci,
        }
    }

    pub(super) fn cmp(a: &ListKey, b: &ListKey) -> std::cmp::Ordering {
        (b.updated.cmp(&a.updated)).then_with(|| a.id.cmp(&b.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Heads order as the strings do: ties on the first bytes, NULs where the zeros that pad a
    /// short head are, lengths around the head's, characters of several bytes.
    #[test]
    fn heads_order_as_their_strings_do() {
        let strings = [
            "", "\0", "\0\0", "a", "a\0", "ab", "abc", "abcd", "abcde", "abcdé", "abcé", "abcd\0",
            "abc\0\0", "b", "é", "é\0",
        ];
        for a in strings {
            for b in strings {
                assert_eq!(Head::<4>::of(a).cmp(&Head::of(b)), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }
}
