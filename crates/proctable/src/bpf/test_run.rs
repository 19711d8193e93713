//! Running a program once on this thread's CPU: `BPF_PROG_TEST_RUN`, with
//! the kernel's `union bpf_attr` as aya-obj generates it from the uapi
//! header.

use std::io;
use std::os::fd::RawFd;

use aya_obj::generated::{bpf_attr, bpf_cmd};

/// The arguments a raw tracepoint program is run with: up to 12.
pub(crate) type Args = [u64; 12];

/// Runs the raw tracepoint program `prog_fd` once on this thread's CPU with
/// `args` as its context (no CPU given: no other CPU is interrupted) and
/// returns what it returned.
pub(crate) fn test_run(prog_fd: RawFd, args: &Args) -> io::Result<u32> {
    // SAFETY: an all-zero bpf_attr is valid (plain integers). The fields
    // are written one by one into the zeroed union: assigning a whole
    // struct would copy its trailing padding, which the kernel requires to
    // be zero (it checks every byte past the command's last field).
    let mut attr: bpf_attr = unsafe { std::mem::zeroed() };
    attr.test.prog_fd = prog_fd as u32;
    attr.test.ctx_size_in = size_of::<Args>() as u32;
    attr.test.ctx_in = args.as_ptr() as u64;
    // SAFETY: attr is a valid BPF_PROG_TEST_RUN attribute of the size
    // given; ctx_in points at size_of::<Args>() readable bytes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            bpf_cmd::BPF_PROG_TEST_RUN as libc::c_long,
            &mut attr as *mut bpf_attr,
            size_of::<bpf_attr>() as u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled the `test` member this command uses.
    Ok(unsafe { attr.test.retval })
}
