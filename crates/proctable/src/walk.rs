//! The BPF walk: `bpf/walk.bpf.c`'s program, run on demand with
//! `BPF_PROG_RUN`, walks the task list with the kernel's open-coded task
//! iterator and writes one record per process (or thread) into a
//! memory-mapped array that is decoded in place. Needs the iterator's kernel
//! functions (Linux 6.7 or later); [`crate::bpf::Bpf`] falls back to the
//! `iter/task` link otherwise.
//!
//! The loader library cannot resolve calls to kernel functions, so the
//! object calls them as helpers with placeholder numbers (`QS_KFUNC_*` in
//! `bpf/record.h`) and [`link_kfuncs`] rewrites each such call into a
//! kernel-function call with the function's BTF id in the running kernel
//! before the object is loaded.

use std::os::fd::{AsFd, AsRawFd};

use aya::maps::Map;
use aya::programs::{RawTracePoint, RawTracePointRunOptions, TestRun};
use aya::{Btf, Ebpf, EbpfLoader};
use aya_obj::btf::BtfKind;
use object::{Object, ObjectSection, SectionKind};

use crate::bpf::{bpf_err, chain, load_retrying, program, write_config, write_filter};
use crate::error::Result;
use crate::record::{
    QS_KFUNC_ITER_TASK_DESTROY, QS_KFUNC_ITER_TASK_NEW, QS_KFUNC_ITER_TASK_NEXT,
    QS_KFUNC_RDONLY_CAST, QS_WALK_MIN_ROWS, QsConfig, QsIo, QsTask, QsWalkOut,
};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/walk.bpf.o");

// SAFETY: plain #[repr(C)] integer struct with no padding.
unsafe impl aya::Pod for QsWalkOut {}

const KFUNCS: [(u64, &str); 4] = [
    (QS_KFUNC_ITER_TASK_NEW, "bpf_iter_task_new"),
    (QS_KFUNC_ITER_TASK_NEXT, "bpf_iter_task_next"),
    (QS_KFUNC_ITER_TASK_DESTROY, "bpf_iter_task_destroy"),
    (QS_KFUNC_RDONLY_CAST, "bpf_rdonly_cast"),
];

const BPF_JMP_CALL: u8 = 0x85;
const BPF_PSEUDO_KFUNC_CALL: u8 = 2;

/// Returns a copy of `object` (an ELF BPF object) in which every helper
/// call to a `QS_KFUNC_*` number calls that kernel function instead, and
/// how many calls were rewritten. The copy is kept in `u64`s: the ELF
/// parser needs 8-byte alignment.
pub fn link_kfuncs(object: &[u8], btf: &Btf) -> Result<(Vec<u64>, usize)> {
    let mut ids = Vec::with_capacity(KFUNCS.len());
    for (placeholder, name) in KFUNCS {
        let id = btf.id_by_type_name_kind(name, BtfKind::Func).map_err(|e| {
            bpf_err("finding kernel functions")(format!(
                "{name} is not in the kernel's BTF (the open-coded task iterator needs Linux 6.7 or later): {e}"
            ))
        })?;
        ids.push((placeholder as i32, id as i32));
    }
    let file =
        object::File::parse(object).map_err(|e| bpf_err("parsing walk.bpf.o")(e.to_string()))?;
    let mut text = Vec::new();
    for section in file.sections() {
        if section.kind() == SectionKind::Text
            && let Some((offset, size)) = section.file_range()
        {
            text.push((offset as usize, size as usize));
        }
    }
    let mut words = vec![0u64; object.len().div_ceil(8)];
    // SAFETY: the u64 buffer is at least object.len() bytes long.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), object.len()) };
    bytes.copy_from_slice(object);
    let mut rewritten = 0;
    for (offset, size) in text {
        let Some(section) = bytes.get_mut(offset..offset + size) else {
            return Err(bpf_err("parsing walk.bpf.o")(
                "a text section lies outside the file".into(),
            ));
        };
        for insn in section.chunks_exact_mut(8) {
            // Helper calls have the source register 0; the second half of
            // a 16-byte load has code 0, so it never matches.
            if insn[0] != BPF_JMP_CALL || insn[1] >> 4 != 0 {
                continue;
            }
            let imm = i32::from_le_bytes([insn[4], insn[5], insn[6], insn[7]]);
            if let Some(&(_, id)) = ids.iter().find(|(p, _)| *p == imm) {
                insn[1] = BPF_PSEUDO_KFUNC_CALL << 4;
                insn[2] = 0;
                insn[3] = 0;
                insn[4..8].copy_from_slice(&id.to_le_bytes());
                rewritten += 1;
            }
        }
    }
    Ok((words, rewritten))
}

/// A shared read-only mapping of a BPF array map's values.
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn new(map: &Map, len: usize) -> Result<Mapped> {
        let data = match map {
            Map::Array(d) => d,
            _ => return Err(bpf_err("mapping qs_rows")("not an array map".into())),
        };
        // SAFETY: a fresh shared read-only mapping of the map's fd; the
        // kernel checks len against the map's size.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                data.fd().as_fd().as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(bpf_err("mapping qs_rows")(
                std::io::Error::last_os_error().to_string(),
            ));
        }
        Ok(Mapped { ptr, len })
    }

    /// The first `n` values as `T`s.
    ///
    /// # Safety
    /// The map's values are `T`s (8-byte multiples, so each is aligned in
    /// the page-aligned mapping) and `n` of them fit in the mapping.
    unsafe fn slice<T>(&self, n: usize) -> &[T] {
        debug_assert!(n * size_of::<T>() <= self.len);
        // SAFETY: per the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<T>(), n) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what new() mapped.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The loaded walk program with its mapped output arrays.
pub(crate) struct Walk {
    rows: Mapped,
    io: Mapped,
    capacity: u32,
    reloads: u64,
    config: QsConfig,
    filter: Vec<u32>,
    // Dropped last: the mappings hold the maps' memory, not their fds.
    ebpf: Ebpf,
}

// SAFETY: the mappings are only read through &self/&mut self.
unsafe impl Send for Walk {}

fn page_round(n: usize) -> usize {
    n.div_ceil(4096) * 4096
}

/// Tasks (threads) in the system now: the fourth field of /proc/loadavg.
fn tasks_now() -> u32 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(3)
                .and_then(|f| f.split_once('/'))
                .and_then(|(_, n)| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Rows for `tasks` tasks with room to double: a reload frees and
/// allocates kernel memory and loads a program, which may flush every
/// CPU's TLB (an IPI to isolated CPUs too), so it should be rare.
fn capacity_for(tasks: u32) -> u32 {
    tasks.saturating_mul(2).max(QS_WALK_MIN_ROWS as u32)
}

impl Walk {
    /// Loads the walk with room for `capacity` rows; `object` is
    /// [`OBJECT`] after [`link_kfuncs`].
    fn load(object: &[u8], btf: &Btf, capacity: u32) -> Result<Walk> {
        let mut ebpf = EbpfLoader::new()
            .btf(Some(btf))
            .map_max_entries("qs_rows", capacity)
            .map_max_entries("qs_rows_io", capacity)
            .load(object)
            .map_err(|e| bpf_err("loading walk.bpf.o")(chain(&e)))?;
        let prog: &mut RawTracePoint = program(&mut ebpf, "qs_walk")?;
        load_retrying(|| prog.load()).map_err(|e| bpf_err("verifying the task walk")(chain(&e)))?;
        let map = |name: &'static str, ebpf: &Ebpf, size: usize| -> Result<Mapped> {
            let m = ebpf
                .map(name)
                .ok_or_else(|| bpf_err(name)("not in the object".into()))?;
            Mapped::new(m, page_round(capacity as usize * size))
        };
        let rows = map("qs_rows", &ebpf, size_of::<QsTask>())?;
        let io = map("qs_rows_io", &ebpf, size_of::<QsIo>())?;
        let mut walk = Walk {
            rows,
            io,
            capacity,
            reloads: 0,
            config: QsConfig {
                flags: u32::MAX,
                wakeup_bytes: 0,
            },
            filter: Vec::new(),
            ebpf,
        };
        walk.set_config(QsConfig {
            flags: 0,
            wakeup_bytes: 0,
        })?;
        Ok(walk)
    }

    /// Loads the walk sized for the tasks there are now.
    pub(crate) fn open(object: &[u8], btf: &Btf) -> Result<Walk> {
        Walk::load(object, btf, capacity_for(tasks_now()))
    }

    pub(crate) fn set_config(&mut self, cfg: QsConfig) -> Result<()> {
        write_config(&mut self.ebpf, &mut self.config, cfg)
    }

    pub(crate) fn set_filter(&mut self, pids: &[u32]) -> Result<()> {
        write_filter(&mut self.ebpf, &mut self.filter, pids)
    }

    fn run_once(&mut self) -> Result<QsWalkOut> {
        let prog: &mut RawTracePoint = program(&mut self.ebpf, "qs_walk")?;
        // No CPU given: the walk runs on this thread's CPU, so no other
        // CPU is interrupted.
        let ret = prog
            .test_run(RawTracePointRunOptions::new())
            .map_err(|e| bpf_err("running the task walk")(chain(&e)))?;
        if ret.return_value != 0 {
            return Err(bpf_err("running the task walk")(format!(
                "the program returned {} (its maps are missing)",
                ret.return_value
            )));
        }
        let map = self
            .ebpf
            .map("qs_walk_out")
            .ok_or_else(|| bpf_err("qs_walk_out")("not in the object".into()))?;
        let arr: aya::maps::Array<_, QsWalkOut> =
            aya::maps::Array::try_from(map).map_err(|e| bpf_err("qs_walk_out")(chain(&e)))?;
        arr.get(&0, 0)
            .map_err(|e| bpf_err("reading qs_walk_out")(chain(&e)))
    }

    /// Runs the walk (reloading it with more rows when they did not fit)
    /// and returns the records it wrote: tasks, and their I/O when the
    /// configuration asks for it (else empty).
    pub(crate) fn run(&mut self, object: &[u8]) -> Result<(&[QsTask], &[QsIo])> {
        let mut out = self.run_once()?;
        if out.wanted > out.rows {
            self.reload(object, capacity_for(out.wanted as u32))?;
            out = self.run_once()?;
        }
        let n = (out.rows as usize).min(self.capacity as usize);
        let want_io = self.config.flags & crate::record::QS_CFG_IO as u32 != 0;
        // SAFETY: qs_rows holds QsTask values, qs_rows_io QsIo values (both
        // multiples of 8 bytes), `capacity` of each; n <= capacity.
        let tasks = unsafe { self.rows.slice::<QsTask>(n) };
        let io = if want_io {
            // SAFETY: as above.
            unsafe { self.io.slice::<QsIo>(n) }
        } else {
            &[]
        };
        Ok((tasks, io))
    }

    /// Loads the walk again with room for `capacity` rows, keeping its
    /// configuration and PID filter. The kernel's BTF is read again rather
    /// than kept: parsed, it holds about 10 MiB, and reloads are rare.
    pub(crate) fn reload(&mut self, object: &[u8], capacity: u32) -> Result<()> {
        let btf = Btf::from_sys_fs()
            .map_err(|e| bpf_err("reading /sys/kernel/btf/vmlinux")(chain(&e)))?;
        let config = self.config;
        let filter = std::mem::take(&mut self.filter);
        let reloads = self.reloads + 1;
        *self = Walk::load(object, &btf, capacity.max(1))?;
        self.reloads = reloads;
        self.set_config(config)?;
        self.set_filter(&filter)
    }

    pub(crate) fn reloads(&self) -> u64 {
        self.reloads
    }

    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }
}
