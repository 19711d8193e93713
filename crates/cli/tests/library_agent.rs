//! libquietstat served from a running agent's table (`qs_options.agent`):
//! taken when fresh and complete, passed over (and the reason given) when
//! not, and never for start times.

mod common;

use std::ffi::{CStr, CString};
use std::time::Duration;

use common::agent::agent;
use quietstat::*;

fn open(agent: &CStr, max_age_ms: u32) -> *mut qs_handle {
    let opts = qs_options {
        abi: QS_ABI_VERSION,
        backend: QS_BACKEND_PROCFS,
        proc_root: std::ptr::null(),
        sys_root: std::ptr::null(),
        threads: 0,
        agent: agent.as_ptr(),
        agent_max_age_ms: max_age_ms,
    };
    // SAFETY: valid options; the strings outlive the call.
    let h = unsafe { qs_open(&opts) };
    assert!(!h.is_null());
    h
}

fn snapshot(h: *mut qs_handle, mask: qs_fields) -> Vec<qs_proc> {
    let mut out: *mut qs_proc = std::ptr::null_mut();
    let mut n = 0usize;
    // SAFETY: an open handle and writable out-parameters.
    assert_eq!(unsafe { qs_snapshot(h, mask, &mut out, &mut n) }, QS_OK);
    // SAFETY: the library's array of n records, copied then freed.
    let rows = unsafe { std::slice::from_raw_parts(out, n) }.to_vec();
    // SAFETY: the array qs_snapshot gave, freed once.
    unsafe { qs_table_free(out, n) };
    rows
}

fn agent_note(h: *mut qs_handle) -> String {
    // SAFETY: an open handle; the string is copied before the next call.
    unsafe { CStr::from_ptr(qs_agent_note(h)) }
        .to_string_lossy()
        .into_owned()
}

fn served_by(h: *mut qs_handle) -> i32 {
    // SAFETY: an open handle.
    unsafe { qs_served_by(h) }
}

#[test]
fn reads_come_from_the_agent_when_fresh_and_complete() {
    let a = agent("", &["--backend", "procfs"]);
    let shm = CString::new(a.shm.to_str().unwrap()).unwrap();
    let me = std::process::id() as i32;

    let h = open(&shm, 0);
    let rows = snapshot(h, QS_FIELD_PPID | QS_FIELD_COMM | QS_FIELD_STATE);
    assert_eq!(served_by(h), QS_SERVED_AGENT, "{}", agent_note(h));
    assert_eq!(agent_note(h), "");
    let mine = rows.iter().find(|r| r.pid == me).expect("this process");
    assert_eq!(mine.ppid as u32, std::os::unix::process::parent_id());

    // The same records as the handle's own read, for processes in both.
    let own = open(c"/nonexistent/snapshot", 0);
    let fresh = snapshot(own, QS_FIELD_PPID);
    assert_eq!(served_by(own), QS_SERVED_SELF);
    assert!(
        agent_note(own).contains("/nonexistent/snapshot"),
        "{}",
        agent_note(own)
    );
    let f = fresh.iter().find(|r| r.pid == me).unwrap();
    assert_eq!((f.start_ticks, f.ppid), (mine.start_ticks, mine.ppid));

    // qs_pids_read from the agent: in the order asked, a PID it does not
    // hold zeroed.
    let pids = [me, 4_194_305];
    // SAFETY: qs_proc is plain integers; all-zero is valid.
    let mut recs: [qs_proc; 2] = unsafe { std::mem::zeroed() };
    // SAFETY: two PIDs, two records.
    let read = unsafe { qs_pids_read(h, pids.as_ptr(), 2, QS_FIELD_PPID, recs.as_mut_ptr()) };
    assert_eq!(read, QS_OK);
    assert_eq!(served_by(h), QS_SERVED_AGENT);
    assert_eq!((recs[0].pid, recs[0].start_ticks), (me, mine.start_ticks));
    assert_eq!(recs[1].pid, 0);

    // Older than asked: read by the handle, and the reason given.
    let strict = open(&shm, 1);
    std::thread::sleep(Duration::from_millis(5));
    snapshot(strict, QS_FIELD_PPID);
    assert_eq!(served_by(strict), QS_SERVED_SELF);
    assert!(
        agent_note(strict).contains("older than"),
        "{}",
        agent_note(strict)
    );

    // A field the agent never reads (the OOM adjustment): the handle reads
    // it itself.
    snapshot(h, QS_FIELD_PPID | QS_FIELD_OOM);
    assert_eq!(served_by(h), QS_SERVED_SELF);
    assert!(agent_note(h).contains("lacks oom"), "{}", agent_note(h));

    // Start times always come from the kernel, agent or not.
    let mut start = 0u64;
    // SAFETY: one PID, one result.
    assert_eq!(unsafe { qs_pid_start_times(h, &me, 1, &mut start) }, QS_OK);
    assert_eq!(start, mine.start_ticks);

    // Stopped: the handle reads for itself and says why.
    let mut a = a;
    a.proc.signal(libc::SIGTERM);
    assert!(a.proc.wait(Duration::from_secs(20)).is_some());
    let rows = snapshot(h, QS_FIELD_PPID);
    assert_eq!(served_by(h), QS_SERVED_SELF);
    assert!(rows.iter().any(|r| r.pid == me));
    assert!(!agent_note(h).is_empty());
    for handle in [h, own, strict] {
        // SAFETY: each handle once.
        unsafe { qs_close(handle) };
    }
}
