//! node_exporter's powersupplyclass collector: /sys/class/power_supply.

use super::*;

/// node_exporter's power supply families: `(attribute, name after
/// node_power_supply_, divisor)`; micro-units become units, tenths of a
/// degree degrees (divided, as node_exporter does, so the floats agree).
const POWER_SUPPLY: &[(&str, &str, f64)] = &[
    ("authentic", "authentic", 1.0),
    ("calibrate", "calibrate", 1.0),
    ("capacity", "capacity", 1.0),
    ("capacity_alert_max", "capacity_alert_max", 1.0),
    ("capacity_alert_min", "capacity_alert_min", 1.0),
    ("cycle_count", "cyclecount", 1.0),
    ("online", "online", 1.0),
    ("present", "present", 1.0),
    ("time_to_empty_now", "time_to_empty_seconds", 1.0),
    ("time_to_full_now", "time_to_full_seconds", 1.0),
    ("current_boot", "current_boot", 1e6),
    ("current_max", "current_max", 1e6),
    ("current_now", "current_ampere", 1e6),
    ("energy_empty", "energy_empty", 1e6),
    ("energy_empty_design", "energy_empty_design", 1e6),
    ("energy_full", "energy_full", 1e6),
    ("energy_full_design", "energy_full_design", 1e6),
    ("energy_now", "energy_watthour", 1e6),
    ("voltage_boot", "voltage_boot", 1e6),
    ("voltage_max", "voltage_max", 1e6),
    ("voltage_max_design", "voltage_max_design", 1e6),
    ("voltage_min", "voltage_min", 1e6),
    ("voltage_min_design", "voltage_min_design", 1e6),
    ("voltage_now", "voltage_volt", 1e6),
    ("voltage_ocv", "voltage_ocv", 1e6),
    ("charge_control_limit", "charge_control_limit", 1e6),
    ("charge_control_limit_max", "charge_control_limit_max", 1e6),
    ("charge_counter", "charge_counter", 1e6),
    ("charge_empty", "charge_empty", 1e6),
    ("charge_empty_design", "charge_empty_design", 1e6),
    ("charge_full", "charge_full", 1e6),
    ("charge_full_design", "charge_full_design", 1e6),
    ("charge_now", "charge_ampere", 1e6),
    ("charge_term_current", "charge_term_current", 1e6),
    ("constant_charge_current", "constant_charge_current", 1e6),
    (
        "constant_charge_current_max",
        "constant_charge_current_max",
        1e6,
    ),
    ("constant_charge_voltage", "constant_charge_voltage", 1e6),
    (
        "constant_charge_voltage_max",
        "constant_charge_voltage_max",
        1e6,
    ),
    ("precharge_current", "precharge_current", 1e6),
    ("input_current_limit", "input_current_limit", 1e6),
    ("power_now", "power_watt", 1e6),
    ("temp", "temp_celsius", 10.0),
    ("temp_alert_max", "temp_alert_max_celsius", 10.0),
    ("temp_alert_min", "temp_alert_min_celsius", 10.0),
    ("temp_ambient", "temp_ambient_celsius", 10.0),
    ("temp_ambient_max", "temp_ambient_max_celsius", 10.0),
    ("temp_ambient_min", "temp_ambient_min_celsius", 10.0),
    ("temp_max", "temp_max_celsius", 10.0),
    ("temp_min", "temp_min_celsius", 10.0),
];

/// `node_power_supply_info`'s labels after `power_supply`: the attributes
/// of the same names, each where the supply has it.
const POWER_SUPPLY_INFO: &[&str] = &[
    "capacity_level",
    "charge_type",
    "health",
    "manufacturer",
    "model_name",
    "serial_number",
    "status",
    "technology",
    "type",
    "usb_type",
    "scope",
];

pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    match class(x, Source::PowerSupply) {
        Some(d) => power_supply(out, d),
        None => Ok(()),
    }
}

fn power_supply(out: &mut Out<'_>, supplies: &[ClassDevice]) -> Fmt {
    let mut name = String::new();
    for (attr, suffix, divisor) in POWER_SUPPLY {
        let rows: Vec<_> = supplies
            .iter()
            .filter_map(|p| Some((p.name.as_str(), p.int(attr)?)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        NODE_POWER_SUPPLY.instance_into(suffix, &mut name);
        let help = format!("{suffix} value of /sys/class/power_supply/<power_supply>.");
        let mut m = out.family_named(&NODE_POWER_SUPPLY, &name, &help)?;
        for (supply, v) in rows {
            gauge_l(&mut m, &[("power_supply", supply)], v as f64 / divisor)?;
        }
    }
    let mut m = out.family(&NODE_POWER_SUPPLY_INFO)?;
    for p in supplies {
        let mut labels = vec![("power_supply", p.name.as_str())];
        for key in POWER_SUPPLY_INFO {
            if let Some(v) = p.get(key).filter(|v| !v.is_empty()) {
                labels.push((key, v));
            }
        }
        info_l(&mut m, &labels)?;
    }
    Ok(())
}
