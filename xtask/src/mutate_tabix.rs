//! Tabix mutants for `cargo xtask mutate`: a bgzipped text file's BGZF blocks repeated,
//! dropped, swapped or damaged, a line moved into another sequence's lines, and its TBI or CSI
//! edited (name table, column meta, reference count, virtual offsets, bits, cuts). Damage to
//! the data comes twice: under the index as it was (its offsets no longer fit), and
//! "reindexed", its virtual offsets moved with the blocks so that the index still points at
//! the blocks it named and only the damage itself is left.

use std::io::{Read, Write};

use testkit::Rng;

use crate::mutate::Mutant;

/// The mutation classes, each applied by [`mutate`].
pub(crate) const KINDS: &[&str] = &[
    "bgzf-bits",
    "truncate",
    "block-repeat",
    "block-drop",
    "block-swap",
    "block-repeat-reindexed",
    "block-drop-reindexed",
    "block-swap-reindexed",
    "line-move",
    "name-table",
    "meta-field",
    "n-ref",
    "index-offsets",
    "index-bits",
    "index-truncate",
];

/// The BGZF blocks of `data` (each whole, header to ISIZE); `None` if it is not BGZF.
fn blocks(data: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let h = data.get(at..at + 18)?;
        if h[..4] != [0x1f, 0x8b, 8, 4] || h[12..14] != *b"BC" {
            return None;
        }
        let size = usize::from(u16::from_le_bytes([h[16], h[17]])) + 1;
        out.push(data.get(at..at + size)?.to_vec());
        at += size;
    }
    Some(out)
}

fn inflate(block: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::GzDecoder::new(block).read_to_end(&mut out);
    out
}

/// One BGZF block holding `data`.
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    let _ = enc.write_all(data);
    let cdata = enc.finish().unwrap_or_default();
    let total = 18 + cdata.len() + 8;
    let mut out = vec![
        0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0,
    ];
    out.extend(((total - 1) as u16).to_le_bytes());
    out.extend(cdata);
    out.extend(crc32fast::hash(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

/// A TBI or CSI, inflated, with the places of its parts.
pub(crate) struct Index {
    bytes: Vec<u8>,
    csi: bool,
    /// Where the tabix meta starts (format, columns, meta, skip, l_nm, names).
    meta: usize,
    /// Where `n_ref` is.
    n_ref: usize,
    /// Where each virtual offset is.
    offsets: Vec<usize>,
}

impl Index {
    pub(crate) fn parse(raw: &[u8]) -> Option<Index> {
        let mut bytes = Vec::new();
        flate2::read::MultiGzDecoder::new(raw)
            .read_to_end(&mut bytes)
            .ok()?;
        let i32_at = |b: &[u8], at: usize| -> Option<i64> {
            Some(i64::from(i32::from_le_bytes(
                b.get(at..at + 4)?.try_into().ok()?,
            )))
        };
        let csi = bytes.starts_with(b"CSI\x01");
        // (meta, n_ref, depth, where the bins start)
        let (meta, n_ref, depth, bins) = if csi {
            let l_aux = usize::try_from(i32_at(&bytes, 12)?).ok()?;
            (16, 16 + l_aux, i32_at(&bytes, 8)?, 16 + l_aux + 4)
        } else if bytes.starts_with(b"TBI\x01") {
            let l_nm = usize::try_from(i32_at(&bytes, 32)?).ok()?;
            (8, 4, 5, 36 + l_nm)
        } else {
            return None;
        };
        let pseudo = ((1u64 << (3 * depth.clamp(0, 20) as u32 + 3)) - 1) / 7 + 1;
        let mut offsets = Vec::new();
        let mut at = bins;
        for _ in 0..i32_at(&bytes, n_ref)? {
            let n_bin = i32_at(&bytes, at)?;
            at += 4;
            for _ in 0..n_bin {
                let bin = i32_at(&bytes, at)? as u32;
                at += 4;
                if csi {
                    offsets.push(at);
                    at += 8;
                }
                let n_chunk = i32_at(&bytes, at)?;
                at += 4;
                for c in 0..n_chunk {
                    // The pseudo-bin's second "chunk" holds counts, not offsets.
                    if !(u64::from(bin) == pseudo && c == 1) {
                        offsets.extend([at, at + 8]);
                    }
                    at += 16;
                }
            }
            if !csi {
                let n_intv = i32_at(&bytes, at)?;
                at += 4;
                for _ in 0..n_intv {
                    offsets.push(at);
                    at += 8;
                }
            }
        }
        (at <= bytes.len()).then_some(Index {
            bytes,
            csi,
            meta,
            n_ref,
            offsets,
        })
    }

    /// The index compressed again, as tabix writes it (BGZF).
    fn raw(&self) -> Vec<u8> {
        let mut w = bgzf::Writer::new(Vec::new());
        let _ = w.write_all(&self.bytes);
        w.finish().unwrap_or_default()
    }

    fn voff(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.bytes[at..at + 8].try_into().unwrap_or_default())
    }

    /// Every virtual offset moved by `f` (compressed offset, offset within the block).
    fn move_offsets(&mut self, f: impl Fn(u64, u64) -> (u64, u64)) {
        for &at in &self.offsets.clone() {
            let v = self.voff(at);
            let (c, u) = f(v >> 16, v & 0xffff);
            self.bytes[at..at + 8].copy_from_slice(&((c << 16) | u).to_le_bytes());
        }
    }
}

/// Applies mutation `kind` to bgzipped `data` and its index `raw_index`; `None` when the kind
/// does not apply.
pub(crate) fn mutate(kind: &str, data: &[u8], raw_index: &[u8], rng: &mut Rng) -> Option<Mutant> {
    let blocks = blocks(data)?;
    let mut index = Index::parse(raw_index)?;
    // Data blocks (the last is the EOF marker).
    let n = blocks.len() - 1;
    let mut m = Mutant::default();
    match kind {
        "bgzf-bits" => {
            let at = rng.below(data.len());
            let bit = rng.below(8);
            let mut d = data.to_vec();
            d[at] ^= 1 << bit;
            m.what = format!("bit {bit} of byte {at}");
            m.data = Some(d);
        }
        "truncate" => {
            let at = rng.below(data.len());
            m.what = format!("cut at byte {at} of {}", data.len());
            m.data = Some(data[..at].to_vec());
        }
        "block-repeat"
        | "block-drop"
        | "block-swap"
        | "block-repeat-reindexed"
        | "block-drop-reindexed"
        | "block-swap-reindexed" => {
            let k = rng.below(n);
            // Each piece: the old block it was (for moving offsets), its bytes.
            let mut pieces: Vec<(Option<usize>, Vec<u8>)> = blocks
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, b)| (Some(i), b))
                .collect();
            if kind.starts_with("block-repeat") {
                pieces.insert(k + 1, (None, blocks[k].clone()));
            } else if kind.starts_with("block-drop") {
                pieces.remove(k);
            } else if n > 1 {
                let j = if k + 1 < n { k + 1 } else { k - 1 };
                pieces.swap(k, j);
            } else {
                return None;
            }
            m.what = format!("block {k} of {n}");
            let (bytes, moved) = join(&blocks, pieces);
            m.data = Some(bytes);
            if kind.ends_with("-reindexed") {
                index.move_offsets(|c, u| match moved(c) {
                    Some(c) => (c, u),
                    // A dropped block: what pointed into it points at the next one's start.
                    None => (moved(next_start(&blocks, c)).unwrap_or(c), 0),
                });
                m.index = Some(index.raw());
            }
        }
        "line-move" => {
            let (what, bytes) = move_line(&blocks, &mut index, rng)?;
            m.what = what;
            m.data = Some(bytes);
            m.index = Some(index.raw());
        }
        _ => {
            m.what = edit_index(kind, &mut index, rng)?;
            m.index = Some(index.raw());
        }
    }
    Some(m)
}

/// The compressed offset of the block after the one at `c`.
fn next_start(blocks: &[Vec<u8>], c: u64) -> u64 {
    let mut at = 0u64;
    for b in blocks {
        let next = at + b.len() as u64;
        if at == c {
            return next;
        }
        at = next;
    }
    c
}

/// The file made of `pieces`, and where each old block's offset went (`None`: dropped).
fn join(
    blocks: &[Vec<u8>],
    pieces: Vec<(Option<usize>, Vec<u8>)>,
) -> (Vec<u8>, impl Fn(u64) -> Option<u64>) {
    let mut old_at = Vec::with_capacity(blocks.len());
    let mut at = 0u64;
    for b in blocks {
        old_at.push(at);
        at += b.len() as u64;
    }
    let mut new_at = vec![None; blocks.len()];
    let mut out = Vec::new();
    for (old, bytes) in pieces {
        if let Some(i) = old {
            new_at[i].get_or_insert(out.len() as u64);
        }
        out.extend(bytes);
    }
    let moved = move |c: u64| {
        let i = old_at.iter().position(|&a| a == c)?;
        new_at[i]
    };
    (out, moved)
}

/// Moves one line into another block at a line start (another sequence's lines, as often as
/// not), the index's offsets moved to still point at the lines they named.
fn move_line(blocks: &[Vec<u8>], index: &mut Index, rng: &mut Rng) -> Option<(String, Vec<u8>)> {
    let n = blocks.len() - 1;
    let mut data: Vec<Vec<u8>> = blocks[..n].iter().map(|b| inflate(b)).collect();
    let starts = |d: &[u8]| -> Vec<usize> {
        let mut s = vec![0];
        s.extend(
            d.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        s.retain(|&p| p < d.len());
        s
    };
    let (a, b) = (rng.below(n), rng.below(n));
    let from = starts(&data[a]);
    let i = rng.below(from.len());
    let p = from[i];
    let end = from.get(i + 1).copied().unwrap_or(data[a].len());
    if data[a][p] == b'#' || !data[a][p..end].ends_with(b"\n") {
        return None;
    }
    let line: Vec<u8> = data[a].drain(p..end).collect();
    let to = starts(&data[b]);
    let q = to[rng.below(to.len())];
    if data[b].len() + line.len() > 65536 {
        return None;
    }
    data[b].splice(q..q, line.iter().copied());
    let len = line.len() as u64;
    let (p, q) = (p as u64, q as u64);
    // Offsets within the two blocks follow their lines.
    let mut old_at = Vec::new();
    let mut at = 0u64;
    for blk in blocks {
        old_at.push(at);
        at += blk.len() as u64;
    }
    let mut pieces: Vec<Vec<u8>> = blocks.to_vec();
    pieces[a] = deflate(&data[a]);
    pieces[b] = deflate(&data[b]);
    let mut new_at = Vec::new();
    let mut out = Vec::new();
    for piece in &pieces {
        new_at.push(out.len() as u64);
        out.extend_from_slice(piece);
    }
    index.move_offsets(|c, u| {
        let Some(k) = old_at.iter().position(|&x| x == c) else {
            return (c, u);
        };
        let mut u = u;
        if k == a && u > p {
            u = u.saturating_sub(len).max(p);
        }
        if k == b && u > q {
            u += len;
        }
        (new_at[k], u)
    });
    let name = String::from_utf8_lossy(line.split(|&c| c == b'\t').next().unwrap_or(b""));
    let what = format!("a {name} line from block {a} to block {b}");
    Some((what, out))
}

/// Edits the index as `kind` says; what was done.
fn edit_index(kind: &str, index: &mut Index, rng: &mut Rng) -> Option<String> {
    let meta = index.meta;
    let put = |b: &mut Vec<u8>, at: usize, v: i32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let get =
        |b: &[u8], at: usize| i32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default());
    match kind {
        "meta-field" => {
            let f = rng.below(6);
            let old = get(&index.bytes, meta + 4 * f);
            let new = old + [1, -1, 2, 0x10000][rng.below(4)];
            put(&mut index.bytes, meta + 4 * f, new);
            let name = ["preset", "col_seq", "col_beg", "col_end", "meta", "skip"][f];
            Some(format!("{name} {old} -> {new}"))
        }
        "n-ref" => {
            let old = get(&index.bytes, index.n_ref);
            let new = old + [1, -1][rng.below(2)];
            put(&mut index.bytes, index.n_ref, new);
            Some(format!("n_ref {old} -> {new}"))
        }
        "name-table" => {
            let l_nm = usize::try_from(get(&index.bytes, meta + 24)).ok()?;
            let names_at = meta + 28;
            let names = index.bytes[names_at..names_at + l_nm].to_vec();
            let mut list: Vec<Vec<u8>> = names
                .split(|&b| b == 0)
                .filter(|s| !s.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            let i = rng.below(list.len());
            let what = match rng.below(4) {
                0 => {
                    list[i].push(b'x');
                    format!("name {} renamed", i + 1)
                }
                1 => {
                    list.remove(i);
                    format!("name {} of {} dropped", i + 1, list.len() + 1)
                }
                2 => {
                    list.push(b"extra".to_vec());
                    "a name added".to_string()
                }
                _ if list.len() > 1 => {
                    let j = (i + 1) % list.len();
                    list.swap(i, j);
                    format!("names {} and {} swapped", i + 1, j + 1)
                }
                _ => return None,
            };
            let mut table = Vec::new();
            for name in &list {
                table.extend_from_slice(name);
                table.push(0);
            }
            let grow = table.len() as i64 - l_nm as i64;
            index
                .bytes
                .splice(names_at..names_at + l_nm, table.iter().copied());
            put(&mut index.bytes, meta + 24, table.len() as i32);
            if index.csi {
                let l_aux = get(&index.bytes, 12) as i64 + grow;
                put(&mut index.bytes, 12, l_aux as i32);
            }
            Some(what)
        }
        "index-offsets" => {
            let at = *index.offsets.get(rng.below(index.offsets.len()))?;
            let v = index.voff(at);
            let d: i64 = [1, -1, 1 << 16, -(1 << 16), 100, 1 << 20][rng.below(6)];
            let new = (v as i64).saturating_add(d).max(0) as u64;
            index.bytes[at..at + 8].copy_from_slice(&new.to_le_bytes());
            Some(format!("virtual offset at index byte {at}: {d:+}"))
        }
        "index-bits" => {
            let at = 4 + rng.below(index.bytes.len() - 4);
            let bit = rng.below(8);
            index.bytes[at] ^= 1 << bit;
            Some(format!("bit {bit} of index byte {at}"))
        }
        "index-truncate" => {
            let at = rng.below(index.bytes.len());
            index.bytes.truncate(at);
            Some(format!("index cut at byte {at} (inflated)"))
        }
        _ => None,
    }
}
