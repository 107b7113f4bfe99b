//! The `**transport` keyword arguments of `AlignmentFile` and `TabixFile`: request headers, the
//! S3 endpoint, fetchers and the other settings of the command line's transport options.

use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyDictMethods};

/// Applies `kwargs` to `transport`; returns whether the persistent cache is wanted.
pub fn transport(
    kwargs: Option<&Bound<'_, PyDict>>,
    transport: &mut hfile::OpenOptions,
) -> PyResult<bool> {
    let mut cache = true;
    let Some(kwargs) = kwargs else {
        return Ok(cache);
    };
    for (key, value) in kwargs.iter() {
        let key: String = key.extract()?;
        match key.as_str() {
            "headers" => {
                let headers: Vec<(String, String)> = match value.cast::<PyDict>() {
                    Ok(d) => d
                        .iter()
                        .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
                        .collect::<PyResult<_>>()?,
                    Err(_) => value.extract()?,
                };
                transport.headers = headers;
            }
            "s3_endpoint" => transport.s3.endpoint = value.extract()?,
            "requester_pays" => transport.s3.requester_pays = value.extract()?,
            "fetchers" => transport.fetchers = value.extract::<usize>()?.max(1),
            "part_size" => transport.part_size = value.extract()?,
            "read_ahead" => transport.read_ahead = value.extract()?,
            "retries" => transport.retries = value.extract()?,
            "connect_timeout" => {
                transport.connect_timeout = Duration::from_secs_f64(value.extract()?)
            }
            "verbosity" => transport.verbosity = value.extract()?,
            "cache" => cache = value.extract()?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unexpected keyword argument '{other}' (transport options: headers, \
                     s3_endpoint, requester_pays, fetchers, part_size, read_ahead, retries, \
                     connect_timeout, verbosity, cache)"
                )))
            }
        }
    }
    Ok(cache)
}
