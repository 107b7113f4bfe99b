//! The names a region string is resolved against: a BAM or CRAM header's references, a tabix
//! index's sequences. Each format implements [`Names`] for its own list.

use crate::position::RefId;

/// A list of reference names, looked up as the format's `name2id` function does
/// (`sam_hdr_name2tid`, `tbx_name2id`).
pub trait Names {
    /// The id of the reference called `name`, if there is one.
    fn tid(&self, name: &[u8]) -> Option<RefId>;

    /// How many references the list holds.
    fn count(&self) -> usize;

    /// The name of reference `tid`, if there is one.
    fn name(&self, tid: RefId) -> Option<&[u8]>;
}

/// A plain list of names in id order (a tabix index's sequences), looked up one by one as
/// `tbx_name2id`'s hash would answer: the first equal name.
impl<T: AsRef<[u8]>> Names for [T] {
    fn tid(&self, name: &[u8]) -> Option<RefId> {
        self.iter().position(|n| n.as_ref() == name).map(RefId::new)
    }

    fn count(&self) -> usize {
        self.len()
    }

    fn name(&self, tid: RefId) -> Option<&[u8]> {
        self.get(tid.get()).map(AsRef::as_ref)
    }
}

/// How many distinct references region strings name, as far as can be told before the header
/// is read (`name`, `name:beg-end`, `{name}:beg-end`); `*` needs every reference
/// (`usize::MAX`). For a reader that asks for a remote index beside the header: about that
/// many references' worth of it.
///
/// ```
/// let regions = ["1:1000-2000", "1:5000", "2", "{3:4}:1-5", "X:1,000-2,000"].map(String::from);
/// assert_eq!(region::distinct_references(&regions), 4);
/// assert_eq!(region::distinct_references(&["1".into(), "*".into()]), usize::MAX);
/// ```
pub fn distinct_references(regions: &[String]) -> usize {
    let mut names: Vec<&str> = Vec::new();
    for region in regions {
        if region == "*" {
            return usize::MAX;
        }
        let name = match region.strip_prefix('{').and_then(|r| r.split_once('}')) {
            Some((name, _)) => name,
            None => match region.rsplit_once(':') {
                Some((name, range))
                    if !range.is_empty()
                        && range
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == ',' || c == '-') =>
                {
                    name
                }
                _ => region.as_str(),
            },
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_names() {
        let names = ["chr1", "chr2"];
        let list: &[&str] = &names;
        assert_eq!(list.tid(b"chr2"), Some(RefId::new(1)));
        assert_eq!(list.tid(b"chr3"), None);
        assert_eq!(list.count(), 2);
        assert_eq!(list.name(RefId::new(0)), Some(&b"chr1"[..]));
        assert_eq!(list.name(RefId::new(2)), None);
    }
}
