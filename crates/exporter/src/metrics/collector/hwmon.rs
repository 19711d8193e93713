//! node_exporter's hwmon families: a name per sensor type, property and
//! unit (`node_hwmon_temp_celsius`, `node_hwmon_temp_crit_celsius`,
//! `node_hwmon_fan_rpm`), from sysfs's units (millidegrees, millivolts,
//! milliamps, microwatts, microjoules) to base units.

use procfs::hwmon::{Chip, Sensor, clean};

use super::*;

/// One series: its family's key (the name's part for the `*` of
/// `node_hwmon_*` or `node_hwmon_*_joule_total`), help, chip, sensor,
/// value, a counter or not.
struct Reading {
    name: String,
    help: String,
    chip: String,
    sensor: String,
    value: f64,
    counter: bool,
}

/// The readings of one sensor, named as node_exporter names them.
fn readings(chip: &str, s: &Sensor, out: &mut Vec<Reading>) {
    // A GPU's clocks are named by their labels (`sclk`, `mclk`), and
    // served only where the label is, as node_exporter serves them.
    let freq_label = s.get("label").map(clean);
    let mut push = |name: String, help: String, value: f64, counter: bool| {
        let sensor = match (s.kind.as_str(), &freq_label) {
            ("freq", Some(l)) if name.ends_with("_freq_mhz") => l.clone(),
            _ => s.name.clone(),
        };
        out.push(Reading {
            name,
            help,
            chip: chip.to_string(),
            sensor,
            value,
            counter,
        })
    };
    let plain = s.get("").and_then(|v| v.parse::<f64>().ok());
    match s.kind.as_str() {
        "beep_enable" => {
            let on = f64::from(u8::from(s.get("") == Some("1")));
            return push(
                "beep_enabled".into(),
                "Hardware beep enabled".into(),
                on,
                false,
            );
        }
        "vrm" => {
            if let Some(v) = plain {
                push(
                    "voltage_regulator_version".into(),
                    "Hardware voltage regulator".into(),
                    v,
                    false,
                );
            }
            return;
        }
        "update_interval" => {
            if let Some(v) = plain {
                push(
                    "update_interval_seconds".into(),
                    "Hardware monitor update interval".into(),
                    v * 0.001,
                    false,
                );
            }
            return;
        }
        _ => {}
    }
    let kind = s.kind.as_str();
    let prefix = kind.to_string();
    for (element, value) in &s.properties {
        let element = element.as_str();
        if element == "label" {
            continue;
        }
        let mut name = prefix.clone();
        if element == "input" {
            if s.get("").is_some() {
                name.push_str("_input");
            }
        } else if !element.is_empty() {
            name.push('_');
            name.push_str(&clean(element));
        }
        let Ok(v) = value.parse::<f64>() else {
            continue;
        };
        let (name, help, v, counter) = match (kind, element) {
            (_, "fault" | "alarm") => (
                name,
                format!("Hardware sensor {element} status ({kind})"),
                v,
                false,
            ),
            (_, "beep") => (
                name + "_enabled",
                "Hardware monitor sensor has beeping enabled".into(),
                v,
                false,
            ),
            ("in" | "cpu", _) => (
                name + "_volts",
                format!("Hardware monitor for voltage ({element})"),
                v * 0.001,
                false,
            ),
            ("temp", e) if e != "type" => (
                name + "_celsius",
                format!("Hardware monitor for temperature ({element})"),
                v * 0.001,
                false,
            ),
            ("curr", _) => (
                name + "_amps",
                format!("Hardware monitor for current ({element})"),
                v * 0.001,
                false,
            ),
            ("energy", _) => (
                name,
                format!("Hardware monitor for joules used so far ({element})"),
                v / 1e6,
                true,
            ),
            ("power", "accuracy") => (
                name,
                "Hardware monitor power meter accuracy, as a ratio".into(),
                v / 1e6,
                false,
            ),
            ("power", "average_interval" | "average_interval_min" | "average_interval_max") => (
                name + "_seconds",
                format!("Hardware monitor power usage update interval ({element})"),
                v * 0.001,
                false,
            ),
            ("power", _) => (
                name + "_watt",
                format!("Hardware monitor for power usage in watts ({element})"),
                v / 1e6,
                false,
            ),
            ("humidity", _) => (
                name,
                format!(
                    "Hardware monitor for humidity, as a ratio (multiply with 100.0 to get the humidity as a percentage) ({element})"
                ),
                v / 1e6,
                false,
            ),
            ("fan", "input" | "min" | "max" | "target") => (
                name + "_rpm",
                format!("Hardware monitor for fan revolutions per minute ({element})"),
                v,
                false,
            ),
            ("freq", "input") if freq_label.is_none() => continue,
            ("freq", "input") => (
                name + "_freq_mhz",
                "Hardware monitor for GPU frequency in MHz".into(),
                v / 1e6,
                false,
            ),
            _ => (
                name,
                format!("Hardware monitor {kind} element {element}"),
                v,
                false,
            ),
        };
        push(name, help, v, counter);
    }
}

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if x.s.ok(Source::Hwmon) {
        let c = &x.ctx.config;
        let served =
            crate::metrics::compat::device_filter(&c.hwmon_chip_exclude, &c.hwmon_chip_include);
        // node_exporter filters by the chip's label (`platform_coretemp_0`).
        let chips: Vec<&Chip> = x.s.hwmon.iter().filter(|c| served(&c.chip)).collect();
        // And its sensors by `chip;sensor` (`platform_coretemp_0;temp3`).
        let sensor =
            crate::metrics::compat::device_filter(&c.hwmon_sensor_exclude, &c.hwmon_sensor_include);
        let mut key = String::new();
        let sensor_ok = |chip: &str, s: &str| {
            key.clear();
            key.push_str(chip);
            key.push(';');
            key.push_str(s);
            sensor(&key)
        };
        hwmon(out, &chips, sensor_ok)?;
    }
    Ok(())
}

fn hwmon(out: &mut Out<'_>, chips: &[&Chip], mut sensor_ok: impl FnMut(&str, &str) -> bool) -> Fmt {
    {
        let mut m = out.family(&NODE_HWMON_CHIP_NAMES)?;
        for c in chips.iter().filter(|c| !c.chip_name.is_empty()) {
            gauge_l(
                &mut m,
                &[
                    ("chip", c.chip.as_str()),
                    ("chip_name", c.chip_name.as_str()),
                ],
                1.0,
            )?;
        }
    }
    {
        let mut m = out.family(&NODE_HWMON_SENSOR_LABEL)?;
        for c in chips {
            for s in c.sensors.iter().filter(|s| sensor_ok(&c.chip, &s.name)) {
                if let Some(label) = s.get("label") {
                    let labels = [
                        ("chip", c.chip.as_str()),
                        ("sensor", s.name.as_str()),
                        ("label", label),
                    ];
                    gauge_l(&mut m, &labels, 1.0)?;
                }
            }
        }
    }
    let mut all = Vec::new();
    for c in chips {
        for s in c.sensors.iter().filter(|s| sensor_ok(&c.chip, &s.name)) {
            readings(&c.chip, s, &mut all);
        }
    }
    let mut name = String::new();
    // One family per name, its series together.
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let mut i = 0;
    while i < all.len() {
        let end = i + all[i..]
            .iter()
            .take_while(|r| r.name == all[i].name)
            .count();
        let first = &all[i];
        let f = if first.counter {
            &NODE_HWMON_JOULE_TOTAL
        } else {
            &NODE_HWMON
        };
        f.instance_into(&first.name, &mut name);
        let mut m = out.family_named(f, &name, &first.help)?;
        for r in &all[i..end] {
            let labels = [("chip", r.chip.as_str()), ("sensor", r.sensor.as_str())];
            if r.counter {
                counter_l(&mut m, &labels, r.value)?;
            } else {
                gauge_l(&mut m, &labels, r.value)?;
            }
        }
        i = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sensor(name: &str, kind: &str, props: &[(&str, &str)]) -> Sensor {
        Sensor {
            name: name.into(),
            kind: kind.into(),
            properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn names_units_and_values_as_node_exporter() {
        let mut r = Vec::new();
        readings(
            "c",
            &sensor(
                "temp1",
                "temp",
                &[
                    ("input", "45000"),
                    ("crit", "100000"),
                    ("crit_alarm", "0"),
                    ("label", "Package id 0"),
                ],
            ),
            &mut r,
        );
        readings(
            "c",
            &sensor(
                "fan2",
                "fan",
                &[("input", "1200"), ("min", "300"), ("pulses", "2")],
            ),
            &mut r,
        );
        readings("c", &sensor("in0", "in", &[("input", "1040")]), &mut r);
        readings("c", &sensor("pwm1", "pwm", &[("", "128")]), &mut r);
        readings(
            "c",
            &sensor("energy1", "energy", &[("input", "123456789")]),
            &mut r,
        );
        readings(
            "c",
            &sensor(
                "power1",
                "power",
                &[("average", "15000000"), ("average_interval", "1000")],
            ),
            &mut r,
        );
        readings(
            "c",
            &sensor("humidity1", "humidity", &[("input", "45000")]),
            &mut r,
        );
        readings(
            "c",
            &sensor("beep_enable0", "beep_enable", &[("", "1")]),
            &mut r,
        );
        // A GPU clock named by its label, its other elements by the
        // sensor; without a label its input is not served.
        readings(
            "c",
            &sensor(
                "freq1",
                "freq",
                &[("input", "214000000"), ("max", "5"), ("label", "S Clk")],
            ),
            &mut r,
        );
        readings("c", &sensor("freq2", "freq", &[("input", "3")]), &mut r);
        // Each reading's family named through its definition.
        let names: Vec<String> = r
            .iter()
            .map(|x| {
                let f = if x.counter {
                    &NODE_HWMON_JOULE_TOTAL
                } else {
                    &NODE_HWMON
                };
                let mut n = String::new();
                f.instance_into(&x.name, &mut n);
                n
            })
            .collect();
        let got: Vec<(&str, f64)> = names
            .iter()
            .zip(&r)
            .map(|(n, x)| (n.as_str(), x.value))
            .collect();
        assert_eq!(
            got,
            [
                ("node_hwmon_temp_celsius", 45.0),
                ("node_hwmon_temp_crit_celsius", 100.0),
                // node_exporter's unit for an alarm other than `alarm` itself.
                ("node_hwmon_temp_crit_alarm_celsius", 0.0),
                ("node_hwmon_fan_rpm", 1200.0),
                ("node_hwmon_fan_min_rpm", 300.0),
                ("node_hwmon_fan_pulses", 2.0),
                ("node_hwmon_in_volts", 1.04),
                ("node_hwmon_pwm", 128.0),
                ("node_hwmon_energy_joule_total", 123.456789),
                ("node_hwmon_power_average_watt", 15.0),
                ("node_hwmon_power_average_interval_seconds", 1.0),
                ("node_hwmon_humidity", 0.045),
                ("node_hwmon_beep_enabled", 1.0),
                ("node_hwmon_freq_freq_mhz", 214.0),
                ("node_hwmon_freq_max", 5.0),
            ]
        );
        assert!(r[7].help.contains("element") && r[8].counter);
        let sensors: Vec<&str> = r[13..].iter().map(|x| x.sensor.as_str()).collect();
        assert_eq!(sensors, ["s_clk", "freq1"]);
    }
}
