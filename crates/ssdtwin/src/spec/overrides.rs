//! `--set path.to.field=value` overrides on a drive file.
//!
//! The value is read as a TOML value (`8`, `0.9`, `true`, `[1, 2]`,
//! `"greedy"`); a bare word that is not valid TOML is taken as a string, so
//! `--set ftl.gc_policy=fifo` works without quotes. The path must name an
//! existing table; a field that the drive format does not know is rejected
//! when the result is deserialised.

use crate::error::SpecError;

/// Apply one `path=value` override to a parsed drive file.
pub fn apply_override(table: &mut toml::Table, text: &str) -> Result<(), SpecError> {
    let err = |reason: &str| SpecError::Override { text: text.to_string(), reason: reason.to_string() };
    let (path, raw) = text.split_once('=').ok_or_else(|| err("expected path.to.field=value"))?;
    let path = path.trim();
    let raw = raw.trim();
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(err("empty field name in the path"));
    }
    let value = parse_value(raw);
    let mut keys: Vec<&str> = path.split('.').collect();
    let last = keys.pop().expect("split yields at least one part");
    let mut cur = table;
    for (i, k) in keys.iter().enumerate() {
        let entry = cur.entry(k.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(err(&format!("`{}` is a value, not a table", keys[..=i].join(".")))),
        };
    }
    cur.insert(last.to_string(), value);
    Ok(())
}

fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("key v was just parsed"),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_values_and_bare_words() {
        let mut t: toml::Table = "[a]\nb = 1\n".parse().unwrap();
        apply_override(&mut t, "a.b=7").unwrap();
        apply_override(&mut t, "a.c=fifo").unwrap();
        assert_eq!(t["a"]["b"].as_integer(), Some(7));
        assert_eq!(t["a"]["c"].as_str(), Some("fifo"));
        assert!(apply_override(&mut t, "a.b.c=1").is_err());
        assert!(apply_override(&mut t, "nothing").is_err());
        assert!(apply_override(&mut t, "a..b=1").is_err());
    }
}
