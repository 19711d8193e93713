//! A latency histogram for a person to read: title, axes with units, a
//! legend, counts on a log scale, one step line per run. [`layout`] places
//! the shapes once; [`render`] writes them as SVG and [`crate::png`] draws
//! them into a PNG.

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

/// Where text is anchored at its x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

/// What the picture is made of, drawn by [`render`] (SVG) and
/// [`crate::png::render`] alike.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        color: &'static str,
    },
    Line {
        points: Vec<(f64, f64)>,
        color: &'static str,
    },
    /// A step line, filled faintly down to `base`.
    Area {
        points: Vec<(f64, f64)>,
        base: f64,
        color: &'static str,
    },
    /// `y` is the baseline; `vertical` text reads bottom to top.
    Text {
        x: f64,
        y: f64,
        text: String,
        anchor: Anchor,
        size: f64,
        vertical: bool,
    },
}

/// The picture: `W` x `H` and its shapes, in drawing order.
pub struct Plot {
    pub width: f64,
    pub height: f64,
    pub shapes: Vec<Shape>,
}

pub const FILL_OPACITY: f64 = 0.12;

/// Lays out every series over the same bins. Latencies beyond the x range
/// (the largest p99.9 times 1.5) are counted in the last bin, labelled so.
pub fn layout(title: &str, series: &[Series<'_>]) -> Plot {
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
    let text = |x: f64, y: f64, t: String, anchor: Anchor, size: f64| Shape::Text {
        x,
        y,
        text: t,
        anchor,
        size,
        vertical: false,
    };
    let mut shapes = vec![
        Shape::Rect {
            x: 0.0,
            y: 0.0,
            w: W,
            h: H,
            color: "#ffffff",
        },
        text(W / 2.0, 30.0, title.to_string(), Anchor::Middle, 17.0),
    ];
    // Grid and y ticks, then the axes over them.
    for d in 0..=decades as u32 {
        let c = 10u64.pow(d);
        let yy = y(c);
        shapes.push(Shape::Line {
            points: vec![(LEFT, yy), (LEFT + pw, yy)],
            color: "#dddddd",
        });
        shapes.push(text(LEFT - 6.0, yy + 4.0, c.to_string(), Anchor::End, 13.0));
    }
    shapes.push(Shape::Line {
        points: vec![(LEFT, TOP), (LEFT, TOP + ph), (LEFT + pw, TOP + ph)],
        color: "#000000",
    });
    let xstep = nice_step(xmax, 10.0);
    let mut t = 0.0;
    while t <= xmax + 1e-9 {
        let xx = x(t);
        shapes.push(Shape::Line {
            points: vec![(xx, TOP + ph), (xx, TOP + ph + 5.0)],
            color: "#000000",
        });
        let label = if (t - xmax).abs() < 1e-9 {
            format!("≥{t}")
        } else {
            format!("{t}")
        };
        shapes.push(text(xx, TOP + ph + 20.0, label, Anchor::Middle, 13.0));
        t += xstep;
    }
    shapes.push(text(
        LEFT + pw / 2.0,
        H - 20.0,
        format!("wakeup latency (µs), bins of {step} µs"),
        Anchor::Middle,
        14.0,
    ));
    shapes.push(Shape::Text {
        x: 20.0,
        y: TOP + ph / 2.0,
        text: "samples per bin (log scale)".into(),
        anchor: Anchor::Middle,
        size: 14.0,
        vertical: true,
    });
    // One step line per series, and its legend entry.
    for (i, (ser, c)) in series.iter().zip(&counts).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut points = vec![(x(0.0), y(0))];
        for (b, &n) in c.iter().enumerate() {
            let (x0, x1) = (x(b as f64 * step), x((b + 1) as f64 * step).min(LEFT + pw));
            points.push((x0, y(n)));
            points.push((x1, y(n)));
        }
        points.push((LEFT + pw, y(0)));
        shapes.push(Shape::Area {
            points,
            base: y(0),
            color,
        });
        let ly = TOP + 10.0 + i as f64 * 20.0;
        let lx = LEFT + pw - 260.0;
        shapes.push(Shape::Rect {
            x: lx,
            y: ly - 9.0,
            w: 14.0,
            h: 10.0,
            color,
        });
        shapes.push(text(
            lx + 20.0,
            ly,
            format!("{} ({} samples)", ser.label, ser.hist.len()),
            Anchor::Start,
            13.0,
        ));
    }
    Plot {
        width: W,
        height: H,
        shapes,
    }
}

/// The histogram as SVG.
pub fn render(title: &str, series: &[Series<'_>]) -> String {
    let plot = layout(title, series);
    let (w, h) = (plot.width, plot.height);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="13">"#
    );
    let path = |points: &[(f64, f64)]| {
        let mut d = String::new();
        for (i, (x, y)) in points.iter().enumerate() {
            let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { " L" });
        }
        d
    };
    for shape in &plot.shapes {
        let _ = match shape {
            Shape::Rect { x, y, w, h, color } => writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w}" height="{h}" fill="{color}"/>"#
            ),
            Shape::Line { points, color } => writeln!(
                s,
                r#"<path d="{}" stroke="{color}" fill="none"/>"#,
                path(points)
            ),
            Shape::Area { points, color, .. } => writeln!(
                s,
                r#"<path d="{}" stroke="{color}" stroke-width="1.6" fill="{color}" fill-opacity="{FILL_OPACITY}"/>"#,
                path(points)
            ),
            Shape::Text {
                x,
                y,
                text,
                anchor,
                size,
                vertical,
            } => {
                let anchor = match anchor {
                    Anchor::Start => "start",
                    Anchor::Middle => "middle",
                    Anchor::End => "end",
                };
                let place = if *vertical {
                    format!(r#"transform="translate({x:.1},{y:.1}) rotate(-90)""#)
                } else {
                    format!(r#"x="{x:.1}" y="{y:.1}""#)
                };
                writeln!(
                    s,
                    r#"<text {place} text-anchor="{anchor}" font-size="{size}">{}</text>"#,
                    esc(text)
                )
            }
        };
    }
    s.push_str("</svg>\n");
    s
}

/// Two small runs for the pictures' tests: 4 samples (3-60 us) and 2
/// (5 and 120 us).
#[cfg(test)]
pub(crate) fn two_runs() -> (Histogram<u64>, Histogram<u64>) {
    let mut a = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
    let mut b = a.clone();
    for v in [3_000, 4_000, 4_000, 60_000] {
        a.record(v).unwrap();
    }
    for v in [5_000, 120_000] {
        b.record(v).unwrap();
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_has_title_axes_legend_and_one_line_per_run() {
        let (a, b) = two_runs();
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
