//! node_exporter's sysctl collector: the sysctls its `include` and
//! `include-info` options name, from /proc/sys.

use super::*;

/// Each numeric sysctl as node_exporter serves it: one number, a family
/// `node_sysctl_<name>`; several, one series each by `index`, or a family
/// each (`node_sysctl_<name>_<field>`) where the configuration names the
/// fields (a sysctl whose count of numbers is not the count of names, or
/// that is not numbers, is left out). Each text sysctl's words as
/// `node_sysctl_info` series, by `index`.
pub(super) fn encode(out: &mut Out<'_>, x: &Input<'_>) -> Fmt {
    if !x.s.ok(Source::Sysctl) {
        return Ok(());
    }
    let value = |name: &str| {
        x.s.sysctl
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let (pre, post) = NODE_SYSCTL.name.split_once('*').unwrap_or_default();
    for include in &x.ctx.config.sysctl_include {
        let (name, fields) = match include.split_once(':') {
            Some((n, f)) => (n, f.split(',').collect::<Vec<_>>()),
            None => (include.as_str(), Vec::new()),
        };
        let Some(numbers) = value(name)
            .map(|v| {
                v.split_whitespace()
                    .map(str::parse::<i64>)
                    .collect::<Result<Vec<_>, _>>()
            })
            .and_then(Result::ok)
        else {
            continue;
        };
        let family: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let family = format!("{pre}{family}{post}");
        match (numbers.len(), fields.is_empty()) {
            (1, true) => {
                let help = format!("sysctl {name}");
                let mut m = out.family_named(&NODE_SYSCTL, &family, &help)?;
                gauge(&mut m, numbers[0] as f64)?;
            }
            (2.., true) => {
                let help = format!("sysctl {name}");
                let mut m = out.family_named(&NODE_SYSCTL, &family, &help)?;
                for (i, n) in numbers.iter().enumerate() {
                    let i = i.to_string();
                    gauge_l(&mut m, &[("index", i.as_str())], *n as f64)?;
                }
            }
            (2.., false) if numbers.len() == fields.len() => {
                for (i, (field, n)) in fields.iter().zip(&numbers).enumerate() {
                    let (family, help) = (
                        format!("{family}_{field}"),
                        format!("sysctl {name}, field {i}"),
                    );
                    let mut m = out.family_named(&NODE_SYSCTL, &family, &help)?;
                    gauge(&mut m, *n as f64)?;
                }
            }
            _ => {}
        }
    }
    let mut m = out.family(&NODE_SYSCTL_INFO)?;
    for name in &x.ctx.config.sysctl_include_info {
        let Some(v) = value(name) else { continue };
        for (i, word) in v.split_whitespace().enumerate() {
            let i = i.to_string();
            gauge_l(
                &mut m,
                &[
                    ("name", name.as_str()),
                    ("value", word),
                    ("index", i.as_str()),
                ],
                1.0,
            )?;
        }
    }
    Ok(())
}
