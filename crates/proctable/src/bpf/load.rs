//! Loading the backend's objects: errors named by what was being done,
//! programs by name, and the maps that configure them.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use aya::maps::{Array, HashMap as BpfHashMap, Map};
use aya::{Btf, Ebpf};
pub use sys::bpf::{chain, load_retrying};

use crate::error::{Error, Result};
use crate::record::QsConfig;

pub(crate) fn bpf_err(what: &'static str) -> impl FnOnce(String) -> Error {
    move |detail| Error::Bpf { what, detail }
}

/// Reads an iterator's `file` to its end into `buf` (doubled whenever
/// less than 16 KiB is left); returns the length. `what` names the read in
/// an error.
pub(crate) fn read_to_end(
    file: &mut std::fs::File,
    buf: &mut Vec<u8>,
    what: &'static str,
) -> Result<usize> {
    use std::io::Read;
    let mut len = 0;
    loop {
        if buf.len() - len < 16 * 1024 {
            let grown = (buf.len() * 2).max(64 * 1024);
            buf.resize(grown, 0);
        }
        match file.read(&mut buf[len..]) {
            Ok(0) => return Ok(len),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(bpf_err(what)(e.to_string())),
        }
    }
}

/// The running kernel's BTF, parsed (about 10 MiB: read when loading, not
/// kept).
pub(crate) fn kernel_btf() -> Result<Btf> {
    Btf::from_sys_fs().map_err(|e| bpf_err("reading /sys/kernel/btf/vmlinux")(chain(&e)))
}

/// The program `name` of `ebpf` as its type (`Iter`, `BtfTracePoint`, ...).
pub(crate) fn program<'a, T>(ebpf: &'a mut Ebpf, name: &'static str) -> Result<&'a mut T>
where
    &'a mut T: TryFrom<&'a mut aya::programs::Program, Error = aya::programs::ProgramError>,
{
    ebpf.program_mut(name)
        .ok_or_else(|| bpf_err(name)("not in the object".into()))?
        .try_into()
        .map_err(|e| bpf_err(name)(chain(&e)))
}

/// Makes the one entry of an object's `qs_config` map `cfg`, given that it
/// holds `current` (updated); writes only on a change.
pub(crate) fn write_config(ebpf: &mut Ebpf, current: &mut QsConfig, cfg: QsConfig) -> Result<()> {
    if cfg == *current {
        return Ok(());
    }
    let map = ebpf
        .map_mut("qs_config")
        .ok_or_else(|| bpf_err("qs_config")("not in the object".into()))?;
    let mut arr: Array<_, QsConfig> =
        Array::try_from(map).map_err(|e| bpf_err("qs_config")(chain(&e)))?;
    arr.set(0, cfg, 0)
        .map_err(|e| bpf_err("writing qs_config")(chain(&e)))?;
    *current = cfg;
    Ok(())
}

/// Makes an object's `qs_pids` map hold `pids`, given that it holds
/// `current` (updated).
pub(crate) fn write_filter(ebpf: &mut Ebpf, current: &mut Vec<u32>, pids: &[u32]) -> Result<()> {
    let mut want: Vec<u32> = pids.to_vec();
    want.sort_unstable();
    want.dedup();
    if want == *current {
        return Ok(());
    }
    let map = ebpf
        .map_mut("qs_pids")
        .ok_or_else(|| bpf_err("qs_pids")("not in the object".into()))?;
    let mut hash: BpfHashMap<_, u32, u8> =
        BpfHashMap::try_from(map).map_err(|e| bpf_err("qs_pids")(chain(&e)))?;
    for pid in current.iter() {
        if want.binary_search(pid).is_err() {
            let _ = hash.remove(pid);
        }
    }
    for pid in &want {
        hash.insert(pid, 1, 0)
            .map_err(|e| bpf_err("writing qs_pids")(chain(&e)))?;
    }
    *current = want;
    Ok(())
}

/// [`sys::bpf::link_kfuncs_of`], its error as the backend's.
pub(crate) fn link_kfuncs_of(
    object: &[u8],
    file: &'static str,
    kfuncs: &[(u64, &str)],
    needs: &str,
    btf: &Btf,
) -> Result<(Vec<u64>, usize)> {
    sys::bpf::link_kfuncs_of(object, file, kfuncs, needs, btf).map_err(|(what, e)| bpf_err(what)(e))
}

pub(crate) use sys::bpf::{Mapped, map_shared, page_round};

/// A program loaded as `BPF_PROG_TYPE_SYSCALL` (sleepable, run only with
/// `BPF_PROG_RUN`) and the maps of its object, by name.
pub(crate) struct SyscallProgram {
    pub(crate) fd: OwnedFd,
    pub(crate) maps: Vec<(String, Map)>,
}

/// Loads program `name` of `object` (an ELF BPF object, kernel-function
/// calls already linked) as a `BPF_PROG_TYPE_SYSCALL` program, the one
/// type that may call the kernel functions every program type does not
/// get (`bpf_task_from_vpid`) and still be run on demand. The loader
/// library has no such type, so the object is parsed and relocated with its
/// object crate (CO-RE against `btf`, maps, calls) and loaded here. The
/// maps are created first, each array of `sizes` with that many entries;
/// the program's section name is only what the parser needs to take it.
pub(crate) fn load_syscall_program(
    object: &[u8],
    file: &'static str,
    name: &'static str,
    btf: &Btf,
    sizes: &[(&str, u32)],
) -> Result<SyscallProgram> {
    let mut obj = aya_obj::Object::parse(object).map_err(|e| bpf_err(file)(chain(&e)))?;
    obj.relocate_btf(btf)
        .map_err(|e| bpf_err("relocating against the kernel's BTF")(chain(&e)))?;
    let mut maps = Vec::new();
    // Each map's name, descriptor and definition, for the relocation.
    let mut made = Vec::new();
    for (map_name, map) in &obj.maps {
        if map.map_type() != aya_obj::generated::bpf_map_type::BPF_MAP_TYPE_ARRAY as u32 {
            return Err(bpf_err(file)(format!(
                "{map_name} is not an array map: only arrays are loaded here"
            )));
        }
        let mut map = map.clone();
        if let Some(&(_, n)) = sizes.iter().find(|(s, _)| s == map_name) {
            map.set_max_entries(n);
        }
        // The object's BTF is not loaded into the kernel: the maps are
        // created without key and value types (plain integers here).
        if let aya_obj::Map::Btf(m) = &mut map {
            m.def.btf_key_type_id = 0;
            m.def.btf_value_type_id = 0;
        }
        let data = aya::maps::MapData::create(map.clone(), map_name, None)
            .map_err(|e| bpf_err(file)(format!("creating map {map_name}: {}", chain(&e))))?;
        made.push((map_name.clone(), data.fd().as_fd().as_raw_fd(), map));
        maps.push((map_name.clone(), Map::Array(data)));
    }
    let text: std::collections::HashSet<usize> =
        obj.functions.keys().map(|(section, _)| *section).collect();
    obj.relocate_maps(made.iter().map(|(n, fd, m)| (n.as_str(), *fd, m)), &text)
        .map_err(|e| bpf_err("relocating map references")(chain(&e)))?;
    obj.relocate_calls(&text)
        .map_err(|e| bpf_err("relocating calls")(chain(&e)))?;
    let program = obj
        .programs
        .get(name)
        .ok_or_else(|| bpf_err(name)("not in the object".into()))?;
    let function = obj
        .functions
        .get(&program.function_key())
        .ok_or_else(|| bpf_err(name)("its code is not in the object".into()))?;
    let fd = prog_load_syscall(name, &function.instructions, &program.license)?;
    Ok(SyscallProgram { fd, maps })
}

/// `BPF_PROG_LOAD` of `insns` as a sleepable `BPF_PROG_TYPE_SYSCALL`
/// program; on refusal, again with the verifier's log, which the error
/// carries.
fn prog_load_syscall(
    name: &'static str,
    insns: &[aya_obj::generated::bpf_insn],
    license: &std::ffi::CStr,
) -> Result<OwnedFd> {
    use aya_obj::generated::{BPF_F_SLEEPABLE, bpf_attr, bpf_cmd, bpf_prog_type};
    // The verifier's log only for a second try, after a refusal.
    let mut log = Vec::new();
    for with_log in [false, true] {
        // SAFETY: an all-zero bpf_attr is valid (plain integers); fields
        // are written one by one (see test_run.rs on padding).
        let mut attr: bpf_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the member BPF_PROG_LOAD uses.
        let u = unsafe { &mut attr.__bindgen_anon_3 };
        u.prog_type = bpf_prog_type::BPF_PROG_TYPE_SYSCALL as u32;
        u.prog_flags = BPF_F_SLEEPABLE;
        u.insns = insns.as_ptr() as u64;
        u.insn_cnt = insns.len() as u32;
        u.license = license.as_ptr() as u64;
        for (d, s) in u.prog_name.iter_mut().zip(name.bytes().take(15)) {
            *d = s as libc::c_char;
        }
        if with_log {
            log = vec![0u8; 1 << 20];
            u.log_level = 1;
            u.log_buf = log.as_mut_ptr() as u64;
            u.log_size = log.len() as u32;
        }
        // SAFETY: attr is a valid BPF_PROG_LOAD attribute; every pointer
        // in it outlives the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                bpf_cmd::BPF_PROG_LOAD as libc::c_long,
                &mut attr as *mut bpf_attr,
                size_of::<bpf_attr>() as u32,
            )
        };
        if r >= 0 {
            // SAFETY: a new descriptor the kernel gave us.
            return Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) });
        }
        let err = std::io::Error::last_os_error();
        if with_log {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            return Err(bpf_err(name)(format!(
                "verifying it: BPF_PROG_LOAD: {err}. Verifier output: {}",
                String::from_utf8_lossy(&log[..end])
            )));
        }
    }
    unreachable!("the second try returns")
}
