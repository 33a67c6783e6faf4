//! Drive presets shipped inside the binary.
//!
//! Each preset is a TOML drive file under `crates/ssdtwin/presets/`, with
//! comments saying where each value comes from. `ssdtwin presets` lists
//! them and `ssdtwin show NAME` prints one in full.

/// (name, TOML source) of every preset, sorted by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("generic-mlc-sata", include_str!("../../presets/generic-mlc-sata.toml")),
    ("generic-tlc-nvme", include_str!("../../presets/generic-tlc-nvme.toml")),
    ("intel-600p-512gb", include_str!("../../presets/intel-600p-512gb.toml")),
    ("intel-660p-1tb", include_str!("../../presets/intel-660p-1tb.toml")),
    ("intel-660p-2tb", include_str!("../../presets/intel-660p-2tb.toml")),
    ("intel-660p-512gb", include_str!("../../presets/intel-660p-512gb.toml")),
    ("intel-x25m-80gb", include_str!("../../presets/intel-x25m-80gb.toml")),
    ("ocz-core-64gb", include_str!("../../presets/ocz-core-64gb.toml")),
    ("ocz-slc-64gb", include_str!("../../presets/ocz-slc-64gb.toml")),
    ("samsung-pm9d3a-3.84tb", include_str!("../../presets/samsung-pm9d3a-3.84tb.toml")),
    ("smi-sm2260-mlc-512gb", include_str!("../../presets/smi-sm2260-mlc-512gb.toml")),
    ("toshiba-rc100-480gb", include_str!("../../presets/toshiba-rc100-480gb.toml")),
    ("wd-zn540", include_str!("../../presets/wd-zn540.toml")),
];

/// Names of all presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// TOML source of a preset.
pub fn preset_source(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}
