//! Faults scattered over many requests, for tests of whole workflows: about one request in
//! `every` gets a transient fault, chosen in turn from a list, by a seeded generator.

use super::faults::Fault;

/// Scattered faults: each request whose path starts with `prefix` gets, with probability
/// 1/`every`, the next fault of `faults` (in turn). The draws come from a generator seeded
/// with `seed`, so a run is repeatable up to the order in which concurrent requests arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chaos {
    /// The path prefix of the requests that may fail (`/` for all).
    pub prefix: String,
    /// One request in `every`, on average, gets a fault (1: every request; 0: none).
    pub every: u32,
    /// The faults, served in turn.
    pub faults: Vec<Fault>,
    pub seed: u64,
    /// At most this many faults in all; `None`: no limit.
    pub limit: Option<usize>,
}

impl Chaos {
    /// About one request in `every` under `prefix` fails with a fault a client should survive
    /// by retrying: 503, a reset before the headers, a reset mid-body, a body cut short, 500,
    /// and 429 with `Retry-After: 1`.
    pub fn transient(prefix: &str, every: u32, seed: u64) -> Chaos {
        Chaos {
            prefix: prefix.to_string(),
            every,
            faults: vec![
                Fault::status(503),
                Fault::ResetBeforeHeaders,
                Fault::ResetMidBody { after: None },
                Fault::ShortBody { after: None },
                Fault::status(500),
                Fault::Status {
                    status: 429,
                    body: "slow down".into(),
                    headers: vec![("retry-after".into(), "1".into())],
                },
            ],
            seed,
            limit: None,
        }
    }
}

/// A [`Chaos`] with its generator and counts.
#[derive(Debug)]
pub(crate) struct Armed {
    chaos: Chaos,
    state: u64,
    served: usize,
}

impl Armed {
    pub(crate) fn new(chaos: Chaos) -> Armed {
        Armed {
            state: chaos.seed,
            chaos,
            served: 0,
        }
    }

    /// splitmix64: small, fast, and good enough to scatter faults.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The fault for a request to `path`, if this one gets one.
    pub(crate) fn draw(&mut self, path: &str) -> Option<Fault> {
        let c = &self.chaos;
        if !path.starts_with(&c.prefix)
            || c.every == 0
            || c.faults.is_empty()
            || c.limit.is_some_and(|n| self.served >= n)
        {
            return None;
        }
        let every = u64::from(c.every);
        if !self.next().is_multiple_of(every) {
            return None;
        }
        let c = &self.chaos;
        let fault = c.faults[self.served % c.faults.len()].clone();
        self.served += 1;
        Some(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_one_in_every_under_the_prefix_in_turn_and_repeatable() {
        let draws = |seed| {
            let mut a = Armed::new(Chaos::transient("/data/", 4, seed));
            (0..4000)
                .map(|i| a.draw(if i % 2 == 0 { "/data/x.bam" } else { "/other" }))
                .collect::<Vec<_>>()
        };
        let first = draws(7);
        assert_eq!(first, draws(7), "the same seed gives the same faults");
        assert_ne!(first, draws(8));
        let hits: Vec<&Fault> = first.iter().flatten().collect();
        // 2000 requests under the prefix, one in four: 500 expected.
        assert!((400..600).contains(&hits.len()), "{}", hits.len());
        assert!(first.iter().skip(1).step_by(2).all(Option::is_none));
        let kinds = Chaos::transient("/", 1, 0).faults;
        assert_eq!(hits[0], &kinds[0]);
        assert_eq!(hits[1], &kinds[1]);
        assert_eq!(hits[kinds.len()], &kinds[0], "faults come in turn");
    }

    #[test]
    fn a_limit_ends_the_faults() {
        let mut chaos = Chaos::transient("/", 1, 1);
        chaos.limit = Some(3);
        let mut a = Armed::new(chaos);
        let got = (0..10).filter(|_| a.draw("/x").is_some()).count();
        assert_eq!(got, 3);
    }
}
