//! Markdown tables and the numbers in them.

/// A Markdown table: a header row and rows of cells.
pub(crate) struct Table {
    /// The header cells.
    header: Vec<String>,
    /// Whether the columns after the first are right-aligned (numbers).
    numeric: bool,
    /// The rows.
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names, every column but the first right-aligned.
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|&h| h.to_owned()).collect(),
            numeric: true,
            rows: Vec::new(),
        }
    }

    /// A table of text, every column left-aligned.
    pub(crate) fn text(header: &[&str]) -> Self {
        Self {
            numeric: false,
            ..Self::new(header)
        }
    }

    /// Adds a row.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as Markdown, ending with a newline.
    pub(crate) fn render(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.header);
        let rule: Vec<String> = (0..self.header.len())
            .map(|i| if i > 0 && self.numeric { "---:" } else { "---" }.to_owned())
            .collect();
        out.push_str(&line(&rule));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// Milliseconds with three decimals, `-` when missing.
pub(crate) fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// A count with thousands separators (`12,345`).
pub(crate) fn count(n: impl Into<u128>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A non-negative rate with one decimal and thousands separators.
pub(crate) fn rate(value: f64) -> String {
    let tenths = (value.max(0.0) * 10.0).round() as u128;
    format!("{}.{}", count(tenths / 10), tenths % 10)
}

/// A number rounded to `places` decimals, for the JSON line.
pub(crate) fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_markdown() {
        let mut table = Table::new(&["a", "b"]);
        table.row(vec!["x".into(), "1".into()]);
        assert_eq!(table.render(), "| a | b |\n| --- | ---: |\n| x | 1 |\n");
        assert!(
            Table::text(&["a", "b"])
                .render()
                .ends_with("| --- | --- |\n")
        );
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(1_234_567u64), "1,234,567");
        assert_eq!(count(999u64), "999");
        assert_eq!(rate(36_927.46), "36,927.5");
        assert_eq!(rate(36_927.96), "36,928.0");
        assert_eq!(ms(None), "-");
        assert_eq!(ms(Some(0.1234)), "0.123");
    }
}
