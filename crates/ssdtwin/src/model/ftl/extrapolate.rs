//! Wear carried forward over days that are not simulated one write at a
//! time: the aging phase's extrapolation once its workload's wear has
//! become stationary ([`crate::run::lifetime`]).
//!
//! A window of days simulated exactly is taken as the pattern the
//! workload repeats, `repeat` more times. Its erases, per cell mode and
//! per pool (the static SLC pool's blocks cycle far faster than the
//! rest), are shared evenly among the blocks of that mode and pool that
//! the workload has cycled since it began (stochastically rounded, from
//! the drive's seed): the free-block choice spreads erases over the blocks
//! in use (dynamic wear leveling), and a window is too short for one
//! block's own count to be more than noise. Blocks the workload never
//! erased hold cold data and gain nothing. The spread the window found is
//! kept, not grown. What else the skipped days would have done follows
//! from that wear:
//! - **Bad blocks**: a block's chance of failing over the added cycles is
//!   the bad-block model's per-cycle failure probability (erase and
//!   program) integrated over them
//!   ([`crate::model::media::BadBlockModel::fail_probability`] sums to
//!   `by_rated · (PE/N)^(k+1)`); a block drawn to fail retires at its next
//!   erase, consuming spare as a failure in the simulated days does.
//! - **Retention**: a block erased in the window holds data of the
//!   repeating pattern, which is as young at the end of the skipped days
//!   as it was at their start, so its program time moves with the clock;
//!   a block not erased in the window holds cold data, which ages through
//!   the skipped days.
//! - **Counters**: the FTL's event counters (host and NAND writes, GC,
//!   folding, wear leveling) gain the window's counts `repeat` times.
//!
//! Left out: what the skipped days would have decided differently because
//! of the wear itself (static wear leveling reacting to the spread, blocks
//! retiring mid-span and shrinking the pool); the exact days that follow
//! an extrapolation let the FTL react to the wear it finds.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::badblocks::native_equivalent;
use super::blocks::BlockState;
use super::{Ftl, FtlCounters};

/// The wear state at a moment: the start of a workload or of a window
/// (see [`Ftl::wear_mark`]).
#[derive(Debug, Clone)]
pub struct WearMark {
    erase_count: [Vec<u32>; 2],
    counters: FtlCounters,
}

/// What an extrapolation added.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Extrapolated {
    /// Erases added over all blocks and modes.
    pub erases: u64,
    /// Blocks drawn to fail over the added cycles (each retires at its
    /// next erase).
    pub failing_blocks: u64,
}

impl Ftl {
    /// The wear now: the start of a window for [`Ftl::extrapolate_wear`].
    pub fn wear_mark(&self) -> WearMark {
        WearMark { erase_count: self.core.blocks.erase_count.clone(), counters: self.core.counters }
    }

    /// Erases taken since `mark`, per cell mode (`[native, SLC]`).
    pub fn erases_since(&self, mark: &WearMark) -> [u64; 2] {
        let e = &self.core.blocks.erase_count;
        [0, 1].map(|m| e[m].iter().zip(&mark.erase_count[m]).map(|(&a, &b)| (a - b) as u64).sum())
    }

    /// Repeat the wear taken since `window` `repeat` more times, while the
    /// drive's clock moves on by `shift_ns` (see the module's text).
    /// `since` marks the start of the workload (the blocks it has erased
    /// since then are the ones it cycles). The draws come from `seed`.
    pub fn extrapolate_wear(
        &mut self,
        since: &WearMark,
        window: &WearMark,
        repeat: f64,
        shift_ns: u64,
        seed: u64,
    ) -> Extrapolated {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut out = Extrapolated::default();
        let core = &mut self.core;
        let t = &core.blocks;
        let n = t.state.len();
        // Classes: cell mode × static SLC pool or not. Per class, the
        // window's erases and the blocks the workload cycles; per block,
        // the modes it was cycled in (bits 0 and 1) and its pool (bit 2).
        let class = |m: usize, b: usize| m * 2 + usize::from(t.is_static[b]);
        let mut erases = [0u64; 4];
        let mut cycled = [0u64; 4];
        let mut cycles = vec![0u8; n];
        for b in (0..n).filter(|&b| t.state[b] != BlockState::Bad) {
            for m in 0..2 {
                erases[class(m, b)] += (t.erase_count[m][b] - window.erase_count[m][b]) as u64;
                if t.erase_count[m][b] > since.erase_count[m][b] {
                    cycled[class(m, b)] += 1;
                    cycles[b] |= 1 << m | u8::from(t.is_static[b]) << 2;
                }
            }
        }
        let per_block: [f64; 4] =
            std::array::from_fn(|c| if cycled[c] == 0 { 0.0 } else { erases[c] as f64 * repeat / cycled[c] as f64 });
        for b in (0..n).filter(|&b| cycles[b] != 0) {
            let before = native_equivalent(core, b as u32);
            for m in (0..2).filter(|m| cycles[b] & (1 << m) != 0) {
                let x = per_block[m * 2 + usize::from(cycles[b] >> 2)];
                let add = x.floor() as u32 + u32::from(rng.random::<f64>() < x.fract());
                core.blocks.erase_count[m][b] += add;
                out.erases += add as u64;
            }
            let after = native_equivalent(core, b as u32);
            core.blocks.programmed_at[b] += shift_ns;
            if let Some(bad) = core.bad.as_mut() {
                if bad.fails_over(b as u32, before, after, &mut rng) {
                    out.failing_blocks += 1;
                }
            }
        }
        core.counters = extrapolate_counters(&core.counters, &window.counters, repeat);
        out
    }
}

/// `now` plus `repeat` times what it gained since `then`, field by field
/// (every field of the counters is a count).
fn extrapolate_counters(now: &FtlCounters, then: &FtlCounters, repeat: f64) -> FtlCounters {
    let (n, t) = (serde_json::to_value(now).expect("counters"), serde_json::to_value(then).expect("counters"));
    let mut out = n.clone();
    for (k, v) in out.as_object_mut().expect("a struct").iter_mut() {
        let (a, b) = (n[k].as_u64().expect("a count"), t[k].as_u64().expect("a count"));
        *v = (a + ((a - b) as f64 * repeat).round() as u64).into();
    }
    serde_json::from_value(out).expect("counters")
}
