//! fio's whole option table, each option once: its name and aliases,
//! what kind of value it takes, fio's default, a line of help, and what
//! the twin makes of it ([`Class`]): fio's meaning, modelled
//! ([`Class::Fio`]); ssdtwin's own option ([`Class::Twin`]); an option
//! that only describes the host (I/O engine, CPU, files, memory, fio's
//! output), accepted and reported as ignored ([`Class::Host`]); or an
//! option that shapes the I/O in a way the twin cannot reproduce, refused
//! with the reason ([`Class::Refused`]) unless its value is fio's default
//! (then it changes nothing).
//!
//! The job parser, the error messages, `ssdtwin fio-options` and
//! docs/fio-options.md all read these entries. Names, aliases, kinds,
//! defaults and most help lines are fio's (`options.c`, `engines/*.c` and
//! `engines/cmdprio.h` of fio 3.42, commit f5344384, which includes every
//! option of the fio 3.33 the tests run; an option both in `options.c` and
//! an engine is listed once). Left out: fio's command-line program options
//! (`--output-format`, `--eta`, ...), which are not job options.

mod engines;
mod host;
mod modelled;
mod refused;

/// What the twin makes of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// fio's option with fio's meaning; the part of the parser that reads it.
    Fio(Reader),
    /// ssdtwin's own option (not fio's); the part of the parser that reads it.
    Twin(Reader),
    /// Describes the host only: accepted, has no effect, reported as ignored.
    Host,
    /// Shapes the I/O in a way the twin cannot give meaning to: an error
    /// with this reason, unless the value is fio's default.
    Refused(&'static str),
}

/// The part of the job parser that reads a modelled option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// `rw`, `rw_sequencer`, `random_distribution`.
    Pattern,
    /// Block sizes and alignment.
    Sizes,
    /// Rate limits and minimum rates.
    Rate,
    /// ssdtwin's idle, retention, age and secure-erase sections, APST, bursts.
    Section,
    /// The other I/O options (counts, limits, times, mixes).
    Io,
    /// Latency target, steady state, logs ([`super::jobctl`]).
    Control,
    /// `zonemode=zbd`'s options ([`super::zbd`]).
    Zoned,
    /// Data placement (FDP) options ([`super::placement`]).
    Placement,
    /// What a job does after an I/O error (`continue_on_error`,
    /// `ignore_error`: [`crate::run::io_errors`]).
    Errors,
    /// Flushes and FUA writes (`fsync`, `sync`, ...: [`super::sync`]).
    Sync,
    /// Verification of written data (`verify`, ...: [`super::verify`]).
    Verify,
    /// I/O priorities (`prio`, `prioclass`, `cmdprio*`: [`super::prio`]).
    Prio,
    /// Flow control between jobs (`flow`, `flow_id`, `flow_sleep`:
    /// [`super::flow`]).
    Flow,
    /// `sprandom`'s preconditioning ([`super::sprandom`]).
    Precondition,
    /// When a job runs and how it is reported (read by the job file parser).
    Schedule,
    /// A trace replay's options (a section with `trace=FILE`).
    Trace,
}

/// The kind of value an option takes (fio's option type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A switch: no value needed (`--time_based`); `=0` turns it off.
    Switch,
    /// 0 or 1.
    Bool,
    /// A whole number.
    Int,
    /// A size (`4k`, `16g`, `50%` where fio allows it).
    Size,
    /// A time (`60`, `500ms`).
    Time,
    /// A number or a list of numbers.
    Float,
    /// A word, a list or a string.
    Text,
    /// Deprecated in fio, which accepts and ignores it.
    Deprecated,
}

impl Kind {
    /// The kind's name in listings.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Switch => "switch",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Size => "size",
            Kind::Time => "time",
            Kind::Float => "float",
            Kind::Text => "text",
            Kind::Deprecated => "deprecated",
        }
    }
}

/// One option of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other spellings fio accepts.
    pub aliases: &'static [&'static str],
    /// What the twin makes of it.
    pub class: Class,
    /// Its kind of value.
    pub kind: Kind,
    /// fio's default as fio writes it (empty: none given).
    pub default: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// A fio option with fio's meaning.
const fn fio(
    name: &'static str,
    aliases: &'static [&'static str],
    reader: Reader,
    kind: Kind,
    default: &'static str,
    help: &'static str,
) -> OptionDef {
    OptionDef { name, aliases, class: Class::Fio(reader), kind, default, help }
}

/// ssdtwin's own option.
const fn twin(name: &'static str, reader: Reader, kind: Kind, help: &'static str) -> OptionDef {
    OptionDef { name, aliases: &[], class: Class::Twin(reader), kind, default: "", help }
}

/// A fio option that only describes the host.
const fn host(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    default: &'static str,
    help: &'static str,
) -> OptionDef {
    OptionDef { name, aliases, class: Class::Host, kind, default, help }
}

/// A fio option the twin refuses, with the reason.
const fn refused(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    default: &'static str,
    help: &'static str,
    reason: &'static str,
) -> OptionDef {
    OptionDef { name, aliases, class: Class::Refused(reason), kind, default, help }
}

/// The table, in parts: fio's modelled options, ssdtwin's own, the host's
/// (fio's `options.c`), the I/O engines' (all describe the host), and the
/// refused ones.
const PARTS: &[&[OptionDef]] = &[modelled::FIO, modelled::TWIN, host::HOST, engines::ENGINES, refused::REFUSED];

/// Every option of the table.
pub fn all() -> impl Iterator<Item = &'static OptionDef> {
    PARTS.iter().flat_map(|p| p.iter())
}

/// The option spelled `key` (its name or an alias).
pub fn lookup(key: &str) -> Option<&'static OptionDef> {
    all().find(|d| d.name == key || d.aliases.contains(&key))
}

/// fio's name of the option spelled `key`, or `key` if the table does not
/// know it.
pub fn canonical(key: &str) -> &str {
    lookup(key).map_or(key, |d| d.name)
}

impl OptionDef {
    /// Whether `value` is fio's default for the option, or (without a
    /// default) an explicit "off" (`0`), so that giving it changes nothing.
    pub fn is_inert(&self, value: &str) -> bool {
        let v = value.trim();
        if !self.default.is_empty() && v.eq_ignore_ascii_case(self.default) {
            return true;
        }
        if self.kind == Kind::Time && !self.default.is_empty() {
            // fio's times default to seconds: `1` and `1s` are the same.
            let t = |s: &str| super::values::parse_time(s, 1_000_000_000).ok();
            return t(v).is_some() && t(v) == t(self.default);
        }
        match self.kind {
            Kind::Switch | Kind::Bool | Kind::Int | Kind::Size | Kind::Time | Kind::Float => {
                self.default.parse::<f64>().unwrap_or(0.0) == 0.0 && v.parse::<f64>() == Ok(0.0)
                    || (self.kind == Kind::Bool && self.default.is_empty() && v == "false")
            }
            Kind::Text | Kind::Deprecated => false,
        }
    }

    /// The classification's name in listings.
    pub fn class_label(&self) -> &'static str {
        match self.class {
            Class::Fio(_) => "fio",
            Class::Twin(_) => "ssdtwin",
            Class::Host => "host",
            Class::Refused(_) => "refused",
        }
    }
}

/// The table as a Markdown page (docs/fio-options.md).
pub fn markdown() -> String {
    let count = |f: fn(&Class) -> bool| all().filter(|d| f(&d.class)).count();
    let mut out = String::from(
        "# fio's options in the twin\n\n\
         Every option of fio's table (fio 3.42's `options.c` and I/O engines), as\n\
         `ssdtwin run` and job files take it. Generated from the twin's option\n\
         table (`crates/ssdtwin/src/run/workload/fio/table/`) by `ssdtwin fio-options\n\
         --markdown`; a test keeps this page equal to it. What the classes mean is\n\
         on [workloads.md](workloads.md#fios-whole-option-table).\n\n",
    );
    out.push_str(&format!(
        "{} with fio's meaning (`fio`), {} of ssdtwin's own (`ssdtwin`), {} describing the host only \
         (`host`, accepted and listed as ignored), {} refused (`refused`, an error with the reason unless \
         the value is fio's default).\n\n",
        count(|c| matches!(c, Class::Fio(_))),
        count(|c| matches!(c, Class::Twin(_))),
        count(|c| matches!(c, Class::Host)),
        count(|c| matches!(c, Class::Refused(_))),
    ));
    out.push_str(
        "| option | aliases | class | value | default | help (and why refused) |\n|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<&OptionDef> = all().collect();
    rows.sort_by_key(|d| d.name);
    let cell = |s: &str| s.replace('|', "\\|");
    for d in rows {
        let mut help = cell(d.help);
        if let Class::Refused(why) = d.class {
            help = format!("{help} — **refused:** {}", cell(why));
        }
        let default = if d.default.is_empty() { String::new() } else { format!("`{}`", cell(d.default)) };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            d.name,
            d.aliases.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", "),
            d.class_label(),
            d.kind.label(),
            default,
            help
        ));
    }
    out
}

#[cfg(test)]
mod tests;
