//! Response checks, pure: does a status and its `Content-Range` answer the request that was
//! sent? (docs/ARCHITECTURE.md, rule 6.)

/// What was asked, as the checks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asked {
    /// The first byte asked for; for a suffix request (`bytes=-N`), `None`.
    pub start: Option<u64>,
    /// One past the last byte asked for; `None`: open-ended (`bytes=X-`) or a suffix.
    pub end: Option<u64>,
    /// For a suffix request, how many bytes from the end.
    pub suffix: Option<u64>,
    /// The object size learnt from earlier responses.
    pub known_size: Option<u64>,
}

/// What a response that passed its checks says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Body bytes `[first, first + len)` of the object follow; `total` is the object size if the
    /// response told it.
    Data {
        first: u64,
        len: u64,
        total: Option<u64>,
    },
    /// The request starts at or past the end of an object of `total` bytes (when known).
    PastEnd { total: Option<u64> },
    /// `200` and the whole object (of `total` bytes, when told) to a request for bytes from
    /// another place than byte 0: the server ignores `Range`.
    RangeIgnored { total: Option<u64> },
}

/// `bytes A-B/T`, `bytes */T`, `bytes A-B/*` as (A, B, T).
pub(crate) fn parse_content_range(value: &str) -> Option<(Option<u64>, Option<u64>, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    let (first, last) = match span.trim() {
        "*" => (None, None),
        s => {
            let (a, b) = s.split_once('-')?;
            (Some(a.trim().parse().ok()?), Some(b.trim().parse().ok()?))
        }
    };
    Some((first, last, total))
}

/// Checks a response to a data request (`200`, `206` or `416`; other statuses are handled by
/// the caller). `content_range` and `content_length` are the headers as received.
pub(crate) fn check(
    status: u32,
    content_range: Option<&str>,
    content_length: Option<u64>,
    asked: &Asked,
) -> Result<Verdict, String> {
    match status {
        206 => check_partial(content_range, asked),
        200 => {
            // The whole object: acceptable only when it starts where the request did.
            let start = asked.start.unwrap_or(0);
            if let (Some(known), Some(len)) = (asked.known_size, content_length) {
                if known != len {
                    return Err(format!("object size changed from {known} to {len}"));
                }
            }
            if start > 0 || asked.suffix.is_some() {
                return Ok(Verdict::RangeIgnored {
                    total: content_length,
                });
            }
            Ok(Verdict::Data {
                first: 0,
                len: content_length.unwrap_or(u64::MAX),
                total: content_length,
            })
        }
        416 => {
            let total = content_range
                .and_then(parse_content_range)
                .and_then(|(_, _, t)| t);
            if let (Some(known), Some(t)) = (asked.known_size, total) {
                if known != t {
                    return Err(format!(
                        "object size changed from {known} to {t} (416 with Content-Range '{}')",
                        content_range.unwrap_or("")
                    ));
                }
            }
            // A 416 is the end of the object only for a request that starts at or past it.
            let size = total.or(asked.known_size);
            match (asked.start, size) {
                (Some(start), Some(size)) if start >= size => Ok(Verdict::PastEnd { total: size.into() }),
                (Some(start), Some(size)) => Err(format!(
                    "416 Range Not Satisfiable for bytes from {start}, inside the object's {size} bytes"
                )),
                (_, None) => Err(format!(
                    "416 Range Not Satisfiable for {} without the object's size",
                    describe(asked)
                )),
                (None, Some(_)) => Err("416 Range Not Satisfiable for a suffix range".to_string()),
            }
        }
        _ => Err(format!("unexpected status {status}")),
    }
}

/// The body must be the object's own bytes: no `Accept-Encoding` is sent, so a
/// `Content-Encoding` other than `identity` means bytes of another representation.
pub(crate) fn check_encoding(content_encoding: Option<&str>) -> Result<(), String> {
    match content_encoding.map(str::trim) {
        None | Some("") => Ok(()),
        Some(e) if e.eq_ignore_ascii_case("identity") => Ok(()),
        Some(e) => Err(format!(
            "the body came with Content-Encoding {e}, which was not asked for: its bytes are \
             not the object's"
        )),
    }
}

fn check_partial(content_range: Option<&str>, asked: &Asked) -> Result<Verdict, String> {
    let header = content_range.ok_or("206 response without Content-Range")?;
    let (first, last, total) = parse_content_range(header)
        .ok_or_else(|| format!("unreadable Content-Range '{header}'"))?;
    if total == Some(0) && asked.start.unwrap_or(0) == 0 {
        // An empty object: some servers answer 206 with a degenerate span (`bytes 0-0/0`).
        return Ok(Verdict::PastEnd { total: Some(0) });
    }
    let (first, last) = match (first, last) {
        (Some(f), Some(l)) if l >= f => (f, l),
        _ => return Err(format!("206 with Content-Range '{header}'")),
    };
    // One past the last byte; a last byte of 2^64-1 names no object anyone can hold.
    let after = last
        .checked_add(1)
        .ok_or_else(|| format!("Content-Range '{header}' ends past any object size"))?;
    if let Some(total) = total {
        if last >= total {
            return Err(format!("Content-Range '{header}' ends past its total"));
        }
        if let Some(known) = asked.known_size.filter(|&k| k != total) {
            return Err(format!(
                "object size changed from {known} to {total} (Content-Range '{header}')"
            ));
        }
    }
    // Short of what was asked only at the end of the object. Where the server does not tell
    // the size (`bytes A-B/*`), a short span is taken as it comes: the reader asks again from
    // where it ends, and only a 416 there is the end.
    let clamped = total.is_none_or(|t| after == t);
    match (asked.start, asked.suffix) {
        (Some(start), _) => {
            if first != start {
                return Err(format!(
                    "Content-Range '{header}' does not start at the requested byte {start}"
                ));
            }
            match asked.end {
                Some(end) if after > end || (after < end && !clamped) => {
                    return Err(format!(
                        "Content-Range '{header}' does not match the requested bytes {start}-{}",
                        end - 1
                    ))
                }
                None if total.is_some() && !clamped => {
                    return Err(format!(
                        "Content-Range '{header}' does not run to the end of an open-ended request"
                    ))
                }
                _ => {}
            }
        }
        (None, Some(n)) => {
            // A suffix: the last n bytes (or the whole object if smaller). A server that does
            // not tell the size (`bytes A-B/*`) still resolved the suffix to the object's end.
            if !clamped || after - first != n.min(after) {
                return Err(format!(
                    "Content-Range '{header}' is not the last {n} bytes of the object"
                ));
            }
        }
        (None, None) => return Err("a data request without a range".to_string()),
    }
    Ok(Verdict::Data {
        first,
        len: after - first,
        total,
    })
}

fn describe(asked: &Asked) -> String {
    match (asked.start, asked.suffix) {
        (_, Some(n)) => format!("the last {n} bytes"),
        (Some(s), None) => format!("bytes from {s}"),
        (None, None) => "the object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(start: u64, end: Option<u64>) -> Asked {
        Asked {
            start: Some(start),
            end,
            suffix: None,
            known_size: None,
        }
    }

    fn data(first: u64, len: u64, total: Option<u64>) -> Result<Verdict, String> {
        Ok(Verdict::Data { first, len, total })
    }

    #[test]
    fn content_range_forms() {
        assert_eq!(
            parse_content_range("bytes 0-99/1000"),
            Some((Some(0), Some(99), Some(1000)))
        );
        assert_eq!(
            parse_content_range("bytes */1000"),
            Some((None, None, Some(1000)))
        );
        assert_eq!(
            parse_content_range("bytes 5-9/*"),
            Some((Some(5), Some(9), None))
        );
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(parse_content_range("bytes 0-x/2"), None);
    }

    #[test]
    fn partial_content() {
        let a = asked(10, Some(20));
        assert_eq!(
            check(206, Some("bytes 10-19/100"), None, &a),
            data(10, 10, Some(100))
        );
        // Clamped at the end of the object.
        let a = asked(90, Some(120));
        assert_eq!(
            check(206, Some("bytes 90-99/100"), None, &a),
            data(90, 10, Some(100))
        );
        for bad in [
            "bytes 11-20/100",
            "bytes 10-25/100",
            "bytes 10-15/100",
            "bytes 10-9/100",
            // A last byte at 2^64-1 has no byte after it (the fuzzer's kind of input).
            "bytes 10-18446744073709551615/*",
        ] {
            assert!(
                check(206, Some(bad), None, &asked(10, Some(20))).is_err(),
                "{bad}"
            );
        }
        assert!(check(206, None, None, &asked(10, Some(20))).is_err());
        assert!(check(206, Some("bytes 10-19/15"), None, &asked(10, Some(20))).is_err());
        // Open-ended: must run to the end.
        assert!(check(206, Some("bytes 10-99/100"), None, &asked(10, None)).is_ok());
        assert!(check(206, Some("bytes 10-50/100"), None, &asked(10, None)).is_err());
        // A size that changed.
        let mut a = asked(10, Some(20));
        a.known_size = Some(99);
        assert!(check(206, Some("bytes 10-19/100"), None, &a)
            .unwrap_err()
            .contains("changed"));
    }

    #[test]
    fn only_identity_bodies() {
        assert!(check_encoding(None).is_ok());
        assert!(check_encoding(Some("identity")).is_ok());
        let e = check_encoding(Some("gzip")).unwrap_err();
        assert!(e.contains("Content-Encoding gzip"), "{e}");
        assert!(check_encoding(Some("br")).is_err());
    }

    #[test]
    fn suffix_requests() {
        let a = Asked {
            start: None,
            end: None,
            suffix: Some(28),
            known_size: None,
        };
        assert_eq!(
            check(206, Some("bytes 72-99/100"), None, &a),
            data(72, 28, Some(100))
        );
        // A smaller object: all of it.
        assert_eq!(
            check(206, Some("bytes 0-9/10"), None, &a),
            data(0, 10, Some(10))
        );
        assert!(check(206, Some("bytes 70-99/100"), None, &a).is_err());
        assert!(check(206, Some("bytes 72-98/100"), None, &a).is_err());
        // A size the server does not tell: the span it resolved the suffix to.
        assert_eq!(
            check(206, Some("bytes 72-99/*"), None, &a),
            data(72, 28, None)
        );
        assert!(check(206, Some("bytes 70-99/*"), None, &a).is_err());
        assert_eq!(
            check(200, None, Some(100), &a),
            Ok(Verdict::RangeIgnored { total: Some(100) })
        );
    }

    #[test]
    fn whole_object_only_from_zero() {
        assert_eq!(
            check(200, None, Some(50), &asked(0, Some(10))),
            data(0, 50, Some(50))
        );
        assert_eq!(
            check(200, None, Some(50), &asked(5, Some(10))),
            Ok(Verdict::RangeIgnored { total: Some(50) })
        );
        let mut a = asked(0, Some(10));
        a.known_size = Some(40);
        assert!(check(200, None, Some(50), &a).is_err());
    }

    #[test]
    fn range_not_satisfiable_is_the_end_only_past_the_size() {
        assert_eq!(
            check(416, Some("bytes */100"), None, &asked(100, Some(200))),
            Ok(Verdict::PastEnd { total: Some(100) })
        );
        assert_eq!(
            check(416, Some("bytes */100"), None, &asked(150, Some(200))),
            Ok(Verdict::PastEnd { total: Some(100) })
        );
        // Inside the object: an error, not an end of file.
        assert!(check(416, Some("bytes */100"), None, &asked(50, Some(60))).is_err());
        let mut a = asked(50, Some(60));
        a.known_size = Some(100);
        assert!(check(416, None, None, &a).is_err());
        // A total that contradicts what was learnt.
        let mut a = asked(150, Some(160));
        a.known_size = Some(200);
        assert!(check(416, Some("bytes */100"), None, &a).is_err());
        // Past the known size without a Content-Range: the end.
        let mut a = asked(300, Some(310));
        a.known_size = Some(200);
        assert_eq!(
            check(416, None, None, &a),
            Ok(Verdict::PastEnd { total: Some(200) })
        );
        // Nothing known at all: an error.
        assert!(check(416, None, None, &asked(0, Some(10))).is_err());
        // An empty object, as some servers put it.
        for empty in ["bytes */0", "bytes 0-0/0"] {
            assert_eq!(
                check(206, Some(empty), None, &asked(0, Some(10))),
                Ok(Verdict::PastEnd { total: Some(0) })
            );
        }
    }
}
