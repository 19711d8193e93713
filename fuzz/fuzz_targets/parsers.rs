//! Every system-source parser on the same input, selected by its first byte;
//! each must return `Ok` or a `ParseError` and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use procfs::{Source, SystemSample};

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else { return };
    let source = Source::ALL[which as usize % Source::COUNT];
    let mut sample = SystemSample::default();
    if let Err(e) = sample.parse_source(source, bytes) {
        assert!(e.line >= 1);
    }
    // Twice into the same value: reuse must not depend on what was there.
    let _ = sample.parse_source(source, bytes);
    let _ = procfs::cpu::parse_cmdline(&String::from_utf8_lossy(bytes));
    // /proc/PID/stat: the fast path accepts only what the general parser
    // does, and reads it the same.
    if let Some(fast) = procfs::pid::parse_stat_fast(bytes) {
        assert_eq!(Ok(fast), procfs::pid::parse_stat_general(bytes));
    }
    let _ = procfs::pid::parse_status_ctxsw(bytes);
    let _ = procfs::pid::parse_io(bytes);
    let _ = procfs::pid::parse_schedstat(bytes);
    let _ = procfs::pid::parse_start_ticks(bytes);
    let _ = procfs::pid::cmdline_text(bytes);
    let _ = procfs::cpu::CpuList::parse(&String::from_utf8_lossy(bytes));
});
