//! fio's data placement options (options.c, dataplacement.c): `fdp=1` or
//! `dataplacement=fdp` tags every write with a placement identifier of
//! the drive's FDP configuration; `plids` (alias `fdp_pli`) lists which
//! (indices into the drive's reclaim unit handle status list: `0,2-3`;
//! default all), sorted as fio sorts them; `plid_select` (alias
//! `fdp_pli_select`) takes them in turn (`roundrobin`, per write) or
//! uniformly at random (`random`). Refused: `dataplacement=streams` (the
//! Streams directive) and `plid_select=scheme` with `dp_scheme` (an
//! offset-to-handle file).

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::Placement;

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(super) struct PlacementOptions {
    on: Option<String>,
    ids: Vec<u32>,
    random: bool,
}

impl PlacementOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Placement`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
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
                "roundrobin" => self.random = false,
                "random" => self.random = true,
                "scheme" => {
                    return Err(invalid(at, key, "scheme (an offset-to-handle file, dp_scheme) is not modelled"))
                }
                _ => return Err(invalid(at, key, format!("`{v}` is not one of roundrobin, random, scheme"))),
            },
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's placement (`None` without `fdp`/`dataplacement=fdp`).
    pub(super) fn finish(self) -> Option<Placement> {
        let at = self.on?;
        Some(Placement { ids: self.ids, random: self.random, at })
    }
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
    fn id_lists_as_fio_reads_them() {
        assert_eq!(super::ids("3,0-1"), Some(vec![0, 1, 3]));
        assert_eq!(super::ids("2"), Some(vec![2]));
        assert_eq!(super::ids("3-1"), None);
        assert_eq!(super::ids("x"), None);
    }
}
