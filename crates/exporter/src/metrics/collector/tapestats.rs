//! node_exporter's tapestats collector: /sys/class/scsi_tape.

use super::*;

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::Tape) {
        Some(d) => tape(out, d),
        None => Ok(()),
    }
}

fn tape(out: &mut Out<'_>, tapes: &[ClassDevice]) -> Fmt {
    let fields: [(&'static Family, &str, f64); 10] = [
        (&NODE_TAPE_IO_NOW, "stats/in_flight", 1.0),
        (&NODE_TAPE_IO_TIME_SECONDS_TOTAL, "stats/io_ns", 1e-9),
        (&NODE_TAPE_IO_OTHERS_TOTAL, "stats/other_cnt", 1.0),
        (&NODE_TAPE_READ_BYTES_TOTAL, "stats/read_byte_cnt", 1.0),
        (&NODE_TAPE_READS_COMPLETED_TOTAL, "stats/read_cnt", 1.0),
        (&NODE_TAPE_READ_TIME_SECONDS_TOTAL, "stats/read_ns", 1e-9),
        (&NODE_TAPE_RESIDUAL_TOTAL, "stats/resid_cnt", 1.0),
        (&NODE_TAPE_WRITTEN_BYTES_TOTAL, "stats/write_byte_cnt", 1.0),
        (&NODE_TAPE_WRITES_COMPLETED_TOTAL, "stats/write_cnt", 1.0),
        (&NODE_TAPE_WRITE_TIME_SECONDS_TOTAL, "stats/write_ns", 1e-9),
    ];
    for (f, attr, scale) in fields {
        let mut m = out.family(f)?;
        for t in tapes {
            if let Some(v) = t.uint(attr) {
                let labels = [("device", t.name.as_str())];
                match f.kind {
                    Kind::Counter => counter_l(&mut m, &labels, v as f64 * scale)?,
                    _ => gauge_l(&mut m, &labels, v as f64 * scale)?,
                }
            }
        }
    }
    Ok(())
}
