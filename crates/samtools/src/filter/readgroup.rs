//! Read groups: a record's `RG` tag, the header's `@RG` lines (their `ID` and `LB`), and the
//! header edit `samtools view -r/-R` makes (`@RG` lines of other groups are dropped).

use std::collections::{HashMap, HashSet};

use bam::{Header, Record};

/// htslib copies a library name into a 1024-byte buffer.
const LIBRARY_MAX: usize = 1023;

/// The value of a record's `RG` tag as a C string (whatever its type, as samtools reads it).
pub fn read_group(record: &Record) -> Option<&[u8]> {
    let aux = record.aux();
    let at = bam::aux::find(aux, *b"RG").ok()??;
    let v = &aux[at + 1..];
    let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
    Some(&v[..end])
}

/// The fields of each `@RG` line of the header text (up to its first NUL), in order.
fn rg_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    text[..end]
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"@RG\t"))
}

fn field<'a>(line: &'a [u8], key: &[u8; 2]) -> Option<&'a [u8]> {
    line.split(|&b| b == b'\t')
        .skip(1)
        .find_map(|f| (f.len() >= 3 && &f[..2] == key && f[2] == b':').then(|| &f[3..]))
}

/// The `@RG` `ID` -> `LB` table (`bam_get_library`).
#[derive(Debug, Clone, Default)]
pub struct Libraries {
    by_id: HashMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Libraries {
    /// Reads the `@RG` lines; the first line with a given `ID` wins.
    pub fn from_header(header: &Header) -> Libraries {
        let mut by_id = HashMap::new();
        for line in rg_lines(header.text()) {
            if let Some(id) = field(line, b"ID") {
                let lb = field(line, b"LB").map(|l| l[..l.len().min(LIBRARY_MAX)].to_vec());
                by_id.entry(id.to_vec()).or_insert(lb);
            }
        }
        Libraries { by_id }
    }

    /// The library of a record's read group; `None` without `RG`, without a matching `@RG`
    /// line, or without `LB` on it.
    pub fn of(&self, record: &Record) -> Option<&[u8]> {
        let rg = read_group(record)?;
        self.by_id.get(rg)?.as_deref()
    }
}

/// The header without the `@RG` lines whose `ID` is not in `keep`, as samtools' `-r`/`-R`
/// leave it ([`Header::remove_lines`]).
pub fn keep_read_groups(header: &Header, keep: &HashSet<Vec<u8>>) -> Header {
    header.remove_lines(*b"RG", *b"ID", keep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bam::header::Reference;

    #[test]
    fn libraries_and_header_edit() {
        let text = b"@HD\tVN:1.6\n@RG\tID:a\tLB:libA\n@RG\tID:b\n@RG\tID:a\tLB:other\n@CO\tx\n";
        let h = Header::from_parts(
            text.to_vec(),
            vec![Reference {
                name: b"c".to_vec(),
                len: 9,
            }],
        )
        .unwrap();
        let libs = Libraries::from_header(&h);
        assert_eq!(libs.by_id[&b"a".to_vec()].as_deref(), Some(&b"libA"[..]));
        assert_eq!(libs.by_id[&b"b".to_vec()], None);
        let keep: HashSet<Vec<u8>> = [b"b".to_vec()].into_iter().collect();
        assert_eq!(
            keep_read_groups(&h, &keep).text(),
            b"@HD\tVN:1.6\n@RG\tID:b\n@CO\tx\n@SQ\tSN:c\tLN:9\n"
        );
        let all: HashSet<Vec<u8>> = [b"a".to_vec(), b"b".to_vec()].into_iter().collect();
        assert_eq!(
            keep_read_groups(&h, &all).text(),
            text,
            "nothing removed: text as read"
        );
    }
}
