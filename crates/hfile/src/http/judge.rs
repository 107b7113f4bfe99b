//! What a finished attempt comes to: done, retried (from the byte where it broke) or failed for
//! good, from how the collector stopped, the checks' verdict, libcurl's result and the status.

use std::time::Duration;

use super::check::Verdict;
use super::collector::{Collector, Stop};
use super::easy::CurlError;
use super::request::{cancelled, remote, Ask, Attempt, Job};
use crate::deadline::seconds;
use crate::hook::{explain_refusal, Refusal};
use crate::Error;

/// How long an attempt took, and the most it was allowed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    pub(super) took: Duration,
    pub(super) limit: Duration,
}

/// The outcome of an attempt at `from` that wanted `want` bytes.
pub(super) fn judge_attempt(
    job: &Job,
    from: u64,
    want: u64,
    result: Result<(), CurlError>,
    c: &Collector,
    timing: Timing,
) -> Attempt {
    if let Some(outcome) = judge_stop(job, from, c) {
        return outcome;
    }
    // How much this response could have given (a 206 clamped at the object's end gives less).
    let deliverable = match &c.verdict {
        Some(Err(message)) => {
            return Attempt::Fail(Error::Protocol {
                name: job.name(),
                offset: from,
                message: message.clone(),
            })
        }
        // Past the end of the object: nothing to fetch, whatever the status said.
        Some(Ok(Verdict::PastEnd { .. })) => return Attempt::Done,
        Some(Ok(Verdict::Data { len, .. })) => want.min(*len),
        _ => want,
    };
    if let Err(e) = result {
        let status = c.response.status;
        let aborted_error_page = e.is_write_error() && status >= 300;
        let complete = matches!(status, 200 | 206) && c.accepted >= deliverable;
        if !aborted_error_page && !complete {
            return judge_error(job, from, want, &e, timing);
        }
    }
    judge_status(job, from, deliverable, c)
}

/// The outcome decided by the collector having stopped the transfer itself, if it did.
fn judge_stop(job: &Job, from: u64, c: &Collector) -> Option<Attempt> {
    Some(match c.stop.as_ref()? {
        Stop::Protocol(message) => Attempt::Fail(Error::Protocol {
            name: job.name(),
            offset: from,
            message: message.clone(),
        }),
        Stop::Enough => Attempt::Done,
        Stop::Cancelled => Attempt::Fail(cancelled(job)),
        Stop::RangeIgnored => Attempt::Fail(Error::RangeIgnored {
            name: job.name(),
            offset: from,
        }),
        Stop::Stalled(quiet) => {
            Attempt::Retry(format!("no byte arrived for {:.1} s", quiet.as_secs_f64()))
        }
    })
}

/// The outcome of an attempt libcurl ended with error `e` before a complete answer.
fn judge_error(job: &Job, from: u64, want: u64, e: &CurlError, timing: Timing) -> Attempt {
    if e.is_operation_timedout() {
        timed_out(job, from, want, e, timing)
    } else if e.is_transient() {
        Attempt::Retry(e.to_string())
    } else {
        Attempt::Fail(remote(job, from, e.to_string()))
    }
}

/// The outcome of a response by its status, once its body is in (`deliverable`: the bytes it
/// should have held).
fn judge_status(job: &Job, from: u64, deliverable: u64, c: &Collector) -> Attempt {
    let status = c.response.status;
    match status {
        200 | 204 if job.ask == Ask::Head => match c.response.content_length {
            Some(len) => {
                job.transfer.tell(&super::transfer::Told {
                    total: Some(len),
                    ..c.told()
                });
                Attempt::Done
            }
            None => Attempt::Fail(Error::Protocol {
                name: job.name(),
                offset: 0,
                message: "HEAD response without Content-Length".into(),
            }),
        },
        200 | 206 if c.accepted < deliverable => {
            if status == 200 && c.response.content_length.is_none() && c.stop.is_none() {
                // A whole object without a length, smaller than asked: it is all there is.
                return Attempt::Done;
            }
            Attempt::Retry(format!(
                "short body: {} of {deliverable} bytes arrived",
                c.accepted
            ))
        }
        200 | 206 => Attempt::Done,
        416 => Attempt::Done,
        408 | 429 | 500..=599 => {
            Attempt::Retry(format!("HTTP status {status} {}", status_message(job, c)))
        }
        _ => Attempt::Fail(Error::Status {
            name: job.name(),
            offset: from,
            status,
            message: status_message(job, c),
        }),
    }
}

/// What a timeout of libcurl's was: the query's deadline (final), the attempt's own limit, or
/// the low-speed limit (both retried).
fn timed_out(job: &Job, from: u64, want: u64, e: &CurlError, timing: Timing) -> Attempt {
    let options = &job.options;
    if let Some(d) = options.deadline.filter(|d| d.remaining().is_none()) {
        // Where the transfer stood when the time ran out.
        let at = match job.ask {
            Ask::Range { start, .. } => start + job.transfer.received(),
            Ask::Stream => job.transfer.received(),
            _ => from,
        };
        return Attempt::Fail(remote(job, at, d.to_string()));
    }
    if timing.took + Duration::from_millis(20) >= timing.limit {
        return Attempt::Retry(format!(
            "no complete answer within {} for {want} bytes (the least rate allowed is {} \
             bytes/s)",
            seconds(timing.limit),
            options.min_rate
        ));
    }
    Attempt::Retry(e.to_string())
}

/// What the request hook or the error body says about the refusal (an object store's
/// `Code: Message`), else the reason phrase.
fn status_message(job: &Job, c: &Collector) -> String {
    let refusal = Refusal {
        status: c.response.status,
        headers: &c.response.headers,
        body: &c.response.error_body,
        presigned: crate::is_presigned(&job.url),
    };
    let explained = job
        .options
        .hook
        .as_ref()
        .and_then(|hook| hook.explain(&refusal))
        .or_else(|| explain_refusal(&refusal));
    if let Some(message) = explained {
        return message;
    }
    let reason = c.response.reason.trim();
    if reason.is_empty() {
        "request refused".to_string()
    } else {
        reason.to_string()
    }
}
