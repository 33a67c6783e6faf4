//! Drive files (TOML, `base`, validation into a model) and suite files
//! (TOML, tests, steps, sweeps and scores) from mutated presets and
//! shipped suites.

use ssdtwin::study::suite;
use ssdtwin::DriveSpec;

use super::engine::{fuzz, message};

fn read_dir(dir: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")).map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn drive_files() {
    let mut corpus = read_dir("presets");
    corpus.push(b"base = \"intel-660p-1tb\"\nname = \"x\"\n[controller]\ndram_bytes = 134_217_728\n".to_vec());
    let runs = fuzz("drives", &corpus, |input| {
        let text = String::from_utf8_lossy(input);
        match DriveSpec::from_toml(&text, "fuzz.toml") {
            Ok(spec) => {
                if let Err(e) = spec.build("fuzz.toml") {
                    message(&e);
                }
            }
            Err(e) => {
                let m = message(&e);
                assert!(m.contains("fuzz.toml"), "an error names the file: {m}");
            }
        }
    });
    assert!(runs > 20, "{runs}");
}

#[test]
fn suite_files() {
    let runs = fuzz("suites", &read_dir("suites"), |input| {
        let text = String::from_utf8_lossy(input);
        if let Err(e) = suite::parse(&text, "fuzz-suite.toml") {
            let m = message(&e);
            assert!(m.contains("fuzz-suite.toml"), "an error names the file: {m}");
        }
    });
    assert!(runs > 20, "{runs}");
}
