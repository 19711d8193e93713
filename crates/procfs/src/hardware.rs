//! Hardware state from sysfs: CPU frequency scaling
//! (`/sys/devices/system/cpu/cpuN/cpufreq/`, node_exporter's cpufreq) and
//! thermal zones and cooling devices (`/sys/class/thermal/`,
//! thermal_zone).
//!
//! The reader gathers records: `@<cpu>` then `<attribute> <value>` lines
//! for cpufreq ([`CPUFREQ_ATTRIBUTES`]); `@zone <n>` or `@cooling <n>` then
//! `type`, `temp`, `cur_state`, `max_state` lines for thermal. An
//! attribute that could not be read is left out (its figure is unknown).
//!
//! Thermal throttle counts (`cpuN/thermal_throttle/`, node_exporter's cpu
//! collector) are gathered as `package <package> <count>` and
//! `core <package> <core> <count>` lines: each package's and each core's
//! count once, read at its first online CPU.

use serde::Serialize;

use crate::error::{ParseError, ParseErrorKind};
use crate::limits::MAX_ROWS;
use crate::records::{self, err};

/// The files read below `cpuN/cpufreq/`, in order.
pub const CPUFREQ_ATTRIBUTES: [&str; 8] = [
    "cpuinfo_cur_freq",
    "cpuinfo_min_freq",
    "cpuinfo_max_freq",
    "scaling_cur_freq",
    "scaling_min_freq",
    "scaling_max_freq",
    "scaling_governor",
    "scaling_available_governors",
];

/// One CPU's frequency scaling; frequencies in kHz, as sysfs prints them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuFreq {
    pub cpu: u32,
    pub cpuinfo_cur_khz: Option<u64>,
    pub cpuinfo_min_khz: Option<u64>,
    pub cpuinfo_max_khz: Option<u64>,
    pub scaling_cur_khz: Option<u64>,
    pub scaling_min_khz: Option<u64>,
    pub scaling_max_khz: Option<u64>,
    /// Empty when unknown.
    pub governor: String,
    pub available_governors: Vec<String>,
}

/// Parses the gathered cpufreq records into `out`.
pub fn parse_cpufreq(buf: &[u8], out: &mut Vec<CpuFreq>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(cpu) = text.strip_prefix('@') {
            let cpu = cpu
                .parse()
                .map_err(|_| err(n, "cpu", ParseErrorKind::Invalid, "`@<cpu number>`"))?;
            if out.len() >= crate::limits::MAX_CPUS {
                return Err(err(n, "cpu", ParseErrorKind::TooMany, "at most 65536 CPUs"));
            }
            out.push(CpuFreq {
                cpu,
                ..CpuFreq::default()
            });
            continue;
        }
        let c = records::current(out, n, "cpu")?;
        let (k, v) = text.split_once(' ').unwrap_or((text, ""));
        let v = v.trim();
        let khz = |slot: &mut Option<u64>| -> Result<(), ParseError> {
            *slot = Some(
                v.parse()
                    .map_err(|_| err(n, "frequency", ParseErrorKind::Invalid, "kHz"))?,
            );
            Ok(())
        };
        match k {
            "cpuinfo_cur_freq" => khz(&mut c.cpuinfo_cur_khz)?,
            "cpuinfo_min_freq" => khz(&mut c.cpuinfo_min_khz)?,
            "cpuinfo_max_freq" => khz(&mut c.cpuinfo_max_khz)?,
            "scaling_cur_freq" => khz(&mut c.scaling_cur_khz)?,
            "scaling_min_freq" => khz(&mut c.scaling_min_khz)?,
            "scaling_max_freq" => khz(&mut c.scaling_max_khz)?,
            "scaling_governor" => c.governor = v.to_string(),
            "scaling_available_governors" => {
                c.available_governors = v.split_whitespace().take(64).map(str::to_string).collect();
            }
            _ => {}
        }
    }
    Ok(())
}

/// How often the CPUs were throttled for heat, since boot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Throttles {
    /// (package, count) per package.
    pub packages: Vec<(u32, u64)>,
    /// (package, core, count) per core.
    pub cores: Vec<(u32, u32, u64)>,
}

/// Parses the gathered thermal throttle counts into `out`.
pub fn parse_throttles(buf: &[u8], out: &mut Throttles) -> Result<(), ParseError> {
    out.packages.clear();
    out.cores.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        let mut words = text.split(' ');
        let kind = words.next().unwrap_or_default();
        let mut number = |field: &'static str| -> Result<u64, ParseError> {
            words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| err(n, field, ParseErrorKind::Invalid, "a whole number"))
        };
        let id = |v: u64, field: &'static str| {
            u32::try_from(v).map_err(|_| err(n, field, ParseErrorKind::Invalid, "a 32-bit id"))
        };
        if out.packages.len() + out.cores.len() >= crate::limits::MAX_CPUS {
            return Err(err(
                n,
                "kind",
                ParseErrorKind::TooMany,
                "at most 65536 counts",
            ));
        }
        match kind {
            "package" => {
                let package = id(number("package")?, "package")?;
                out.packages.push((package, number("count")?));
            }
            "core" => {
                let package = id(number("package")?, "package")?;
                let core = id(number("core")?, "core")?;
                out.cores.push((package, core, number("count")?));
            }
            _ => {
                return Err(err(
                    n,
                    "kind",
                    ParseErrorKind::Invalid,
                    "`package <package> <count>` or `core <package> <core> <count>`",
                ));
            }
        }
    }
    Ok(())
}

/// A thermal zone or a cooling device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Thermal {
    /// `@zone` or `@cooling`.
    pub zones: Vec<ThermalZone>,
    pub cooling: Vec<CoolingDevice>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ThermalZone {
    /// The number of `thermal_zoneN`.
    pub zone: String,
    pub kind: String,
    pub temp_millicelsius: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CoolingDevice {
    /// The number of `cooling_deviceN`.
    pub name: String,
    pub kind: String,
    pub cur_state: i64,
    pub max_state: i64,
}

/// Parses the gathered thermal records into `out`; a zone without a
/// temperature, or a device without both states, is left out.
pub fn parse_thermal(buf: &[u8], out: &mut Thermal) -> Result<(), ParseError> {
    out.zones.clear();
    out.cooling.clear();
    enum At {
        None,
        Zone(ThermalZone, bool),
        Cooling(CoolingDevice, u8),
    }
    fn flush(at: At, out: &mut Thermal) {
        match at {
            At::Zone(z, true) => out.zones.push(z),
            At::Cooling(c, 3) => out.cooling.push(c),
            _ => {}
        }
    }
    let mut at = At::None;
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(rest) = text.strip_prefix('@') {
            flush(std::mem::replace(&mut at, At::None), out);
            if out.zones.len() + out.cooling.len() >= MAX_ROWS {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::TooMany,
                    "at most 2^20 devices",
                ));
            }
            let (what, id) = rest.split_once(' ').unwrap_or((rest, ""));
            if id.is_empty() || !id.bytes().all(|c| c.is_ascii_digit()) {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::Invalid,
                    "`@zone <n>` or `@cooling <n>`",
                ));
            }
            at = match what {
                "zone" => At::Zone(
                    ThermalZone {
                        zone: id.to_string(),
                        ..ThermalZone::default()
                    },
                    false,
                ),
                "cooling" => At::Cooling(
                    CoolingDevice {
                        name: id.to_string(),
                        ..CoolingDevice::default()
                    },
                    0,
                ),
                _ => {
                    return Err(err(
                        n,
                        "device",
                        ParseErrorKind::Invalid,
                        "`@zone <n>` or `@cooling <n>`",
                    ));
                }
            };
            continue;
        }
        let (k, v) = text.split_once(' ').unwrap_or((text, ""));
        let v = v.trim();
        let int = || -> Result<i64, ParseError> {
            v.parse()
                .map_err(|_| err(n, "value", ParseErrorKind::Invalid, "an integer"))
        };
        match (&mut at, k) {
            (At::None, _) => {
                return Err(err(
                    n,
                    "device",
                    ParseErrorKind::Missing,
                    "`@zone` or `@cooling` first",
                ));
            }
            (At::Zone(z, _), "type") => z.kind = v.to_string(),
            (At::Zone(z, seen), "temp") => {
                z.temp_millicelsius = int()?;
                *seen = true;
            }
            (At::Cooling(c, _), "type") => c.kind = v.to_string(),
            (At::Cooling(c, seen), "cur_state") => {
                c.cur_state = int()?;
                *seen |= 1;
            }
            (At::Cooling(c, seen), "max_state") => {
                c.max_state = int()?;
                *seen |= 2;
            }
            _ => {}
        }
    }
    flush(at, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpufreq_exact_values() {
        let mut v = Vec::new();
        parse_cpufreq(
            b"@0\ncpuinfo_min_freq 800000\ncpuinfo_max_freq 3600000\nscaling_cur_freq 1200000\nscaling_governor powersave\nscaling_available_governors performance powersave\n@1\n",
            &mut v,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].cpuinfo_min_khz, v[0].cpuinfo_cur_khz),
            (Some(800000), None)
        );
        assert_eq!(v[0].scaling_cur_khz, Some(1200000));
        assert_eq!(v[0].governor, "powersave");
        assert_eq!(v[0].available_governors, ["performance", "powersave"]);
        assert_eq!(v[1].cpu, 1);
        assert_eq!(
            parse_cpufreq(b"@0\nscaling_cur_freq x\n", &mut v)
                .unwrap_err()
                .line,
            2
        );
        assert_eq!(
            parse_cpufreq(b"scaling_cur_freq 1\n", &mut v)
                .unwrap_err()
                .field,
            "cpu"
        );
    }

    #[test]
    fn thermal_exact_values() {
        let mut t = Thermal::default();
        parse_thermal(
            b"@zone 0\ntype x86_pkg_temp\ntemp 45000\n@zone 1\ntype acpitz\n@cooling 0\ntype Processor\ncur_state 0\nmax_state 10\n@cooling 1\ntype Fan\ncur_state 1\n",
            &mut t,
        )
        .unwrap();
        assert_eq!(t.zones.len(), 1, "a zone without temp is left out");
        assert_eq!(
            (t.zones[0].kind.as_str(), t.zones[0].temp_millicelsius),
            ("x86_pkg_temp", 45000)
        );
        assert_eq!(t.cooling.len(), 1);
        assert_eq!((t.cooling[0].cur_state, t.cooling[0].max_state), (0, 10));
        assert_eq!(
            parse_thermal(b"temp 1\n", &mut t).unwrap_err().field,
            "device"
        );
        assert_eq!(
            parse_thermal(b"@zone x\n", &mut t).unwrap_err().field,
            "device"
        );
        assert_eq!(
            parse_thermal(b"@zone 0\ntemp hot\n", &mut t)
                .unwrap_err()
                .line,
            2
        );
    }
}

/// The DMI files node_exporter labels `node_dmi_info` with, below
/// `/sys/class/dmi/id/` (the label is the file name, but `sys_vendor`
/// becomes `system_vendor`).
pub const DMI_FILES: [&str; 20] = [
    "bios_date",
    "bios_release",
    "bios_vendor",
    "bios_version",
    "board_asset_tag",
    "board_name",
    "board_serial",
    "board_vendor",
    "board_version",
    "chassis_asset_tag",
    "chassis_serial",
    "chassis_vendor",
    "chassis_version",
    "product_family",
    "product_name",
    "product_serial",
    "product_sku",
    "product_uuid",
    "product_version",
    "sys_vendor",
];

/// DMI (SMBIOS) identity: `(label, value)` for each file that could be
/// read, in [`DMI_FILES`] order; gathered as `<file> <value>` lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dmi {
    pub values: Vec<(String, String)>,
}

pub fn parse_dmi(buf: &[u8], out: &mut Dmi) -> Result<(), ParseError> {
    out.values.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        let (k, v) = text.split_once(' ').unwrap_or((text, ""));
        if !DMI_FILES.contains(&k) {
            return Err(err(
                n,
                "file",
                ParseErrorKind::Invalid,
                "a /sys/class/dmi/id file name",
            ));
        }
        if out.values.len() >= DMI_FILES.len() {
            return Err(err(n, "file", ParseErrorKind::TooMany, "each file once"));
        }
        let label = if k == "sys_vendor" {
            "system_vendor"
        } else {
            k
        };
        out.values.push((label.to_string(), v.trim().to_string()));
    }
    Ok(())
}

/// A bonding master and its slaves' MII status (`up`, `down`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Bond {
    pub master: String,
    pub slaves: Vec<(String, String)>,
}

/// Parses the gathered bonding records: `@<master>` then `<slave> <mii
/// status>` lines (from /sys/class/net/bonding_masters, each master's
/// `bonding/slaves`, and each slave's `bonding_slave/mii_status`).
pub fn parse_bonding(buf: &[u8], out: &mut Vec<Bond>) -> Result<(), ParseError> {
    out.clear();
    for l in records::lines(buf) {
        let (n, text) = l?;
        if let Some(m) = text.strip_prefix('@') {
            records::open(n, m, out.len(), "master")?;
            out.push(Bond {
                master: m.to_string(),
                slaves: Vec::new(),
            });
            continue;
        }
        let b = records::current(out, n, "master")?;
        let (slave, state) = text.split_once(' ').ok_or_else(|| {
            err(
                n,
                "mii_status",
                ParseErrorKind::Missing,
                "`<slave> <status>`",
            )
        })?;
        if b.slaves.len() >= MAX_ROWS {
            return Err(err(
                n,
                "slave",
                ParseErrorKind::TooMany,
                "at most 2^20 slaves",
            ));
        }
        b.slaves.push((slave.to_string(), state.trim().to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod more_tests {
    use super::*;

    #[test]
    fn dmi_and_bonding_exact_values() {
        let mut d = Dmi::default();
        parse_dmi(
            b"bios_vendor SeaBIOS\nsys_vendor QEMU\nproduct_name Standard PC (Q35 + ICH9, 2009)\n",
            &mut d,
        )
        .unwrap();
        assert_eq!(
            d.values[1],
            ("system_vendor".to_string(), "QEMU".to_string())
        );
        assert_eq!(d.values[2].1, "Standard PC (Q35 + ICH9, 2009)");
        assert_eq!(
            parse_dmi(b"nonsense x\n", &mut d).unwrap_err().field,
            "file"
        );
        let mut b = Vec::new();
        parse_bonding(b"@bond0\neth0 up\neth1 down\n@bond1\n", &mut b).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].slaves[1], ("eth1".to_string(), "down".to_string()));
        assert!(b[1].slaves.is_empty());
        assert_eq!(
            parse_bonding(b"eth0 up\n", &mut b).unwrap_err().field,
            "master"
        );
    }
}
