//! A latency histogram as SVG, for a person to read: title, axes with units,
//! a legend, counts on a log scale, one step line per run.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

pub struct Series<'a> {
    pub label: &'a str,
    /// Latencies in nanoseconds.
    pub hist: &'a Histogram<u64>,
}

const W: f64 = 900.0;
const H: f64 = 520.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 70.0;
const COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// A round bin width (1, 2 or 5 x 10^k microseconds) giving about `bins` bins.
fn nice_step(span_us: f64, bins: f64) -> f64 {
    let raw = (span_us / bins).max(0.001);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Draws every series over the same bins. Latencies beyond the x range
/// (the largest p99.9 times 1.5) are counted in the last bin, labelled so.
pub fn render(title: &str, series: &[Series<'_>]) -> String {
    let p999 = series
        .iter()
        .map(|s| s.hist.value_at_quantile(0.999) as f64 / 1e3)
        .fold(1.0, f64::max);
    let step = nice_step(p999 * 1.5, 60.0);
    let nbins = ((p999 * 1.5) / step).ceil().max(1.0) as usize + 1;
    let xmax = step * nbins as f64;
    let counts: Vec<Vec<u64>> = series
        .iter()
        .map(|s| {
            (0..nbins)
                .map(|b| {
                    let lo = (b as f64 * step * 1e3) as u64;
                    if b + 1 == nbins {
                        s.hist.len() - s.hist.count_between(0, lo.saturating_sub(1))
                    } else {
                        let hi = ((b + 1) as f64 * step * 1e3) as u64;
                        s.hist.count_between(lo, hi.saturating_sub(1))
                    }
                })
                .collect()
        })
        .collect();
    let maxc = counts.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
    let decades = maxc.log10().ceil().max(1.0);
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let x = |us: f64| LEFT + us / xmax * pw;
    // log10(count) on y; zero counts sit on the axis.
    let y = |c: u64| {
        let v = if c == 0 {
            0.0
        } else {
            (c as f64).log10() + 0.3
        };
        TOP + ph - v / (decades + 0.3) * ph
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="30" text-anchor="middle" font-size="17">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    // Axes, grid and ticks.
    let _ = writeln!(
        s,
        r#"<path d="M{LEFT},{TOP} V{} H{}" stroke="black" fill="none"/>"#,
        TOP + ph,
        LEFT + pw
    );
    for d in 0..=decades as u32 {
        let c = 10u64.pow(d);
        let yy = y(c);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{c}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            yy + 4.0
        );
    }
    let xticks = 10;
    let xstep = nice_step(xmax, xticks as f64);
    let mut t = 0.0;
    while t <= xmax + 1e-9 {
        let xx = x(t);
        let _ = writeln!(
            s,
            r#"<line x1="{xx:.1}" x2="{xx:.1}" y1="{}" y2="{}" stroke="black"/><text x="{xx:.1}" y="{}" text-anchor="middle">{}</text>"#,
            TOP + ph,
            TOP + ph + 5.0,
            TOP + ph + 20.0,
            if (t - xmax).abs() < 1e-9 {
                format!("≥{t}")
            } else {
                format!("{t}")
            }
        );
        t += xstep;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">wakeup latency (µs), bins of {step} µs</text>"#,
        LEFT + pw / 2.0,
        H - 20.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(20,{}) rotate(-90)" text-anchor="middle">samples per bin (log scale)</text>"#,
        TOP + ph / 2.0
    );
    // One step line per series.
    for (i, (ser, c)) in series.iter().zip(&counts).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut d = format!("M{:.1},{:.1}", x(0.0), y(0));
        for (b, &n) in c.iter().enumerate() {
            let (x0, x1) = (x(b as f64 * step), x((b + 1) as f64 * step).min(LEFT + pw));
            let _ = write!(d, " L{x0:.1},{:.1} L{x1:.1},{:.1}", y(n), y(n));
        }
        let _ = write!(d, " L{:.1},{:.1}", LEFT + pw, y(0));
        let _ = writeln!(
            s,
            r#"<path d="{d}" stroke="{color}" stroke-width="1.6" fill="{color}" fill-opacity="0.12"/>"#
        );
        let ly = TOP + 10.0 + i as f64 * 20.0;
        let lx = LEFT + pw - 260.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="14" height="10" fill="{color}"/><text x="{}" y="{:.1}">{} ({} samples)</text>"#,
            ly - 9.0,
            lx + 20.0,
            ly,
            esc(ser.label),
            ser.hist.len()
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_has_title_axes_legend_and_one_line_per_run() {
        let mut a = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
        let mut b = a.clone();
        for v in [3_000, 4_000, 4_000, 60_000] {
            a.record(v).unwrap();
        }
        for v in [5_000, 120_000] {
            b.record(v).unwrap();
        }
        let svg = render(
            "Timer latency on CPU 1",
            &[
                Series {
                    label: "alone",
                    hist: &a,
                },
                Series {
                    label: "with <agent>",
                    hist: &b,
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("Timer latency on CPU 1"));
        assert!(svg.contains("wakeup latency (µs)") && svg.contains("log scale"));
        assert!(
            svg.contains("alone (4 samples)") && svg.contains("with &lt;agent&gt; (2 samples)")
        );
        assert_eq!(svg.matches("fill-opacity").count(), 2);
    }

    #[test]
    fn round_bin_widths() {
        assert_eq!(nice_step(100.0, 10.0), 10.0);
        assert_eq!(nice_step(130.0, 10.0), 20.0);
        assert_eq!(nice_step(7.0, 10.0), 1.0);
    }
}
