//! The table writer `report`, `ps`, `stat` and `bench` share: rows of cells
//! as an aligned text table, CSV or JSON objects. A text cell is written with
//! control characters escaped (`model::text::printable`); a missing number
//! is `-` in a table, empty in CSV and `null` in JSON.

use serde_json::{Value, json};

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Num(Option<f64>),
}

pub fn num(v: Option<f64>) -> Cell {
    Cell::Num(v)
}

pub fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

/// How a column's cells line up in a text table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    /// Numbers (and `-`) right, text left.
    ByCell,
}

impl Cell {
    /// As a text table shows it: whole numbers without decimals, others
    /// with two.
    pub fn shown(&self) -> String {
        self.shown_cow().into_owned()
    }

    /// The same, borrowed where the text needs no escaping.
    fn shown_cow(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Cell::Text(s) => model::text::printable(s),
            Cell::Num(None) => "-".into(),
            Cell::Num(Some(v)) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}").into(),
            Cell::Num(Some(v)) => format!("{v:.2}").into(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Num(None) => String::new(),
            c => model::text::csv_field(&c.shown()).into_owned(),
        }
    }

    /// Whole numbers (pids, counts) as integers.
    pub fn json(&self) -> Value {
        match self {
            Cell::Text(t) => json!(t),
            Cell::Num(Some(n)) if n.fract() == 0.0 && n.abs() < 9e15 => json!(*n as i64),
            Cell::Num(n) => json!(n),
        }
    }
}

/// Named columns and rows of cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<&'static str>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Columns aligned cell by cell.
    pub fn new(columns: Vec<&'static str>) -> Table {
        let align = vec![Align::ByCell; columns.len()];
        Table {
            columns,
            align,
            rows: Vec::new(),
        }
    }

    /// Cells the caller wrote as text (figures with their own precision
    /// and units): the first column aligned as `first`, the others right.
    pub fn texts(columns: Vec<&'static str>, first: Align, rows: Vec<Vec<String>>) -> Table {
        let align = (0..columns.len())
            .map(|i| if i == 0 { first } else { Align::Right })
            .collect();
        Table {
            columns,
            align,
            rows: rows
                .into_iter()
                .map(|r| r.into_iter().map(Cell::Text).collect())
                .collect(),
        }
    }

    /// The header then one line per row, columns `sep` apart, padded to
    /// the widest cell (the last column unpadded), without trailing blanks.
    pub fn lines(&self, sep: &str) -> Vec<String> {
        // Each cell shown once, with its width in characters.
        fn shown(c: std::borrow::Cow<'_, str>) -> (std::borrow::Cow<'_, str>, usize) {
            let n = c.chars().count();
            (c, n)
        }
        let head: Vec<_> = self
            .columns
            .iter()
            .map(|c| shown(std::borrow::Cow::Borrowed(*c)))
            .collect();
        let cells: Vec<Vec<_>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| shown(c.shown_cow())).collect())
            .collect();
        let mut w: Vec<usize> = head.iter().map(|(_, n)| *n).collect();
        for r in &cells {
            for (i, (_, n)) in r.iter().enumerate() {
                w[i] = w[i].max(*n);
            }
        }
        let line = |r: &[(std::borrow::Cow<'_, str>, usize)]| {
            let mut l = String::with_capacity(w.iter().sum::<usize>() + sep.len() * r.len());
            for (i, (c, n)) in r.iter().enumerate() {
                if i > 0 {
                    l.push_str(sep);
                }
                let right = match self.align.get(i).copied().unwrap_or(Align::ByCell) {
                    Align::Right => true,
                    Align::Left => false,
                    Align::ByCell => c.parse::<f64>().is_ok() || c == "-",
                };
                let pad = w[i].saturating_sub(*n);
                if right {
                    l.extend(std::iter::repeat_n(' ', pad));
                    l.push_str(c);
                } else {
                    l.push_str(c);
                    if i + 1 < r.len() {
                        l.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
            l.truncate(l.trim_end().len());
            l
        };
        std::iter::once(line(&head))
            .chain(cells.iter().map(|r| line(r)))
            .collect()
    }

    /// The header line and one line per row.
    pub fn csv(&self, out: &mut String) {
        let head: Vec<String> = self
            .columns
            .iter()
            .map(|c| model::text::csv_field(c).into_owned())
            .collect();
        out.push_str(&head.join(","));
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(Cell::csv).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
    }

    /// One object per row, keyed by column.
    pub fn json_rows(&self) -> Vec<Value> {
        self.rows
            .iter()
            .map(|r| {
                let o: serde_json::Map<String, Value> = self
                    .columns
                    .iter()
                    .zip(r)
                    .map(|(c, v)| ((*c).to_string(), v.json()))
                    .collect();
                Value::Object(o)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Table {
        let mut t = Table::new(vec!["time", "name", "per_s"]);
        t.rows
            .push(vec![text("10:00:00"), text("eth0"), num(Some(1.5))]);
        t.rows
            .push(vec![text("10:01:00"), text("a,\"b\"\x1b"), num(None)]);
        t.rows
            .push(vec![text("10:02:00"), text("7"), num(Some(12.0))]);
        t
    }

    #[test]
    fn a_text_table_aligns_numbers_right_and_text_left() {
        assert_eq!(
            t().lines("  "),
            [
                "time      name       per_s",
                "10:00:00  eth0        1.50",
                "10:01:00  a,\"b\"\\x1b      -",
                "10:02:00          7     12",
            ]
        );
        let mut l = t();
        l.align = vec![Align::Left, Align::Left, Align::Right];
        assert_eq!(l.lines(" ")[3], "10:02:00 7            12");
    }

    #[test]
    fn csv_quotes_and_leaves_a_missing_number_empty() {
        let mut s = String::new();
        t().csv(&mut s);
        assert_eq!(
            s,
            "time,name,per_s\n10:00:00,eth0,1.50\n10:01:00,\"a,\"\"b\"\"\\x1b\",\n10:02:00,7,12\n"
        );
    }

    #[test]
    fn json_has_whole_numbers_as_integers_and_null_for_missing() {
        let rows = t().json_rows();
        assert_eq!(rows[0]["per_s"], json!(1.5));
        assert_eq!(rows[1]["per_s"], Value::Null);
        assert_eq!(rows[2]["per_s"], json!(12));
        assert_eq!(rows[1]["name"], json!("a,\"b\"\x1b"));
    }
}
