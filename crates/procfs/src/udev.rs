//! Block devices' identity from udev's database (`/run/udev/data/b<major>:<minor>`),
//! for node_exporter's `node_disk_info` (path, WWN, model, serial,
//! revision), `node_disk_filesystem_info`, `node_disk_device_mapper_info`
//! and `node_disk_ata_*`.
//!
//! The reader gathers one record per block device file: `@<major>:<minor>`
//! then the `KEY=value` properties kept ([`KEYS`]), from the file's
//! `E:KEY=value` lines.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::records::{self, err};

/// The properties kept.
pub const KEYS: [&str; 20] = [
    "ID_PATH",
    "ID_WWN",
    "ID_MODEL",
    "ID_SERIAL_SHORT",
    "SCSI_IDENT_SERIAL",
    "ID_SERIAL",
    "ID_REVISION",
    "ID_FS_TYPE",
    "ID_FS_USAGE",
    "ID_FS_UUID",
    "ID_FS_VERSION",
    "DM_NAME",
    "DM_UUID",
    "DM_VG_NAME",
    "DM_LV_NAME",
    "DM_LV_LAYER",
    "ID_ATA",
    "ID_ATA_WRITE_CACHE",
    "ID_ATA_WRITE_CACHE_ENABLED",
    "ID_ATA_ROTATION_RATE_RPM",
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UdevDevice {
    pub major: u32,
    pub minor: u32,
    /// `(KEY, value)` for the [`KEYS`] the device has.
    pub properties: Vec<(String, String)>,
}

impl UdevDevice {
    pub fn get(&self, key: &str) -> &str {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    /// node_exporter's serial: `SCSI_IDENT_SERIAL` (the one on the disk's
    /// label), else `ID_SERIAL_SHORT`, else `ID_SERIAL` (virtio's).
    pub fn serial(&self) -> &str {
        ["SCSI_IDENT_SERIAL", "ID_SERIAL_SHORT", "ID_SERIAL"]
            .into_iter()
            .map(|k| self.get(k))
            .find(|v| !v.is_empty())
            .unwrap_or("")
    }
}

/// Parses the gathered records into `out`.
pub fn parse_into(buf: &[u8], out: &mut Vec<UdevDevice>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(id) = text.strip_prefix('@') {
            records::open(n, id, out.len(), "device")?;
            let (major, minor) = id
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .ok_or_else(|| err(n, "device", ParseErrorKind::Invalid, "`@<major>:<minor>`"))?;
            out.push(UdevDevice {
                major,
                minor,
                properties: Vec::new(),
            });
            continue;
        }
        let dev = records::current(out, n, "device")?;
        let (k, v) = text
            .split_once('=')
            .ok_or_else(|| err(n, "property", ParseErrorKind::Invalid, "`KEY=value`"))?;
        if KEYS.contains(&k) && dev.properties.len() < KEYS.len() {
            dev.properties.push((k.to_string(), v.to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        let mut v = crate::parsed(parse_into, b"@8:0\nID_PATH=pci-0000:00:1f.2-ata-1\nID_MODEL=Samsung_SSD\nSCSI_IDENT_SERIAL=S3Z\nID_REVISION=EXM04B6Q\n@259:0\nID_SERIAL_SHORT=ABC\nID_WWN=eui.0025\n");
        assert_eq!((v[0].major, v[0].minor), (8, 0));
        assert_eq!(v[0].get("ID_MODEL"), "Samsung_SSD");
        assert_eq!(v[0].serial(), "S3Z");
        assert_eq!(v[1].serial(), "ABC");
        assert_eq!(v[1].get("ID_PATH"), "");
        // The disk label's serial first; virtio's ID_SERIAL last.
        let w = crate::parsed(
            parse_into,
            b"@8:16\nID_SERIAL_SHORT=B\nSCSI_IDENT_SERIAL=A\n@254:0\nID_SERIAL=virt-1\n",
        );
        assert_eq!((w[0].serial(), w[1].serial()), ("A", "virt-1"));
        let e = parse_into(b"ID_PATH=x\n", &mut v).unwrap_err();
        assert_eq!(e.field, "device");
        let e = parse_into(b"@8\n", &mut v).unwrap_err();
        assert_eq!(e.field, "device");
    }
}
