//! Parses one fixture file repeatedly: a fixed workload for instruction counts
//! (`valgrind --tool=callgrind`) when comparing parser changes on a noisy box.
//! Usage: parse_loop TREE SOURCE ITERATIONS

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (tree, source, n) = match &args[1..] {
        [t, s, n] => (t.as_str(), s.as_str(), n.parse::<u32>().unwrap_or(10)),
        _ => {
            eprintln!("usage: parse_loop TREE SOURCE ITERATIONS");
            std::process::exit(2);
        }
    };
    let source = procfs::Source::from_name(source).unwrap_or_else(|| {
        eprintln!("unknown source; accepted: {}", procfs::Source::names());
        std::process::exit(2);
    });
    let (proc_root, _) = fixtures::roots(tree);
    let bytes = std::fs::read(proc_root.join(source.files()[0])).expect("fixture file");
    let mut sample = procfs::SystemSample::default();
    for _ in 0..n {
        sample
            .parse_source(source, std::hint::black_box(&bytes))
            .expect("parses");
    }
    println!("{} bytes x {n}", bytes.len());
}
