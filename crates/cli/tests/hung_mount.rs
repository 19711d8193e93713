//! A hung mount (a FUSE filesystem whose daemon never answers, as a dead
//! NFS server behaves) must not stop the sampler: its statfs waits off the
//! sampling thread, the mount is reported with `node_filesystem_device_error`
//! 1, and it is retried once the hung call returns. Its own test binary:
//! nothing else in the suite should statfs the mount while it hangs.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

use common::agent::*;

/// A FUSE mount that never answers: the kernel's INIT request is left
/// unread, so every call on the mount waits, until the device is closed
/// (the connection is then aborted: ENOTCONN).
struct HungFuse {
    dev: Option<OwnedFd>,
    dir: PathBuf,
}

impl HungFuse {
    fn mount(dir: &Path) -> HungFuse {
        let dev = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/fuse")
            .expect("/dev/fuse (the kernel's FUSE device) is needed for this test");
        let fd: OwnedFd = dev.into();
        let target = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        let data = CString::new(format!(
            "fd={},rootmode=40000,user_id=0,group_id=0",
            fd.as_raw_fd()
        ))
        .unwrap();
        // SAFETY: NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::mount(
                c"quietstat-hung".as_ptr(),
                target.as_ptr(),
                c"fuse".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr().cast(),
            )
        };
        assert_eq!(r, 0, "mount: {}", std::io::Error::last_os_error());
        HungFuse {
            dev: Some(fd),
            dir: dir.to_path_buf(),
        }
    }

    /// Closes the device: the connection is aborted and hung calls return.
    fn abort(&mut self) {
        self.dev = None;
    }
}

impl Drop for HungFuse {
    fn drop(&mut self) {
        self.abort();
        let target = CString::new(self.dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; a lazy unmount of our own mount.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

/// The statfs outcome the agent reports for `mountpoint`: `Some(None)`
/// answered, `Some(Some(reason))` failed, `None` not listed.
fn outcome(a: &Agent, mountpoint: &str) -> Option<Option<String>> {
    let r = get(a.addr, "/api/v1/snapshot?sources=filesystem", None);
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    let mounts = v["sources"]["filesystem"]["data"].as_array()?.clone();
    mounts
        .iter()
        .find(|m| m["mountpoint"] == mountpoint)
        .map(|m| m["error"].as_str().map(str::to_string))
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + limit;
    while !f() {
        assert!(Instant::now() < end, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_hung_mount_is_reported_failed_and_the_sampler_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().to_str().unwrap().to_string();
    let mut fuse = HungFuse::mount(dir.path());
    let a = agent(
        "[sources.filesystem]\ninterval = \"1s\"\n[sources.stat]\ninterval = \"200ms\"\n",
        &[],
    );
    // The first read waits the statfs bound and reports the mount
    // (`timeout`); later reads leave it alone while that call hangs
    // (`stuck`).
    wait_for(
        "the hung mount reported",
        Duration::from_secs(10),
        || matches!(outcome(&a, &mnt), Some(Some(r)) if r == "timeout" || r == "stuck"),
    );
    wait_for("the hung mount skipped", Duration::from_secs(10), || {
        outcome(&a, &mnt) == Some(Some("stuck".into()))
    });
    // Meanwhile everything else is read and served on time.
    for _ in 0..10 {
        let t = Instant::now();
        let r = get(a.addr, "/metrics", None);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        let series = format!(
            "node_filesystem_device_error{{device=\"quietstat-hung\",fstype=\"fuse\",mountpoint=\"{mnt}\"}} 1"
        );
        assert!(r.body.contains(&series), "{series} not in the scrape");
        assert!(
            r.body
                .lines()
                .any(|l| l.starts_with("node_filesystem_size_bytes{")),
            "the other mounts are still reported"
        );
        let age: f64 = r
            .body
            .lines()
            .find_map(|l| l.strip_prefix("quietstat_source_age_seconds{source=\"stat\"} "))
            .and_then(|v| v.parse().ok())
            .expect("stat's age");
        assert!(age < 1.0, "stat is {age} s old while a mount hangs");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Once the hung call returns (the connection aborted here), the mount
    // is tried again and reports what statfs now says.
    fuse.abort();
    wait_for("the mount retried", Duration::from_secs(10), || {
        outcome(&a, &mnt) == Some(Some("ENOTCONN".into()))
    });
}
