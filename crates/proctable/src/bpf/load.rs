//! Loading the backend's objects: errors named by what was being done,
//! programs by name, and the maps that configure them.

use aya::Ebpf;
use aya::maps::{Array, HashMap as BpfHashMap};
pub use sys::bpf::{chain, load_retrying};

use crate::error::{Error, Result};
use crate::record::QsConfig;

pub(crate) fn bpf_err(what: &'static str) -> impl FnOnce(String) -> Error {
    move |detail| Error::Bpf { what, detail }
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
