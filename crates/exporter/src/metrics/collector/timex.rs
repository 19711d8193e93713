//! node_exporter's timex collector: adjtimex(2).

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let s = x.s;
    if s.ok(Source::Timex) {
        timex(out, &s.timex)?;
    }
    Ok(())
}

/// node_exporter's conversions of adjtimex(2)'s fields.
fn timex(out: &mut Out<'_>, t: &procfs::time::Timex) -> Fmt {
    use procfs::time::{STA_NANO, TIME_ERROR};
    // ppm with a 16-bit fraction, to a ratio.
    const PPM16: f64 = 1_000_000.0 * 65_536.0;
    let divisor = if t.status & STA_NANO != 0 { 1e9 } else { 1e6 };
    let sync = f64::from(u8::from(t.state != TIME_ERROR));
    for (f, v) in [
        (&NODE_TIMEX_SYNC_STATUS, sync),
        (&NODE_TIMEX_OFFSET_SECONDS, t.offset as f64 / divisor),
        (
            &NODE_TIMEX_FREQUENCY_ADJUSTMENT_RATIO,
            1.0 + t.freq as f64 / PPM16,
        ),
        (&NODE_TIMEX_MAXERROR_SECONDS, t.maxerror_us as f64 / 1e6),
        (
            &NODE_TIMEX_ESTIMATED_ERROR_SECONDS,
            t.esterror_us as f64 / 1e6,
        ),
        (&NODE_TIMEX_STATUS, t.status as f64),
        (&NODE_TIMEX_LOOP_TIME_CONSTANT, t.constant as f64),
        (&NODE_TIMEX_TICK_SECONDS, t.tick_us as f64 / 1e6),
        (&NODE_TIMEX_PPS_FREQUENCY_HERTZ, t.ppsfreq as f64 / PPM16),
        (&NODE_TIMEX_PPS_JITTER_SECONDS, t.jitter as f64 / divisor),
        (&NODE_TIMEX_PPS_SHIFT_SECONDS, t.shift as f64),
        (&NODE_TIMEX_PPS_STABILITY_HERTZ, t.stabil as f64 / PPM16),
        (&NODE_TIMEX_PPS_JITTER_TOTAL, t.jitcnt as f64),
        (&NODE_TIMEX_PPS_CALIBRATION_TOTAL, t.calcnt as f64),
        (&NODE_TIMEX_PPS_ERROR_TOTAL, t.errcnt as f64),
        (&NODE_TIMEX_PPS_STABILITY_EXCEEDED_TOTAL, t.stbcnt as f64),
        (&NODE_TIMEX_TAI_OFFSET_SECONDS, t.tai as f64),
    ] {
        one(out, f, v)?;
    }
    Ok(())
}
