//! Adding the `@PG` line of a program to a header, with the rules of htslib 1.16's
//! `sam_hdr_add_pg`: one new line per chain of existing `@PG` lines (linked by `PP:`), each
//! placed after the last `@PG` line and linked to the end of its chain, with an ID made unique
//! by a `.N` suffix; the header text is then rebuilt from its lines.

use crate::header::Header;
use crate::header_lines::HeaderLines;

/// The program a `@PG` line describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program<'a> {
    /// `ID:` (made unique) and `PN:`.
    pub name: &'a str,
    /// `VN:`.
    pub version: &'a str,
    /// `CL:`: the command line (tabs become spaces, as samtools' `stringify_argv` does).
    pub command_line: &'a str,
}

impl Header {
    /// The header with `program`'s `@PG` line added, rebuilt as htslib writes it; the error is
    /// htslib's message when the header text cannot be parsed (samtools then fails with
    /// "failed to add PG line to the header").
    ///
    /// ```
    /// use bam::header::{Header, Reference};
    /// use bam::pg::Program;
    /// let text = b"@HD\tVN:1.6\n@PG\tID:bwa\tPN:bwa\n@CO\tdone\n".to_vec();
    /// let h = Header::from_parts(text, vec![Reference { name: b"c".to_vec(), len: 9 }]).unwrap();
    /// let p = Program { name: "hts", version: "0.1", command_line: "hts view -h x.bam" };
    /// let with = h.with_program(&p).unwrap();
    /// assert_eq!(
    ///     String::from_utf8_lossy(with.text()),
    ///     "@HD\tVN:1.6\n@PG\tID:bwa\tPN:bwa\n@PG\tID:hts\tPN:hts\tPP:bwa\tVN:0.1\tCL:hts view -h x.bam\n\
    ///      @CO\tdone\n@SQ\tSN:c\tLN:9\n"
    /// );
    /// ```
    pub fn with_program(&self, program: &Program<'_>) -> Result<Header, String> {
        let mut lines = self.lines()?.clone();
        add_program(&mut lines, program)?;
        let refs = lines.binary_refs(self.refs());
        Header::from_parts(lines.text(), refs).map_err(|e| e.to_string())
    }
}

/// `sam_hdr_link_pg` then `sam_hdr_add_pg`.
fn add_program(lines: &mut HeaderLines, program: &Program<'_>) -> Result<(), String> {
    let ends = chain_ends(lines);
    let command_line = program.command_line.replace('\t', " ");
    let more = || {
        vec![
            (*b"VN", program.version.as_bytes().to_vec()),
            (*b"CL", command_line.as_bytes().to_vec()),
        ]
    };
    if ends.is_empty() {
        let id = unique_id(lines, program.name);
        let tags = vec![(*b"ID", id), (*b"PN", program.name.as_bytes().to_vec())];
        lines.add_line(*b"PG", tags, more())?;
        return Ok(());
    }
    for end in ends {
        let id = unique_id(lines, program.name);
        let mut tags = vec![(*b"ID", id), (*b"PN", program.name.as_bytes().to_vec())];
        // htslib reads past its array when a cycle of PP links leaves no end (undefined
        // behaviour); such a line gets no PP here.
        if let Some(p) = end.and_then(|e| lines.programs.get(e)) {
            tags.push((*b"PP", p.id.clone()));
        }
        lines.add_line(*b"PG", tags, more())?;
    }
    Ok(())
}

/// The programs new lines follow: those at the end of a chain of two or more `@PG` lines;
/// failing that, the chain end htslib kept while parsing (the last line, in the usual case of
/// unlinked lines). `None` stands for htslib's out-of-range read.
fn chain_ends(lines: &mut HeaderLines) -> Vec<Option<usize>> {
    let n = lines.programs.len();
    if n == 0 {
        return Vec::new();
    }
    let mut end: Vec<Option<usize>> = (0..n).map(Some).collect();
    let mut chain = vec![0usize; n];
    for i in 0..n {
        let line = &lines.lines[lines.programs[i].line];
        let Some(pp) = line.tag(b"PP") else { continue };
        let Some(&prev) = lines.program_ids.get(pp) else {
            let warning = format!(
                "[W::sam_hdr_link_pg] PG line with PN:{} has a PP link to missing program '{}'",
                String::from_utf8_lossy(&lines.programs[i].id),
                String::from_utf8_lossy(pp)
            );
            lines.warnings.push(warning);
            continue;
        };
        end[prev] = None;
        chain[i] = chain[prev] + 1;
    }
    let mut ends: Vec<Option<usize>> = (0..n)
        .filter(|&i| end[i].is_some() && chain[i] > 0)
        .map(|i| end[i])
        .collect();
    if ends.is_empty() && !lines.chain_ends.is_empty() {
        ends.push(end[lines.chain_ends.len() - 1]);
    }
    lines.chain_ends = ends.iter().flatten().copied().collect();
    ends
}

/// `sam_hdr_pg_id`: the name itself if unused, else `name.N` with htslib's running counter.
fn unique_id(lines: &mut HeaderLines, name: &str) -> Vec<u8> {
    if !lines.program_ids.contains_key(name.as_bytes()) {
        return name.as_bytes().to_vec();
    }
    loop {
        let id = format!("{name}.{}", lines.id_counter);
        lines.id_counter += 1;
        if !lines.program_ids.contains_key(id.as_bytes()) {
            return id.into_bytes();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Reference;

    fn add(text: &str) -> String {
        let h = Header::from_parts(text.as_bytes().to_vec(), Vec::<Reference>::new()).unwrap();
        let p = Program {
            name: "hts",
            version: "1",
            command_line: "c\tl",
        };
        String::from_utf8(h.with_program(&p).unwrap().text().to_vec()).unwrap()
    }

    #[test]
    fn first_program() {
        assert_eq!(add(""), "@PG\tID:hts\tPN:hts\tVN:1\tCL:c l\n");
        assert_eq!(
            add("@CO\tx\n"),
            "@CO\tx\n@PG\tID:hts\tPN:hts\tVN:1\tCL:c l\n"
        );
    }

    #[test]
    fn one_line_per_chain_linked_to_its_end() {
        let out = add("@PG\tID:a\n@PG\tID:b\tPP:a\n@PG\tID:c\n@PG\tID:d\tPP:c\n@CO\tz\n");
        assert_eq!(
            out,
            "@PG\tID:a\n@PG\tID:b\tPP:a\n@PG\tID:c\n@PG\tID:d\tPP:c\n\
             @PG\tID:hts\tPN:hts\tPP:b\tVN:1\tCL:c l\n\
             @PG\tID:hts.1\tPN:hts\tPP:d\tVN:1\tCL:c l\n@CO\tz\n"
        );
    }

    #[test]
    fn unlinked_lines_follow_the_last_and_ids_stay_unique() {
        let out = add("@PG\tID:hts\n@PG\tID:x\n");
        assert_eq!(
            out,
            "@PG\tID:hts\n@PG\tID:x\n@PG\tID:hts.1\tPN:hts\tPP:x\tVN:1\tCL:c l\n"
        );
        // A lone line beside a chain is not a chain end.
        let out = add("@PG\tID:a\n@PG\tID:b\tPP:a\n@PG\tID:c\n");
        assert!(
            out.ends_with("@PG\tID:hts\tPN:hts\tPP:b\tVN:1\tCL:c l\n"),
            "{out}"
        );
    }

    #[test]
    fn unparsable_text_is_an_error() {
        let h = Header::from_parts(b"@SQ\tSN:a\tLN:1\tbad\n".to_vec(), Vec::new()).unwrap();
        let p = Program {
            name: "hts",
            version: "1",
            command_line: "",
        };
        assert!(h.with_program(&p).is_err());
    }
}
