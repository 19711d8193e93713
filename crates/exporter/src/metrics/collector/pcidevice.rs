//! node_exporter's pcidevice collector: /sys/bus/pci/devices.

use super::*;

/// The power states node_exporter gives a series each.
const POWER_STATES: [&str; 7] = ["D0", "D1", "D2", "D3hot", "D3cold", "unknown", "error"];

/// A location `segment:bus:device.function` as node_exporter's labels
/// (`0000`, `00`, `02`, `1`), from its hexadecimal parts.
fn location(name: &str) -> Option<[String; 4]> {
    let (segment, rest) = name.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (device, function) = rest.split_once('.')?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    Some([
        format!("{:04x}", hex(segment)?),
        format!("{:02x}", hex(bus)?),
        format!("{:02x}", hex(device)?),
        format!("{:x}", hex(function)?),
    ])
}

/// node_exporter's location labels of a function.
fn loc(l: &[String; 4]) -> [(&'static str, &str); 4] {
    [
        ("segment", l[0].as_str()),
        ("bus", l[1].as_str()),
        ("device", l[2].as_str()),
        ("function", l[3].as_str()),
    ]
}

/// A link speed as the kernel prints it (`8.0 GT/s PCIe`), in transfers a
/// second; -1 when unknown, as node_exporter gives it.
fn speed(d: &ClassDevice, attr: &str) -> f64 {
    d.get(attr)
        .and_then(|v| {
            v.trim()
                .strip_suffix(" GT/s PCIe")?
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(-1.0, |gts| gts * 1e9)
}

/// A link's lanes; -1 when unknown.
fn width(d: &ClassDevice, attr: &str) -> f64 {
    d.int(attr).map_or(-1.0, |w| w as f64)
}

/// A switch, 0 or 1; 0 when absent.
fn flag(d: &ClassDevice, attr: &str) -> f64 {
    d.int(attr).map_or(0.0, |v| f64::from(u8::from(v != 0)))
}

/// A count; 0 when absent.
fn count(d: &ClassDevice, attr: &str) -> f64 {
    d.uint(attr).map_or(0.0, |v| v as f64)
}

/// Per PCI function: its identity as info, its links (-1 where the kernel
/// gives none), SR-IOV and power attributes (0 where absent), its power
/// state as one series a state, its NUMA node where known. A function
/// whose location does not read is left out.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    let Some(devs) = class(x, Source::Pcidevice) else {
        return Ok(());
    };
    let devs: Vec<(&ClassDevice, [String; 4])> = devs
        .iter()
        .filter_map(|d| Some((d, location(&d.name)?)))
        .collect();

    let mut m = out.family(&NODE_PCIDEVICE_INFO)?;
    for (d, l) in &devs {
        let parent = d.get("parent").and_then(location);
        let parent = parent.unwrap_or_else(|| std::array::from_fn(|_| "*".to_string()));
        let id = |attr: &str, width: usize| {
            let v = d.get(attr).and_then(parse_uint).unwrap_or(0);
            format!("0x{v:0width$x}")
        };
        let ids = [
            id("class", 6),
            id("vendor", 4),
            id("device", 4),
            id("subsystem_vendor", 4),
            id("subsystem_device", 4),
            id("revision", 2),
        ];
        let [a, b, c, e] = loc(l);
        let labels = [
            a,
            b,
            c,
            e,
            ("parent_segment", parent[0].as_str()),
            ("parent_bus", parent[1].as_str()),
            ("parent_device", parent[2].as_str()),
            ("parent_function", parent[3].as_str()),
            ("class_id", ids[0].as_str()),
            ("vendor_id", ids[1].as_str()),
            ("device_id", ids[2].as_str()),
            ("subsystem_vendor_id", ids[3].as_str()),
            ("subsystem_device_id", ids[4].as_str()),
            ("revision", ids[5].as_str()),
        ];
        gauge_l(&mut m, &labels, 1.0)?;
    }
    type Read = fn(&ClassDevice, &str) -> f64;
    let per_device: [(&'static Family, &str, Read); 9] = [
        (
            &NODE_PCIDEVICE_MAX_LINK_TRANSFERS_PER_SECOND,
            "max_link_speed",
            speed,
        ),
        (&NODE_PCIDEVICE_MAX_LINK_WIDTH, "max_link_width", width),
        (
            &NODE_PCIDEVICE_CURRENT_LINK_TRANSFERS_PER_SECOND,
            "current_link_speed",
            speed,
        ),
        (
            &NODE_PCIDEVICE_CURRENT_LINK_WIDTH,
            "current_link_width",
            width,
        ),
        (&NODE_PCIDEVICE_D3COLD_ALLOWED, "d3cold_allowed", flag),
        (
            &NODE_PCIDEVICE_SRIOV_DRIVERS_AUTOPROBE,
            "sriov_drivers_autoprobe",
            flag,
        ),
        (&NODE_PCIDEVICE_SRIOV_NUMVFS, "sriov_numvfs", count),
        (&NODE_PCIDEVICE_SRIOV_TOTALVFS, "sriov_totalvfs", count),
        (
            &NODE_PCIDEVICE_SRIOV_VF_TOTAL_MSIX,
            "sriov_vf_total_msix",
            count,
        ),
    ];
    for (f, attr, read) in per_device {
        let mut m = out.family(f)?;
        for (d, l) in &devs {
            gauge_l(&mut m, &loc(l), read(d, attr))?;
        }
    }
    let mut m = out.family(&NODE_PCIDEVICE_POWER_STATE)?;
    for (d, l) in &devs {
        let Some(state) = d
            .get("power_state")
            .map(str::trim)
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        for s in POWER_STATES {
            let [a, b, c, e] = loc(l);
            let labels = [a, b, c, e, ("state", s)];
            gauge_l(&mut m, &labels, f64::from(u8::from(s == state)))?;
        }
    }
    let mut m = out.family(&NODE_PCIDEVICE_NUMA_NODE)?;
    for (d, l) in &devs {
        if let Some(node) = d.int("numa_node").filter(|&n| n != -1) {
            gauge_l(&mut m, &loc(l), node as f64)?;
        }
    }
    Ok(())
}
