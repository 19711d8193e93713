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

impl Align {
    /// Whether cell `c` lines up right.
    fn right(self, c: &str) -> bool {
        match self {
            Align::Right => true,
            Align::Left => false,
            Align::ByCell => c.parse::<f64>().is_ok() || c == "-",
        }
    }
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

    /// Whole numbers (pids, counts) as integers.
    pub fn json(&self) -> Value {
        match self {
            Cell::Text(t) => json!(t),
            Cell::Num(Some(n)) if n.fract() == 0.0 && n.abs() < 9e15 => json!(*n as i64),
            Cell::Num(n) => json!(n),
        }
    }
}

/// A text table built cell by cell into one buffer, row after row: no
/// allocation per cell, for tables of tens of thousands of rows (`ps`).
#[derive(Debug)]
pub struct Aligned {
    columns: Vec<&'static str>,
    align: Vec<Align>,
    /// Every cell's text, shown as the table writes it, one after another.
    text: String,
    /// Per cell: where its text ends, its width in characters, and whether
    /// it lines up right.
    cells: Vec<(u32, u32, bool)>,
    widths: Vec<usize>,
}

impl Aligned {
    /// Columns `columns`, aligned as `align` says (`ByCell` where it says
    /// nothing).
    pub fn new(columns: &[&'static str], align: &[Align]) -> Aligned {
        Aligned {
            columns: columns.to_vec(),
            align: (0..columns.len())
                .map(|i| align.get(i).copied().unwrap_or(Align::ByCell))
                .collect(),
            text: String::new(),
            cells: Vec::new(),
            widths: columns.iter().map(|c| c.chars().count()).collect(),
        }
    }

    /// The next cell, as shown: text already escaped, `-` for a missing
    /// number. Cells fill rows left to right.
    pub fn push(&mut self, shown: &str) {
        self.push_with(|t| t.push_str(shown));
    }

    /// The next cell, written by `write` into the table's buffer (numbers
    /// formatted in place).
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        let start = self.text.len();
        write(&mut self.text);
        let c = &self.text[start..];
        let n = if c.is_ascii() {
            c.len()
        } else {
            c.chars().count()
        };
        let col = self.cells.len() % self.columns.len().max(1);
        let right = self.align[col].right(c);
        self.widths[col] = self.widths[col].max(n);
        self.cells.push((self.text.len() as u32, n as u32, right));
    }

    /// Writes the header then one line per row, each ending in a newline
    /// (see [`Aligned::each_line`]).
    pub fn write(&self, sep: &str, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut r = Ok(());
        self.each_line(sep, |l| {
            if r.is_ok() {
                r = out
                    .write_all(l.as_bytes())
                    .and_then(|()| out.write_all(b"\n"));
            }
        });
        r
    }

    /// The header then one line per row, columns `sep` apart, padded to
    /// the widest cell (the last column unpadded), without trailing blanks.
    pub fn each_line(&self, sep: &str, mut f: impl FnMut(&str)) {
        let n = self.columns.len();
        if n == 0 {
            return;
        }
        let mut l = String::with_capacity(self.widths.iter().sum::<usize>() + sep.len() * n);
        for (i, c) in self.columns.iter().enumerate() {
            let right = self.align[i].right(c);
            self.cell(&mut l, sep, i, c, c.chars().count(), right);
        }
        f(l.trim_end());
        let mut start = 0;
        for row in self.cells.chunks(n) {
            l.clear();
            for (i, &(end, width, right)) in row.iter().enumerate() {
                let c = &self.text[start..end as usize];
                start = end as usize;
                self.cell(&mut l, sep, i, c, width as usize, right);
            }
            f(l.trim_end());
        }
    }

    /// Cell `c` of column `i`, `n` characters wide, onto line `l`.
    fn cell(&self, l: &mut String, sep: &str, i: usize, c: &str, n: usize, right: bool) {
        if i > 0 {
            l.push_str(sep);
        }
        let pad = self.widths[i].saturating_sub(n);
        if right {
            l.extend(std::iter::repeat_n(' ', pad));
            l.push_str(c);
        } else {
            l.push_str(c);
            if i + 1 < self.columns.len() {
                l.extend(std::iter::repeat_n(' ', pad));
            }
        }
    }
}

/// One CSV line onto `out`: each cell as shown (`None`: a missing number,
/// left empty), quoted where it must be.
pub fn csv_row<'a>(cells: impl IntoIterator<Item = Option<&'a str>>, out: &mut String) {
    for (i, c) in cells.into_iter().enumerate() {
        csv_cell(i == 0, c, out);
    }
    out.push('\n');
}

/// One CSV cell onto `out`, after a comma unless it is the line's `first`
/// (see [`csv_row`]).
pub fn csv_cell(first: bool, cell: Option<&str>, out: &mut String) {
    if !first {
        out.push(',');
    }
    if let Some(c) = cell {
        out.push_str(&model::text::csv_field(c));
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
        let mut a = Aligned::new(&self.columns, &self.align);
        for r in &self.rows {
            for c in r {
                a.push(&c.shown_cow());
            }
            // A short row ends blank, as it would be written.
            for _ in r.len()..self.columns.len() {
                a.push("");
            }
        }
        let mut out = Vec::with_capacity(self.rows.len() + 1);
        a.each_line(sep, |l| out.push(l.to_string()));
        out
    }

    /// The header line and one line per row.
    pub fn csv(&self, out: &mut String) {
        csv_row(self.columns.iter().map(|c| Some(*c)), out);
        for r in &self.rows {
            let shown: Vec<Option<String>> = r
                .iter()
                .map(|c| match c {
                    Cell::Num(None) => None,
                    c => Some(c.shown()),
                })
                .collect();
            csv_row(shown.iter().map(Option::as_deref), out);
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
    fn cells_written_in_place_give_the_lines_of_the_table() {
        let mut a = Aligned::new(&["pid", "comm", "rss"], &[Align::Right, Align::Left]);
        for (pid, comm, rss) in [(1, "init", "-"), (4242, "naïve x", "12")] {
            a.push_with(|s| s.push_str(&pid.to_string()));
            a.push(comm);
            a.push(rss);
        }
        let mut out = Vec::new();
        a.write(" ", &mut out).unwrap();
        // Widths in characters; the last column (by cell) right.
        assert_eq!(
            String::from_utf8(out).unwrap(),
            " pid comm    rss\n   1 init      -\n4242 naïve x  12\n"
        );
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
