//! CRAM mutants for `cargo xtask mutate`: the file's containers, blocks and slices found with
//! the cram crate's own parsers, then one damage each. "Coherent" damage keeps every CRC and
//! length right around the one thing changed (and the `.crai`'s container offsets follow the
//! bytes), so that the reader's checks, not the framing, meet it; raw damage (flipped bits,
//! cuts, containers moved under an index that no longer fits) is there too.

use cram::num::Cursor;
use cram::{Block, ContainerHeader, ContentType, FileDefinition, Version};
use testkit::Rng;

use crate::mutate::Mutant;
use crate::mutate_crai::Crai;

/// A container as found: its bytes' place, its header, its blocks.
struct Cont {
    at: usize,
    end: usize,
    header: ContainerHeader,
    blocks: Vec<Blk>,
}

/// A block as found: where it starts, where its data lies, where it ends (after its CRC).
#[derive(Clone)]
struct Blk {
    at: usize,
    data: std::ops::Range<usize>,
    end: usize,
    content_type: ContentType,
}

/// A CRAM file taken apart.
pub(crate) struct Layout {
    version: Version,
    /// The header container first, the EOF container last.
    containers: Vec<Cont>,
}

/// The mutation classes, each applied by [`mutate`].
pub(crate) const KINDS: &[&str] = &[
    "container-bits",
    "container-field",
    "landmarks",
    "block-bits",
    "block-field",
    "data-bits",
    "data-bits-crc",
    "truncate",
    "container-dup",
    "container-drop",
    "container-swap",
    "container-dup-reindexed",
    "container-drop-reindexed",
    "container-swap-reindexed",
    "block-dup",
    "block-drop",
    "block-swap",
    "slice-drop",
    "slice-dup",
    "crai-bits",
    "crai-truncate",
    "crai-field",
    "crai-lines",
];

/// Finds the containers and blocks of `data`.
pub(crate) fn layout(data: &[u8]) -> Result<Layout, String> {
    let def = FileDefinition::parse(data).map_err(|e| e.to_string())?;
    let version = def.version;
    let mut containers = Vec::new();
    let mut at = FileDefinition::LEN;
    while at < data.len() {
        let header =
            ContainerHeader::parse(&data[at..], at as u64, version).map_err(|e| e.to_string())?;
        let body_at = at + header.header_len;
        let end = body_at + header.length;
        let mut c = Cursor::new(&data[body_at..end], body_at as u64);
        let mut blocks = Vec::new();
        while c.remaining() > 0 {
            let start = body_at + c.position();
            let b = Block::read(&mut c, version).map_err(|e| e.to_string())?;
            let stop = body_at + c.position();
            let crc = if version.has_crc() { 4 } else { 0 };
            let data_end = stop - crc;
            blocks.push(Blk {
                at: start,
                data: data_end - b.data.len()..data_end,
                end: stop,
                content_type: b.content_type,
            });
        }
        containers.push(Cont {
            at,
            end,
            header,
            blocks,
        });
        at = end;
    }
    if containers.len() < 3 {
        return Err("fewer than three containers (header, data, EOF)".into());
    }
    Ok(Layout {
        version,
        containers,
    })
}

/// ITF8, as CRAM stores 32-bit integers.
fn itf8(v: i32) -> Vec<u8> {
    cram::num::encode_itf8(v)
}

/// LTF8 of a non-negative value (the counters and base counts of the fixtures), 9 bytes past
/// 2^49.
fn ltf8(v: i64) -> Vec<u8> {
    let u = v as u64;
    let n = (0..8).find(|&n| u < 1u64 << (7 * (n + 1))).unwrap_or(8);
    let mut out = vec![0u8; n + 1];
    if n == 8 {
        out[0] = 0xff;
        out[1..].copy_from_slice(&u.to_be_bytes());
        return out;
    }
    for (i, b) in out.iter_mut().enumerate().skip(1) {
        *b = (u >> (8 * (n - i))) as u8;
    }
    out[0] = (0xff00u16 >> n) as u8 | (u >> (8 * n)) as u8;
    out
}

/// A container header's bytes, CRC32 made again for 3.x.
fn header_bytes(h: &ContainerHeader, version: Version) -> Vec<u8> {
    let mut out = (h.length as i32).to_le_bytes().to_vec();
    for v in [h.reference_id, h.start, h.span, h.records] {
        out.extend(itf8(v));
    }
    if version.major >= 3 {
        out.extend(ltf8(h.record_counter));
    } else {
        out.extend(itf8(h.record_counter as i32));
    }
    out.extend(ltf8(h.bases));
    out.extend(itf8(h.blocks));
    out.extend(itf8(h.landmarks.len() as i32));
    for &l in &h.landmarks {
        out.extend(itf8(l));
    }
    if version.has_crc() {
        let crc = crc32fast::hash(&out);
        out.extend(crc.to_le_bytes());
    }
    out
}

/// A block's bytes with its header fields edited by `edit` (method, content type, content id,
/// raw size) and its CRC32 made again.
fn block_bytes(data: &[u8], b: &Blk, version: Version, edit: impl Fn(&mut [i32; 4])) -> Vec<u8> {
    let mut c = Cursor::new(&data[b.at..b.end], b.at as u64);
    let mut f = [i32::from(data[b.at]), i32::from(data[b.at + 1]), 0, 0];
    let _ = c.take(2, "");
    f[2] = c.itf8("").unwrap_or(0);
    let _ = c.itf8("");
    f[3] = c.itf8("").unwrap_or(0);
    edit(&mut f);
    let payload = &data[b.data.clone()];
    let mut out = vec![f[0] as u8, f[1] as u8];
    out.extend(itf8(f[2]));
    out.extend(itf8(payload.len() as i32));
    out.extend(itf8(f[3]));
    out.extend_from_slice(payload);
    if version.has_crc() {
        let crc = crc32fast::hash(&out);
        out.extend(crc.to_le_bytes());
    }
    out
}

/// The file as pieces: the bytes before the first container after the header's, then each
/// container's bytes with the offset it had (to move the index's offsets with it).
struct Pieces {
    prefix: Vec<u8>,
    containers: Vec<(Option<u64>, Vec<u8>)>,
}

impl Pieces {
    fn new(data: &[u8], l: &Layout) -> Pieces {
        let first = l.containers[1].at;
        Pieces {
            prefix: data[..first].to_vec(),
            containers: l.containers[1..]
                .iter()
                .map(|c| (Some(c.at as u64), data[c.at..c.end].to_vec()))
                .collect(),
        }
    }

    /// The file, and each old container offset's new one.
    fn join(self) -> (Vec<u8>, Vec<(u64, u64)>) {
        let mut out = self.prefix;
        let mut moved = Vec::new();
        for (old, bytes) in self.containers {
            if let Some(old) = old {
                moved.push((old, out.len() as u64));
            }
            out.extend(bytes);
        }
        (out, moved)
    }
}

/// A data container (not the header's, not the EOF's) at random: its index in `containers`.
fn data_container(l: &Layout, rng: &mut Rng) -> usize {
    1 + rng.below(l.containers.len() - 2)
}

/// A container rebuilt from its header (length and landmarks made to fit) and new blocks.
fn rebuild(h: &ContainerHeader, blocks: &[(ContentType, Vec<u8>)], version: Version) -> Vec<u8> {
    let mut h = h.clone();
    let mut body = Vec::new();
    h.landmarks.clear();
    for (t, b) in blocks {
        if *t == ContentType::SliceHeader {
            h.landmarks.push(body.len() as i32);
        }
        body.extend_from_slice(b);
    }
    h.length = body.len();
    let mut out = header_bytes(&h, version);
    out.extend(body);
    out
}

/// Applies mutation `kind` to `data` (its index `crai`, if any); `None` when the kind does not
/// apply to this file.
pub(crate) fn mutate(
    kind: &str,
    data: &[u8],
    crai: Option<&Crai>,
    rng: &mut Rng,
) -> Option<Mutant> {
    let l = layout(data).ok()?;
    let v = l.version;
    let mut m = Mutant::default();
    let mut pieces = Pieces::new(data, &l);
    let mut reindex = true;
    match kind {
        "container-bits" => {
            let c = &l.containers[rng.below(l.containers.len())];
            let at = c.at + rng.below(c.header.header_len);
            let bit = rng.below(8);
            let mut d = data.to_vec();
            d[at] ^= 1 << bit;
            m.what = format!("bit {bit} of byte {at} (container header at {})", c.at);
            m.data = Some(d);
            return Some(m);
        }
        "container-field" | "landmarks" => {
            let i = data_container(&l, rng);
            let c = &l.containers[i];
            let mut h = c.header.clone();
            m.what = if kind == "landmarks" {
                edit_landmarks(&mut h, rng)?
            } else {
                edit_field(&mut h, rng)
            };
            m.what = format!("container at {}: {}", c.at, m.what);
            let mut bytes = header_bytes(&h, v);
            bytes.extend_from_slice(&data[c.at + c.header.header_len..c.end]);
            pieces.containers[i - 1].1 = bytes;
        }
        "block-bits" | "data-bits" | "data-bits-crc" => {
            let c = &l.containers[rng.below(l.containers.len() - 1)];
            let b = c.blocks.get(rng.below(c.blocks.len()))?;
            let range = match kind {
                "block-bits" => b.at..b.data.start,
                _ => b.data.clone(),
            };
            if range.is_empty() {
                return None;
            }
            let at = range.start + rng.below(range.len());
            let bit = rng.below(8);
            let mut d = data.to_vec();
            d[at] ^= 1 << bit;
            if kind == "data-bits-crc" && v.has_crc() {
                let crc = crc32fast::hash(&d[b.at..b.data.end]);
                d[b.data.end..b.end].copy_from_slice(&crc.to_le_bytes());
            }
            m.what = format!("bit {bit} of byte {at} (block at {})", b.at);
            m.data = Some(d);
            return Some(m);
        }
        "block-field" => {
            let i = data_container(&l, rng);
            let c = &l.containers[i];
            let j = rng.below(c.blocks.len());
            let field = rng.below(4);
            let delta = [1, -1, 7][rng.below(3)];
            let mut blocks = owned_blocks(data, c);
            blocks[j].1 = block_bytes(data, &c.blocks[j], v, |f| {
                f[field] = if field < 2 {
                    (f[field] + delta).rem_euclid(9)
                } else {
                    f[field] + delta
                }
            });
            let name = ["method", "content type", "content id", "raw size"][field];
            m.what = format!("block {j} of the container at {}: {name} {delta:+}", c.at);
            pieces.containers[i - 1].1 = rebuild(&c.header, &blocks, v);
        }
        "truncate" => {
            let at = if rng.below(2) == 0 {
                l.containers[1 + rng.below(l.containers.len() - 1)].at
            } else {
                rng.below(data.len())
            };
            m.what = format!("cut at byte {at} of {}", data.len());
            m.data = Some(data[..at].to_vec());
            return Some(m);
        }
        "container-dup"
        | "container-drop"
        | "container-swap"
        | "container-dup-reindexed"
        | "container-drop-reindexed"
        | "container-swap-reindexed" => {
            reindex = kind.ends_with("-reindexed");
            let i = data_container(&l, rng) - 1;
            let n = pieces.containers.len() - 1;
            match &kind[..13] {
                "container-dup" => {
                    let copy = (None, pieces.containers[i].1.clone());
                    pieces.containers.insert(i + 1, copy);
                }
                "container-dro" => {
                    pieces.containers.remove(i);
                }
                _ => {
                    if n < 2 {
                        return None;
                    }
                    let j = if i + 1 < n { i + 1 } else { i - 1 };
                    pieces.containers.swap(i, j);
                }
            }
            m.what = format!("container at {}", l.containers[i + 1].at);
        }
        "block-dup" | "block-drop" | "block-swap" => {
            let i = data_container(&l, rng);
            let c = &l.containers[i];
            let mut blocks = owned_blocks(data, c);
            let j = rng.below(blocks.len());
            match kind {
                "block-dup" => blocks.insert(j, blocks[j].clone()),
                "block-drop" => {
                    blocks.remove(j);
                }
                _ if blocks.len() > 1 => {
                    let k = if j + 1 < blocks.len() { j + 1 } else { j - 1 };
                    blocks.swap(j, k);
                }
                _ => return None,
            }
            m.what = format!("block {j} of the container at {}", c.at);
            pieces.containers[i - 1].1 = rebuild(&c.header, &blocks, v);
        }
        "slice-drop" | "slice-dup" => {
            let i = data_container(&l, rng);
            let c = &l.containers[i];
            let blocks = owned_blocks(data, c);
            let starts: Vec<usize> = (0..blocks.len())
                .filter(|&k| blocks[k].0 == ContentType::SliceHeader)
                .collect();
            let s = rng.below(starts.len().max(1));
            let from = *starts.get(s)?;
            let to = starts.get(s + 1).copied().unwrap_or(blocks.len());
            let mut out = blocks[..to].to_vec();
            if kind == "slice-dup" {
                out.extend_from_slice(&blocks[from..to]);
            } else {
                out.truncate(from);
            }
            out.extend_from_slice(&blocks[to..]);
            m.what = format!("slice {s} of {} in the container at {}", starts.len(), c.at);
            pieces.containers[i - 1].1 = rebuild(&c.header, &out, v);
        }
        _ => {
            let crai = crai?;
            let (what, index) = crate::mutate_crai::mutate(kind, crai, &l.offsets(), rng)?;
            m.what = what;
            m.index = Some(index);
            return Some(m);
        }
    }
    let (bytes, moved) = pieces.join();
    m.data = Some(bytes);
    if let (Some(crai), true) = (crai, reindex) {
        m.index = Some(crai.moved(&moved).bytes());
    }
    Some(m)
}

impl Layout {
    /// The offsets of the data containers.
    fn offsets(&self) -> Vec<u64> {
        let n = self.containers.len();
        self.containers[1..n - 1]
            .iter()
            .map(|c| c.at as u64)
            .collect()
    }
}

/// A container's blocks as owned bytes with their content types.
fn owned_blocks(data: &[u8], c: &Cont) -> Vec<(ContentType, Vec<u8>)> {
    c.blocks
        .iter()
        .map(|b| (b.content_type, data[b.at..b.end].to_vec()))
        .collect()
}

/// Edits one field of a container header; says which.
fn edit_field(h: &mut ContainerHeader, rng: &mut Rng) -> String {
    let deltas = [1i64, -1, 100, -100, 5000];
    let d = deltas[rng.below(deltas.len())];
    let add = |v: i32| v.saturating_add(d as i32);
    match rng.below(8) {
        0 => {
            h.reference_id = [h.reference_id + 1, h.reference_id - 1, -1, -2][rng.below(4)];
            format!("reference id {}", h.reference_id)
        }
        1 => {
            h.start = add(h.start);
            format!("start {d:+}")
        }
        2 => {
            h.span = add(h.span).max(0);
            format!("span {d:+}")
        }
        3 => {
            h.records = [h.records + 1, h.records - 1, 0, h.records * 2][rng.below(4)].max(0);
            format!("records {}", h.records)
        }
        4 => {
            h.record_counter = (h.record_counter + d).max(0);
            format!("record counter {d:+}")
        }
        5 => {
            h.bases = (h.bases + d).max(0);
            format!("bases {d:+}")
        }
        6 => {
            h.blocks = (h.blocks + [1, -1][rng.below(2)]).max(0);
            format!("blocks {}", h.blocks)
        }
        _ => {
            let delta = [1i64, -1, 2, -2][rng.below(4)];
            h.length = (h.length as i64 + delta).max(0) as usize;
            format!("length {delta:+}")
        }
    }
}

/// Edits a container's landmark list; says how. `None` when it has none to edit.
fn edit_landmarks(h: &mut ContainerHeader, rng: &mut Rng) -> Option<String> {
    let n = h.landmarks.len();
    if n == 0 {
        return None;
    }
    let i = rng.below(n);
    Some(match rng.below(5) {
        0 => {
            h.landmarks.pop();
            format!("last of {n} landmarks dropped")
        }
        1 => {
            h.landmarks.remove(0);
            format!("first of {n} landmarks dropped")
        }
        2 => {
            h.landmarks.push(h.landmarks[n - 1] + 1);
            format!("a landmark added to {n}")
        }
        3 => {
            h.landmarks[i] += 1;
            format!("landmark {i} of {n} +1")
        }
        _ => {
            h.landmarks.insert(i, h.landmarks[i]);
            format!("landmark {i} of {n} doubled")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itf8_and_ltf8_read_back_through_the_cram_cursor() {
        for v in [
            0,
            1,
            127,
            128,
            16383,
            16384,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            -1,
            -2,
        ] {
            let b = itf8(v);
            assert_eq!(Cursor::new(&b, 0).itf8("v").unwrap(), v, "{v}");
        }
        for v in [0i64, 127, 128, 1 << 20, 1 << 35, 1 << 49, i64::MAX] {
            let b = ltf8(v);
            assert_eq!(Cursor::new(&b, 0).ltf8("v").unwrap(), v, "{v}");
        }
    }

    #[test]
    fn a_container_header_written_again_is_the_same_bytes() {
        let p = crate::root().join("fixtures/cram/aligned-3.0-slices.cram");
        let data = std::fs::read(p).unwrap();
        let l = layout(&data).unwrap();
        for c in &l.containers {
            let end = c.at + c.header.header_len;
            assert_eq!(header_bytes(&c.header, l.version), data[c.at..end]);
            for b in &c.blocks {
                assert_eq!(block_bytes(&data, b, l.version, |_| {}), data[b.at..b.end]);
            }
        }
    }
}
