//! The latency histogram as a PNG: the shapes [`crate::svg::layout`] places,
//! drawn into an RGB raster (lines, a faint fill under each step line,
//! rectangles, and text in an 8x8 bitmap font, doubled for titles) and
//! encoded by the `png` crate.

use crate::svg::{Anchor, FILL_OPACITY, Plot, Series, Shape, layout};
use sys::Error;

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

fn rgb(color: &str) -> [u8; 3] {
    let hex = color.trim_start_matches('#');
    let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    [byte(0), byte(2), byte(4)]
}

/// The glyph of `c`: 8 rows, bit 0 leftmost. Characters the font lacks
/// draw as '?'.
fn glyph(c: char) -> [u8; 8] {
    use font8x8::legacy::{BASIC_LEGACY, LATIN_LEGACY, MISC_LEGACY};
    let n = c as usize;
    match c {
        '\u{0}'..='\u{7f}' => BASIC_LEGACY[n],
        '\u{a0}'..='\u{ff}' => LATIN_LEGACY[n - 0xa0],
        '≥' => MISC_LEGACY[6],
        '≤' => MISC_LEGACY[5],
        _ => BASIC_LEGACY[b'?' as usize],
    }
}

impl Canvas {
    fn new(w: usize, h: usize) -> Canvas {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    fn blend(&mut self, x: i64, y: i64, c: [u8; 3], alpha: f64) {
        if x < 0 || y < 0 || x as usize >= self.w || y as usize >= self.h {
            return;
        }
        let i = (y as usize * self.w + x as usize) * 3;
        for (dst, &src) in self.px[i..i + 3].iter_mut().zip(&c) {
            let old = f64::from(*dst);
            *dst = (old + (f64::from(src) - old) * alpha).round() as u8;
        }
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, c: [u8; 3], alpha: f64) {
        let (x0, y0) = (x.round() as i64, y.round() as i64);
        let (x1, y1) = ((x + w).round() as i64, (y + h).round() as i64);
        for yy in y0.min(y1)..y0.max(y1) {
            for xx in x0..x1 {
                self.blend(xx, yy, c, alpha);
            }
        }
    }

    /// A polyline one pixel wide (`thick`: two), stepping along the longer
    /// axis of each segment.
    fn polyline(&mut self, points: &[(f64, f64)], c: [u8; 3], thick: bool) {
        for pair in points.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            let n = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i64;
            for i in 0..=n {
                let t = i as f64 / n as f64;
                let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
                let (xi, yi) = (x.round() as i64, y.round() as i64);
                self.blend(xi, yi, c, 1.0);
                if thick {
                    self.blend(xi + 1, yi, c, 1.0);
                    self.blend(xi, yi + 1, c, 1.0);
                }
            }
        }
    }

    fn text(&mut self, s: &Shape) {
        let Shape::Text {
            x,
            y,
            text,
            anchor,
            size,
            vertical,
        } = s
        else {
            return;
        };
        let chars = text.chars().count() as i64;
        // Doubled for titles, unless that would not fit the picture.
        let room = if *vertical { self.h } else { self.w } as i64 - 16;
        let scale: i64 = if *size >= 14.0 && chars * 16 <= room {
            2
        } else {
            1
        };
        let len = chars * 8 * scale;
        let shift = match anchor {
            Anchor::Start => 0,
            Anchor::Middle => len / 2,
            Anchor::End => len,
        };
        let (x, y) = (x.round() as i64, y.round() as i64);
        let black = [0, 0, 0];
        for (i, c) in text.chars().enumerate() {
            let g = glyph(c);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) == 0 {
                        continue;
                    }
                    for dy in 0..scale {
                        for dx in 0..scale {
                            // Along the text, and down from the top of the
                            // glyph (its baseline at y).
                            let along = i as i64 * 8 * scale + col * scale + dx - shift;
                            let down = row as i64 * scale + dy - 7 * scale;
                            if *vertical {
                                self.blend(x + down, y - along, black, 1.0);
                            } else {
                                self.blend(x + along, y + down, black, 1.0);
                            }
                        }
                    }
                }
            }
        }
    }

    fn draw(&mut self, plot: &Plot) {
        for s in &plot.shapes {
            match s {
                Shape::Rect { x, y, w, h, color } => self.rect(*x, *y, *w, *h, rgb(color), 1.0),
                Shape::Line { points, color } => self.polyline(points, rgb(color), false),
                Shape::Area {
                    points,
                    base,
                    color,
                } => {
                    let c = rgb(color);
                    // Each horizontal step is filled down to the base.
                    for pair in points.windows(2) {
                        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                        if (y0 - y1).abs() < 1e-9 && x1 > x0 {
                            self.rect(x0, y0, x1 - x0, base - y0, c, FILL_OPACITY);
                        }
                    }
                    self.polyline(points, c, true);
                }
                Shape::Text { .. } => self.text(s),
            }
        }
    }
}

/// The histogram as PNG bytes.
pub fn render(title: &str, series: &[Series<'_>]) -> Result<Vec<u8>, Error> {
    let plot = layout(title, series);
    let (w, h) = (plot.width as usize, plot.height as usize);
    let mut canvas = Canvas::new(w, h);
    canvas.draw(&plot);
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc
        .write_header()
        .map_err(|e| Error::other(format!("PNG header: {e}")))?;
    writer
        .write_image_data(&canvas.px)
        .map_err(|e| Error::other(format!("PNG data: {e}")))?;
    writer
        .finish()
        .map_err(|e| Error::other(format!("PNG end: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        (info.width, info.height, buf[..info.buffer_size()].to_vec())
    }

    #[test]
    fn a_readable_picture_with_both_runs() {
        let (a, b) = crate::svg::two_runs();
        let series = [
            Series {
                label: "alone",
                hist: &a,
            },
            Series {
                label: "with agent",
                hist: &b,
            },
        ];
        let bytes = render("Timer latency on CPU 1", &series).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let (w, h, px) = decode(&bytes);
        assert_eq!((w, h), (900, 520));
        let at = |x: usize, y: usize| {
            let i = (y * w as usize + x) * 3;
            [px[i], px[i + 1], px[i + 2]]
        };
        let count = |c: [u8; 3]| {
            (0..h as usize)
                .flat_map(|y| (0..w as usize).map(move |x| (x, y)))
                .filter(|&(x, y)| at(x, y) == c)
                .count()
        };
        // Both runs' colours (lines and legend swatches), black text and
        // axes, a white background.
        assert!(count(rgb("#1f77b4")) > 100);
        assert!(count(rgb("#d62728")) > 100);
        assert!(count([255, 255, 255]) > (w * h / 2) as usize);
        // The title: black pixels in its band, centred.
        let title_black = (12..32)
            .flat_map(|y| (300..600).map(move |x| (x, y)))
            .filter(|&(x, y)| at(x, y) == [0, 0, 0])
            .count();
        assert!(title_black > 300, "{title_black} title pixels");
        // The vertical axis title, left of the plot.
        let ylabel = (100..420)
            .flat_map(|y| (8..28).map(move |x| (x, y)))
            .filter(|&(x, y)| at(x, y) == [0, 0, 0])
            .count();
        assert!(ylabel > 200, "{ylabel} y-label pixels");
    }

    #[test]
    fn glyphs_cover_the_labels() {
        for c in "wakeup latency (µs), bins of 5 µs ≥120 samples per bin".chars() {
            let g = glyph(c);
            assert!(c == ' ' || g.iter().any(|&r| r != 0), "{c:?} has no glyph");
        }
    }
}
