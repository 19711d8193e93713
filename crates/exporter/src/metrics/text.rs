//! The classic Prometheus text format (0.0.4), derived from OpenMetrics.

use std::fmt::Write as _;

/// The classic text format (version 0.0.4) from OpenMetrics text, a piece
/// at a time: counter families are named with `_total`, `unknown` becomes
/// `untyped`, and the `# UNIT` and `# EOF` lines go. Each piece ends at a
/// line's end, and a family's `# HELP` may be in one piece and its
/// `# TYPE` in the next.
#[derive(Debug, Default)]
pub struct TextFormat {
    pending_help: Option<String>,
}

impl TextFormat {
    pub fn convert(&mut self, om: &str) -> String {
        let mut out = String::with_capacity(om.len());
        for line in om.lines() {
            if line == "# EOF" || line.starts_with("# UNIT ") {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# HELP ") {
                self.pending_help = Some(rest.to_string());
                continue;
            }
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
                let (name, kind) = match kind {
                    "counter" => (format!("{name}_total"), "counter"),
                    "unknown" => (name.to_string(), "untyped"),
                    "gauge" | "histogram" | "summary" => (name.to_string(), kind),
                    _ => (name.to_string(), "untyped"),
                };
                if let Some(h) = self.pending_help.take() {
                    let help = h.split_once(' ').map_or("", |(_, t)| t);
                    let _ = writeln!(out, "# HELP {name} {help}");
                }
                let _ = writeln!(out, "# TYPE {name} {kind}");
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_text_format(om: &str) -> String {
        TextFormat::default().convert(om)
    }

    #[test]
    fn text_format_renames_counter_families() {
        let om = "# HELP node_forks Total number of forks.\n# TYPE node_forks counter\nnode_forks_total 5\n# HELP node_vmstat_pgfault x.\n# TYPE node_vmstat_pgfault unknown\nnode_vmstat_pgfault 3\n# EOF\n";
        assert_eq!(
            to_text_format(om),
            "# HELP node_forks_total Total number of forks.\n# TYPE node_forks_total counter\nnode_forks_total 5\n# HELP node_vmstat_pgfault x.\n# TYPE node_vmstat_pgfault untyped\nnode_vmstat_pgfault 3\n"
        );
    }

    #[test]
    fn pieces_split_between_help_and_type_convert_as_one() {
        let om = "# HELP node_forks Total number of forks.\n# TYPE node_forks counter\nnode_forks_total 5\n";
        let (a, b) = om.split_at(om.find("# TYPE").unwrap());
        let mut t = TextFormat::default();
        let both = t.convert(a) + &t.convert(b);
        assert_eq!(both, to_text_format(om));
    }
}
