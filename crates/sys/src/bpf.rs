//! Helpers for loading BPF programs (with the `bpf` feature): errors on
//! one line, loading under blocked signals, kernel functions linked into an
//! object the loader library cannot link, memory-mapped array maps.

use std::os::fd::{AsFd, AsRawFd};

use aya::Btf;
use aya::maps::Map;
use aya_obj::btf::BtfKind;
use object::{Object, ObjectSection, SectionKind};

/// An error with its chain of causes, on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(cause) = src {
        // Some errors print their source in their own message as well:
        // say each part once.
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        src = cause.source();
    }
    s
}

/// A loader with no BTF of its own, to be given the caller's. aya's
/// `EbpfLoader::new` parses the kernel's BTF itself (16 MiB of heap for
/// the 5.5 MB file of a distribution kernel) and holds it until `.btf`
/// replaces it. Made with this before the caller parses its own, the two
/// parses are never alive at once, and a load's peak is one parse, not
/// two: the difference between starting and being killed under a tight
/// memory limit.
pub fn loader<'a>() -> aya::EbpfLoader<'a> {
    let mut l = aya::EbpfLoader::new();
    l.btf(None);
    l
}

/// Runs a program load with every signal blocked in this thread, and again
/// if the verifier still gave up because a signal was pending (EAGAIN), as
/// libbpf does, up to five attempts. The verifier stops at any pending
/// signal: a process whose children exit gets SIGCHLD at any time, and a
/// 10 ms verification under a stream of them would never finish. Blocked
/// signals stay pending and are delivered when the mask is restored.
pub fn load_retrying(
    mut load: impl FnMut() -> std::result::Result<(), aya::programs::ProgramError>,
) -> std::result::Result<(), aya::programs::ProgramError> {
    let mut attempt = 1;
    loop {
        let result = with_signals_blocked(&mut load);
        match result {
            Err(aya::programs::ProgramError::LoadError { io_error, .. })
                if io_error.raw_os_error() == Some(libc::EAGAIN) && attempt < 5 =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Runs `f` with every signal blocked in this thread, restoring the mask
/// after.
pub fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t is plain data filled by sigfillset; pthread_sigmask
    // only changes this thread's mask, restored below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0;
        let out = f();
        if blocked {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        out
    }
}

const BPF_JMP_CALL: u8 = 0x85;
const BPF_PSEUDO_KFUNC_CALL: u8 = 2;

/// Returns a copy of `object` (the ELF BPF object `file`) in which every
/// helper call to one of `kfuncs`' placeholder numbers calls that kernel
/// function instead, and how many calls were rewritten; `needs` says what
/// a kernel lacking one of them would need. The copy is kept in `u64`s: the
/// ELF parser needs 8-byte alignment. An error says what was being done
/// and what went wrong.
pub fn link_kfuncs_of(
    object: &[u8],
    file: &'static str,
    kfuncs: &[(u64, &str)],
    needs: &str,
    btf: &Btf,
) -> Result<(Vec<u64>, usize), (&'static str, String)> {
    let mut ids = Vec::with_capacity(kfuncs.len());
    for &(placeholder, name) in kfuncs {
        let id = btf.id_by_type_name_kind(name, BtfKind::Func).map_err(|e| {
            (
                "finding kernel functions",
                format!("{name} is not in the kernel's BTF ({needs}): {e}"),
            )
        })?;
        ids.push((placeholder as i32, id as i32));
    }
    let elf = object::File::parse(object).map_err(|e| (file, e.to_string()))?;
    let mut text = Vec::new();
    for section in elf.sections() {
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
            return Err((file, "a text section lies outside the file".into()));
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

/// `n` rounded up to whole pages.
pub fn page_round(n: usize) -> usize {
    n.div_ceil(4096) * 4096
}

/// A fresh shared mapping of `len` bytes of map `fd` from byte `offset`;
/// the kernel checks both against the map's size.
pub fn map_shared(
    fd: i32,
    len: usize,
    prot: i32,
    offset: usize,
) -> std::io::Result<*mut libc::c_void> {
    // SAFETY: a new mapping of an fd; nothing existing is touched.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            libc::MAP_SHARED,
            fd,
            offset as libc::off_t,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ptr)
}

/// A shared mapping of a BPF array map's values.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    /// Maps the first `len` bytes of an array map's values, read-only or
    /// also `writable`.
    pub fn new(map: &Map, len: usize, writable: bool) -> Result<Mapped, crate::Error> {
        let data = match map {
            Map::Array(d) => d,
            _ => return Err(crate::Error::invalid("not an array map")),
        };
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let ptr = map_shared(data.fd().as_fd().as_raw_fd(), len, prot, 0)
            .map_err(|e| crate::Error::kernel("mapping it", e))?;
        Ok(Mapped { ptr, len })
    }

    /// The first `n` values as `T`s.
    ///
    /// # Safety
    /// The map's values are `T`s (each aligned in the page-aligned
    /// mapping) and `n` of them fit in the mapping; no program writes them
    /// while the slice lives.
    pub unsafe fn slice<T>(&self, n: usize) -> &[T] {
        debug_assert!(n * size_of::<T>() <= self.len);
        // SAFETY: per the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<T>(), n) }
    }

    /// The first `n` values as `T`s, to write.
    ///
    /// # Safety
    /// As [`Mapped::slice`], and the mapping is writable.
    pub unsafe fn slice_mut<T>(&mut self, n: usize) -> &mut [T] {
        debug_assert!(n * size_of::<T>() <= self.len);
        // SAFETY: per the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<T>(), n) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what new() mapped.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[derive(Debug, thiserror::Error)]
    #[error("map error: {0}")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("failed to create map `m`")]
    struct Inner(#[source] std::io::Error);

    #[test]
    fn each_cause_is_said_once() {
        let e = Outer(Inner(std::io::Error::from_raw_os_error(libc::EPERM)));
        assert_eq!(
            chain(&e),
            "map error: failed to create map `m`: Operation not permitted (os error 1)"
        );
    }
}
