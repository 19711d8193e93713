//! The processes that hold a GPU ([`crate::Field::Gpu`]), found in the
//! kernel (`bpf/gpu.bpf.c`): every descriptor of every process is looked
//! at, none opened and no one woken, and those of a GPU's character device
//! are written out. Only their `/proc/TGID/fdinfo/FD` is then read
//! ([`crate::gpu`]). Three programs, each used where the one before does
//! not load: a walk run on demand over every process with the open-coded
//! task iterator, reading each table of descriptors by hand (Linux 6.7);
//! the task iterator reading the tables the same way (Linux 6.4; also the
//! scan of given processes); the task-file iterator, a call per descriptor.

use std::os::fd::{AsFd, AsRawFd};

use aya::maps::{Array, MapData};
use aya::programs::{Iter, RawTracePoint};
use aya::{Btf, Ebpf};

use super::load::{Mapped, bpf_err, chain, link_kfuncs_of, page_round, program};
use super::net::run_task_iter;
use super::test_run::test_run;
use crate::error::Result;
use crate::record::{
    QS_KFUNC_ITER_NUM_DESTROY, QS_KFUNC_ITER_NUM_NEW, QS_KFUNC_ITER_NUM_NEXT,
    QS_KFUNC_ITER_TASK_DESTROY, QS_KFUNC_ITER_TASK_NEW, QS_KFUNC_ITER_TASK_NEXT,
    QS_KFUNC_RDONLY_CAST, QsGpuCfg, QsGpuFile,
};

/// The committed object, 8-byte aligned as the ELF parser needs.
pub static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/gpu.bpf.o");

/// GPU descriptors one walk gives at most (8 bytes each, mapped); past
/// them, a scan says how many it could not give.
pub const WALK_CAPACITY: u32 = 16_384;

/// The kernel functions `qs_gpu_tasks` calls, by placeholder.
const KFUNCS: [(u64, &str); 4] = [
    (QS_KFUNC_ITER_NUM_NEW, "bpf_iter_num_new"),
    (QS_KFUNC_ITER_NUM_NEXT, "bpf_iter_num_next"),
    (QS_KFUNC_ITER_NUM_DESTROY, "bpf_iter_num_destroy"),
    (QS_KFUNC_RDONLY_CAST, "bpf_rdonly_cast"),
];

/// Those `qs_gpu_walk` calls besides.
const WALK_KFUNCS: [(u64, &str); 3] = [
    (QS_KFUNC_ITER_TASK_NEW, "bpf_iter_task_new"),
    (QS_KFUNC_ITER_TASK_NEXT, "bpf_iter_task_next"),
    (QS_KFUNC_ITER_TASK_DESTROY, "bpf_iter_task_destroy"),
];

// SAFETY: a plain #[repr(C)] integer struct with no padding.
unsafe impl aya::Pod for QsGpuCfg {}

/// The loaded scan.
pub(crate) struct GpuScan {
    ebpf: Ebpf,
    /// The walk's output, where `qs_gpu_walk` loaded: the scan of every
    /// process.
    hits: Option<Mapped>,
    /// Descriptors the last walk found past [`WALK_CAPACITY`].
    lost: u64,
    /// The iterator's program loaded: `qs_gpu_tasks`, or `qs_gpu_files`.
    prog: &'static str,
    /// Why the task iterator's program is not used, if it is not.
    fallback: Option<String>,
    buf: Vec<u8>,
}

// SAFETY: the mapping is only used through &self/&mut self.
unsafe impl Send for GpuScan {}

impl GpuScan {
    /// Loads the scan against `btf`, counting descriptors of the character
    /// devices of `majors` (at most four; 0 is no device): the walk and
    /// the task iterator's program where they load, else the task-file
    /// iterator's (always with `per_descriptor`).
    pub(crate) fn load(btf: &Btf, majors: &[u32], per_descriptor: bool) -> Result<GpuScan> {
        let link = |kfuncs: &[(u64, &str)], needs| {
            link_kfuncs_of(OBJECT, "gpu.bpf.o", kfuncs, needs, btf).map(|(words, _)| {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
                bytes[..OBJECT.len()].to_vec()
            })
        };
        let all: Vec<(u64, &str)> = KFUNCS.iter().chain(&WALK_KFUNCS).copied().collect();
        let fast = if per_descriptor {
            Err(bpf_err("qs_gpu_tasks")("not asked for".into()))
        } else {
            link(
                &all,
                "the open-coded task iterator needs Linux 6.7 or later",
            )
            .and_then(|object| GpuScan::load_one(btf, &object, "qs_gpu_tasks", "task", true))
            .or_else(|_| {
                link(
                    &KFUNCS,
                    "reading tables of descriptors needs Linux 6.4 or later",
                )
                .and_then(|object| GpuScan::load_one(btf, &object, "qs_gpu_tasks", "task", false))
            })
        };
        let mut scan = match fast {
            Ok(scan) => scan,
            Err(e) => {
                let mut scan = GpuScan::load_one(btf, OBJECT, "qs_gpu_files", "task_file", false)?;
                scan.fallback = Some(e.to_string());
                scan
            }
        };
        scan.set_majors(majors)?;
        Ok(scan)
    }

    /// Loads `object` with its iterator program `prog` (of `target`) and,
    /// with `walk`, the walk: an error where either is refused.
    fn load_one(
        btf: &Btf,
        object: &[u8],
        prog: &'static str,
        target: &str,
        walk: bool,
    ) -> Result<GpuScan> {
        let mut ebpf = sys::bpf::loader()
            .btf(Some(btf))
            .map_max_entries("qs_gpu_hits", if walk { WALK_CAPACITY } else { 1 })
            .load(object)
            .map_err(|e| bpf_err("loading gpu.bpf.o")(chain(&e)))?;
        let p: &mut Iter = program(&mut ebpf, prog)?;
        sys::bpf::load_retrying(|| p.load(target, btf))
            .map_err(|e| bpf_err(prog)(format!("verifying it: {}", chain(&e))))?;
        let hits = match walk {
            false => None,
            true => {
                let w: &mut RawTracePoint = program(&mut ebpf, "qs_gpu_walk")?;
                sys::bpf::load_retrying(|| w.load())
                    .map_err(|e| bpf_err("qs_gpu_walk")(format!("verifying it: {}", chain(&e))))?;
                let m = ebpf
                    .map("qs_gpu_hits")
                    .ok_or_else(|| bpf_err("qs_gpu_hits")("not in the object".into()))?;
                Some(
                    Mapped::new(
                        m,
                        page_round(WALK_CAPACITY as usize * size_of::<u64>()),
                        false,
                    )
                    .map_err(|e| bpf_err("qs_gpu_hits")(e.to_string()))?,
                )
            }
        };
        Ok(GpuScan {
            ebpf,
            hits,
            lost: 0,
            prog,
            fallback: None,
            buf: Vec::new(),
        })
    }

    /// The program a scan of every process uses (`qs_gpu_walk`, else the
    /// iterator's), and why not the task iterator's, if not.
    pub(crate) fn method(&self) -> (&'static str, Option<&str>) {
        match self.hits {
            Some(_) => ("qs_gpu_walk", None),
            None => (self.prog, self.fallback.as_deref()),
        }
    }

    /// Descriptors the last scan of every process found and could not
    /// give (past [`WALK_CAPACITY`]).
    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    /// The character-device majors counted as GPUs from now on.
    pub(crate) fn set_majors(&mut self, majors: &[u32]) -> Result<()> {
        let mut cfg = QsGpuCfg {
            majors: [0; 4],
            hits: 0,
            capacity: WALK_CAPACITY,
        };
        for (slot, &m) in cfg.majors.iter_mut().zip(majors) {
            *slot = m;
        }
        let map = self
            .ebpf
            .map_mut("qs_gpu_cfg")
            .ok_or_else(|| bpf_err("qs_gpu_cfg")("not in the object".into()))?;
        let mut array: Array<&mut MapData, QsGpuCfg> =
            Array::try_from(map).map_err(|e| bpf_err("qs_gpu_cfg")(chain(&e)))?;
        array
            .set(0, cfg, 0)
            .map_err(|e| bpf_err("writing qs_gpu_cfg")(chain(&e)))
    }

    /// The descriptors of a GPU of every process (`None`), or of those
    /// named, as (TGID, descriptor), into `out` (cleared first).
    pub(crate) fn scan(&mut self, pids: Option<&[u32]>, out: &mut Vec<(u32, u32)>) -> Result<()> {
        out.clear();
        if pids.is_none()
            && let Some(hits) = self.hits.as_ref()
        {
            let found = run_walk(&self.ebpf)?;
            self.lost = u64::from(found.saturating_sub(WALK_CAPACITY));
            // SAFETY: WALK_CAPACITY u64 values, written by the run, which
            // has returned (BPF_PROG_RUN is a full barrier).
            let hits = unsafe { hits.slice::<u64>(found.min(WALK_CAPACITY) as usize) };
            out.extend(hits.iter().map(|&h| ((h >> 32) as u32, h as u32)));
            return Ok(());
        }
        run_task_iter(
            &self.ebpf,
            self.prog,
            pids,
            &mut self.buf,
            "running the GPU scan",
            |bytes| {
                for rec in bytes.chunks_exact(size_of::<QsGpuFile>()) {
                    let tgid = u32::from_ne_bytes([rec[0], rec[1], rec[2], rec[3]]);
                    let fd = u32::from_ne_bytes([rec[4], rec[5], rec[6], rec[7]]);
                    out.push((tgid, fd));
                }
            },
        )
    }
}

/// Runs the walk once on this thread's CPU: the descriptors it found (past
/// the capacity too).
fn run_walk(ebpf: &Ebpf) -> Result<u32> {
    let fd = ebpf
        .program("qs_gpu_walk")
        .ok_or_else(|| bpf_err("qs_gpu_walk")("not in the object".into()))?
        .fd()
        .map_err(|e| bpf_err("qs_gpu_walk")(chain(&e)))?
        .as_fd()
        .as_raw_fd();
    let status =
        test_run(fd, &[0; 12]).map_err(|e| bpf_err("running the GPU walk")(e.to_string()))?;
    if status != 0 {
        return Err(bpf_err("running the GPU walk")(format!(
            "it returned {status}"
        )));
    }
    let map = ebpf
        .map("qs_gpu_cfg")
        .ok_or_else(|| bpf_err("qs_gpu_cfg")("not in the object".into()))?;
    let cfg: Array<&MapData, QsGpuCfg> =
        Array::try_from(map).map_err(|e| bpf_err("qs_gpu_cfg")(chain(&e)))?;
    cfg.get(&0, 0)
        .map(|c| c.hits)
        .map_err(|e| bpf_err("reading qs_gpu_cfg")(chain(&e)))
}
