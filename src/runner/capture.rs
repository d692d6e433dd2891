//! Bounded capture of one output stream: the first `head` bytes, a ring buffer of the last
//! `tail` bytes, and a marker line for what was omitted between them. Memory is `head + tail`
//! whatever the child writes.
//!
//! It only ever sees redacted bytes (see `redact`) and does not count the child's raw bytes
//! (the caller does, so the totals are exact before redaction changes lengths).

/// Keeps the head and tail of a stream.
#[derive(Debug)]
pub(crate) struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: Ring,
}

/// The captured text of a stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Captured {
    /// Head, marker line (if anything was omitted), tail; invalid UTF-8 replaced.
    pub(crate) text: String,
    /// Whether bytes were omitted.
    pub(crate) truncated: bool,
}

impl Capture {
    pub(crate) fn new(head_bytes: usize, tail_bytes: usize) -> Self {
        Self {
            head: Vec::new(),
            head_cap: head_bytes,
            tail: Ring::new(tail_bytes),
        }
    }

    /// Append redacted bytes.
    pub(crate) fn write(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if !bytes.is_empty() {
            self.tail.write(bytes);
        }
    }

    /// The text kept, with a marker line where bytes were omitted.
    ///
    /// When bytes were omitted, a character cut in half at either edge of the gap is dropped
    /// too (and counted as omitted) rather than shown as a replacement character.
    pub(crate) fn finish(self) -> Captured {
        let mut omitted = self.tail.omitted();
        let mut tail = self.tail.into_ordered();
        if omitted == 0 {
            let mut all = self.head;
            all.append(&mut tail);
            return Captured {
                text: String::from_utf8_lossy(&all).into_owned(),
                truncated: false,
            };
        }
        let mut head = self.head;
        let cut_head = incomplete_suffix_len(&head);
        head.truncate(head.len() - cut_head);
        let cut_tail = tail
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count();
        omitted += (cut_head + cut_tail) as u64;
        let mut text = String::from_utf8_lossy(&head).into_owned();
        text.push_str(&format!("\n[... efix: {omitted} bytes omitted ...]\n"));
        text.push_str(&String::from_utf8_lossy(&tail[cut_tail..]));
        Captured {
            text,
            truncated: true,
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Length of an incomplete UTF-8 sequence at the end of `bytes` (0 when it ends cleanly).
fn incomplete_suffix_len(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if is_continuation(byte) {
            continue;
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if back < needed { back } else { 0 };
    }
    0
}

/// The last `cap` bytes written, in a fixed buffer.
#[derive(Debug)]
struct Ring {
    buf: Vec<u8>,
    cap: usize,
    /// Where the oldest byte is once the buffer is full.
    start: usize,
    written: u64,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cap,
            start: 0,
            written: 0,
        }
    }

    fn write(&mut self, mut bytes: &[u8]) {
        self.written += bytes.len() as u64;
        if self.cap == 0 {
            return;
        }
        if bytes.len() >= self.cap {
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - self.cap..]);
            self.start = 0;
            return;
        }
        if self.buf.len() < self.cap {
            let take = (self.cap - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        // The buffer is full here if anything is left; overwrite the oldest bytes.
        while !bytes.is_empty() {
            let take = (self.cap - self.start).min(bytes.len());
            self.buf[self.start..self.start + take].copy_from_slice(&bytes[..take]);
            self.start = (self.start + take) % self.cap;
            bytes = &bytes[take..];
        }
    }

    fn omitted(&self) -> u64 {
        self.written - self.buf.len() as u64
    }

    fn into_ordered(mut self) -> Vec<u8> {
        self.buf.rotate_left(self.start);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(head: usize, tail: usize, writes: &[&[u8]]) -> Captured {
        let mut capture = Capture::new(head, tail);
        for bytes in writes {
            capture.write(bytes);
        }
        capture.finish()
    }

    #[test]
    fn short_output_is_kept_whole() {
        assert_eq!(
            capture(4, 4, &[b"abc", b"def", b"gh"]),
            Captured {
                text: "abcdefgh".to_owned(),
                truncated: false
            }
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail_around_a_marker() {
        let writes: Vec<Vec<u8>> = (0..100u8).map(|i| vec![b'a' + i % 26; 3]).collect();
        let refs: Vec<&[u8]> = writes.iter().map(Vec::as_slice).collect();
        let captured = capture(5, 7, &refs);
        insta::assert_snapshot!(captured.text, @r"
        aaabb
        [... efix: 288 bytes omitted ...]
        tuuuvvv
        ");
        assert!(captured.truncated);
    }

    #[test]
    fn a_write_larger_than_the_tail_keeps_its_end() {
        let captured = capture(2, 3, &[b"0123456789", b"ab", b"cdefg"]);
        assert_eq!(
            captured,
            Captured {
                text: "01\n[... efix: 12 bytes omitted ...]\nefg".to_owned(),
                truncated: true
            }
        );
    }

    #[test]
    fn characters_cut_at_the_gap_are_dropped_not_mangled() {
        // "é" is two bytes, "€" three: the head ends inside "é", the tail starts inside "€".
        let captured = capture(2, 4, &["aé".as_bytes(), b"xxxxxx", "€ok".as_bytes()]);
        assert_eq!(
            captured,
            Captured {
                text: "a\n[... efix: 11 bytes omitted ...]\nok".to_owned(),
                truncated: true
            }
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(
            capture(16, 16, &[b"ok \xff\xfe end"]).text,
            "ok \u{fffd}\u{fffd} end"
        );
    }
}
