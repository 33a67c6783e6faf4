//! `--set path.to.field=value` overrides on a drive file.
//!
//! The value is read as a TOML value (`8`, `0.9`, `true`, `[1, 2]`,
//! `"greedy"`); a bare word that is not valid TOML is taken as a string, so
//! `--set ftl.gc_policy=fifo` works without quotes. An empty value
//! (`--set host.pcie_gen=`) removes the field, so that its default applies
//! (e.g. to switch `host.interface` from nvme to sata). Entries of arrays of
//! tables are reached by index: `power.state[0].max_w` (or
//! `power.state.0.max_w`). Missing tables on the way are created; a field
//! that the drive format does not know is rejected when the result is
//! deserialised.

use crate::error::SpecError;

/// One step of a path: a table key or an array index.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Split `a.b[0].c` (or `a.b.0.c`) into steps.
fn steps(path: &str) -> Result<Vec<Step<'_>>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if key.is_empty() && out.is_empty() {
            return Err("empty field name in the path".into());
        }
        if !key.is_empty() {
            match key.parse::<usize>() {
                Ok(i) if !out.is_empty() => out.push(Step::Index(i)),
                _ => out.push(Step::Key(key)),
            }
        } else if rest.is_empty() {
            return Err("empty field name in the path".into());
        }
        while !rest.is_empty() {
            let close = rest.find(']').ok_or("`[` without `]` in the path")?;
            let i = rest[1..close].parse::<usize>().map_err(|_| format!("`{}` is not an index", &rest[..=close]))?;
            out.push(Step::Index(i));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected `{rest}` after an index"));
            }
        }
    }
    Ok(out)
}

/// Apply one `path=value` override to a parsed drive file.
pub fn apply_override(table: &mut toml::Table, text: &str) -> Result<(), SpecError> {
    let err = |reason: &str| SpecError::Override { text: text.to_string(), reason: reason.to_string() };
    let (path, raw) = text.split_once('=').ok_or_else(|| err("expected path.to.field=value"))?;
    let path = path.trim();
    let raw = raw.trim();
    let mut steps = steps(path).map_err(|r| err(&r))?;
    let last = steps.pop().expect("a path has at least one step");
    let shown = |n: usize| path.split('.').take(n).collect::<Vec<_>>().join(".");
    let mut cur = toml::Value::Table(std::mem::take(table));
    let result = (|| {
        let mut node = &mut cur;
        for (i, st) in steps.iter().enumerate() {
            node = match (st, node) {
                (Step::Key(k), toml::Value::Table(t)) => {
                    t.entry(k.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
                }
                (Step::Index(n), toml::Value::Array(a)) => {
                    let len = a.len();
                    a.get_mut(*n).ok_or_else(|| err(&format!("index {n} is out of range ({len} entries)")))?
                }
                (Step::Index(_), _) => return Err(err(&format!("`{}` is not an array", shown(i)))),
                (Step::Key(_), _) => return Err(err(&format!("`{}` is a value, not a table", shown(i)))),
            };
        }
        match (last, node) {
            (Step::Key(k), toml::Value::Table(t)) => {
                if raw.is_empty() {
                    t.remove(k);
                } else {
                    t.insert(k.to_string(), parse_value(raw));
                }
                Ok(())
            }
            (Step::Index(n), toml::Value::Array(a)) if n < a.len() && !raw.is_empty() => {
                a[n] = parse_value(raw);
                Ok(())
            }
            (Step::Index(n), toml::Value::Array(a)) if n < a.len() => {
                a.remove(n);
                Ok(())
            }
            (Step::Index(n), toml::Value::Array(a)) => {
                Err(err(&format!("index {n} is out of range ({} entries)", a.len())))
            }
            (Step::Index(_), _) => Err(err("the path indexes something that is not an array")),
            (Step::Key(_), _) => Err(err("the path goes through a value, not a table")),
        }
    })();
    if let toml::Value::Table(t) = cur {
        *table = t;
    }
    result
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

    #[test]
    fn indexes_arrays_and_removes_fields() {
        let mut t: toml::Table = "[a]\nb = 1\n[[s]]\nw = 1.0\n[[s]]\nw = 2.0\n".parse().unwrap();
        apply_override(&mut t, "s[1].w=3.5").unwrap();
        apply_override(&mut t, "s.0.w=0.5").unwrap();
        assert_eq!(t["s"][0]["w"].as_float(), Some(0.5));
        assert_eq!(t["s"][1]["w"].as_float(), Some(3.5));
        let e = apply_override(&mut t, "s[2].w=1").unwrap_err().to_string();
        assert!(e.contains("index 2 is out of range (2 entries)"), "{e}");
        assert!(apply_override(&mut t, "a[0]=1").unwrap_err().to_string().contains("not an array"));
        assert!(apply_override(&mut t, "s[x].w=1").is_err());
        apply_override(&mut t, "a.b=").unwrap();
        assert!(!t["a"].as_table().unwrap().contains_key("b"));
        apply_override(&mut t, "s[0]=").unwrap();
        assert_eq!(t["s"].as_array().unwrap().len(), 1);
    }
}
