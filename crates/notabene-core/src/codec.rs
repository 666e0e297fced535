//! A little-endian byte form for the values the build's memo keeps (resolutions, light text
//! models, following's decisions): numbers as 8 bytes, strings with their length first,
//! options and variants as one tag byte. A [`Reader`] returns `None` for anything it cannot
//! read whole — a memo value is never trusted to be well formed.
//!
//! Owns: the byte form's primitives; the values' layouts are their own modules'.

use std::ops::Range;

/// Bytes being written.
#[derive(Debug, Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// A byte.
    pub fn byte(&mut self, b: u8) -> &mut Writer {
        self.0.push(b);
        self
    }

    /// A number.
    pub fn word(&mut self, n: u64) -> &mut Writer {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }

    /// A size or an index.
    pub fn size(&mut self, n: usize) -> &mut Writer {
        self.word(n as u64)
    }

    /// A string (its length, then its bytes).
    pub fn str(&mut self, s: &str) -> &mut Writer {
        self.size(s.len());
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    /// Bytes (their length, then themselves).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Writer {
        self.size(b.len());
        self.0.extend_from_slice(b);
        self
    }

    /// An optional string (a tag byte, then the string).
    pub fn opt_str(&mut self, s: Option<&str>) -> &mut Writer {
        match s {
            None => self.byte(0),
            Some(s) => self.byte(1).str(s),
        }
    }

    /// A range.
    pub fn range(&mut self, r: &Range<usize>) -> &mut Writer {
        self.size(r.start).size(r.end)
    }
}

/// Bytes being read.
#[derive(Debug)]
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    /// A byte.
    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    /// A byte that must be below `n` (a tag of `n` variants).
    pub fn tag(&mut self, n: u8) -> Option<u8> {
        self.byte().filter(|&b| b < n)
    }

    /// A flag (a tag of two variants).
    pub fn flag(&mut self) -> Option<bool> {
        self.tag(2).map(|b| b == 1)
    }

    /// A number.
    pub fn word(&mut self) -> Option<u64> {
        let (w, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*w))
    }

    /// A size or an index.
    pub fn size(&mut self) -> Option<usize> {
        usize::try_from(self.word()?).ok()
    }

    /// A count of items each at least one byte long: never more than the bytes left (so that
    /// a garbled count cannot ask for a huge allocation).
    pub fn count(&mut self) -> Option<usize> {
        self.size().filter(|&n| n <= self.0.len())
    }

    /// Bytes written with [`Writer::bytes`].
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.size()?;
        if n > self.0.len() {
            return None;
        }
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(b)
    }

    /// A string written with [`Writer::str`].
    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    /// An optional string written with [`Writer::opt_str`].
    pub fn opt_string(&mut self) -> Option<Option<String>> {
        match self.tag(2)? {
            0 => Some(None),
            _ => Some(Some(self.string()?)),
        }
    }

    /// A range.
    pub fn range(&mut self) -> Option<Range<usize>> {
        Some(self.size()?..self.size()?)
    }

    /// Whether every byte was read.
    pub fn done(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_and_nothing_more() {
        let mut w = Writer::default();
        w.byte(7)
            .word(u64::MAX)
            .size(3)
            .str("é✓")
            .opt_str(None)
            .opt_str(Some(""))
            .range(&(2..9))
            .bytes(b"\x00\xff");
        let mut r = Reader(&w.0);
        assert_eq!(r.byte(), Some(7));
        assert_eq!(r.word(), Some(u64::MAX));
        assert_eq!(r.count(), Some(3));
        assert_eq!(r.string().as_deref(), Some("é✓"));
        assert_eq!(r.opt_string(), Some(None));
        assert_eq!(r.opt_string(), Some(Some(String::new())));
        assert_eq!(r.range(), Some(2..9));
        assert_eq!(r.bytes(), Some(&b"\x00\xff"[..]));
        assert!(r.done());
        assert_eq!(r.byte(), None);
        // A count larger than what is left, a tag out of range, a string that is not UTF-8.
        assert_eq!(Reader(&1000u64.to_le_bytes()).count(), None);
        assert_eq!(Reader(&[2]).flag(), None);
        let mut bad = Writer::default();
        bad.bytes(b"\xff");
        assert_eq!(Reader(&bad.0).string(), None);
    }
}
