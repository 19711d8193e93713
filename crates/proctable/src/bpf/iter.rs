//! [`Method::Iter`]: the `iter/task` link, read back through its fd in
//! large batches into one reused buffer; the threads are summed here.

use std::mem::size_of;

use aya::programs::Iter;
use procfs::pid::PidIo;

use super::Bpf;
use super::decode::{delays, pid_io, row};
use super::load::{bpf_err, chain, program, read_to_end};
use crate::cputime::{RawCputime, adjust};
use crate::error::{Error, Result};
use crate::fields::Field;
use crate::proc::Proc;
use crate::query::Query;
use crate::record::{QsDelays, QsIo, QsTask};

impl Bpf {
    /// Runs the iterator once and returns the bytes it wrote.
    pub(super) fn run_iterator(&mut self) -> Result<usize> {
        let prog: &mut Iter = program(&mut self.ebpf, "qs_tasks")?;
        let id = prog
            .attach()
            .map_err(|e| bpf_err("attaching the task iterator")(chain(&e)))?;
        let link = prog
            .take_link(id)
            .map_err(|e| bpf_err("taking the iterator link")(chain(&e)))?;
        let mut file = link
            .into_file()
            .map_err(|e| bpf_err("creating an iterator fd")(chain(&e)))?;
        read_to_end(&mut file, &mut self.buf, "reading the task iterator")
    }

    pub(super) fn decode(&mut self, len: usize, query: &Query, out: &mut Vec<Proc>) -> Result<()> {
        let want_io = query.fields.has(Field::Io);
        let want_delays = query.fields.has(Field::DelayAcct);
        let io_at = size_of::<QsTask>();
        let delays_at = io_at + if want_io { size_of::<QsIo>() } else { 0 };
        let step = delays_at
            + if want_delays {
                size_of::<QsDelays>()
            } else {
                0
            };
        if !len.is_multiple_of(step) {
            return Err(Error::Decode(format!(
                "{len} bytes is not a whole number of {step}-byte records"
            )));
        }
        let bytes = &self.buf[..len];
        self.raw.clear();
        self.io.clear();
        let page = self.page_size;
        let fields = query.fields;
        let read = |chunk: &[u8]| -> (QsTask, Option<PidIo>) {
            // SAFETY: chunk holds at least one QsTask (then a QsIo and a
            // QsDelays when asked); all are plain integer structs read
            // unaligned.
            let t: QsTask = unsafe { std::ptr::read_unaligned(chunk.as_ptr().cast()) };
            let io = want_io.then(|| {
                // SAFETY: as above, the QsIo follows the QsTask.
                let r: QsIo = unsafe { std::ptr::read_unaligned(chunk[io_at..].as_ptr().cast()) };
                pid_io(&r)
            });
            (t, io)
        };
        // Rows: every task in threads mode, else leaders only; sorted by PID
        // as the iterator walks them.
        for chunk in bytes.chunks_exact(step) {
            let (t, io) = read(chunk);
            if !query.threads && t.pid != t.tgid {
                continue;
            }
            let w = want_delays.then(|| {
                // SAFETY: as above, the QsDelays follows the QsTask (and QsIo).
                let r: QsDelays =
                    unsafe { std::ptr::read_unaligned(chunk[delays_at..].as_ptr().cast()) };
                delays(&r)
            });
            out.push(row(&t, page, fields, (0, 0), None, w));
            self.raw.push(RawCputime {
                utime: t.utime_ns,
                stime: t.stime_ns,
                runtime: t.runtime_ns,
                prev_utime: t.prev_utime_ns,
                prev_stime: t.prev_stime_ns,
            });
            self.io.push(io.unwrap_or_default());
        }
        if !query.threads {
            // Add every other thread's own counters to its leader's row.
            for chunk in bytes.chunks_exact(step) {
                let (t, io) = read(chunk);
                if t.pid == t.tgid {
                    continue;
                }
                let Ok(i) = out.binary_search_by_key(&t.tgid, |p| p.pid) else {
                    continue;
                };
                let raw = &mut self.raw[i];
                raw.utime += t.utime_ns;
                raw.stime += t.stime_ns;
                raw.runtime += t.runtime_ns;
                out[i].minflt += t.min_flt;
                out[i].majflt += t.maj_flt;
                if let Some(io) = io {
                    let sum = &mut self.io[i];
                    sum.rchar += io.rchar;
                    sum.wchar += io.wchar;
                    sum.syscr += io.syscr;
                    sum.syscw += io.syscw;
                    sum.read_bytes += io.read_bytes;
                    sum.write_bytes += io.write_bytes;
                    sum.cancelled_write_bytes += io.cancelled_write_bytes;
                }
            }
        }
        for (i, p) in out.iter_mut().enumerate() {
            let (u, s) = adjust(self.raw[i]);
            p.utime_ns = u;
            p.stime_ns = s;
            if want_io {
                p.io = Some(self.io[i]);
            }
        }
        Ok(())
    }
}
