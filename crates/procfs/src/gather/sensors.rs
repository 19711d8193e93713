//! Sources that read a CPU's sensors and frequencies (cpufreq, thermal
//! zones, hwmon), and which of them would interrupt an isolated CPU.

use super::*;

impl Gatherer {
    /// The CPUs isolation keeps quiet: isolated or nohz_full.
    pub(super) fn quiet_cpus(&mut self, cpu_dir: &Path) -> crate::cpu::CpuList {
        let mut quiet = crate::cpu::CpuList::default();
        let mut l = crate::cpu::CpuList::default();
        for file in ["isolated", "nohz_full"] {
            if self.attr(&cpu_dir.join(file))
                && crate::cpu::parse_list_into(&self.attr, &mut l).is_ok()
            {
                quiet = quiet.union(&l);
            }
        }
        quiet
    }

    /// Where coretemp reads: read only when some CPU is quiet and a
    /// coretemp chip or an `x86_pkg_temp` zone is there, and kept while
    /// the online CPUs are the same.
    pub(super) fn sensor_zones(&mut self, cpu_dir: &Path) -> &SensorZones {
        let online = if self.attr(&cpu_dir.join("online")) {
            self.attr.clone()
        } else {
            Vec::new()
        };
        if self.zones.as_ref().is_none_or(|(o, _)| *o != online) {
            let mut cpus = crate::cpu::CpuList::default();
            let _ = crate::cpu::parse_list_into(&online, &mut cpus);
            let mut zones = SensorZones::default();
            for cpu in cpus.iter() {
                let topo = cpu_dir.join(format!("cpu{cpu}/topology"));
                let mut id = |f: &str| -> Option<u32> {
                    self.attr(&topo.join(f)).then_some(())?;
                    std::str::from_utf8(&self.attr).ok()?.trim().parse().ok()
                };
                let (Some(package), Some(core)) = (id("physical_package_id"), id("core_id")) else {
                    continue;
                };
                // Kernels before 5.2 have no dies: one per package.
                let die = id("die_id").unwrap_or(0);
                let zone = match zones.zones.iter().position(|z| z.key == (package, die)) {
                    Some(i) => i,
                    None => {
                        zones.zones.push(SensorZone {
                            key: (package, die),
                            first_cpu: cpu,
                            cores: Vec::new(),
                        });
                        zones.zones.len() - 1
                    }
                };
                zones.zones[zone].cores.push((core, cpu));
            }
            self.zones = Some((online, zones));
        }
        &self.zones.as_ref().expect("set above").1
    }

    pub(super) fn cpufreq(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("devices/system/cpu");
        // The CPUs isolation keeps quiet: their current frequency is not
        // asked for (see GatherOptions::cur_freq_on_quiet_cpus).
        let quiet = if self.options.cur_freq_on_quiet_cpus {
            crate::cpu::CpuList::default()
        } else {
            self.quiet_cpus(&dir)
        };
        let asks_the_cpu = ["cpuinfo_cur_freq", "scaling_cur_freq"];
        let quiet_attrs: Vec<&str> = crate::hardware::CPUFREQ_ATTRIBUTES
            .into_iter()
            .filter(|a| !asks_the_cpu.contains(a))
            .collect();
        for cpu in Self::numbered(&dir, "cpu")? {
            let freq = dir.join(format!("cpu{cpu}/cpufreq"));
            if !freq.is_dir() {
                continue;
            }
            let _ = writeln!(self.scratch, "@{cpu}");
            if u32::try_from(cpu).is_ok_and(|c| quiet.contains(c)) {
                self.attrs(&freq, &quiet_attrs);
            } else {
                self.attrs(&freq, &crate::hardware::CPUFREQ_ATTRIBUTES);
            }
        }
        Ok(())
    }

    /// x86's thermal throttle counts: each package's and each core's,
    /// read at its first online CPU (the kernel keeps them in memory, per
    /// CPU: no IPI). A machine whose first CPU has none has none.
    pub(super) fn throttles(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let cpu_dir = sys_root.join("devices/system/cpu");
        let zones = &self.sensor_zones(&cpu_dir).zones;
        let Some(first) = zones.first().map(|z| z.first_cpu) else {
            return Err(std::io::ErrorKind::NotFound.into());
        };
        let places: Vec<(u32, u32, u32)> = zones
            .iter()
            .flat_map(|z| z.cores.iter().map(move |&(core, cpu)| (z.key.0, core, cpu)))
            .collect();
        std::fs::metadata(cpu_dir.join(format!("cpu{first}/thermal_throttle")))?;
        let mut packages = std::collections::HashSet::new();
        let mut cores = std::collections::HashSet::new();
        for (package, core, cpu) in places {
            let dir = cpu_dir.join(format!("cpu{cpu}/thermal_throttle"));
            if packages.insert(package) && self.attr(&dir.join("package_throttle_count")) {
                let _ = write!(self.scratch, "package {package} ");
                self.scratch.extend_from_slice(&self.attr);
                self.scratch.push(b'\n');
            }
            if cores.insert((package, core)) && self.attr(&dir.join("core_throttle_count")) {
                let _ = write!(self.scratch, "core {package} {core} ");
                self.scratch.extend_from_slice(&self.attr);
                self.scratch.push(b'\n');
            }
        }
        Ok(())
    }

    pub(super) fn thermal(&mut self, sys_root: &Path) -> std::io::Result<()> {
        let dir = sys_root.join("class/thermal");
        let cpu_dir = sys_root.join("devices/system/cpu");
        let mut package_quiet: Option<bool> = None;
        for zone in Self::numbered(&dir, "thermal_zone")? {
            let _ = writeln!(self.scratch, "@zone {zone}");
            let zone_dir = dir.join(format!("thermal_zone{zone}"));
            // x86_pkg_temp reads the package's MSR on one of its CPUs
            // (rdmsr_on_cpu); the zone does not say which package, so its
            // temperature is left unread while any package's is read on a
            // quiet CPU (see GatherOptions::sensors_on_quiet_cpus).
            let pkg = !self.options.sensors_on_quiet_cpus
                && self.attr(&zone_dir.join("type"))
                && self.attr == b"x86_pkg_temp";
            let quiet = pkg
                && *package_quiet.get_or_insert_with(|| {
                    let quiet = self.quiet_cpus(&cpu_dir);
                    !quiet.is_empty() && self.sensor_zones(&cpu_dir).any_package_quiet(&quiet)
                });
            let attrs: &[&str] = if quiet { &["type"] } else { &["type", "temp"] };
            self.attrs(&zone_dir, attrs);
        }
        for dev in Self::numbered(&dir, "cooling_device")? {
            let _ = writeln!(self.scratch, "@cooling {dev}");
            self.attrs(
                &dir.join(format!("cooling_device{dev}")),
                &["type", "cur_state", "max_state"],
            );
        }
        Ok(())
    }

    pub(super) fn hwmon(&mut self, sys_root: &Path) -> std::io::Result<()> {
        use crate::hwmon::{clean, split_sensor_file};
        let class = sys_root.join("class/hwmon");
        let cpu_dir = sys_root.join("devices/system/cpu");
        // The quiet CPUs, read at the first coretemp chip (see
        // GatherOptions::sensors_on_quiet_cpus).
        let mut quiet: Option<crate::cpu::CpuList> = None;
        let mut dirs: Vec<_> = std::fs::read_dir(&class)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        // node_exporter's stable chip name: the device's bus and name,
        // else the `name` file, else the directory's own name; where two
        // chips share one device (asus-nb-wmi's two hwmon directories),
        // each is told apart by its `name` file, else by its directory.
        let mut chips = Vec::new();
        for dir in dirs.iter().take(crate::limits::MAX_ROWS) {
            let device_path = std::fs::canonicalize(dir.join("device")).ok();
            let from_device = device_path.as_ref().and_then(|p| {
                let name = clean(&p.file_name()?.to_string_lossy());
                let bus = p
                    .parent()
                    .and_then(|b| b.file_name())
                    .map(|b| clean(&b.to_string_lossy()))
                    .unwrap_or_default();
                match (bus.is_empty(), name.is_empty()) {
                    (_, true) => None,
                    (true, false) => Some(name),
                    (false, false) => Some(format!("{bus}_{name}")),
                }
            });
            let raw_name = self
                .attr(&dir.join("name"))
                .then(|| String::from_utf8_lossy(&self.attr).trim().to_string());
            let name_file = raw_name.as_deref().map(clean).filter(|n| !n.is_empty());
            let own = || {
                std::fs::canonicalize(dir)
                    .ok()
                    .and_then(|p| Some(clean(&p.file_name()?.to_string_lossy())))
                    .filter(|n| !n.is_empty())
            };
            let Some(base) = from_device.or(name_file.clone()).or_else(own) else {
                continue;
            };
            chips.push((
                dir,
                device_path,
                base,
                raw_name.unwrap_or_default(),
                name_file,
            ));
        }
        let names: Vec<String> = chips
            .iter()
            .map(|(dir, _, base, raw, _)| {
                let same_base = chips.iter().filter(|c| c.2 == *base);
                if same_base.clone().count() < 2 {
                    return base.clone();
                }
                let mut suffix = clean(raw);
                if suffix.is_empty() || same_base.filter(|c| c.3 == *raw).count() > 1 {
                    suffix = clean(&dir.file_name().unwrap_or_default().to_string_lossy());
                }
                format!("{base}_{suffix}")
            })
            .collect();
        for ((dir, device_path, _, _, name_file), chip) in chips.into_iter().zip(&names) {
            let device = dir.join("device");
            let _ = writeln!(self.scratch, "@{chip}");
            // coretemp reads a core's sensors on that core (rdmsr_on_cpu):
            // those of quiet cores are left unread, their labels kept.
            let mut unread: Vec<String> = Vec::new();
            // The labels read to decide, written as read (not read again).
            let mut labels: Vec<Label> = Vec::new();
            if name_file.as_deref() == Some("coretemp") && !self.options.sensors_on_quiet_cpus {
                let quiet = quiet
                    .get_or_insert_with(|| self.quiet_cpus(&cpu_dir))
                    .clone();
                if !quiet.is_empty() {
                    // The driver's platform device `coretemp.N`: N is the zone.
                    let zone = device_path.as_ref().and_then(|p| {
                        p.file_name()?
                            .to_str()?
                            .strip_prefix("coretemp.")?
                            .parse()
                            .ok()
                    });
                    labels = self.labels(dir);
                    let zones = self.sensor_zones(&cpu_dir);
                    unread = labels
                        .iter()
                        .filter(|l| zones.quiet(zone, &String::from_utf8_lossy(&l.bytes), &quiet))
                        .map(|l| l.sensor.clone())
                        .collect();
                }
            }
            if let Some(n) = name_file {
                let _ = writeln!(self.scratch, "name {n}");
            }
            for d in [dir.to_path_buf(), device] {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                let mut files: Vec<String> = entries
                    .flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|f| {
                        split_sensor_file(f).is_some_and(|(_, sensor, property)| {
                            property == "label" || !unread.contains(&sensor)
                        })
                    })
                    .collect();
                files.sort();
                for f in files.iter().take(4096) {
                    let known = labels.iter().find(|l| d == **dir && l.file == *f);
                    let value: &[u8] = match known {
                        Some(l) => &l.bytes,
                        None if self.attr(&d.join(f)) => &self.attr,
                        None => continue,
                    };
                    if !value.contains(&b'\n') {
                        let _ = write!(self.scratch, "{f} ");
                        self.scratch.extend_from_slice(value);
                        self.scratch.push(b'\n');
                    }
                }
            }
        }
        Ok(())
    }

    /// Each `temp*_label` of a hwmon directory: its file, sensor and bytes.
    pub(super) fn labels(&mut self, dir: &Path) -> Vec<Label> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let files: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|f| f.starts_with("temp") && f.ends_with("_label"))
            .take(4096)
            .collect();
        let mut out = Vec::new();
        for file in files {
            let Some((_, sensor, _)) = crate::hwmon::split_sensor_file(&file) else {
                continue;
            };
            if self.attr(&dir.join(&file)) {
                let bytes = self.attr.clone();
                out.push(Label {
                    file,
                    sensor,
                    bytes,
                });
            }
        }
        out
    }
}

/// A hwmon sensor's label file (`temp2_label`), its sensor (`temp2`) and
/// its bytes as read (`Core 0`).
pub(super) struct Label {
    pub(super) file: String,
    pub(super) sensor: String,
    pub(super) bytes: Vec<u8>,
}

/// coretemp's zones: one per (package, die), numbered as the driver
/// numbers its platform devices (`coretemp.N`, the logical die id: in the
/// order of each zone's first CPU).
#[derive(Default)]
pub(super) struct SensorZones {
    pub(super) zones: Vec<SensorZone>,
}

pub(super) struct SensorZone {
    pub(super) key: (u32, u32),
    /// Where the driver reads the package sensor.
    pub(super) first_cpu: u32,
    /// (core id, CPU) of each online CPU.
    pub(super) cores: Vec<(u32, u32)>,
}

impl SensorZones {
    /// Whether coretemp chip `zone`'s sensor labelled `label` ("Core 3",
    /// "Package id 0") is read on a quiet CPU. A chip whose zone is not
    /// known counts every zone: it skips more, never less.
    pub(super) fn quiet(
        &self,
        zone: Option<usize>,
        label: &str,
        quiet: &crate::cpu::CpuList,
    ) -> bool {
        let zones: Vec<&SensorZone> = match zone.and_then(|z| self.zones.get(z)) {
            Some(z) => vec![z],
            None => self.zones.iter().collect(),
        };
        if let Some(core) = label
            .strip_prefix("Core ")
            .and_then(|c| c.trim().parse::<u32>().ok())
        {
            return zones.iter().any(|z| {
                z.cores
                    .iter()
                    .any(|&(c, cpu)| c == core && quiet.contains(cpu))
            });
        }
        label.starts_with("Package id") && zones.iter().any(|z| quiet.contains(z.first_cpu))
    }

    /// Whether any package's sensor is read on a quiet CPU
    /// (`x86_pkg_temp` zones do not say which package they are).
    pub(super) fn any_package_quiet(&self, quiet: &crate::cpu::CpuList) -> bool {
        self.zones.iter().any(|z| quiet.contains(z.first_cpu))
    }
}
