//! A child made by `fork` (Python's multiprocessing forks) inherits a copy of the cache
//! writer's queue but not its thread: it must neither wait for ever for its parent's stores
//! nor lose its own. Its own test binary: a fork with other tests' threads running could copy
//! a lock held.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hfile::cache::in_background;

#[test]
fn a_forked_child_waits_for_none_of_its_parents_stores_and_runs_its_own() {
    // A store that runs until told: still queued or running when the process forks.
    static GO: Mutex<bool> = Mutex::new(false);
    static GO_CHANGED: Condvar = Condvar::new();
    let slow = in_background(|| {
        let mut go = GO.lock().unwrap();
        while !*go {
            go = GO_CHANGED.wait(go).unwrap();
        }
    });
    let later = in_background(|| {});
    // SAFETY: the child only runs this test's code, then leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // The parent's stores are not the child's to wait for, and its own run.
        slow.wait();
        later.wait();
        let ran = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&ran);
        in_background(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .wait();
        let code = if ran.load(Ordering::SeqCst) == 1 {
            0
        } else {
            3
        };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        // SAFETY: waits for the child this test made, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: the child this test made.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the forked child hung waiting for its parent's store");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    *GO.lock().unwrap() = true;
    GO_CHANGED.notify_all();
    slow.wait();
    later.wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
}
