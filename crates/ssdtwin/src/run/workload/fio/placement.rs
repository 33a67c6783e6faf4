//! fio's data placement options (options.c, dataplacement.c): `fdp=1` or
//! `dataplacement=fdp` tags every write with a placement identifier of
//! the drive's FDP configuration; `plids` (alias `fdp_pli`) lists which
//! (indices into the drive's reclaim unit handle status list: `0,2-3`;
//! default all), sorted as fio sorts them; `plid_select` (alias
//! `fdp_pli_select`) takes them in turn (`roundrobin`, per write) or
//! uniformly at random (`random`), or by the write's offset
//! (`plid_select=scheme` with `dp_scheme`, a file of `start,end,plid`
//! lines read as fio's `init_ruh_scheme` reads it: at most 32 entries,
//! reading stops at the first line that is not one, the first entry
//! holding a write's offset gives its identifier, 0 when none does).
//! Refused: `dataplacement=streams` (the Streams directive). A trace
//! section reads the same options (fio applies them to the writes it
//! replays from an iolog: [`crate::run::plids`]).

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::{Placement, SchemeEntry};

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(crate) struct PlacementOptions {
    on: Option<String>,
    ids: Vec<u32>,
    random: bool,
    scheme: bool,
    /// `dp_scheme`: the file and where it was named.
    scheme_file: Option<(String, String)>,
}

/// fio's `DP_MAX_SCHEME_ENTRIES`.
const MAX_SCHEME_ENTRIES: usize = 32;

impl PlacementOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Placement`]).
    pub(crate) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        match key {
            "fdp" => match v.as_str() {
                "" | "1" | "true" => self.on = Some(at.clone()),
                "0" | "false" => self.on = None,
                _ => return Err(invalid(at, key, format!("`{v}` is not 0 or 1"))),
            },
            "dataplacement" => match v.as_str() {
                "none" => self.on = None,
                "fdp" => self.on = Some(at.clone()),
                "streams" => return Err(invalid(at, key, "the Streams directive is not modelled (fdp is)")),
                _ => return Err(invalid(at, key, format!("`{v}` is not one of none, fdp, streams"))),
            },
            "plids" => {
                self.ids =
                    ids(v).ok_or_else(|| invalid(at, key, format!("`{v}` is not a list of ids and ranges (0,2-3)")))?
            }
            "plid_select" => match v.as_str() {
                "roundrobin" => (self.random, self.scheme) = (false, false),
                "random" => (self.random, self.scheme) = (true, false),
                "scheme" => (self.random, self.scheme) = (false, true),
                _ => return Err(invalid(at, key, format!("`{v}` is not one of roundrobin, random, scheme"))),
            },
            "dp_scheme" => {
                // fio checks the file exists when it reads the option.
                let path = v.trim().to_string();
                if !std::path::Path::new(&path).is_file() {
                    return Err(invalid(at, key, format!("`{path}` is not a file")));
                }
                self.scheme_file = Some((path, at.clone()));
            }
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's placement (`None` without `fdp`/`dataplacement=fdp`);
    /// with `plid_select=scheme`, its `dp_scheme` file read.
    pub(crate) fn finish(self) -> Result<Option<Placement>, JobError> {
        let Some(at) = self.on else { return Ok(None) };
        let scheme = match (self.scheme, &self.scheme_file) {
            (false, _) => None,
            (true, None) => return Err(invalid(&at, "plid_select", "scheme needs a dp_scheme file")),
            (true, Some((path, named))) => {
                let text =
                    std::fs::read_to_string(path).map_err(|e| invalid(named, "dp_scheme", format!("`{path}`: {e}")))?;
                Some(scheme_entries(&text))
            }
        };
        Ok(Some(Placement { ids: self.ids, random: self.random, scheme, at }))
    }
}

/// The entries of a `dp_scheme` file as fio's
/// `fscanf(fp, "%llu,%llu,%hu\n", ...)` loop reads them: numbers separated
/// by commas, whitespace allowed before each number, at most
/// [`MAX_SCHEME_ENTRIES`]; reading stops at the first entry that does not
/// scan.
fn scheme_entries(text: &str) -> Vec<SchemeEntry> {
    let mut rest = text;
    let mut out = Vec::new();
    let number = |s: &mut &str| -> Option<u64> {
        let t = s.trim_start();
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let v = t[..digits].parse().ok()?;
        *s = &t[digits..];
        Some(v)
    };
    while out.len() < MAX_SCHEME_ENTRIES {
        let mut s = rest;
        let Some(start) = number(&mut s) else { break };
        let Some(s1) = s.strip_prefix(',') else { break };
        s = s1;
        let Some(end) = number(&mut s) else { break };
        let Some(s2) = s.strip_prefix(',') else { break };
        s = s2;
        let Some(plid) = number(&mut s) else { break };
        // %hu keeps the low 16 bits.
        out.push(SchemeEntry { start, end, plid: (plid & 0xffff) as u32 });
        rest = s;
    }
    out
}

/// fio's `str_fdp_pli_cb`: comma-separated ids and `a-b` ranges, sorted.
fn ids(v: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let a = part.parse::<u32>().ok()?;
                (a, a)
            }
        };
        if a > b || out.len() as u64 + (b - a) as u64 >= 128 {
            return None;
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn scheme_files_as_fio_reads_them() {
        use crate::run::workload::SchemeEntry;
        let e = |start, end, plid| SchemeEntry { start, end, plid };
        assert_eq!(super::scheme_entries("0,4096,1\n4096, 8192, 2\n"), vec![e(0, 4096, 1), e(4096, 8192, 2)]);
        // Reading stops at the first line that does not scan.
        assert_eq!(super::scheme_entries("0,10,3\n# x\n10,20,4\n"), vec![e(0, 10, 3)]);
        assert_eq!(super::scheme_entries("0 ,10,3\n"), vec![]);
        let many: String = (0..40).map(|i| format!("{i},{},0\n", i + 1)).collect();
        assert_eq!(super::scheme_entries(&many).len(), 32);
    }

    #[test]
    fn id_lists_as_fio_reads_them() {
        assert_eq!(super::ids("3,0-1"), Some(vec![0, 1, 3]));
        assert_eq!(super::ids("2"), Some(vec![2]));
        assert_eq!(super::ids("3-1"), None);
        assert_eq!(super::ids("x"), None);
    }
}
