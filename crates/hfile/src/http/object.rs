//! What the backend knows of the object (size, ETag, Last-Modified) and how it learns it:
//! from every response, checked against what earlier responses said, and, when nothing has
//! told it yet, from a `HEAD` or a one-byte `GET`.

use super::request::Ask;
use super::transfer::Told;
use super::HttpBackend;
use crate::{Error, Result};

impl HttpBackend {
    /// Takes in what a response told about the object; a size or ETag that differs from what
    /// earlier responses said is an error: the object changed under the reader.
    pub(super) fn learn(&mut self, told: &Told) -> Result<()> {
        if let Some(total) = told.total {
            match self.size {
                Some(size) if size != total => {
                    return Err(self.protocol(
                        self.pos,
                        format!("object size changed from {size} to {total}"),
                    ))
                }
                _ => self.size = Some(total),
            }
        }
        if let Some(etag) = &told.etag {
            match &self.etag {
                Some(old) if old != etag => {
                    return Err(self.protocol(
                        self.pos,
                        format!("object changed (ETag {old} became {etag})"),
                    ))
                }
                _ => self.etag = Some(etag.clone()),
            }
        }
        if told.last_modified.is_some() && self.last_modified.is_none() {
            self.last_modified.clone_from(&told.last_modified);
        }
        Ok(())
    }

    pub(super) fn protocol(&self, offset: u64, message: String) -> Error {
        Error::Protocol {
            name: self.name.clone(),
            offset,
            message,
        }
    }

    /// The size from a `HEAD`, or, where HEAD is refused (a URL signed for GET only), from a
    /// one-byte GET.
    pub(super) fn probe_size(&mut self) -> Result<u64> {
        match self.run_now(Ask::Head, 0) {
            Ok((t, _)) => self.learn(&t.told())?,
            Err(Error::Status {
                status: 400 | 403 | 405,
                ..
            })
            | Err(Error::Protocol { .. }) => {}
            Err(e) => return Err(e),
        }
        if let Some(size) = self.size {
            return Ok(size);
        }
        let (t, bytes) = self.run_now(
            Ask::Range {
                start: 0,
                end: Some(1),
                want: 1,
            },
            1,
        )?;
        self.learn(&t.told())?;
        match self.size {
            Some(size) => Ok(size),
            None if bytes.is_empty() => {
                self.size = Some(0);
                Ok(0)
            }
            None => {
                self.size_unknown = true;
                Err(Error::SizeUnknown {
                    name: self.name.clone(),
                })
            }
        }
    }
}
