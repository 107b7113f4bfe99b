//! The table of one reference's bins while an index is built, laid out exactly as htslib's
//! `khash` map of bins (identity hash, open addressing with triangular probing, resize at 0.77
//! load, lazy deletion). htslib writes bins in the order of its table's buckets, so an index
//! byte-identical to `samtools index` needs the same buckets.

const EMPTY: u8 = 2;
const DELETED: u8 = 1;
const OCCUPIED: u8 = 0;
const UPPER: f64 = 0.77;

/// A `khash` map from bin number to `V`.
#[derive(Debug, Clone)]
pub(crate) struct BinTable<V> {
    n_buckets: u32,
    size: u32,
    n_occupied: u32,
    upper_bound: u32,
    flags: Vec<u8>,
    keys: Vec<u32>,
    vals: Vec<Option<V>>,
}

impl<V> Default for BinTable<V> {
    fn default() -> Self {
        BinTable {
            n_buckets: 0,
            size: 0,
            n_occupied: 0,
            upper_bound: 0,
            flags: Vec::new(),
            keys: Vec::new(),
            vals: Vec::new(),
        }
    }
}

/// khash's `kroundup32`: the next power of two (0 stays 0).
fn roundup32(x: u32) -> u32 {
    let mut x = x.wrapping_sub(1);
    x |= x >> 1;
    x |= x >> 2;
    x |= x >> 4;
    x |= x >> 8;
    x |= x >> 16;
    x.wrapping_add(1)
}

fn bound(n_buckets: u32) -> u32 {
    (f64::from(n_buckets) * UPPER + 0.5) as u32
}

impl<V> BinTable<V> {
    /// The number of bins present.
    pub fn len(&self) -> usize {
        self.size as usize
    }

    /// The bucket holding `key`.
    pub fn get(&self, key: u32) -> Option<usize> {
        if self.n_buckets == 0 {
            return None;
        }
        let mask = self.n_buckets - 1;
        let mut i = key & mask;
        let last = i;
        let mut step = 0;
        while self.flags[i as usize] != EMPTY
            && (self.flags[i as usize] == DELETED || self.keys[i as usize] != key)
        {
            step += 1;
            i = i.wrapping_add(step) & mask;
            if i == last {
                return None;
            }
        }
        (self.flags[i as usize] == OCCUPIED).then_some(i as usize)
    }

    /// The value of `key`, inserting `make()` first if the key is absent (htslib's `kh_put`
    /// followed by filling a new bucket).
    pub fn entry(&mut self, key: u32, make: impl FnOnce() -> V) -> &mut V {
        let i = self.put(key);
        self.vals[i].get_or_insert_with(make)
    }

    /// The value in bucket `i`.
    pub fn at_mut(&mut self, i: usize) -> Option<&mut V> {
        self.vals.get_mut(i).and_then(Option::as_mut)
    }

    /// Removes the key in bucket `i` (a tombstone stays, as in khash).
    pub fn remove_at(&mut self, i: usize) -> Option<V> {
        if i < self.n_buckets as usize && self.flags[i] == OCCUPIED {
            self.flags[i] = DELETED;
            self.size -= 1;
            return self.vals[i].take();
        }
        None
    }

    /// `(bucket, key)` of every bin present, in bucket order (htslib's iteration order).
    pub fn buckets(&self) -> Vec<(usize, u32)> {
        (0..self.n_buckets as usize)
            .filter(|&i| self.flags[i] == OCCUPIED)
            .map(|i| (i, self.keys[i]))
            .collect()
    }

    /// `(key, value)` of every bin present, in bucket order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &V)> {
        (0..self.n_buckets as usize)
            .filter(|&i| self.flags[i] == OCCUPIED)
            .filter_map(|i| self.vals[i].as_ref().map(|v| (self.keys[i], v)))
    }

    /// `kh_put`: the bucket of `key`, claiming one (its value `None`) if the key is absent.
    fn put(&mut self, key: u32) -> usize {
        if self.n_occupied >= self.upper_bound {
            if self.n_buckets > self.size << 1 {
                self.resize(self.n_buckets - 1); // clear tombstones
            } else {
                self.resize(self.n_buckets + 1);
            }
        }
        let n = self.n_buckets;
        let mask = n - 1;
        let mut x = n;
        let mut site = n;
        let mut i = key & mask;
        if self.flags[i as usize] == EMPTY {
            x = i;
        } else {
            let last = i;
            let mut step = 0;
            while self.flags[i as usize] != EMPTY
                && (self.flags[i as usize] == DELETED || self.keys[i as usize] != key)
            {
                if self.flags[i as usize] == DELETED {
                    site = i;
                }
                step += 1;
                i = i.wrapping_add(step) & mask;
                if i == last {
                    x = site;
                    break;
                }
            }
            if x == n {
                x = if self.flags[i as usize] == EMPTY && site != n {
                    site
                } else {
                    i
                };
            }
        }
        let xi = x as usize;
        match self.flags[xi] {
            EMPTY => {
                self.keys[xi] = key;
                self.vals[xi] = None;
                self.flags[xi] = OCCUPIED;
                self.size += 1;
                self.n_occupied += 1;
            }
            DELETED => {
                self.keys[xi] = key;
                self.vals[xi] = None;
                self.flags[xi] = OCCUPIED;
                self.size += 1;
            }
            _ => {}
        }
        xi
    }

    /// `kh_resize`, including its in-place "kick-out" rehash, which decides the final layout.
    fn resize(&mut self, wanted: u32) {
        let mut new_n = roundup32(wanted);
        if new_n < 4 {
            new_n = 4;
        }
        if self.size >= bound(new_n) {
            return; // requested size is too small
        }
        let mut new_flags = vec![EMPTY; new_n as usize];
        if self.n_buckets < new_n {
            self.keys.resize(new_n as usize, 0);
            self.vals.resize_with(new_n as usize, || None);
        }
        let old_n = self.n_buckets;
        let new_mask = new_n - 1;
        for j in 0..old_n as usize {
            if self.flags[j] != OCCUPIED {
                continue;
            }
            let mut key = self.keys[j];
            let mut val = self.vals[j].take();
            self.flags[j] = DELETED;
            loop {
                let mut i = key & new_mask;
                let mut step = 0;
                while new_flags[i as usize] != EMPTY {
                    step += 1;
                    i = i.wrapping_add(step) & new_mask;
                }
                let iu = i as usize;
                new_flags[iu] = OCCUPIED;
                if i < old_n && self.flags[iu] == OCCUPIED {
                    // Kick out the element there and place it next.
                    std::mem::swap(&mut key, &mut self.keys[iu]);
                    std::mem::swap(&mut val, &mut self.vals[iu]);
                    self.flags[iu] = DELETED;
                } else {
                    self.keys[iu] = key;
                    self.vals[iu] = val;
                    break;
                }
            }
        }
        if old_n > new_n {
            self.keys.truncate(new_n as usize);
            self.vals.truncate(new_n as usize);
        }
        self.flags = new_flags;
        self.n_buckets = new_n;
        self.n_occupied = self.size;
        self.upper_bound = bound(new_n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_keys_sit_in_their_own_buckets() {
        let mut t = BinTable::default();
        for k in [3u32, 1, 2] {
            *t.entry(k, || 0) += k;
        }
        assert_eq!(
            t.buckets().iter().map(|b| b.1).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(t.get(2).and_then(|i| t.at_mut(i)).copied(), Some(2));
        assert_eq!(t.get(9), None);
    }

    #[test]
    fn collisions_probe_triangularly_and_resizes_rehash() {
        // 4 buckets: 4 and 8 both hash to 0; the second goes to 0 + 1. The third key passes
        // the bound (3 of 4), the table grows to 8 and is rehashed in place.
        let mut t = BinTable::default();
        t.entry(4, || ());
        t.entry(8, || ());
        assert_eq!(t.buckets(), [(0, 4), (1, 8)]);
        t.entry(12, || ());
        t.entry(5, || ());
        assert_eq!(t.buckets(), [(0, 8), (4, 4), (5, 12), (6, 5)]);
    }

    /// Random puts and deletes, checked against the bucket order of htslib's own khash
    /// (`tests/data/khash_trace.txt`, made by `make_khash_trace.py`).
    #[test]
    fn same_buckets_as_htslib_khash() {
        let trace = include_str!("../tests/data/khash_trace.txt");
        let mut t = BinTable::default();
        let mut checked = 0;
        for line in trace.lines() {
            let (op, rest) = line.split_at(1);
            match op {
                "p" => {
                    t.entry(rest.trim().parse().unwrap(), || ());
                }
                "d" => {
                    let i = t.get(rest.trim().parse().unwrap()).unwrap();
                    t.remove_at(i);
                }
                _ => {
                    let want: Vec<(usize, u32)> = rest
                        .split_whitespace()
                        .map(|p| {
                            let (b, k) = p.split_once(':').unwrap();
                            (b.parse().unwrap(), k.parse().unwrap())
                        })
                        .collect();
                    assert_eq!(t.buckets(), want, "after {checked} batches");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 40);
    }

    #[test]
    fn removal_leaves_a_tombstone_that_put_reuses() {
        let mut t = BinTable::default();
        t.entry(4, || 'a');
        t.entry(8, || 'b');
        let i = t.get(4).unwrap();
        assert_eq!(t.remove_at(i), Some('a'));
        assert_eq!(t.get(4), None);
        assert_eq!(t.get(8), Some(1));
        t.entry(12, || 'c');
        assert_eq!(t.buckets(), [(0, 12), (1, 8)]);
    }
}
