//! Drive specification: the TOML file that describes a drive.
//!
//! A drive file is parsed in two stages (as ripgrep does with its flags):
//! first serde reads exactly what the user wrote into [`DriveSpec`]
//! (`deny_unknown_fields`, so a misspelt field is an error, not a silent
//! default), then [`DriveSpec::build`] validates it and derives the model
//! the simulator runs ([`crate::DriveModel`]). Every error names the field
//! and says what is wrong with it. The types of both stages are the
//! model's ([`crate::model::params`], re-exported here); this module reads
//! and checks them.
//!
//! Units are part of each field's name (`_ns`, `_bytes`, `_mts`), as in
//! MQSim's parameter files. Fields that the physical drive does not
//! publish are calibration choices; presets say where each value comes
//! from in comments beside it.

mod fdp;
mod hybrid;
pub mod mapcache;
mod media;
mod overrides;
mod presets;
mod validate;
mod zns;

pub use crate::model::params::{BadBlockSpec, EccSpec, RberSpec};
pub use crate::model::params::{
    BufferRelease, CellTimingSpec, ControllerSpec, DriveSpec, DynamicWearLeveling, FtlSpec, GcMode, GcPolicy,
    GeometrySpec, HostSpec, HybridLayout, HybridSpec, Interface, LogAssociation, MappingScheme, MergePolicy, NandSpec,
    OpOrder, PowerSpec, PowerStateSpec, SlcCacheSpec, SlcWritePolicy, ThermalSpec, WearLevelingSpec, WriteCachePolicy,
};
pub use crate::model::params::{DriveModel, HybridModel, SlcModel, WearLevelingModel, ZnsModel, ZnsSpec};
pub use crate::model::params::{FdpIsolation, FdpModel, FdpSpec};
pub use overrides::apply_override;
pub use presets::{preset_names, preset_source, PRESETS};

use crate::error::SpecError;

/// Merge `top` over `base`, recursing into tables.
fn merge_tables(base: &mut toml::Table, top: toml::Table) {
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge_tables(b, t),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

impl DriveSpec {
    /// Parse a drive file. `origin` names it in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<DriveSpec, SpecError> {
        Self::from_toml_with_overrides(text, origin, &[])
    }

    /// Parse a drive file and apply `path=value` overrides before
    /// validation. A file may start from another preset with
    /// `base = "NAME"`: its tables are merged over the base's, field by
    /// field (so a capacity variant states only what differs).
    pub fn from_toml_with_overrides(text: &str, origin: &str, overrides: &[String]) -> Result<DriveSpec, SpecError> {
        let parse_err = |e: toml::de::Error| SpecError::Parse { origin: origin.to_string(), message: e.to_string() };
        let mut table: toml::Table = text.parse().map_err(parse_err)?;
        if overrides.is_empty() && !table.contains_key("base") {
            // Straight from the text, so that errors carry line numbers.
            return toml::from_str(text).map_err(parse_err);
        }
        if let Some(base) = table.remove("base") {
            let name = base.as_str().ok_or_else(|| SpecError::Invalid {
                origin: origin.to_string(),
                field: "base".into(),
                reason: "must be the name of a preset".into(),
            })?;
            let src = preset_source(name).ok_or_else(|| SpecError::Invalid {
                origin: origin.to_string(),
                field: "base".into(),
                reason: format!("no preset named `{name}` (presets: {})", preset_names().join(", ")),
            })?;
            let mut merged: toml::Table = src
                .parse()
                .map_err(|e: toml::de::Error| SpecError::Parse { origin: name.to_string(), message: e.to_string() })?;
            merged.remove("base");
            merge_tables(&mut merged, table);
            table = merged;
        }
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let origin = if overrides.is_empty() {
            origin.to_string()
        } else {
            format!("{origin} (after --set {})", overrides.join(", --set "))
        };
        table.try_into().map_err(|e: toml::de::Error| SpecError::Parse { origin, message: e.to_string() })
    }

    /// Load a preset by name, or a drive file by path, with overrides.
    pub fn load(name_or_path: &str, overrides: &[String]) -> Result<DriveSpec, SpecError> {
        if let Some(src) = preset_source(name_or_path) {
            return Self::from_toml_with_overrides(src, name_or_path, overrides);
        }
        let path = std::path::Path::new(name_or_path);
        if path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SpecError::Io { origin: name_or_path.to_string(), message: e.to_string() })?;
            return Self::from_toml_with_overrides(&text, name_or_path, overrides);
        }
        Err(SpecError::UnknownDrive { name: name_or_path.to_string(), known: preset_names().join(", ") })
    }

    /// Serialise back to TOML (the resolved spec, with overrides applied).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a DriveSpec always serialises")
    }
}
