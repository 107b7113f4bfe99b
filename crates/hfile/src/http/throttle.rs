//! Rate limits: a server that answers `429` or `503 SlowDown` is asked less of by the whole
//! process, not just by the request it refused.
//!
//! Every attempt takes a turn at its origin (`scheme://host:port`) first. An origin never
//! throttled has no limit. A throttle cuts the origin's window (the most attempts in flight
//! there) to half of what was in flight, at least 1, at most once per round trip (a throttle
//! answering an attempt sent before the last cut was already answered by it), and pauses every
//! attempt to the origin for the refused request's backoff (or its `Retry-After`). Each success
//! then widens the window by 1/window (one more attempt per window of successes: AIMD, as TCP
//! does); once it is wider than anything a reader asks for, the origin is unlimited again.
//!
//! A window limits attempts in flight, which limits their rate only as far as the server is
//! slow to answer: a server that answers at once (an object store on the same network) gets
//! attempts one after another as fast as they are answered, however narrow the window. So a
//! throttle also paces the origin: starts are spaced at half the rate answered in the second
//! before the first cut (at half the pace itself at a later cut), and each success quickens the
//! pace by half an attempt a second (the rate doubles back in about a second and a half at the
//! rates object stores refuse at). The pace goes when the window does.
//!
//! Which answers are throttles: `429`; `503` whose body is S3's `<Code>SlowDown</Code>`; and
//! `503` with no body (S3 sends none to a HEAD), which also slows the origin but, being as
//! likely a server that is down, still counts against the retry budget.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A window this wide limits nothing: the origin is unlimited again.
const CEILING: f64 = 64.0;

/// How often a waiting attempt checks whether it was cancelled or its deadline passed.
const POLL: Duration = Duration::from_millis(20);

/// The answers a throttle's rate is measured over: those of the last second, at most this
/// many.
const RATE_SPAN: Duration = Duration::from_secs(1);
const RATE_SAMPLES: usize = 256;

/// How much each success adds to a paced origin's rate, in attempts a second.
const PACE_STEP: f64 = 0.5;

/// What a refusal says about the client's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Throttle {
    /// The server said plainly that the client is too fast (`429`, `503 SlowDown`): retried
    /// without counting against the retry budget (bounded by time only).
    TooFast,
    /// `503` without a body: a throttle or an outage; slows the origin and counts as a failure.
    Unavailable,
}

/// The throttle a response shows, if any.
pub(super) fn classify(status: u32, body: &[u8]) -> Option<Throttle> {
    match status {
        429 => Some(Throttle::TooFast),
        503 if body.iter().all(u8::is_ascii_whitespace) => Some(Throttle::Unavailable),
        503 if contains(body, b"<Code>SlowDown</Code>") => Some(Throttle::TooFast),
        _ => None,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `scheme://host:port` of a URL: what a kept-alive connection can serve, and what a rate
/// limit applies to.
pub(super) fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    &url[..end]
}

#[derive(Debug, Default)]
struct Origin {
    /// The most attempts in flight; `None`: no limit.
    window: Option<f64>,
    /// Attempts in flight now.
    active: usize,
    /// No attempt starts before this.
    not_before: Option<Instant>,
    /// When the window was last cut.
    last_cut: Option<Instant>,
    /// When recent attempts were answered (the last [`RATE_SPAN`]), to measure the rate a
    /// throttle cuts.
    answers: VecDeque<Instant>,
    /// Attempts a second, once a throttle paced the origin.
    rate: Option<f64>,
    /// When the last attempt started.
    last_start: Option<Instant>,
}

impl Origin {
    /// Nothing to remember: no limit, nothing in flight, no answers recent enough to measure
    /// a rate by.
    fn idle(&self) -> bool {
        self.window.is_none()
            && self.active == 0
            && self.not_before.is_none()
            && self.answers.is_empty()
    }

    /// Forgets answers older than [`RATE_SPAN`] (or beyond [`RATE_SAMPLES`]).
    fn prune(&mut self, now: Instant) {
        while self.answers.len() > RATE_SAMPLES
            || self
                .answers
                .front()
                .is_some_and(|&t| now.duration_since(t) > RATE_SPAN)
        {
            self.answers.pop_front();
        }
    }

    /// When the next attempt may start: after the pause, and a pace's interval after the
    /// last start.
    fn next_start(&self) -> Option<Instant> {
        let paced = match (self.rate, self.last_start) {
            (Some(rate), Some(last)) => Some(last + Duration::from_secs_f64(1.0 / rate)),
            _ => None,
        };
        match (self.not_before, paced) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// An attempt answered (not a throttle) at `now`.
    fn answered(&mut self, now: Instant) {
        self.answers.push_back(now);
        self.prune(now);
        if let Some(w) = self.window {
            let w = w + 1.0 / w;
            self.window = (w < CEILING).then_some(w);
        }
        self.rate = match (self.window, self.rate) {
            (Some(_), Some(rate)) => Some(rate + PACE_STEP),
            _ => None,
        };
    }

    /// A throttle at `now` of an attempt started at `started`, `in_flight` attempts flying.
    fn throttled(&mut self, now: Instant, started: Instant, in_flight: usize, pause: Duration) {
        let fresh = self.last_cut.is_none_or(|cut| started >= cut);
        if fresh {
            let flying = in_flight as f64;
            let w = self.window.map_or(flying, |w| w.min(flying));
            self.window = Some((w / 2.0).floor().max(1.0));
            self.last_cut = Some(now);
            // Paced already: the pace is the rate refused. Else the rate answered over the
            // last second, if there is one to tell (answers from before a quiet spell are not).
            self.prune(now);
            let rate = self
                .rate
                .or(match (self.answers.front(), self.answers.len()) {
                    (Some(&first), n) if n >= 2 => {
                        let span = now.duration_since(first).as_secs_f64().max(1e-3);
                        Some(n as f64 / span)
                    }
                    _ => None,
                });
            self.rate = rate.map(|r| (r / 2.0).max(PACE_STEP));
            self.answers.clear();
        }
        let until = now + pause;
        self.not_before = Some(self.not_before.map_or(until, |t| t.max(until)));
    }
}

#[derive(Default)]
struct Origins {
    map: Mutex<HashMap<String, Origin>>,
    changed: Condvar,
    /// Throttles seen, for [`throttled`].
    seen: std::sync::atomic::AtomicU64,
}

fn origins() -> &'static Origins {
    static ORIGINS: OnceLock<Origins> = OnceLock::new();
    ORIGINS.get_or_init(Origins::default)
}

/// How many throttles (`429`, `503 SlowDown`, bodiless `503`) the process has met.
pub fn throttled() -> u64 {
    origins().seen.load(std::sync::atomic::Ordering::Relaxed)
}

/// An attempt's turn at its origin; give it back with [`Turn::leave`].
pub(super) struct Turn {
    origin: String,
    started: Instant,
    left: bool,
}

/// How an attempt ended, for its origin's window.
pub(super) enum Ended {
    /// An answer that was not a throttle.
    Answered,
    /// A throttle: the origin pauses this long.
    Throttled(Duration),
    /// No answer (cancelled, a network failure): the window is left as it is.
    Other,
}

/// Waits for a turn at the origin of `url`: until its pause is over and fewer attempts than
/// its window are in flight. `None` once `give_up` says so (checked every 20 ms).
pub(super) fn enter(url: &str, give_up: impl Fn() -> bool) -> Option<Turn> {
    let key = origin(url);
    let all = origins();
    let mut map = all.map.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = Instant::now();
        let o = map.entry(key.to_string()).or_default();
        let paused = o.next_start().filter(|&t| t > now);
        let room = o.window.is_none_or(|w| (o.active as f64) < w.floor());
        if paused.is_none() && room {
            o.not_before = None;
            o.active += 1;
            o.last_start = o.rate.map(|_| now);
            return Some(Turn {
                origin: key.to_string(),
                started: now,
                left: false,
            });
        }
        if give_up() {
            return None;
        }
        let wait = paused.map_or(POLL, |t| (t - now).min(POLL));
        map = all
            .changed
            .wait_timeout(map, wait)
            .map(|(m, _)| m)
            .unwrap_or_else(|p| p.into_inner().0);
    }
}

impl Turn {
    /// Gives the turn back, adjusting the origin's window by how the attempt ended.
    pub(super) fn leave(mut self, ended: Ended) {
        self.left = true;
        let all = origins();
        let mut map = all.map.lock().unwrap_or_else(|p| p.into_inner());
        let o = map.entry(self.origin.clone()).or_default();
        let in_flight = o.active;
        o.active = o.active.saturating_sub(1);
        let now = Instant::now();
        match ended {
            Ended::Answered => o.answered(now),
            Ended::Throttled(pause) => {
                all.seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                o.throttled(now, self.started, in_flight, pause);
            }
            Ended::Other => {}
        }
        o.prune(now);
        if o.idle() {
            map.remove(&self.origin);
        }
        all.changed.notify_all();
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if !self.left {
            let turn = Turn {
                origin: std::mem::take(&mut self.origin),
                started: self.started,
                left: false,
            };
            self.left = true;
            turn.leave(Ended::Other);
        }
    }
}

/// The window of the origin of `url` now (`None`: unlimited), for tests.
#[cfg(test)]
fn window(url: &str) -> Option<f64> {
    let map = origins().map.lock().unwrap_or_else(|p| p.into_inner());
    map.get(origin(url)).and_then(|o| o.window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttles_are_told_apart() {
        assert_eq!(classify(429, b"slow down"), Some(Throttle::TooFast));
        let s3 = b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Reduce</Message>";
        assert_eq!(classify(503, s3), Some(Throttle::TooFast));
        assert_eq!(classify(503, b""), Some(Throttle::Unavailable));
        assert_eq!(classify(503, b"<html>maintenance</html>"), None);
        assert_eq!(classify(500, b""), None);
    }

    #[test]
    fn origins() {
        assert_eq!(origin("https://h:8443/a/b.bam?x=1"), "https://h:8443");
        assert_eq!(origin("http://h?x"), "http://h");
        assert_eq!(origin("http://h"), "http://h");
    }

    #[test]
    fn the_window_halves_once_per_round_and_grows_back() {
        let url = "http://throttle.test:1/x";
        let turns: Vec<Turn> = (0..8).map(|_| enter(url, || false).unwrap()).collect();
        assert_eq!(window(url), None);
        let mut turns = turns.into_iter();
        // The first throttle cuts 8 in flight to 4; the others, sent before the cut, do not.
        turns
            .next()
            .unwrap()
            .leave(Ended::Throttled(Duration::ZERO));
        turns
            .next()
            .unwrap()
            .leave(Ended::Throttled(Duration::ZERO));
        assert_eq!(window(url), Some(4.0));
        for t in turns {
            t.leave(Ended::Answered);
        }
        // A throttle of an attempt sent after the cut cuts again, to half of what flies.
        let a = enter(url, || false).unwrap();
        let b = enter(url, || false).unwrap();
        a.leave(Ended::Throttled(Duration::ZERO));
        assert_eq!(window(url), Some(1.0));
        // A success widens it by 1/window.
        b.leave(Ended::Answered);
        assert_eq!(window(url), Some(2.0));
        // Two in flight now: a third waits (and gives up when told to).
        let one = enter(url, || false).unwrap();
        let two = enter(url, || false).unwrap();
        assert!(enter(url, || true).is_none());
        one.leave(Ended::Answered);
        two.leave(Ended::Answered);
        // Successes widen it back until it no longer limits.
        for _ in 0..3000 {
            enter(url, || false).unwrap().leave(Ended::Answered);
        }
        assert_eq!(window(url), None);
    }

    #[test]
    fn a_throttle_paces_starts_at_half_the_rate_answered_and_successes_quicken_it() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut o = Origin::default();
        // 100 answers over the last half second: 200 a second.
        for i in 0..100 {
            o.answered(ms(5 * i));
        }
        assert_eq!(o.next_start(), None);
        o.throttled(ms(500), ms(495), 8, Duration::ZERO);
        let rate = o.rate.unwrap();
        assert!((95.0..=105.0).contains(&rate), "{rate}");
        assert_eq!(o.window, Some(4.0));
        // The next start waits a hundredth of a second after the last.
        o.last_start = Some(ms(600));
        let next = o.next_start().unwrap();
        let gap = next.duration_since(ms(600)).as_secs_f64();
        assert!((0.0095..=0.0105).contains(&gap), "{gap}");
        // A later throttle halves the pace, however fast answers came since.
        for i in 0..50 {
            o.answered(ms(610) + Duration::from_micros(100 * i));
        }
        let paced = o.rate.unwrap();
        assert!((paced - rate - 50.0 * PACE_STEP).abs() < 1e-9);
        o.throttled(ms(700), ms(650), 4, Duration::ZERO);
        assert!((o.rate.unwrap() - paced / 2.0).abs() < 1e-9, "{:?}", o.rate);
        // Successes quicken it by PACE_STEP each, until the window stops limiting, which
        // ends the pace too.
        for i in 0..10_000 {
            o.answered(ms(800 + i));
        }
        assert_eq!(o.window, None);
        assert_eq!(o.rate, None);
        // A pause comes first when it ends later than the pace.
        o.rate = Some(1000.0);
        o.last_start = Some(ms(20_000));
        o.not_before = Some(ms(20_500));
        assert_eq!(o.next_start(), Some(ms(20_500)));
    }

    #[test]
    fn answers_from_before_a_quiet_spell_do_not_set_the_pace() {
        let t0 = Instant::now();
        let mut o = Origin::default();
        for i in 0..200 {
            o.answered(t0 + Duration::from_millis(5 * i));
        }
        // A minute later, the first throttle has no recent rate to halve: the window and the
        // pause slow the origin, not a pace measured over the quiet minute.
        o.throttled(
            t0 + Duration::from_secs(61),
            t0 + Duration::from_secs(60),
            4,
            Duration::ZERO,
        );
        assert_eq!(o.rate, None);
        assert_eq!(o.window, Some(2.0));
    }

    #[test]
    fn a_paced_origin_holds_each_start_for_its_interval() {
        let url = "http://paced.test:1/x";
        {
            let mut map = super::origins().map.lock().unwrap();
            let o = map.entry(origin(url).to_string()).or_default();
            o.window = Some(8.0);
            o.rate = Some(10.0);
            o.last_start = Some(Instant::now());
        }
        let asked = Instant::now();
        let t = enter(url, || false).unwrap();
        let waited = asked.elapsed();
        assert!(waited >= Duration::from_millis(95), "{waited:?}");
        assert!(waited < Duration::from_millis(1000), "{waited:?}");
        t.leave(Ended::Other);
    }

    #[test]
    fn a_pause_holds_every_attempt_to_the_origin() {
        let url = "http://pause.test:1/x";
        let t = enter(url, || false).unwrap();
        t.leave(Ended::Throttled(Duration::from_millis(150)));
        let asked = Instant::now();
        let t = enter("http://pause.test:1/other/object", || false).unwrap();
        assert!(asked.elapsed() >= Duration::from_millis(140));
        // Another origin is not held.
        let asked = Instant::now();
        enter("http://elsewhere.test:1/x", || false)
            .unwrap()
            .leave(Ended::Answered);
        assert!(asked.elapsed() < Duration::from_millis(100));
        t.leave(Ended::Answered);
    }
}
