//! What every entry point shares: the handle's state, a call run with it
//! locked and its panics caught, the caller's arrays, and a read's failure
//! turned into a code and a message.

use super::*;

pub(super) struct State {
    pub(super) table: ProcTable,
    pub(super) rows: Vec<Proc>,
    /// Why `auto` did not take BPF ("" when it did, or was not asked).
    pub(super) note: CString,
    pub(super) error: CString,
    /// The last failure's code, finer than the call's for a read
    /// ([`qs_last_error_code`]).
    pub(super) error_code: i32,
    /// The agent's snapshot and the age its table may have, when asked.
    pub(super) agent: Option<shm::view::AgentTable>,
    /// Who served the last read, and why not the agent ("" when it did or
    /// was not asked).
    pub(super) served_by: i32,
    pub(super) agent_note: CString,
}

/// What a call returns for a failure of code `code`: a finer code of a
/// read is `QS_ERR_READ`.
pub(super) fn returned(code: i32) -> i32 {
    match code {
        QS_ERR_ABSENT | QS_ERR_DENIED | QS_ERR_MALFORMED | QS_ERR_KERNEL => QS_ERR_READ,
        c => c,
    }
}

pub(super) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// The string `pick` chooses in the handle's state (it lives as long as
/// the state does not replace it); `None` for NULL.
///
/// # Safety
/// `h` is NULL or an open handle.
pub(super) unsafe fn state_str(
    h: *const qs_handle,
    pick: impl Fn(&State) -> &CString,
) -> Option<*const c_char> {
    // SAFETY: as the caller vouches.
    let h = unsafe { h.as_ref() }?;
    let st = h.state.lock().unwrap_or_else(|e| e.into_inner());
    Some(pick(&st).as_ptr())
}

/// Runs `f` with the handle's state locked, catching a panic; an error
/// becomes the handle's message and code.
pub(super) fn with_state(
    h: *mut qs_handle,
    f: impl FnOnce(&mut State) -> Result<i32, (i32, String)>,
) -> i32 {
    // SAFETY: the caller passes a handle from qs_open, not yet closed, or NULL.
    let Some(h) = (unsafe { h.as_ref() }) else {
        return QS_ERR_ARG;
    };
    let mut st = h.state.lock().unwrap_or_else(|e| e.into_inner());
    let run = catch_unwind(AssertUnwindSafe(|| f(&mut st)));
    let (code, msg) = match run {
        Ok(Ok(code)) => return code,
        Ok(Err(e)) => e,
        Err(_) => (
            QS_ERR_INTERNAL,
            "internal error: a defect in libquietstat (a panic, caught)".into(),
        ),
    };
    st.error = c_string(&msg);
    st.error_code = code;
    returned(code)
}

/// `n` values from `p`, or an error naming `what` when `p` is NULL and
/// `n` is not 0.
///
/// # Safety
/// `p` must point to `n` readable values, or be NULL.
pub(super) unsafe fn slice<'a, T>(
    p: *const T,
    n: usize,
    what: &str,
) -> Result<&'a [T], (i32, String)> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err((QS_ERR_ARG, format!("{what} is NULL with n = {n}")));
    }
    // SAFETY: non-null, and the caller vouches for n values.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// As [`slice`], writable.
///
/// # Safety
/// `p` must point to `n` writable values, or be NULL.
pub(super) unsafe fn slice_mut<'a, T>(
    p: *mut T,
    n: usize,
    what: &str,
) -> Result<&'a mut [T], (i32, String)> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err((QS_ERR_ARG, format!("{what} is NULL with n = {n}")));
    }
    // SAFETY: non-null, and the caller vouches for n values.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

pub(super) fn read_error(e: proctable::Error) -> (i32, String) {
    (code_of(&e), format!("reading the process table: {e}"))
}

/// The finer code of a read's failure.
pub(super) fn code_of(e: &proctable::Error) -> i32 {
    match e.kind() {
        proctable::ErrorKind::Absent => QS_ERR_ABSENT,
        proctable::ErrorKind::Denied => QS_ERR_DENIED,
        proctable::ErrorKind::Malformed => QS_ERR_MALFORMED,
        proctable::ErrorKind::Kernel => QS_ERR_KERNEL,
        proctable::ErrorKind::Invalid => QS_ERR_ARG,
        proctable::ErrorKind::Busy => QS_ERR_READ,
        proctable::ErrorKind::Io => QS_ERR_READ,
    }
}

/// The rows of `pids` (sorted, distinct) with the fields of `mask`.
pub(super) fn read(
    st: &mut State,
    pids: Option<Vec<u32>>,
    mask: qs_fields,
) -> Result<Fields, (i32, String)> {
    let mut fields = Fields::NONE
        .with(Field::Pid)
        .with(Field::Tgid)
        .with(Field::Start);
    for (bit, f) in FIELD_BITS {
        if mask & bit != 0 {
            fields = fields.with(f);
        }
    }
    if mask & !QS_FIELDS_ALL != 0 {
        return Err((
            QS_ERR_ARG,
            format!(
                "fields 0x{mask:x}: unknown bits 0x{:x}; use QS_FIELD_* bits",
                mask & !QS_FIELDS_ALL
            ),
        ));
    }
    if let Some(agent) = &st.agent {
        match agent.rows(fields, pids.as_deref()) {
            Ok(rows) => {
                st.rows = rows;
                st.served_by = QS_SERVED_AGENT;
                st.agent_note = CString::default();
                // The agent's table holds what it read; the record says
                // what was asked (a subset).
                return Ok(fields);
            }
            Err(why) => st.agent_note = c_string(&why.to_string()),
        }
    }
    let query = Query {
        fields,
        threads: false,
        pids,
    };
    st.table
        .snapshot(&query, &mut st.rows)
        .map_err(read_error)?;
    st.served_by = QS_SERVED_SELF;
    Ok(fields)
}
