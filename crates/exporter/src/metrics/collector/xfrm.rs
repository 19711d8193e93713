//! node_exporter's xfrm collector: /proc/net/xfrm_stat, the IPsec
//! transform errors, each counter a family.

use super::*;

/// The kernel's name of each counter, and its family.
const XFRM: [(&str, &Family); 28] = [
    ("XfrmInError", &NODE_XFRM_IN_ERROR_PACKETS_TOTAL),
    (
        "XfrmInBufferError",
        &NODE_XFRM_IN_BUFFER_ERROR_PACKETS_TOTAL,
    ),
    ("XfrmInHdrError", &NODE_XFRM_IN_HDR_ERROR_PACKETS_TOTAL),
    ("XfrmInNoStates", &NODE_XFRM_IN_NO_STATES_PACKETS_TOTAL),
    (
        "XfrmInStateProtoError",
        &NODE_XFRM_IN_STATE_PROTO_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmInStateModeError",
        &NODE_XFRM_IN_STATE_MODE_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmInStateSeqError",
        &NODE_XFRM_IN_STATE_SEQ_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmInStateExpired",
        &NODE_XFRM_IN_STATE_EXPIRED_PACKETS_TOTAL,
    ),
    (
        "XfrmInStateMismatch",
        &NODE_XFRM_IN_STATE_MISMATCH_PACKETS_TOTAL,
    ),
    (
        "XfrmInStateInvalid",
        &NODE_XFRM_IN_STATE_INVALID_PACKETS_TOTAL,
    ),
    (
        "XfrmInTmplMismatch",
        &NODE_XFRM_IN_TMPL_MISMATCH_PACKETS_TOTAL,
    ),
    ("XfrmInNoPols", &NODE_XFRM_IN_NO_POLS_PACKETS_TOTAL),
    ("XfrmInPolBlock", &NODE_XFRM_IN_POL_BLOCK_PACKETS_TOTAL),
    ("XfrmInPolError", &NODE_XFRM_IN_POL_ERROR_PACKETS_TOTAL),
    ("XfrmOutError", &NODE_XFRM_OUT_ERROR_PACKETS_TOTAL),
    (
        "XfrmOutBundleGenError",
        &NODE_XFRM_OUT_BUNDLE_GEN_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmOutBundleCheckError",
        &NODE_XFRM_OUT_BUNDLE_CHECK_ERROR_PACKETS_TOTAL,
    ),
    ("XfrmOutNoStates", &NODE_XFRM_OUT_NO_STATES_PACKETS_TOTAL),
    (
        "XfrmOutStateProtoError",
        &NODE_XFRM_OUT_STATE_PROTO_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmOutStateModeError",
        &NODE_XFRM_OUT_STATE_MODE_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmOutStateSeqError",
        &NODE_XFRM_OUT_STATE_SEQ_ERROR_PACKETS_TOTAL,
    ),
    (
        "XfrmOutStateExpired",
        &NODE_XFRM_OUT_STATE_EXPIRED_PACKETS_TOTAL,
    ),
    ("XfrmOutPolBlock", &NODE_XFRM_OUT_POL_BLOCK_PACKETS_TOTAL),
    ("XfrmOutPolDead", &NODE_XFRM_OUT_POL_DEAD_PACKETS_TOTAL),
    ("XfrmOutPolError", &NODE_XFRM_OUT_POL_ERROR_PACKETS_TOTAL),
    ("XfrmFwdHdrError", &NODE_XFRM_FWD_HDR_ERROR_PACKETS_TOTAL),
    (
        "XfrmOutStateInvalid",
        &NODE_XFRM_OUT_STATE_INVALID_PACKETS_TOTAL,
    ),
    ("XfrmAcquireError", &NODE_XFRM_ACQUIRE_ERROR_PACKETS_TOTAL),
];

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Xfrm) {
        for (key, family) in XFRM {
            if let Some((_, v)) = s.xfrm.iter().find(|(k, _)| k == key) {
                one(out, family, *v as f64)?;
            }
        }
    }
    Ok(())
}
