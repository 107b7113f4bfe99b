//! One libcurl easy handle, driven through `curl-sys` directly.
//!
//! Why not the `curl` crate: it initialises libcurl (and with it OpenSSL, which reads
//! `openssl.cnf`) from an ELF constructor, before `main`, in every process that links it. That
//! made a local `hts view -H` pay a third of its start-up for TLS it never used. Here libcurl is
//! initialised when the first handle is made, that is when a remote object is first opened.
//!
//! Only what the HTTP backend uses is wrapped: the options of `request::configure`, `perform`,
//! the connection count, and callbacks into a [`Collector`].

use std::ffi::{c_char, c_double, c_int, c_long, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;
use std::time::Duration;

use curl_sys as sys;

use super::collector::Collector;

/// What kind of trace text libcurl hands the debug callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Info {
    Text,
    HeaderIn,
    HeaderOut,
    /// Body or TLS bytes, in or out.
    Data,
}

/// A libcurl result other than `CURLE_OK`, with the handle's error buffer when it said more.
#[derive(Debug, Clone)]
pub(crate) struct CurlError {
    code: sys::CURLcode,
    extra: Option<String>,
}

impl CurlError {
    fn new(code: sys::CURLcode) -> CurlError {
        CurlError { code, extra: None }
    }

    /// libcurl's text for the code.
    pub fn description(&self) -> String {
        // SAFETY: curl_easy_strerror returns a static NUL-terminated string for any code.
        unsafe { CStr::from_ptr(sys::curl_easy_strerror(self.code)) }
            .to_string_lossy()
            .into_owned()
    }

    pub fn is_write_error(&self) -> bool {
        self.code == sys::CURLE_WRITE_ERROR
    }

    pub fn is_operation_timedout(&self) -> bool {
        self.code == sys::CURLE_OPERATION_TIMEDOUT
    }

    /// A failure worth another attempt: no connection, a cut or empty answer, a timeout.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.code,
            sys::CURLE_COULDNT_CONNECT
                | sys::CURLE_OPERATION_TIMEDOUT
                | sys::CURLE_PARTIAL_FILE
                | sys::CURLE_GOT_NOTHING
                | sys::CURLE_SEND_ERROR
                | sys::CURLE_RECV_ERROR
                | sys::CURLE_HTTP2
                | sys::CURLE_HTTP2_STREAM
        )
    }
}

impl std::fmt::Display for CurlError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "[{}] {}", self.code, self.description())?;
        match &self.extra {
            Some(extra) => write!(f, " ({extra})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for CurlError {}

/// libcurl's global set-up (TLS included), once, on the first handle.
fn global_init() -> Result<(), CurlError> {
    static CODE: OnceLock<sys::CURLcode> = OnceLock::new();
    // SAFETY: curl_global_init is thread-safe in libcurl 7.84 and later (this one is built
    // in); OnceLock makes it run once anyway.
    match *CODE.get_or_init(|| unsafe { sys::curl_global_init(sys::CURL_GLOBAL_ALL) }) {
        sys::CURLE_OK => Ok(()),
        code => Err(CurlError::new(code)),
    }
}

/// The version of the libcurl built in, as it reports itself (no set-up needed).
pub(crate) fn version() -> String {
    // SAFETY: curl_version_info returns a pointer to static data, valid for the process; its
    // version field is a NUL-terminated string.
    unsafe {
        let info = sys::curl_version_info(sys::CURLVERSION_NOW);
        if info.is_null() || (*info).version.is_null() {
            return String::from("unknown");
        }
        CStr::from_ptr((*info).version)
            .to_string_lossy()
            .into_owned()
    }
}

/// The heap part of a handle, at a fixed address libcurl's callbacks are given.
struct Inner {
    collector: Collector,
    error: [u8; sys::CURL_ERROR_SIZE],
}

/// An easy handle whose callbacks fill a [`Collector`].
pub(crate) struct Easy {
    raw: *mut sys::CURL,
    inner: Box<Inner>,
    headers: *mut sys::curl_slist,
}

// SAFETY: a libcurl easy handle may move between threads as long as one thread uses it at a
// time, which `&mut self` on every call ensures.
unsafe impl Send for Easy {}

impl Easy {
    /// A new handle (libcurl is set up on the first), with the callbacks and the error buffer
    /// in place.
    pub fn new() -> Result<Easy, CurlError> {
        global_init()?;
        // SAFETY: libcurl is initialised; a null return is handled.
        let raw = unsafe { sys::curl_easy_init() };
        if raw.is_null() {
            return Err(CurlError::new(sys::CURLE_FAILED_INIT));
        }
        let mut easy = Easy {
            raw,
            inner: Box::new(Inner {
                collector: Collector::default(),
                error: [0; sys::CURL_ERROR_SIZE],
            }),
            headers: std::ptr::null_mut(),
        };
        let data = &mut *easy.inner as *mut Inner as *mut c_void;
        let error = easy.inner.error.as_mut_ptr() as *mut c_void;
        easy.set_ptr(sys::CURLOPT_ERRORBUFFER, error)?;
        easy.set_ptr(sys::CURLOPT_WRITEFUNCTION, write_cb as *const c_void)?;
        easy.set_ptr(sys::CURLOPT_WRITEDATA, data)?;
        easy.set_ptr(sys::CURLOPT_HEADERFUNCTION, header_cb as *const c_void)?;
        easy.set_ptr(sys::CURLOPT_HEADERDATA, data)?;
        easy.set_ptr(sys::CURLOPT_PROGRESSFUNCTION, progress_cb as *const c_void)?;
        easy.set_ptr(sys::CURLOPT_PROGRESSDATA, data)?;
        easy.set_ptr(sys::CURLOPT_DEBUGFUNCTION, debug_cb as *const c_void)?;
        easy.set_ptr(sys::CURLOPT_DEBUGDATA, data)?;
        // Sockets closed on exec, as every other descriptor hts opens.
        easy.set_ptr(
            sys::CURLOPT_OPENSOCKETFUNCTION,
            opensocket_cb as *const c_void,
        )?;
        easy.signal(false)?;
        Ok(easy)
    }

    pub fn get_ref(&self) -> &Collector {
        &self.inner.collector
    }

    pub fn get_mut(&mut self) -> &mut Collector {
        &mut self.inner.collector
    }

    fn check(&mut self, code: sys::CURLcode) -> Result<(), CurlError> {
        if code == sys::CURLE_OK {
            return Ok(());
        }
        let buf = &mut self.inner.error;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let extra = (end > 0).then(|| String::from_utf8_lossy(&buf[..end]).into_owned());
        buf[0] = 0;
        Err(CurlError { code, extra })
    }

    fn set_long(&mut self, option: sys::CURLoption, value: c_long) -> Result<(), CurlError> {
        // SAFETY: a long option of a live handle, passed as libcurl reads it (a C long).
        let code = unsafe { sys::curl_easy_setopt(self.raw, option, value) };
        self.check(code)
    }

    fn set_ptr(&mut self, option: sys::CURLoption, value: *const c_void) -> Result<(), CurlError> {
        // SAFETY: callers pass a pointer of the type the option takes, valid for as long as
        // libcurl keeps it (callbacks are functions; data points into `inner`, which lives as
        // long as the handle).
        let code = unsafe { sys::curl_easy_setopt(self.raw, option, value) };
        self.check(code)
    }

    fn set_str(&mut self, option: sys::CURLoption, value: &[u8]) -> Result<(), CurlError> {
        let Ok(s) = CString::new(value) else {
            return Err(CurlError::new(sys::CURLE_BAD_FUNCTION_ARGUMENT));
        };
        // SAFETY: libcurl copies string options (since 7.17), so `s` may go after the call.
        let code = unsafe { sys::curl_easy_setopt(self.raw, option, s.as_ptr()) };
        self.check(code)
    }

    fn set_millis(&mut self, option: sys::CURLoption, d: Duration) -> Result<(), CurlError> {
        self.set_long(option, d.as_millis().min(c_long::MAX as u128) as c_long)
    }

    pub fn url(&mut self, url: &str) -> Result<(), CurlError> {
        self.set_str(sys::CURLOPT_URL, url.as_bytes())
    }

    pub fn path_as_is(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_PATH_AS_IS, on.into())
    }

    pub fn follow_location(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_FOLLOWLOCATION, on.into())
    }

    pub fn max_redirections(&mut self, n: u32) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_MAXREDIRS, n as c_long)
    }

    pub fn connect_timeout(&mut self, d: Duration) -> Result<(), CurlError> {
        self.set_millis(sys::CURLOPT_CONNECTTIMEOUT_MS, d)
    }

    /// The whole transfer's bound; zero: none.
    pub fn timeout(&mut self, d: Duration) -> Result<(), CurlError> {
        self.set_millis(sys::CURLOPT_TIMEOUT_MS, d)
    }

    pub fn low_speed_limit(&mut self, bytes_per_second: u32) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_LOW_SPEED_LIMIT, bytes_per_second as c_long)
    }

    pub fn low_speed_time(&mut self, d: Duration) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_LOW_SPEED_TIME, d.as_secs() as c_long)
    }

    pub fn useragent(&mut self, agent: &str) -> Result<(), CurlError> {
        self.set_str(sys::CURLOPT_USERAGENT, agent.as_bytes())
    }

    /// `false`: libcurl uses no signals (it runs on worker threads).
    pub fn signal(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_NOSIGNAL, (!on).into())
    }

    /// Whether the progress callback is called.
    pub fn progress(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_NOPROGRESS, (!on).into())
    }

    pub fn verbose(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_VERBOSE, on.into())
    }

    pub fn cainfo(&mut self, path: &OsStr) -> Result<(), CurlError> {
        self.set_str(sys::CURLOPT_CAINFO, path.as_bytes())
    }

    pub fn capath(&mut self, path: &OsStr) -> Result<(), CurlError> {
        self.set_str(sys::CURLOPT_CAPATH, path.as_bytes())
    }

    /// The request headers, `Name: value` each; they replace the previous request's.
    pub fn http_headers(&mut self, lines: &[String]) -> Result<(), CurlError> {
        let mut list: *mut sys::curl_slist = std::ptr::null_mut();
        for line in lines {
            let Ok(c) = CString::new(line.as_bytes()) else {
                // SAFETY: a list made here by curl_slist_append (or null).
                unsafe { sys::curl_slist_free_all(list) };
                return Err(CurlError::new(sys::CURLE_BAD_FUNCTION_ARGUMENT));
            };
            // SAFETY: libcurl copies the string into the list.
            let longer = unsafe { sys::curl_slist_append(list, c.as_ptr()) };
            if longer.is_null() {
                // SAFETY: as above.
                unsafe { sys::curl_slist_free_all(list) };
                return Err(CurlError::new(sys::CURLE_OUT_OF_MEMORY));
            }
            list = longer;
        }
        let result = self.set_ptr(sys::CURLOPT_HTTPHEADER, list as *const c_void);
        // The handle now points at the new list (or at none, on failure): the old one can go.
        let old = std::mem::replace(&mut self.headers, list);
        // SAFETY: a list this handle made and libcurl no longer refers to.
        unsafe { sys::curl_slist_free_all(old) };
        result
    }

    pub fn nobody(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_NOBODY, on.into())
    }

    /// A GET (after a HEAD on the same handle).
    pub fn get(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_HTTPGET, on.into())
    }

    pub fn fresh_connect(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_FRESH_CONNECT, on.into())
    }

    pub fn forbid_reuse(&mut self, on: bool) -> Result<(), CurlError> {
        self.set_long(sys::CURLOPT_FORBID_REUSE, on.into())
    }

    /// Runs the request; the callbacks fill the collector meanwhile.
    pub fn perform(&mut self) -> Result<(), CurlError> {
        // SAFETY: a live, configured handle used by this thread only.
        let code = unsafe { sys::curl_easy_perform(self.raw) };
        self.check(code)
    }

    /// Connections the last transfer opened (0: it reused one).
    pub fn num_connects(&mut self) -> Result<u64, CurlError> {
        let mut n: c_long = 0;
        // SAFETY: CURLINFO_NUM_CONNECTS writes a long.
        let code = unsafe { sys::curl_easy_getinfo(self.raw, sys::CURLINFO_NUM_CONNECTS, &mut n) };
        self.check(code)?;
        Ok(n.max(0) as u64)
    }
}

impl Drop for Easy {
    fn drop(&mut self) {
        // SAFETY: the handle goes first (it may refer to the list), then the list.
        unsafe {
            sys::curl_easy_cleanup(self.raw);
            sys::curl_slist_free_all(self.headers);
        }
    }
}

/// The collector behind a callback's data pointer.
///
/// # Safety
/// `data` must be the `Inner` of a live handle, used by the thread running its `perform`.
unsafe fn collector<'a>(data: *mut c_void) -> &'a mut Collector {
    &mut (*(data as *mut Inner)).collector
}

/// Runs a callback body; a panic must not unwind into C, so it ends the process.
fn guarded<T>(f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => std::process::abort(),
    }
}

extern "C" fn write_cb(ptr: *mut c_char, size: usize, n: usize, data: *mut c_void) -> usize {
    guarded(|| {
        // SAFETY: libcurl passes `size * n` readable bytes and the WRITEDATA pointer.
        unsafe {
            let bytes = std::slice::from_raw_parts(ptr as *const u8, size * n);
            collector(data).write(bytes)
        }
    })
}

extern "C" fn header_cb(ptr: *mut c_char, size: usize, n: usize, data: *mut c_void) -> usize {
    guarded(|| {
        // SAFETY: as in write_cb, with HEADERDATA.
        let keep = unsafe {
            let bytes = std::slice::from_raw_parts(ptr as *const u8, size * n);
            collector(data).header(bytes)
        };
        // Any other count than the one given stops the transfer.
        if keep {
            size * n
        } else {
            0
        }
    })
}

extern "C" fn progress_cb(
    data: *mut c_void,
    _dltotal: c_double,
    _dlnow: c_double,
    _ultotal: c_double,
    _ulnow: c_double,
) -> c_int {
    // SAFETY: PROGRESSDATA.
    let keep = guarded(|| unsafe { collector(data).progress() });
    c_int::from(!keep)
}

extern "C" fn debug_cb(
    _handle: *mut sys::CURL,
    kind: sys::curl_infotype,
    ptr: *mut c_char,
    size: usize,
    data: *mut c_void,
) -> c_int {
    let kind = match kind {
        sys::CURLINFO_TEXT => Info::Text,
        sys::CURLINFO_HEADER_IN => Info::HeaderIn,
        sys::CURLINFO_HEADER_OUT => Info::HeaderOut,
        sys::CURLINFO_DATA_IN
        | sys::CURLINFO_DATA_OUT
        | sys::CURLINFO_SSL_DATA_IN
        | sys::CURLINFO_SSL_DATA_OUT => Info::Data,
        _ => return 0,
    };
    guarded(|| {
        // SAFETY: `size` readable bytes and DEBUGDATA.
        unsafe {
            let bytes = std::slice::from_raw_parts(ptr as *const u8, size);
            collector(data).debug(kind, bytes);
        }
    });
    0
}

extern "C" fn opensocket_cb(
    _data: *mut c_void,
    _purpose: sys::curlsocktype,
    address: *mut sys::curl_sockaddr,
) -> sys::curl_socket_t {
    // SAFETY: libcurl passes the address it is about to connect to; socket() takes any values.
    unsafe {
        let a = &*address;
        let fd = libc::socket(a.family, a.socktype | libc::SOCK_CLOEXEC, a.protocol);
        if fd < 0 {
            sys::CURL_SOCKET_BAD
        } else {
            fd
        }
    }
}
