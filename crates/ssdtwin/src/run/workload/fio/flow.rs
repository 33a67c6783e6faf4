//! fio's flow control between jobs (options.c `flow_id`, `flow`,
//! `flow_sleep`; flow.c): jobs with the same `flow_id` and a non-zero
//! `flow` weight issue I/O in the ratio of their weights. The values are
//! fio's C types: `flow` and `flow_sleep` are unsigned ints (fio takes
//! `flow=-1` and stores 4294967295; only `flow` has a maximum, 1000,
//! checked before the conversion), `flow_id` an int. What a job does
//! with them is in [`crate::run::source`].

use super::options::Entry;
use super::values::invalid;
use crate::error::JobError;
use crate::run::workload::Flow;

/// fio's `FLOW_MAX_WEIGHT` (flow.h).
const FLOW_MAX_WEIGHT: i64 = 1000;

/// The options as read so far (later ones win).
#[derive(Debug, Default)]
pub(super) struct FlowOptions {
    id: i32,
    weight: u32,
    sleep_us: u32,
}

impl FlowOptions {
    /// Read one option (one the table gives to this module:
    /// [`super::table::Reader::Flow`]).
    pub(super) fn apply(&mut self, (key, v, at): &Entry) -> Result<(), JobError> {
        let key = key.as_str();
        let n = v.trim().parse::<i64>().map_err(|_| invalid(at, key, format!("`{v}` is not a whole number")))?;
        // fio's FIO_OPT_INT stores the value in a C int or unsigned int:
        // out-of-range values wrap, as in fio.
        match key {
            "flow_id" => self.id = n as i32,
            "flow" => {
                if n > FLOW_MAX_WEIGHT {
                    return Err(invalid(at, key, format!("fio: max value out of range: {n} ({FLOW_MAX_WEIGHT} max)")));
                }
                self.weight = n as u32;
            }
            "flow_sleep" => self.sleep_us = n as u32,
            _ => unreachable!("the table gives {key} to another reader"),
        }
        Ok(())
    }

    /// The job's flow control (`None`: `flow=0`, fio's default, which
    /// joins no flow).
    pub(super) fn finish(self) -> Option<Flow> {
        (self.weight != 0).then_some(Flow { id: self.id, weight: self.weight, sleep_us: self.sleep_us })
    }
}
