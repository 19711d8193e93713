//! Network devices as the ethtool ioctl describes them, as the gatherer
//! writes them (`gather/ethtool.rs`): a record a device, `@<device>`,
//! then any of
//!
//! ```text
//! link <supported> <advertising> <autoneg>
//! info<TAB><driver><TAB><version><TAB><firmware><TAB><bus><TAB><expansion ROM>
//! stat<TAB><name><TAB><value>
//! ```
//!
//! (`<TAB>` a tab). `link` gives the legacy link-mode masks (ETHTOOL_GSET) and whether
//! autonegotiation is on; `info` the driver's identity, tab-separated;
//! `stat` one driver statistic (`ethtool -S`), tab-separated since a
//! driver may put spaces in a name.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err, set, slot};

/// One device.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct EthtoolDevice {
    pub name: String,
    /// Supported and advertised link modes, autonegotiation.
    pub link: Option<(u32, u32, u8)>,
    /// Driver, version, firmware, bus, expansion ROM.
    pub info: Option<[String; 5]>,
    pub stats: Vec<(String, u64)>,
}

/// Parses the gathered text into `out`, reusing its rows.
pub fn parse_into(buf: &[u8], out: &mut Vec<EthtoolDevice>) -> Result<(), ParseError> {
    let mut devices = 0;
    let mut stats = 0;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(name) = text.strip_prefix('@') {
            records::open(n, name, devices, "device")?;
            if let Some(d) = devices.checked_sub(1).map(|i| &mut out[i]) {
                d.stats.truncate(stats);
            }
            let d = slot(out, devices);
            set(&mut d.name, name);
            d.link = None;
            d.info = None;
            devices += 1;
            stats = 0;
            continue;
        }
        let d = records::current(&mut out[..devices], n, "device")?;
        let mut words = text.split(if text.starts_with("link ") { ' ' } else { '\t' });
        match words.next() {
            Some("link") => {
                let mut num = |f| {
                    words
                        .next()
                        .and_then(|w| w.parse::<u32>().ok())
                        .ok_or_else(|| err(n, f, ParseErrorKind::Invalid, "a whole number"))
                };
                let (s, a, auto) = (num("supported")?, num("advertising")?, num("autoneg")?);
                d.link = Some((s, a, u8::try_from(auto).unwrap_or(1)));
            }
            Some("info") => {
                let mut f: [String; 5] = Default::default();
                for v in &mut f {
                    set(v, words.next().unwrap_or_default());
                }
                d.info = Some(f);
            }
            Some("stat") => {
                let (Some(name), Some(v)) = (words.next(), words.next()) else {
                    return Err(err(
                        n,
                        "stat",
                        ParseErrorKind::Missing,
                        "`stat<TAB><name><TAB><value>`",
                    ));
                };
                let v = v
                    .parse()
                    .map_err(|_| err(n, "stat", ParseErrorKind::Invalid, "a whole number"))?;
                if stats >= 1 << 16 {
                    return Err(err(
                        n,
                        "stat",
                        ParseErrorKind::TooMany,
                        "at most 65536 statistics a device",
                    ));
                }
                let s = slot(&mut d.stats, stats);
                set(&mut s.0, name);
                s.1 = v;
                stats += 1;
            }
            _ => {}
        }
    }
    if let Some(d) = devices.checked_sub(1).map(|i| &mut out[i]) {
        d.stats.truncate(stats);
    }
    out.truncate(devices);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_links_drivers_and_statistics() {
        let mut v = Vec::new();
        let text = b"@eth0\nlink 239 239 1\ninfo\tvirtio_net\t1.0.0\t\t0000:00:03.0\t\nstat\trx_queue_0_packets\t42\nstat\ttx bytes\t7\n@lo\n";
        parse_into(text, &mut v).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].link, Some((239, 239, 1)));
        assert_eq!(v[0].info.as_ref().unwrap()[0], "virtio_net");
        assert_eq!(v[0].info.as_ref().unwrap()[3], "0000:00:03.0");
        assert_eq!(
            v[0].stats,
            [
                ("rx_queue_0_packets".to_string(), 42),
                ("tx bytes".to_string(), 7)
            ]
        );
        assert!(v[1].stats.is_empty() && v[1].link.is_none());
        parse_into(b"@eth0\n", &mut v).unwrap();
        assert!(v[0].stats.is_empty() && v.len() == 1);
        assert!(parse_into(b"stat\ta\t1\n", &mut v).is_err());
        assert!(parse_into(b"@e\nlink 1 x 0\n", &mut v).is_err());
    }
}
