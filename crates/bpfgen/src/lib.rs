//! Build-script helper: reads a BPF record header (the one definition of a
//! layout shared by BPF C programs and Rust) and writes the Rust structs and
//! constants, with a size assertion per struct.

#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::{env, fs, path::Path};

/// What every generated struct derives (Default where it can).
const DERIVES: &str = "#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]\n";

fn rust_type(c: &str) -> Option<(&'static str, usize)> {
    Some(match c {
        "__u64" => ("u64", 8),
        "__s64" => ("i64", 8),
        "__u32" => ("u32", 4),
        "__s32" => ("i32", 4),
        "char" => ("u8", 1),
        _ => return None,
    })
}

fn strip_comment(line: &str) -> &str {
    match line.find("/*") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Generates `$OUT_DIR/<out_name>` from `header` (relative to the crate) and
/// tells cargo to rerun when the header changes. Panics, naming the line,
/// on anything outside the subset described in the header's own comment.
pub fn generate(header: &str, out_name: &str) {
    let header = Path::new(header);
    let hname = header
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("header");
    println!("cargo:rerun-if-changed={}", header.display());
    let text =
        fs::read_to_string(header).unwrap_or_else(|e| panic!("reading {}: {e}", header.display()));
    let mut out = format!(
        "// Generated from {} by bpfgen. Do not edit.\n\n",
        header.display()
    );
    let mut current: Option<(String, usize)> = None;
    // Where the struct being read has its derives, and whether it has an
    // array longer than Default is derived for.
    let (mut derive_at, mut long_array) = (0, false);
    let mut in_comment = false;
    for (n, raw) in text.lines().enumerate() {
        let mut line = raw.trim();
        if in_comment {
            if line.contains("*/") {
                in_comment = false;
            }
            continue;
        }
        if line.starts_with("/*") && !line.contains("*/") {
            in_comment = true;
            continue;
        }
        line = strip_comment(line).trim();
        if line.is_empty() || line.starts_with("#ifndef") || line.starts_with("#endif") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("#define ") {
            let mut parts = rest.split_whitespace();
            let (Some(name), value) = (parts.next(), parts.next()) else {
                continue;
            };
            if let Some(value) = value {
                // An unsigned suffix (`ULL`) is C's, not the number's.
                let value: u64 = value
                    .trim_end_matches(['U', 'L'])
                    .parse()
                    .unwrap_or_else(|_| panic!("{hname}:{}: {value} is not a number", n + 1));
                writeln!(out, "pub const {name}: u64 = {value};").unwrap();
            }
            continue;
        }
        if let Some(name) = line
            .strip_prefix("struct ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            let rust = name
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect::<String>();
            writeln!(out, "\n/// `struct {name}` of {}.", header.display()).unwrap();
            out.push_str("#[repr(C)]\n");
            derive_at = out.len();
            out.push_str(DERIVES);
            writeln!(out, "pub struct {rust} {{").unwrap();
            current = Some((rust, 0));
            continue;
        }
        if line == "};" {
            let (rust, size) = current.take().expect("}; outside a struct");
            out.push_str("}\n");
            // The standard library's Default stops at arrays of 32.
            if std::mem::take(&mut long_array) {
                out.replace_range(
                    derive_at..derive_at + DERIVES.len(),
                    &DERIVES.replace("Default, ", ""),
                );
            }
            writeln!(
                out,
                "const _: () = assert!(core::mem::size_of::<{rust}>() == {size});"
            )
            .unwrap();
            continue;
        }
        let Some((_, offset)) = current.as_mut() else {
            panic!("{hname}:{}: unexpected line: {raw}", n + 1);
        };
        let decl = line
            .strip_suffix(';')
            .unwrap_or_else(|| panic!("{hname}:{}: no ';'", n + 1));
        let (ctype, name) = decl.split_once(char::is_whitespace).expect("type and name");
        let (ty, size) =
            rust_type(ctype).unwrap_or_else(|| panic!("{hname}:{}: type {ctype}", n + 1));
        let name = name.trim();
        match name.split_once('[') {
            Some((name, len)) => {
                let len: usize = len.trim_end_matches(']').parse().expect("array length");
                long_array |= len > 32;
                assert!(
                    *offset % size == 0,
                    "{hname}:{}: {name} is not aligned",
                    n + 1
                );
                writeln!(out, "    pub {name}: [{ty}; {len}],").unwrap();
                *offset += size * len;
            }
            None => {
                assert!(
                    *offset % size == 0,
                    "{hname}:{}: {name} is not aligned",
                    n + 1
                );
                writeln!(out, "    pub {name}: {ty},").unwrap();
                *offset += size;
            }
        }
    }
    let dest = Path::new(&env::var("OUT_DIR").unwrap()).join(out_name);
    fs::write(dest, out).unwrap_or_else(|e| panic!("writing {out_name}: {e}"));
}
