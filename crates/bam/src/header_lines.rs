//! The header text parsed into lines and tags, as htslib 1.16's `sam_hrecs_t` holds it: the
//! model behind reference-name lookups (`sam_hdr_name2tid`) and behind adding an `@PG` line
//! (`sam_hdr_add_pg`), after which htslib writes the header rebuilt from this model.
//!
//! What the model does to a header, as htslib does:
//! - the binary reference list comes first; an `@SQ` line naming one of its references is tied
//!   to it (a differing `LN:` is replaced by the binary length); an `@SQ` line naming another
//!   reference adds one; a reference without an `@SQ` line gets one, after the last `@SQ`;
//! - an `@HD` line moves to the top; lines holding only a type (`@CO`) are dropped; the text
//!   ends at its first NUL;
//! - the text is rejected (so no name resolves and no `@PG` can be added) for a line that does
//!   not start with `@` and two letters, a missing tab, a field without a `XX:` tag, an `@SQ`
//!   without `SN:` or `LN:`, an `@RG` or `@PG` without `ID:`, or a reference named twice.

use std::collections::HashMap;

use crate::header::Reference;

/// One header line: its two-letter type and its fields (`XX:value`, or the whole text of an
/// `@CO` line), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub kind: [u8; 2],
    pub tags: Vec<Vec<u8>>,
    /// The lines before and after this one in the header (a ring, as htslib links them).
    prev: usize,
    next: usize,
}

impl Line {
    /// The value of the first field with this tag.
    pub fn tag(&self, key: &[u8; 2]) -> Option<&[u8]> {
        self.tags
            .iter()
            .find(|t| t.len() >= 3 && t[..2] == key[..])
            .map(|t| &t[3..])
    }
}

/// A reference as the model knows it.
#[derive(Debug, Clone)]
pub(crate) struct RefEntry {
    pub name: Vec<u8>,
    pub len: i64,
    /// The `@SQ` line tied to it.
    pub line: Option<usize>,
}

/// A program (`@PG` line).
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub id: Vec<u8>,
    pub line: usize,
}

/// The parsed header.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeaderLines {
    pub lines: Vec<Line>,
    first: Option<usize>,
    /// The last line created of each type (new lines of a type go after it).
    last_of_kind: HashMap<[u8; 2], usize>,
    pub refs: Vec<RefEntry>,
    pub ref_names: HashMap<Vec<u8>, usize>,
    /// True when the text added references or changed their lengths.
    pub refs_changed: bool,
    pub programs: Vec<Program>,
    pub program_ids: HashMap<Vec<u8>, usize>,
    /// Programs no other line names in `PP:` (htslib's `pg_end`, as kept while parsing).
    pub chain_ends: Vec<usize>,
    /// Counter for unique `@PG` IDs (htslib's `ID_cnt`).
    pub id_counter: u32,
    /// Warnings htslib prints while building the model.
    pub warnings: Vec<String>,
}

impl HeaderLines {
    /// `sam_hdr_fill_hrecs`: the binary references, then the text, then `@SQ` lines for the
    /// references the text does not describe. The error is htslib's message.
    pub fn parse(refs: &[Reference], text: &[u8]) -> Result<HeaderLines, String> {
        let mut h = HeaderLines {
            id_counter: 1,
            ..HeaderLines::default()
        };
        for (tid, r) in refs.iter().enumerate() {
            if h.ref_names.insert(r.name.clone(), tid).is_some() {
                return Err(format!(
                    "[E::sam_hrecs_refs_from_targets_array] Duplicate entry \"{}\" in target list",
                    String::from_utf8_lossy(&r.name)
                ));
            }
            h.refs.push(RefEntry {
                name: r.name.clone(),
                len: i64::from(r.len),
                line: None,
            });
        }
        h.parse_text(text)?;
        for tid in 0..h.refs.len() {
            if h.refs[tid].line.is_none() {
                let tags = vec![
                    (*b"SN", h.refs[tid].name.clone()),
                    (*b"LN", h.refs[tid].len.to_string().into_bytes()),
                ];
                h.add_line(*b"SQ", tags, Vec::new())?;
            }
        }
        Ok(h)
    }

    /// `sam_hrecs_parse_lines`.
    fn parse_text(&mut self, text: &[u8]) -> Result<(), String> {
        let len = text.len();
        if len < 3 {
            if len == 0 || text[0] == 0 {
                return Ok(());
            }
            return Err(line_error("Header line too short", text, 1));
        }
        let mut i = 0;
        let mut lno = 1;
        while i < len - 3 && text[i] != 0 {
            let start = i;
            if text[i] != b'@' {
                return Err(line_error(
                    "Header line does not start with '@'",
                    &text[start..],
                    lno,
                ));
            }
            if !text[i + 1].is_ascii_alphabetic() || !text[i + 2].is_ascii_alphabetic() {
                return Err(line_error(
                    "Header line does not have a two character key",
                    &text[start..],
                    lno,
                ));
            }
            let kind = [text[i + 1], text[i + 2]];
            i += 3;
            if i == len || text[i] == b'\n' {
                i += 1;
                lno += 1;
                continue;
            }
            let missing_tab = || line_error("Missing tab", &text[start..], lno);
            let mut tags = Vec::new();
            if &kind == b"CO" {
                if text[i] != b'\t' {
                    return Err(missing_tab());
                }
                i += 1;
                let end = field_end(text, i, false);
                tags.push(text[i..end].to_vec());
                i = end;
            } else {
                loop {
                    if i == len || text[i] != b'\t' {
                        return Err(missing_tab());
                    }
                    i += 1;
                    let end = field_end(text, i, true);
                    if end - i < 3 || text[i + 2] != b':' {
                        return Err(line_error("Malformed key:value pair", &text[start..], lno));
                    }
                    tags.push(text[i..end].to_vec());
                    i = end;
                    if !(i < len && text[i] != 0 && text[i] != b'\n') {
                        break;
                    }
                }
            }
            let at = self.push_line(kind, tags, None);
            self.index_line(at)?;
            i += 1;
            lno += 1;
        }
        Ok(())
    }

    /// Adds a line as `sam_hrecs_vadd` does: after the last line of its type (or at the end),
    /// fields with an empty value among `tags` left out, `more` kept as given.
    pub fn add_line(
        &mut self,
        kind: [u8; 2],
        tags: Vec<([u8; 2], Vec<u8>)>,
        more: Vec<([u8; 2], Vec<u8>)>,
    ) -> Result<usize, String> {
        let field = |(k, v): ([u8; 2], Vec<u8>)| {
            let mut f = k.to_vec();
            f.push(b':');
            f.extend_from_slice(&v);
            f
        };
        let mut fields: Vec<Vec<u8>> = tags
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(field)
            .collect();
        fields.extend(more.into_iter().map(field));
        let after = self.last_of_kind.get(&kind).copied();
        let at = self.push_line(kind, fields, after);
        self.index_line(at)?;
        Ok(at)
    }

    /// `sam_hrecs_global_list_add`: links a new line after `after`, at the end, or (an `@HD`
    /// when the first line is not one) at the top.
    fn push_line(&mut self, kind: [u8; 2], tags: Vec<Vec<u8>>, after: Option<usize>) -> usize {
        let at = self.lines.len();
        self.last_of_kind.insert(kind, at);
        let Some(first) = self.first else {
            self.lines.push(Line {
                kind,
                tags,
                prev: at,
                next: at,
            });
            self.first = Some(at);
            return at;
        };
        let to_top = &kind == b"HD" && &self.lines[first].kind != b"HD";
        let after = match after {
            Some(a) if !to_top => a,
            _ => self.lines[first].prev,
        };
        let next = self.lines[after].next;
        self.lines.push(Line {
            kind,
            tags,
            prev: after,
            next,
        });
        self.lines[after].next = at;
        self.lines[next].prev = at;
        if to_top {
            self.first = Some(at);
        }
        at
    }

    /// `sam_hrecs_update_hashes`: ties `@SQ`, `@RG` and `@PG` lines into the tables.
    fn index_line(&mut self, at: usize) -> Result<(), String> {
        match &self.lines[at].kind {
            b"SQ" => self.index_sq(at),
            b"RG" => {
                if self.lines[at].tag(b"ID").is_none() {
                    return Err(
                        "[E::sam_hrecs_update_hashes] Header includes @RG line with no ID: tag"
                            .to_string(),
                    );
                }
                Ok(())
            }
            b"PG" => self.index_pg(at),
            _ => Ok(()),
        }
    }

    fn index_sq(&mut self, at: usize) -> Result<(), String> {
        let line = &self.lines[at];
        let (mut name, mut len, mut alt) = (None, -1i64, None);
        for t in &line.tags {
            match &t[..2] {
                b"SN" => name = Some(t[3..].to_vec()),
                b"LN" => len = strtoll(&t[3..]),
                b"AN" => alt = Some(t[3..].to_vec()),
                _ => {}
            }
        }
        let Some(name) = name else {
            return Err(
                "[E::sam_hrecs_update_hashes] Header includes @SQ line with no SN: tag".to_string(),
            );
        };
        if len == -1 {
            return Err(format!(
                "[E::sam_hrecs_update_hashes] Header includes @SQ line \"{}\" with no LN: tag",
                String::from_utf8_lossy(&name)
            ));
        }
        let mut tid = self.refs.len();
        if let Some(&known) = self.ref_names.get(&name) {
            if self.refs[known].line.is_none() {
                self.refs[known].line = Some(at);
                if len != self.refs[known].len {
                    let fixed = format!("LN:{}", self.refs[known].len).into_bytes();
                    if let Some(t) = self.lines[at]
                        .tags
                        .iter_mut()
                        .find(|t| t.starts_with(b"LN"))
                    {
                        *t = fixed;
                    }
                }
                self.add_alt_names(known, alt.as_deref());
                return Ok(());
            }
            if self.refs[known].name == name {
                return Err(format!(
                    "[E::sam_hrecs_update_hashes] Duplicate entry \"{}\" in sam header",
                    String::from_utf8_lossy(&name)
                ));
            }
            self.warnings.push(format!(
                "[W::sam_hrecs_update_hashes] Ref name SN:\"{}\" is a duplicate of an existing AN key",
                String::from_utf8_lossy(&name)
            ));
            tid = self.refs.len();
        }
        self.refs.push(RefEntry {
            name: name.clone(),
            len,
            line: Some(at),
        });
        self.ref_names.insert(name, tid);
        self.add_alt_names(tid, alt.as_deref());
        self.refs_changed = true;
        Ok(())
    }

    /// `sam_hrecs_add_ref_altnames`: each non-empty comma-separated name not yet known.
    fn add_alt_names(&mut self, tid: usize, list: Option<&[u8]>) {
        let Some(list) = list else { return };
        for alt in list.split(|&b| b == b',').filter(|a| !a.is_empty()) {
            match self.ref_names.get(alt) {
                None => {
                    self.ref_names.insert(alt.to_vec(), tid);
                }
                Some(&other) if other != tid => self.warnings.push(format!(
                    "[W::sam_hrecs_add_ref_altnames] Duplicate entry AN:\"{}\" in sam header",
                    String::from_utf8_lossy(alt)
                )),
                Some(_) => {}
            }
        }
    }

    fn index_pg(&mut self, at: usize) -> Result<(), String> {
        let npg = self.programs.len();
        let mut id: Option<Vec<u8>> = None;
        for t in &self.lines[at].tags {
            match &t[..2] {
                b"ID" if id.is_none() => id = Some(t[3..].to_vec()),
                b"ID" => self.warnings.push(format!(
                    "[W::sam_hrecs_update_hashes] PG line with multiple ID tags. The first encountered was preferred - ID:{}",
                    String::from_utf8_lossy(id.as_deref().unwrap_or_default())
                )),
                b"PP" => {
                    if let Some(&p) = self.program_ids.get(&t[3..]) {
                        // The program it follows no longer ends a chain.
                        if self.chain_ends.last() == Some(&p) {
                            self.chain_ends.pop();
                        } else {
                            let mut i = 0;
                            while i < self.chain_ends.len() {
                                if self.chain_ends[i] == p {
                                    self.chain_ends.remove(i);
                                }
                                i += 1;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let Some(id) = id else {
            return Err("[E::sam_hrecs_update_hashes] @PG line without an ID: tag".to_string());
        };
        self.program_ids.insert(id.clone(), npg);
        self.programs.push(Program { id, line: at });
        self.chain_ends.push(npg);
        Ok(())
    }

    /// The lines of a type, in header order.
    pub fn lines_of(&self, kind: [u8; 2]) -> Vec<usize> {
        let mut out = Vec::new();
        let Some(first) = self.first else {
            return out;
        };
        let mut at = first;
        loop {
            if self.lines[at].kind == kind {
                out.push(at);
            }
            at = self.lines[at].next;
            if at == first {
                return out;
            }
        }
    }

    /// `sam_hrecs_remove_line` for a line that no table refers to (an `@RG` or `@CO` line):
    /// unlinked from the header, so the rebuilt text leaves it out.
    pub fn remove_line(&mut self, at: usize) {
        let (prev, next, kind) = {
            let l = &self.lines[at];
            (l.prev, l.next, l.kind)
        };
        if self.last_of_kind.get(&kind) == Some(&at) {
            let before = self
                .lines_of(kind)
                .into_iter()
                .take_while(|&i| i != at)
                .last();
            match before {
                Some(b) => self.last_of_kind.insert(kind, b),
                None => self.last_of_kind.remove(&kind),
            };
        }
        if next == at {
            self.first = None;
        } else {
            self.lines[prev].next = next;
            self.lines[next].prev = prev;
            if self.first == Some(at) {
                self.first = Some(next);
            }
        }
        self.lines[at].prev = at;
        self.lines[at].next = at;
    }

    /// The header text rebuilt from the lines (`sam_hrecs_rebuild_text`).
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let Some(first) = self.first else {
            return out;
        };
        let mut at = first;
        loop {
            let line = &self.lines[at];
            out.push(b'@');
            out.extend_from_slice(&line.kind);
            for t in &line.tags {
                out.push(b'\t');
                out.extend_from_slice(t);
            }
            out.push(b'\n');
            at = line.next;
            if at == first {
                return out;
            }
        }
    }

    /// The binary reference list a header written from this model has: the model's references
    /// when the text changed them, else `binary` as it was.
    pub fn binary_refs(&self, binary: &[Reference]) -> Vec<Reference> {
        if !self.refs_changed {
            return binary.to_vec();
        }
        self.refs
            .iter()
            .map(|r| Reference {
                name: r.name.clone(),
                len: u32::try_from(r.len).unwrap_or(u32::MAX),
            })
            .collect()
    }
}

/// Where a field ends: at a NUL, a newline, or (for tagged fields) a tab.
fn field_end(text: &[u8], from: usize, stop_at_tab: bool) -> usize {
    text[from..]
        .iter()
        .position(|&b| b == 0 || b == b'\n' || (stop_at_tab && b == b'\t'))
        .map_or(text.len(), |p| from + p)
}

/// `sam_hrecs_error`: the message, the line number and up to 256 bytes of the line.
fn line_error(message: &str, line: &[u8], lno: usize) -> String {
    let shown = &line[..line.len().min(256)];
    let end = shown
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(shown.len());
    format!(
        "[E::sam_hrecs_error] {message} at line {lno}: \"{}\"",
        String::from_utf8_lossy(&shown[..end])
    )
}

/// C's `strtoll(s, NULL, 10)`: optional blanks and sign, then digits; 0 when there are none.
fn strtoll(s: &[u8]) -> i64 {
    region::strtol(s, 10).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(names: &[(&str, u32)]) -> Vec<Reference> {
        names
            .iter()
            .map(|(n, l)| Reference {
                name: n.as_bytes().to_vec(),
                len: *l,
            })
            .collect()
    }

    #[test]
    fn stubs_after_last_sq_and_hd_to_top() {
        let text = b"@CO\tfirst\n@SQ\tSN:b\tLN:7\n@HD\tVN:1.6\n@CO\n@RG\tID:x\n";
        let h = HeaderLines::parse(&refs(&[("a", 5), ("b", 9)]), text).unwrap();
        assert_eq!(
            String::from_utf8(h.text()).unwrap(),
            "@HD\tVN:1.6\n@CO\tfirst\n@SQ\tSN:b\tLN:9\n@SQ\tSN:a\tLN:5\n@RG\tID:x\n"
        );
        assert!(!h.refs_changed);
        assert_eq!(h.ref_names.get(&b"a"[..]), Some(&0));
    }

    #[test]
    fn text_only_references_are_added() {
        let h = HeaderLines::parse(&refs(&[("a", 5)]), b"@SQ\tSN:z\tLN:3\tAN:zz,y\n").unwrap();
        assert!(h.refs_changed);
        assert_eq!(h.ref_names.get(&b"zz"[..]), Some(&1));
        let b = h.binary_refs(&refs(&[("a", 5)]));
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].name, b"z");
    }

    #[test]
    fn rejected_texts() {
        let r = refs(&[("a", 5)]);
        for text in [
            &b"@SQ\tSN:a\tLN:5\tfoo\n"[..],
            b"@SQ\tLN:5\n",
            b"@SQ\tSN:a\n",
            b"@RG\tPL:x\n",
            b"@PG\tPN:x\n",
            b"@SQ\tSN:a\tLN:5\n@SQ\tSN:a\tLN:5\n",
            b"@S1\tSN:a\n",
            b"@SQ SN:a\n",
            b"@HD\tVN:1.6\t\n",
        ] {
            assert!(
                HeaderLines::parse(&r, text).is_err(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(HeaderLines::parse(&refs(&[("a", 1), ("a", 2)]), b"").is_err());
    }

    #[test]
    fn removed_lines_leave_the_ring() {
        let text = b"@RG\tID:a\n@HD\tVN:1.6\n@RG\tID:b\n@CO\tx\n@RG\tID:c\n";
        let mut h = HeaderLines::parse(&[], text).unwrap();
        let rg = h.lines_of(*b"RG");
        assert_eq!(rg.len(), 3);
        h.remove_line(rg[2]);
        h.remove_line(rg[0]);
        assert_eq!(h.text(), b"@HD\tVN:1.6\n@RG\tID:b\n@CO\tx\n");
        h.add_line(*b"RG", vec![(*b"ID", b"d".to_vec())], Vec::new())
            .unwrap();
        assert_eq!(h.text(), b"@HD\tVN:1.6\n@RG\tID:b\n@RG\tID:d\n@CO\tx\n");
        let mut one = HeaderLines::parse(&[], b"@CO\tonly\n").unwrap();
        one.remove_line(one.lines_of(*b"CO")[0]);
        assert!(one.text().is_empty());
    }

    #[test]
    fn nul_ends_the_text_and_strtoll_is_lenient() {
        let h = HeaderLines::parse(&[], b"@CO\tx\n\0@SQ\tbroken\n").unwrap();
        assert_eq!(h.text(), b"@CO\tx\n");
        assert_eq!(strtoll(b" 12x"), 12);
        assert_eq!(strtoll(b"-3"), -3);
        assert_eq!(strtoll(b"x"), 0);
    }
}
