use std::fmt;
use std::io;

/// Errors from byte sources. Every variant names the file or URL, and the byte offset where it
/// applies, so that a message is useful on its own. Both `Display` and `Debug` show a URL
/// without its query string (see [`crate::redact_url`]).
pub enum Error {
    /// The source could not be opened.
    Open {
        /// The file (path or URL) it is about.
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// A read or seek failed at `offset`.
    Io {
        /// The file (path or URL) it is about.
        name: String,
        /// The byte offset it was found at.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// No backend is registered for the scheme.
    UnsupportedScheme {
        /// The file (path or URL) it is about.
        name: String,
        /// The URL scheme.
        scheme: String,
    },
    /// A remote transfer failed (after any retries) at `offset`.
    Remote {
        /// The file (path or URL) it is about.
        name: String,
        /// The byte offset it was found at.
        offset: u64,
        /// What went wrong.
        message: String,
    },
    /// The request was refused (404, 403, ...).
    Status {
        /// The file (path or URL) it is about.
        name: String,
        /// The byte offset it was found at.
        offset: u64,
        /// The HTTP status code.
        status: u32,
        /// What went wrong.
        message: String,
    },
    /// The server answered something that does not fit what was asked.
    Protocol {
        /// The file (path or URL) it is about.
        name: String,
        /// The byte offset it was found at.
        offset: u64,
        /// What went wrong.
        message: String,
    },
    /// The server ignores `Range` (it answered a request for bytes from `offset`, or for the
    /// last bytes, with `200` and the whole object): the object can only be read as one stream
    /// from its start. The HTTP backend switches to that by itself; this error reaches callers
    /// only where a stream cannot serve (the last bytes of the object, asked for alone).
    RangeIgnored {
        /// The file (path or URL) it is about.
        name: String,
        /// The byte offset it was found at.
        offset: u64,
    },
    /// The server does not tell the object's size (`Content-Range: bytes A-B/*`, no usable
    /// `HEAD`): the object can still be read to its end (a `416` at the end says where it
    /// is), but nothing that needs the size beforehand can be done.
    SizeUnknown {
        /// The file (path or URL) it is about.
        name: String,
    },
}

impl Error {
    /// The file or URL the error is about.
    pub fn name(&self) -> &str {
        match self {
            Error::Open { name, .. }
            | Error::Io { name, .. }
            | Error::UnsupportedScheme { name, .. }
            | Error::Remote { name, .. }
            | Error::Status { name, .. }
            | Error::Protocol { name, .. }
            | Error::RangeIgnored { name, .. }
            | Error::SizeUnknown { name } => name,
        }
    }

    /// The same error about `name` (an `s3://` object fetched from an `https://` URL is
    /// reported under the name the user gave).
    pub fn renamed(mut self, new_name: &str) -> Error {
        match &mut self {
            Error::Open { name, .. }
            | Error::Io { name, .. }
            | Error::UnsupportedScheme { name, .. }
            | Error::Remote { name, .. }
            | Error::Status { name, .. }
            | Error::Protocol { name, .. }
            | Error::RangeIgnored { name, .. }
            | Error::SizeUnknown { name } => *name = new_name.to_string(),
        }
        self
    }

    /// A copy of this error (an I/O source is copied as its kind and message), for handing one
    /// failure to every reader that meets it.
    pub fn duplicate(&self) -> Error {
        let copy_io = |e: &io::Error| io::Error::new(e.kind(), e.to_string());
        match self {
            Error::Open { name, source } => Error::Open {
                name: name.clone(),
                source: copy_io(source),
            },
            Error::Io {
                name,
                offset,
                source,
            } => Error::Io {
                name: name.clone(),
                offset: *offset,
                source: copy_io(source),
            },
            Error::UnsupportedScheme { name, scheme } => Error::UnsupportedScheme {
                name: name.clone(),
                scheme: scheme.clone(),
            },
            Error::Remote {
                name,
                offset,
                message,
            } => Error::Remote {
                name: name.clone(),
                offset: *offset,
                message: message.clone(),
            },
            Error::Status {
                name,
                offset,
                status,
                message,
            } => Error::Status {
                name: name.clone(),
                offset: *offset,
                status: *status,
                message: message.clone(),
            },
            Error::Protocol {
                name,
                offset,
                message,
            } => Error::Protocol {
                name: name.clone(),
                offset: *offset,
                message: message.clone(),
            },
            Error::RangeIgnored { name, offset } => Error::RangeIgnored {
                name: name.clone(),
                offset: *offset,
            },
            Error::SizeUnknown { name } => Error::SizeUnknown { name: name.clone() },
        }
    }

    /// True when the server ignores `Range` requests ([`Error::RangeIgnored`]).
    pub fn is_range_ignored(&self) -> bool {
        matches!(self, Error::RangeIgnored { .. })
    }

    /// True when the server does not tell the object's size ([`Error::SizeUnknown`]).
    pub fn is_size_unknown(&self) -> bool {
        matches!(self, Error::SizeUnknown { .. })
    }

    /// True when the source does not exist (a missing file, HTTP 404).
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Open { source, .. } => source.kind() == io::ErrorKind::NotFound,
            Error::Status { status, .. } => *status == 404 || *status == 410,
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A pre-signed URL's query string is a credential: messages show the URL without it.
        let shown = crate::redact_url(self.name());
        let name = shown.as_str();
        match self {
            Error::Open { source, .. } => write!(f, "{name}: cannot open: {source}"),
            Error::Io { offset, source, .. } => {
                write!(f, "{name}: I/O error at byte {offset}: {source}")
            }
            Error::UnsupportedScheme { scheme, .. } => {
                write!(f, "{name}: no backend for scheme '{scheme}'")
            }
            Error::Remote {
                offset, message, ..
            } => {
                write!(f, "{name}: transfer failed at byte {offset}: {message}")
            }
            Error::Status {
                offset,
                status,
                message,
                ..
            } => {
                write!(
                    f,
                    "{name}: HTTP status {status} at byte {offset}: {message}"
                )
            }
            Error::Protocol {
                offset, message, ..
            } => {
                write!(f, "{name}: bad response at byte {offset}: {message}")
            }
            Error::RangeIgnored { offset, .. } => write!(
                f,
                "{name}: the server ignores Range requests (200 and the whole object for bytes \
                 from {offset}); the object can only be read from its start"
            ),
            Error::SizeUnknown { .. } => {
                write!(f, "{name}: the server does not tell the object's size")
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Through Display, so that a signed URL's query string is hidden here too.
        write!(f, "hfile::Error({self})")
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Open { source, .. } | Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::Open { source, .. } | Error::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}
