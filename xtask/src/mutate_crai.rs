//! `.crai` mutants for `cargo xtask mutate`: the index's lines edited (a field, lines dropped,
//! doubled, swapped, shuffled) or its gzip damaged, and the lines moved with the containers
//! when a CRAM mutant moves them.

use std::io::{Read, Write};

use testkit::Rng;

/// A `.crai`'s lines: reference id, start, span, container offset, slice offset, slice size.
#[derive(Clone)]
pub(crate) struct Crai {
    lines: Vec<[i64; 6]>,
    /// The file as it was (gzip).
    raw: Vec<u8>,
}

impl Crai {
    pub(crate) fn parse(raw: &[u8]) -> Result<Crai, String> {
        let mut text = String::new();
        flate2::read::GzDecoder::new(raw)
            .read_to_string(&mut text)
            .map_err(|e| format!("index does not decompress: {e}"))?;
        let mut lines = Vec::new();
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<i64> = l
                .split_ascii_whitespace()
                .map(|t| t.parse().map_err(|_| format!("index line {l:?}")))
                .collect::<Result<_, _>>()?;
            lines.push(f.try_into().map_err(|_| format!("index line {l:?}"))?);
        }
        Ok(Crai {
            lines,
            raw: raw.to_vec(),
        })
    }

    /// The index as samtools writes it: tab-separated text, gzipped.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut text = String::new();
        for l in &self.lines {
            let f: Vec<String> = l.iter().map(i64::to_string).collect();
            text.push_str(&f.join("\t"));
            text.push('\n');
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let _ = gz.write_all(text.as_bytes());
        gz.finish().unwrap_or_default()
    }

    /// The index with each line's container offset moved as `moved` says (old, new); lines
    /// of containers no longer there are dropped.
    pub(crate) fn moved(&self, moved: &[(u64, u64)]) -> Crai {
        let lines = self
            .lines
            .iter()
            .filter_map(|l| {
                let (_, new) = moved.iter().find(|(old, _)| *old as i64 == l[3])?;
                let mut l = *l;
                l[3] = *new as i64;
                Some(l)
            })
            .collect();
        Crai {
            lines,
            raw: Vec::new(),
        }
    }
}

/// Applies the index mutation `kind`; `containers` are the data containers' offsets (an
/// offset edited may name another container). What was done and the new index's bytes.
pub(crate) fn mutate(
    kind: &str,
    crai: &Crai,
    containers: &[u64],
    rng: &mut Rng,
) -> Option<(String, Vec<u8>)> {
    let n = crai.lines.len();
    let mut c = crai.clone();
    match kind {
        "crai-bits" => {
            let at = rng.below(crai.raw.len());
            let bit = rng.below(8);
            let mut raw = crai.raw.clone();
            raw[at] ^= 1 << bit;
            Some((format!("bit {bit} of byte {at} of the .crai"), raw))
        }
        "crai-truncate" => {
            let at = rng.below(crai.raw.len());
            Some((
                format!("the .crai cut at byte {at}"),
                crai.raw[..at].to_vec(),
            ))
        }
        "crai-field" => {
            let i = rng.below(n);
            let f = rng.below(6);
            let old = c.lines[i][f];
            let new = match f {
                3 if rng.below(2) == 0 => containers[rng.below(containers.len())] as i64,
                0 => [old + 1, old - 1, -1][rng.below(3)],
                _ => old + [1, -1, 100, -100, 1000, -old][rng.below(6)],
            };
            if new == old {
                return None;
            }
            c.lines[i][f] = new;
            let name = ["ref", "start", "span", "container", "slice", "size"][f];
            Some((
                format!(".crai line {}: {name} {old} -> {new}", i + 1),
                c.bytes(),
            ))
        }
        "crai-lines" => {
            let i = rng.below(n);
            let what = match rng.below(5) {
                0 => {
                    c.lines.remove(i);
                    format!(".crai line {} of {n} dropped", i + 1)
                }
                1 => {
                    c.lines.insert(i, c.lines[i]);
                    format!(".crai line {} of {n} doubled", i + 1)
                }
                2 if n > 1 => {
                    let j = (i + 1) % n;
                    c.lines.swap(i, j);
                    format!(".crai lines {} and {} swapped", i + 1, j + 1)
                }
                3 => {
                    c.lines.reverse();
                    format!(".crai's {n} lines reversed")
                }
                _ => {
                    for k in (1..n).rev() {
                        c.lines.swap(k, rng.below(k + 1));
                    }
                    format!(".crai's {n} lines shuffled")
                }
            };
            Some((what, c.bytes()))
        }
        _ => None,
    }
}
