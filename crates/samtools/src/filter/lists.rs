//! The small argument languages of `samtools view` whose values are selection data: tag lists
//! (`-x`, `--keep-tag`), `-d TAG[:VAL]`, `-D TAG:FILE`, and word lists from files (`-N`, `-R`).

use std::collections::HashSet;
use std::fmt;

/// An argument error, worded as samtools words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

/// `parse_aux_list`: `XX,YY,...` (two characters each) added to `set`.
pub fn parse_tag_list(arg: &str, set: &mut HashSet<[u8; 2]>) -> Result<(), ArgError> {
    let mut s = arg.as_bytes();
    while s.len() >= 2 {
        set.insert([s[0], s[1]]);
        s = &s[2..];
        match s.first() {
            Some(b',') => s = &s[1..],
            Some(_) => break,
            None => {}
        }
    }
    if s.is_empty() {
        Ok(())
    } else {
        Err(ArgError(
            "Error parsing option, auxiliary tags should be exactly two characters long."
                .to_string(),
        ))
    }
}

/// An aux tag with what follows it in an option: a value (`-d`) or a file name (`-D`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagWith<T> {
    /// The two-character tag.
    pub tag: [u8; 2],
    /// What follows the tag.
    pub with: T,
}

/// `-d TAG[:VALUE]`: the tag and the value if one is given (`XX:` gives none).
pub fn parse_tag_value(arg: &str) -> Result<TagWith<Option<Vec<u8>>>, ArgError> {
    let b = arg.as_bytes();
    if b.len() < 2 || (b.len() > 2 && b[2] != b':') {
        return Err(ArgError(format!("Invalid \"tag:value\" option: \"{arg}\"")));
    }
    let value = (b.len() > 3).then(|| b[3..].to_vec());
    Ok(TagWith {
        tag: [b[0], b[1]],
        with: value,
    })
}

/// `-D TAG:FILE` (or `TAG;FILE`): the tag and the file name.
pub fn parse_tag_file(arg: &str) -> Result<TagWith<&str>, ArgError> {
    let b = arg.as_bytes();
    if b.len() < 4 || (b[2] != b':' && b[2] != b';') {
        return Err(ArgError(format!("Invalid \"tag:file\" option: \"{arg}\"")));
    }
    Ok(TagWith {
        tag: [b[0], b[1]],
        with: &arg[3..],
    })
}

/// The words of a file as `fscanf(fp, "%1023s")` reads them: split on whitespace, a longer
/// word split every 1023 bytes.
pub fn read_words(path: &str) -> Result<Vec<Vec<u8>>, ArgError> {
    let text = std::fs::read(path)
        .map_err(|e| ArgError(format!("failed to open \"{path}\" for reading: {e}")))?;
    Ok(words(&text))
}

fn words(text: &[u8]) -> Vec<Vec<u8>> {
    text.split(|b| b.is_ascii_whitespace() || *b == 0x0b)
        .filter(|w| !w.is_empty())
        .flat_map(|w| w.chunks(1023).map(<[u8]>::to_vec))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lists() {
        let mut set = HashSet::new();
        parse_tag_list("NM,MD", &mut set).unwrap();
        parse_tag_list("XA", &mut set).unwrap();
        assert_eq!(set.len(), 3);
        assert!(parse_tag_list("NMX", &mut set).is_err());
        assert!(parse_tag_list("N", &mut set).is_err());
        assert!(parse_tag_list("NM,", &mut set).is_ok());
    }

    #[test]
    fn tag_values_and_words() {
        let rg = |with| Ok(TagWith { tag: *b"RG", with });
        assert_eq!(parse_tag_value("RG"), rg(None));
        assert_eq!(parse_tag_value("RG:"), rg(None));
        assert_eq!(parse_tag_value("RG:x:y"), rg(Some(b"x:y".to_vec())));
        assert!(parse_tag_value("R").is_err());
        assert!(parse_tag_value("RGx").is_err());
        let file = Ok(TagWith {
            tag: *b"RG",
            with: "f.txt",
        });
        assert_eq!(parse_tag_file("RG:f.txt"), file);
        assert_eq!(parse_tag_file("RG;f.txt"), file);
        assert!(parse_tag_file("RG:").is_err());
        assert_eq!(
            words(b" a\tbb\n\nccc \r\n"),
            vec![b"a".to_vec(), b"bb".to_vec(), b"ccc".to_vec()]
        );
        assert_eq!(words(&[b'x'; 1030]).len(), 2);
    }
}
