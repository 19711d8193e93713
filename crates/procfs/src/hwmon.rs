//! Hardware monitoring chips: /sys/class/hwmon/hwmonN (temperatures, fans,
//! voltages, currents, power, energy, humidity), node_exporter's hwmon.
//!
//! The reader gathers one record per chip:
//!
//! ```text
//! @platform_coretemp_0
//! name coretemp
//! temp1_input 45000
//! temp1_label Package id 0
//! ```
//!
//! The record's name is node_exporter's stable chip name (the device's
//! bus and name, else the `name` file, else `hwmonN`); `name` is the chip's
//! own name when it has one; the other lines are the sensor files of the
//! chip and its `device` directory whose names are `<type><n>_<property>`
//! for a known type ([`SENSOR_TYPES`]).

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::{self, err};

/// The sensor types node_exporter reads.
pub const SENSOR_TYPES: [&str; 14] = [
    "vrm",
    "beep_enable",
    "update_interval",
    "in",
    "cpu",
    "fan",
    "pwm",
    "temp",
    "curr",
    "power",
    "energy",
    "humidity",
    "intrusion",
    "freq",
];

/// One sensor of a chip: `temp1` with its properties (`input`, `max`,
/// `label`; `""` for a file with no property, such as `pwm1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sensor {
    /// `temp1`, `fan2`, `vrm`.
    pub name: String,
    /// `temp`, `fan`, `vrm`.
    pub kind: String,
    pub properties: Vec<(String, String)>,
}

impl Sensor {
    pub fn get(&self, property: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(p, _)| p == property)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Chip {
    /// node_exporter's stable name (`platform_coretemp_0`).
    pub chip: String,
    /// The chip's `name` file, cleaned (`coretemp`); empty without one.
    pub chip_name: String,
    /// Sensors by name, in order of first appearance.
    pub sensors: Vec<Sensor>,
}

/// Lower case, every character but `[a-z0-9:_]` made `_`, and `_` trimmed
/// (node_exporter's cleaning of names).
pub fn clean(name: &str) -> String {
    let s: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == ':' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_matches('_').to_string()
}

/// Splits `temp1_input` into (`temp`, `temp1`, `input`); `None` for a
/// file that is not a sensor of a known type.
pub fn split_sensor_file(file: &str) -> Option<(&'static str, String, &str)> {
    let digits_at = file.find(|c: char| c.is_ascii_digit());
    let (head, rest) = match digits_at {
        Some(i) => (&file[..i], &file[i..]),
        None => (file, ""),
    };
    let (num, property) = match rest.split_once('_') {
        Some((n, p)) => (n, p),
        None => (rest, ""),
    };
    // Without a number, the whole name is the type (`beep_enable`).
    let (kind, num, property) = if rest.is_empty() {
        (*SENSOR_TYPES.iter().find(|t| **t == file)?, "", "")
    } else {
        (*SENSOR_TYPES.iter().find(|t| **t == head)?, num, property)
    };
    if !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n: u32 = if num.is_empty() { 0 } else { num.parse().ok()? };
    Some((kind, format!("{kind}{n}"), property))
}

/// Parses the gathered records into `out`.
pub fn parse_into(buf: &[u8], out: &mut Vec<Chip>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(chip) = text.strip_prefix('@') {
            records::open(n, chip, out.len(), "chip")?;
            out.push(Chip {
                chip: chip.to_string(),
                ..Chip::default()
            });
            continue;
        }
        let chip = records::current(out, n, "chip")?;
        let (file, value) = text.split_once(' ').unwrap_or((text, ""));
        if file == "name" {
            chip.chip_name = clean(value);
            continue;
        }
        let (kind, sensor, property) = split_sensor_file(file).ok_or_else(|| {
            err(
                n,
                "sensor",
                ParseErrorKind::Invalid,
                "`<type><n>_<property>`",
            )
        })?;
        if chip.sensors.len() >= MAX_ROWS {
            return Err(err(
                n,
                "sensor",
                ParseErrorKind::TooMany,
                "at most 2^20 sensors",
            ));
        }
        let s = match chip.sensors.iter().position(|s| s.name == sensor) {
            Some(at) => &mut chip.sensors[at],
            None => {
                chip.sensors.push(Sensor {
                    name: sensor,
                    kind: kind.to_string(),
                    properties: Vec::new(),
                });
                chip.sensors.last_mut().expect("just pushed")
            }
        };
        if s.properties.len() < 256 {
            s.properties
                .push((property.to_string(), value.trim().to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensor_files_split_as_node_exporter() {
        assert_eq!(
            split_sensor_file("temp1_input"),
            Some(("temp", "temp1".into(), "input"))
        );
        assert_eq!(
            split_sensor_file("fan12_min"),
            Some(("fan", "fan12".into(), "min"))
        );
        assert_eq!(split_sensor_file("pwm1"), Some(("pwm", "pwm1".into(), "")));
        assert_eq!(
            split_sensor_file("in0_crit_alarm"),
            Some(("in", "in0".into(), "crit_alarm"))
        );
        assert_eq!(
            split_sensor_file("beep_enable"),
            Some(("beep_enable", "beep_enable0".into(), ""))
        );
        assert_eq!(
            split_sensor_file("update_interval"),
            Some(("update_interval", "update_interval0".into(), ""))
        );
        assert_eq!(split_sensor_file("vrm"), Some(("vrm", "vrm0".into(), "")));
        assert_eq!(split_sensor_file("name"), None);
        assert_eq!(split_sensor_file("uevent"), None);
        assert_eq!(clean("Package id 0"), "package_id_0");
        assert_eq!(clean("  Core-1 "), "core_1");
    }

    #[test]
    fn chips_and_sensors() {
        let mut v = crate::parsed(parse_into, b"@platform_coretemp_0\nname coretemp\ntemp1_input 45000\ntemp1_label Package id 0\ntemp1_crit 100000\n@hwmon1\nfan1_input 1200\n");
        assert_eq!(
            (v[0].chip.as_str(), v[0].chip_name.as_str()),
            ("platform_coretemp_0", "coretemp")
        );
        assert_eq!(v[0].sensors.len(), 1);
        assert_eq!(v[0].sensors[0].get("label"), Some("Package id 0"));
        assert_eq!(v[0].sensors[0].get("crit"), Some("100000"));
        assert_eq!(
            (v[1].chip_name.as_str(), v[1].sensors[0].kind.as_str()),
            ("", "fan")
        );
        assert_eq!(
            parse_into(b"temp1_input 1\n", &mut v).unwrap_err().field,
            "chip"
        );
        assert_eq!(
            parse_into(b"@c\nbogus 1\n", &mut v).unwrap_err().field,
            "sensor"
        );
    }
}
