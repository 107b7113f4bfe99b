//! `S3Stack::wake`, which benchmarks call before each run through s3s-fs: it must really reach
//! the store (a signed GET answered 206), stay out of the proxy's log (the run's requests are
//! counted from it), and fail loudly on a URL the store refuses rather than pass silently.

use testkit::s3::{self, Object, S3Stack};
use testkit::Link;

#[test]
fn wake_reaches_the_store_and_stays_out_of_the_log() {
    let dir = std::env::temp_dir().join(format!("testkit-s3-wake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("obj.bin");
    std::fs::write(&source, b"0123456789").unwrap();
    let objects = vec![Object {
        source,
        key: "obj.bin".into(),
    }];
    let stack = S3Stack::start(&[("wake", objects)], Link::default()).unwrap();
    let python = s3::boto3_python().unwrap();
    let urls = s3::presign(&python, &stack.endpoint(), "wake", &["obj.bin"], 600).unwrap();
    let woken = stack.wake(&urls[0]);
    let logged = stack.proxy.log().len();
    // The same URL with its signature's last digit changed: s3s-fs refuses it.
    let mut forged = urls[0].clone();
    let last = forged.pop().unwrap();
    forged.push(if last == '0' { '1' } else { '0' });
    let refused = stack.wake(&forged);
    drop(stack);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(woken, Ok(()));
    assert_eq!(logged, 0, "the wake-up GET went through the proxy");
    let refused = refused.unwrap_err();
    assert!(refused.contains("403"), "{refused}");
}
