//! node_exporter's mountstats collector: NFS client statistics per mount
//! (/proc/self/mountstats, addresses from /proc/self/mountinfo).

use super::*;

use procfs::mountstats::NfsMount;

/// Times kept below 2^53 before they become floats, as node_exporter
/// keeps them (a counter past it wraps to small values there too).
const MANTISSA: u64 = 1 << 53;

/// node_exporter's series: a mount point's info for each (export,
/// protocol, address, mount point); statistics once for each (export,
/// protocol, address), from the first mount that has them (a share mounted
/// twice counts once).
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Mountstats) {
        return Ok(());
    }
    let mut infos: Vec<(&NfsMount, &str)> = Vec::new();
    let mut stats: Vec<(&NfsMount, &str)> = Vec::new();
    let mut seen_info = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    for m in &x.s.mountstats {
        for t in &m.transports {
            let protocol = t.protocol.as_str();
            let device = (m.device.as_str(), protocol, m.addr.as_str());
            if seen_info.insert((device, m.mount_point.as_str())) {
                infos.push((m, protocol));
            }
            if !seen.insert(device) {
                break;
            }
            stats.push((m, protocol));
        }
    }
    let mut f = out.family(&NODE_MOUNTSTATS_NFS_MOUNTPOINT_INFO)?;
    for &(m, protocol) in &infos {
        let [a, b, c] = labels(m, protocol);
        gauge_l(
            &mut f,
            &[a, b, c, ("mountpoint", m.mount_point.as_str())],
            1.0,
        )?;
    }
    let mut f = out.family(&NODE_MOUNTSTATS_NFS_AGE_SECONDS_TOTAL)?;
    for &(m, protocol) in &stats {
        counter_l(&mut f, &labels(m, protocol), m.age_seconds as f64)?;
    }
    let bytes: [&'static Family; 8] = [
        &NODE_MOUNTSTATS_NFS_READ_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_WRITE_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_DIRECT_READ_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_DIRECT_WRITE_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_TOTAL_READ_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_TOTAL_WRITE_BYTES_TOTAL,
        &NODE_MOUNTSTATS_NFS_READ_PAGES_TOTAL,
        &NODE_MOUNTSTATS_NFS_WRITE_PAGES_TOTAL,
    ];
    for (i, fam) in bytes.into_iter().enumerate() {
        let mut f = out.family(fam)?;
        for &(m, protocol) in &stats {
            counter_l(&mut f, &labels(m, protocol), m.bytes[i] as f64)?;
        }
    }
    // Transport counters by their place in `TRANSPORT_FIELDS`; the idle
    // time is a gauge.
    let transport: [(&'static Family, usize); 10] = [
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_BIND_TOTAL, 1),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_CONNECT_TOTAL, 2),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_IDLE_TIME_SECONDS, 4),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_SENDS_TOTAL, 5),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_RECEIVES_TOTAL, 6),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_BAD_TRANSACTION_IDS_TOTAL, 7),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_BACKLOG_QUEUE_TOTAL, 9),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_MAXIMUM_RPC_SLOTS, 10),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_SENDING_QUEUE_TOTAL, 11),
        (&NODE_MOUNTSTATS_NFS_TRANSPORT_PENDING_QUEUE_TOTAL, 12),
    ];
    for (fam, at) in transport {
        let mut f = out.family(fam)?;
        for &(m, protocol) in &stats {
            for (i, t) in m.transports.iter().enumerate() {
                let [a, b, c] = labels(m, protocol);
                let v = match at {
                    4 => t.counters[at] % MANTISSA,
                    _ => t.counters[at],
                };
                let i = i.to_string();
                sample_l(&mut f, &[a, b, c, ("transport", i.as_str())], v as f64)?;
            }
        }
    }
    // Operation counters by their place on the line; the times in
    // milliseconds, as seconds.
    let operations: [(&'static Family, usize); 8] = [
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_REQUESTS_TOTAL, 0),
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_TRANSMISSIONS_TOTAL, 1),
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_MAJOR_TIMEOUTS_TOTAL, 2),
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_SENT_BYTES_TOTAL, 3),
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_RECEIVED_BYTES_TOTAL, 4),
        (&NODE_MOUNTSTATS_NFS_OPERATIONS_QUEUE_TIME_SECONDS_TOTAL, 5),
        (
            &NODE_MOUNTSTATS_NFS_OPERATIONS_RESPONSE_TIME_SECONDS_TOTAL,
            6,
        ),
        (
            &NODE_MOUNTSTATS_NFS_OPERATIONS_REQUEST_TIME_SECONDS_TOTAL,
            7,
        ),
    ];
    for (fam, at) in operations {
        let mut f = out.family(fam)?;
        for &(m, protocol) in &stats {
            for op in &m.operations {
                let [a, b, c] = labels(m, protocol);
                let v = match at {
                    5..=7 => (op.counters[at] % MANTISSA) as f64 / 1000.0,
                    _ => op.counters[at] as f64,
                };
                counter_l(&mut f, &[a, b, c, ("operation", op.name.as_str())], v)?;
            }
        }
    }
    // Event counters by their place on the `events:` line (18, the
    // congestion waits, is not served, as in node_exporter).
    let events: [(&'static Family, usize); 26] = [
        (&NODE_MOUNTSTATS_NFS_EVENT_INODE_REVALIDATE_TOTAL, 0),
        (&NODE_MOUNTSTATS_NFS_EVENT_DNODE_REVALIDATE_TOTAL, 1),
        (&NODE_MOUNTSTATS_NFS_EVENT_DATA_INVALIDATE_TOTAL, 2),
        (&NODE_MOUNTSTATS_NFS_EVENT_ATTRIBUTE_INVALIDATE_TOTAL, 3),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_OPEN_TOTAL, 4),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_LOOKUP_TOTAL, 5),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_ACCESS_TOTAL, 6),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_UPDATE_PAGE_TOTAL, 7),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_READ_PAGE_TOTAL, 8),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_READ_PAGES_TOTAL, 9),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_WRITE_PAGE_TOTAL, 10),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_WRITE_PAGES_TOTAL, 11),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_GETDENTS_TOTAL, 12),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_SETATTR_TOTAL, 13),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_FLUSH_TOTAL, 14),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_FSYNC_TOTAL, 15),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_LOCK_TOTAL, 16),
        (&NODE_MOUNTSTATS_NFS_EVENT_VFS_FILE_RELEASE_TOTAL, 17),
        (&NODE_MOUNTSTATS_NFS_EVENT_TRUNCATION_TOTAL, 19),
        (&NODE_MOUNTSTATS_NFS_EVENT_WRITE_EXTENSION_TOTAL, 20),
        (&NODE_MOUNTSTATS_NFS_EVENT_SILLY_RENAME_TOTAL, 21),
        (&NODE_MOUNTSTATS_NFS_EVENT_SHORT_READ_TOTAL, 22),
        (&NODE_MOUNTSTATS_NFS_EVENT_SHORT_WRITE_TOTAL, 23),
        (&NODE_MOUNTSTATS_NFS_EVENT_JUKEBOX_DELAY_TOTAL, 24),
        (&NODE_MOUNTSTATS_NFS_EVENT_PNFS_READ_TOTAL, 25),
        (&NODE_MOUNTSTATS_NFS_EVENT_PNFS_WRITE_TOTAL, 26),
    ];
    for (fam, at) in events {
        let mut f = out.family(fam)?;
        for &(m, protocol) in &stats {
            counter_l(&mut f, &labels(m, protocol), m.events[at] as f64)?;
        }
    }
    Ok(())
}

/// The labels of a mount's statistics.
fn labels<'a>(m: &'a NfsMount, protocol: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("export", m.device.as_str()),
        ("protocol", protocol),
        ("mountaddr", m.addr.as_str()),
    ]
}
