//! fio's `sprandom` options (options.c, init.c `fixup_options`,
//! sprandom.c `sprandom_setup`, fio 3.41 on): `sprandom=1` with
//! `spr_op` (default 0.15), `spr_num_regions` (100) and `spr_cs` (0). As
//! fio: a random write pattern is required; `random_generator=lfsr` and
//! `norandommap` are set unless given otherwise (then it is fio's error);
//! the job's `io_size` becomes the span plus `spr_op` of it, aligned to
//! the write block size; `spr_cs` larger than a region is fio's error.
//! The order itself is the generator's (`generator::sprandom`).

use super::options::Entry;
use super::values::{invalid, parse_size};
use crate::error::JobError;
use crate::run::workload::generator::sprandom_sizes;
use crate::run::workload::{IoGenerator, IoSpec, RandomGenerator, RwPattern, Sprandom};

/// The options as read so far (later ones win).
#[derive(Debug)]
pub(super) struct SprandomOptions {
    /// `sprandom=1`, where written.
    on: Option<String>,
    spr: Sprandom,
    /// Where `spr_op` was written.
    op_at: String,
}

impl Default for SprandomOptions {
    fn default() -> Self {
        SprandomOptions { on: None, spr: Sprandom { op: 0.15, regions: 100, cache: 0 }, op_at: String::new() }
    }
}

/// fio's message for a job `sprandom` cannot precondition (init.c).
const NEEDS: &str = "fio: sprandom requires random write, random_generator=lfsr, norandommap=1";

impl SprandomOptions {
    /// Read one option ([`super::table::Reader::Precondition`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry, kb_base: u64) -> Result<(), JobError> {
        let key = key.as_str();
        match key {
            "sprandom" => {
                self.on = super::parse_bool(v).map_err(|r| invalid(at, key, r))?.then(|| at.clone());
            }
            "spr_num_regions" => {
                let n: u32 = v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")))?;
                if n == 0 {
                    return Err(invalid(at, key, "fio: requires at least one region"));
                }
                self.spr.regions = n;
            }
            "spr_op" => {
                let op: f64 = v.parse().map_err(|_| invalid(at, key, format!("`{v}` is not a number")))?;
                // fio asserts WA = 0.5/op + 0.7 above 1.
                if !(0.0..5.0 / 3.0).contains(&op) {
                    return Err(invalid(
                        at,
                        key,
                        format!(
                            "{v} is not from 0 to below 5/3 (fio's write amplification 0.5/op + 0.7 must exceed 1)"
                        ),
                    ));
                }
                self.spr.op = op;
                self.op_at = at.clone();
            }
            "spr_cs" => self.spr.cache = parse_size(v, kb_base, 0).map_err(|r| invalid(at, key, r))?,
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's preconditioning (`None`: `sprandom` is off); sets the
    /// job's generator, random map and `io_size` as fio does. `entries`
    /// are the job's options (to tell given ones from defaults).
    pub(super) fn finish(
        self,
        spec: &mut IoSpec,
        entries: &[Entry],
        capacity: u64,
    ) -> Result<Option<Sprandom>, JobError> {
        let Some(at) = self.on else { return Ok(None) };
        if !matches!(spec.rw, RwPattern::RandWrite | RwPattern::RandRw) {
            return Err(invalid(&at, "sprandom", NEEDS));
        }
        let given = |k: &str| entries.iter().rev().find(|e| e.0 == k);
        let fio = spec.fio.as_mut().expect("a fio job");
        match given("random_generator") {
            Some(e) if fio.generator != RandomGenerator::Lfsr => {
                return Err(invalid(&e.2, "random_generator", "fio: sprandom requires random_generator=lfsr"))
            }
            _ => fio.generator = RandomGenerator::Lfsr,
        }
        match given("norandommap") {
            Some(e) if !spec.norandommap => {
                return Err(invalid(&e.2, "norandommap", "fio: sprandom requires norandommap=1"))
            }
            _ => spec.norandommap = true,
        }
        spec.sprandom = Some(self.spr);
        // fio's sprandom aligns to the write block size (`bs[DDIR_WRITE]`).
        let fixed = spec.sizes.is_none() && spec.blockalign.is_none();
        if !fixed || !IoGenerator::follows_fio(spec) {
            return Err(invalid(
                &at,
                "sprandom",
                "not modelled with variable block sizes, blockalign, a skewed distribution or zonemode=zbd",
            ));
        }
        let logical = spec.size.unwrap_or(capacity.saturating_sub(spec.offset)).min(capacity);
        let align = spec.bs_of(1) as u64;
        let (physical, region) = sprandom_sizes(&self.spr, logical, align);
        if self.spr.cache > region {
            return Err(invalid(
                &at,
                "spr_cs",
                format!(
                    "fio: sprandom: spr_cs [{}] must be smaller than region_sz [{region}] which means [{}] regions allowed",
                    self.spr.cache,
                    physical / self.spr.cache
                ),
            ));
        }
        spec.io_size = Some(physical);
        Ok(Some(self.spr))
    }
}
