//! A query's plan, made once (issue 20): while a remote index arrives, the regions on each
//! reference are planned as soon as that reference is loaded and their spans asked for at
//! once; those per-reference plans are parts of the query's plan, and only the regions not
//! planned on the way (on references already loaded, or when nothing had to be read) are
//! planned at the end. No region is planned twice.
//!
//! The byte source replaces its advice with each new one, so the advice after each part is the
//! read order of every part so far (a concatenation, not a second plan).

use std::ops::Range;

use index::plan::{self, Plan, Region, RegionPlan, Span};
use index::Index;

/// Regions planned in parts.
pub(crate) struct Planner {
    regions: Vec<Region>,
    /// For each region, the part that planned it and its place in that part.
    placed: Vec<Option<(usize, usize)>>,
    parts: Vec<Part>,
    /// Block starts of the references loaded so far, sorted (those of later references lie
    /// after their data, so a part's spans come out as a plan of the whole index gives them).
    starts: Vec<u64>,
}

/// One call of [`plan::plan`]: the query's regions it planned, in order.
struct Part {
    plan: Plan,
    regions: Vec<usize>,
}

impl Planner {
    /// A planner of `regions` (in the order the query reads them).
    pub(crate) fn new(regions: Vec<Region>) -> Planner {
        Planner {
            placed: vec![None; regions.len()],
            regions,
            parts: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// The regions, in the query's order.
    pub(crate) fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Reference `tid` was just loaded into `index`: plans its regions not yet planned. The
    /// advice for the byte source when a part was made (every part's spans so far, in read
    /// order), else `None`.
    pub(crate) fn arrived(
        &mut self,
        tid: usize,
        index: &Index,
        size: u64,
        options: &plan::Options,
    ) -> Option<Vec<Range<u64>>> {
        let more = index.block_starts_of(tid);
        let in_order = matches!((self.starts.last(), more.first()), (Some(a), Some(b)) if a < b);
        self.starts.extend(more);
        if !in_order {
            self.starts.sort_unstable();
            self.starts.dedup();
        }
        let waiting: Vec<usize> = (0..self.regions.len())
            .filter(|&i| self.regions[i].tid == tid && self.placed[i].is_none())
            .collect();
        if waiting.is_empty() {
            return None;
        }
        let starts = std::mem::take(&mut self.starts);
        self.add_part(waiting, index, &starts, size, options);
        self.starts = starts;
        Some(self.assemble().read_order())
    }

    /// The query's plan: the regions not planned yet planned now (with every block start the
    /// loaded index knows, `starts`), and every part joined.
    pub(crate) fn finish(
        mut self,
        index: &Index,
        starts: &[u64],
        size: u64,
        options: &plan::Options,
    ) -> Plan {
        let rest: Vec<usize> = (0..self.regions.len())
            .filter(|&i| self.placed[i].is_none())
            .collect();
        if !rest.is_empty() || self.parts.is_empty() {
            self.add_part(rest, index, starts, size, options);
        }
        self.assemble()
    }

    fn add_part(
        &mut self,
        regions: Vec<usize>,
        index: &Index,
        starts: &[u64],
        size: u64,
        options: &plan::Options,
    ) {
        let these: Vec<Region> = regions.iter().map(|&i| self.regions[i]).collect();
        let part = self.parts.len();
        for (k, &i) in regions.iter().enumerate() {
            debug_assert!(self.placed[i].is_none(), "region {i} planned twice");
            self.placed[i] = Some((part, k));
        }
        self.parts.push(Part {
            plan: plan::plan(index, &these, starts, size, options),
            regions,
        });
    }

    /// The parts as one plan: each region's plan in the query's order (an empty one for a
    /// region not planned yet), the spans of every part in file order, naming the query's
    /// regions.
    fn assemble(&self) -> Plan {
        let regions = self
            .placed
            .iter()
            .map(|at| match at {
                Some((p, k)) => self.parts[*p].plan.regions[*k].clone(),
                None => RegionPlan {
                    chunks: Vec::new(),
                    limits: Vec::new(),
                    valid: true,
                },
            })
            .collect();
        let mut spans: Vec<Span> = self
            .parts
            .iter()
            .flat_map(|part| {
                part.plan.spans.iter().map(|s| Span {
                    start: s.start,
                    end: s.end,
                    regions: s.regions.iter().map(|&k| part.regions[k]).collect(),
                })
            })
            .collect();
        spans.sort_by_key(|s| (s.start, s.end));
        Plan { regions, spans }
    }

    /// How many times [`plan::plan`] was called.
    #[cfg(test)]
    fn plans_made(&self) -> usize {
        self.parts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Index {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/conformance/data/rand.bam.bai"
        );
        let bytes = std::fs::read(path).expect("the fixture's index");
        Index::from_bytes("rand.bam.bai", &bytes).expect("a valid index")
    }

    #[test]
    fn each_region_is_planned_once_and_as_one_plan_would() {
        let index = index();
        let size = 389_340;
        let options = plan::Options::default();
        let r = |tid, beg, end| Region { tid, beg, end };
        let regions = vec![r(1, 4_999, 5_400), r(0, 9_999, 10_500), r(1, 100, 900)];
        let mut planner = Planner::new(regions.clone());
        // Reference 0 arrives: its one region is planned, and advised.
        let advice = planner.arrived(0, &index, size, &options);
        assert!(advice.is_some_and(|a| !a.is_empty()));
        assert_eq!(planner.plans_made(), 1);
        // Arriving again plans nothing.
        assert!(planner.arrived(0, &index, size, &options).is_none());
        assert_eq!(planner.plans_made(), 1);
        // Reference 1 is never reported: the end plans its two regions together.
        let starts = index.block_starts();
        let plan = planner.finish(&index, &starts, size, &options);
        let whole = plan::plan(&index, &regions, &starts, size, &options);
        // The same chunks; limits may differ where one plan would have joined the spans of
        // two references.
        for (a, b) in plan.regions.iter().zip(&whole.regions) {
            assert_eq!((&a.chunks, a.valid), (&b.chunks, b.valid));
            assert_eq!(a.limits.len(), b.limits.len());
        }
        let spans = |p: &Plan| p.spans.iter().map(|s| s.start..s.end).collect::<Vec<_>>();
        let mut served: Vec<usize> = plan.spans.iter().flat_map(|s| s.regions.clone()).collect();
        served.sort_unstable();
        served.dedup();
        assert_eq!(served, [0, 1, 2], "every region is served by a span");
        assert!(!spans(&plan).is_empty());
    }

    #[test]
    fn a_plan_with_nothing_arrived_is_one_plan() {
        let index = index();
        let starts = index.block_starts();
        let options = plan::Options::default();
        let regions = vec![Region {
            tid: 0,
            beg: 0,
            end: 1000,
        }];
        let planner = Planner::new(regions.clone());
        let plan = planner.finish(&index, &starts, 389_340, &options);
        assert_eq!(
            plan,
            plan::plan(&index, &regions, &starts, 389_340, &options)
        );
    }
}
