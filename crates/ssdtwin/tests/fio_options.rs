//! fio's whole option table: every option the installed fio lists
//! (`fio --cmdhelp=all`) is classified by the twin's table, and
//! docs/fio-options.md is the table's own listing. Skipped, with a
//! message, only when fio is not installed (the test command installs it).

use std::process::Command;

use ssdtwin::run::workload::fio::table::{self, Class};

/// The option names `fio --cmdhelp=all` prints (`name : help`, children
/// indented), or `None` without fio.
fn fio_cmdhelp() -> Option<(String, Vec<String>)> {
    let out = Command::new("fio").arg("--cmdhelp=all").output().ok()?;
    assert!(out.status.success(), "fio --cmdhelp=all failed: {}", String::from_utf8_lossy(&out.stderr));
    let version = Command::new("fio").arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let names = text
        .lines()
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()))
        .filter(|n| !n.is_empty())
        .collect();
    Some((String::from_utf8_lossy(&version.stdout).trim().to_string(), names))
}

#[test]
fn every_option_of_the_installed_fio_is_classified() {
    let Some((version, names)) = fio_cmdhelp() else {
        eprintln!("skipped: fio is not installed (apt-get install fio; scripts/test-setup.sh installs it)");
        return;
    };
    assert!(names.len() > 150, "{version} lists only {} options", names.len());
    let missing: Vec<&String> = names.iter().filter(|n| table::lookup(n).is_none()).collect();
    assert!(missing.is_empty(), "{version}'s options missing from the twin's table: {missing:?}");
    // fio's own options are fio's, never ssdtwin's.
    let own: Vec<&String> =
        names.iter().filter(|n| matches!(table::lookup(n).map(|d| d.class), Some(Class::Twin(_)))).collect();
    assert!(own.is_empty(), "fio's options classified as ssdtwin's own: {own:?}");
}

#[test]
fn the_docs_page_is_the_tables_listing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fio-options.md");
    let want = table::markdown();
    if std::env::var_os("SSDTWIN_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/fio-options.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/fio-options.md is not the table's listing: regenerate it with `ssdtwin fio-options --markdown > docs/fio-options.md` (or SSDTWIN_BLESS=1 cargo test -p ssdtwin --test fio_options)"
    );
}
