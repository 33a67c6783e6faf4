//! Power cuts while serving: when they happen and what the server does.
//!
//! A cut comes after the N-th request (`--power-loss-after N`), at a
//! simulated time (`--power-loss-at T`), at moments drawn from a seed
//! (`--power-loss-random SEED`: after the start and after each restart,
//! the next cut falls uniformly in `[w/2, w)` of simulated time, `w` the
//! window, `--power-loss-window`, 1 s by default), or when asked (SIGUSR1,
//! [`super::Server::power_cutter`]). At scale > 0 a due cut happens when
//! the wall clock reaches it even with no request; at scale 0 virtual time
//! moves with the requests, so a cut happens when a request would be
//! submitted at or after its time (that request is not run).
//!
//! The cut ([`crate::twin::Twin::power_cut_at`]) loses what was written
//! since the last flush and is not on flash at the moment of the cut
//! (with a write-back buffer and no power-loss protection); every
//! connection is dropped (replies not yet sent never are); with a reload
//! image set, the drive is saved (what the cut left) and loaded from it
//! again, as a restart would find it (its clock starts again at 0); then
//! the server serves again. The counters keep the cuts, the pages lost,
//! the most lost by one cut and which pages each cut lost.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use ssdtwin::DriveSpec;

use super::Shared;
use crate::image;

/// Where a restarted drive is saved and loaded from after each cut.
#[derive(Debug, Clone)]
pub struct ReloadImage {
    /// The drive's spec (saved in the image).
    pub spec: DriveSpec,
    /// The drive's name or origin (saved in the image).
    pub origin: String,
    /// The image file.
    pub path: PathBuf,
}

/// When the next cut falls.
#[derive(Debug, Clone, Default)]
pub(super) struct CutPlan {
    /// Virtual time of the next cut.
    pub(super) next: Option<u64>,
    /// Random cuts: generator state and window, ns.
    random: Option<(u64, u64)>,
}

/// SplitMix64: a small, well-mixed generator (one u64 of state).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl CutPlan {
    /// The plan from the options: a cut at `at`, or random cuts from
    /// `seed` every `window` or so, starting at virtual time `now`.
    pub(super) fn new(at: Option<u64>, random: Option<(u64, u64)>, now: u64) -> CutPlan {
        let mut plan = CutPlan { next: at, random };
        if plan.next.is_none() {
            plan.draw(now);
        }
        plan
    }

    /// Draw the next random cut after `now`.
    pub(super) fn draw(&mut self, now: u64) {
        if let Some((state, window)) = &mut self.random {
            let w = (*window).max(2);
            self.next = Some(now + w / 2 + splitmix(state) % (w - w / 2));
        } else {
            self.next = None;
        }
    }
}

impl Shared {
    /// Whether a cut is due at virtual time `t`: its time, if so.
    pub(super) fn cut_due(&self, t: u64) -> Option<u64> {
        self.cut_plan.lock().unwrap_or_else(|e| e.into_inner()).next.filter(|&at| at <= t)
    }

    /// Cut the power at virtual time `at` (see the module docs) and drop
    /// every connection.
    pub(super) fn power_cut(&self, at: u64, why: &str) {
        let mut twin = self.twin();
        let cut = twin.power_cut_at(at);
        self.counters.power_cuts.fetch_add(1, Ordering::Relaxed);
        self.counters.lost_pages.fetch_add(cut.lost_pages, Ordering::Relaxed);
        self.counters.worst_cut_lost_pages.fetch_max(cut.lost_pages, Ordering::Relaxed);
        self.log(format_args!(
            "power cut ({why}): {} of {} pages written since the last flush lost; dropping every connection",
            cut.lost_pages, cut.unflushed_pages
        ));
        self.counters.wire.cut(&cut.lost);
        self.counters.cut_losses.lock().unwrap_or_else(|e| e.into_inner()).push(cut.lost);
        for (_, s) in self.live.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            s.shutdown(std::net::Shutdown::Both);
        }
        if let Some(reload) = &self.opts.reload {
            let restarted = image::save(&mut twin, &reload.spec, &reload.origin, &reload.path)
                .and_then(|()| image::load(&reload.path));
            match restarted {
                Ok(loaded) => {
                    *twin = loaded.twin;
                    twin.track_power_loss(self.opts.plp);
                }
                Err(e) => {
                    self.log(format_args!("power cut: the restart through {} failed: {e}", reload.path.display()))
                }
            }
        }
        // The next cut counts from the restart (the wall clock's virtual
        // time, when it paces).
        let now = if self.clock.scale > 0.0 {
            self.clock.virt_of(std::time::Instant::now()).max(twin.now())
        } else {
            twin.now()
        };
        self.cut_plan.lock().unwrap_or_else(|e| e.into_inner()).draw(now);
    }
}

static CUT_SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_cut_signal(_: libc::c_int) {
    CUT_SIGNALLED.store(true, Ordering::SeqCst);
}

/// Cut the power (set `cut`) each time the process gets SIGUSR1: a
/// watcher thread polls a flag the signal handler sets.
pub fn power_cut_on_sigusr1(cut: Arc<AtomicBool>) {
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe.
    unsafe { libc::signal(libc::SIGUSR1, on_cut_signal as *const () as libc::sighandler_t) };
    thread::spawn(move || loop {
        if CUT_SIGNALLED.swap(false, Ordering::SeqCst) {
            cut.store(true, Ordering::SeqCst);
        }
        thread::sleep(Duration::from_millis(5));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_cuts_fall_in_the_second_half_of_the_window_and_repeat_with_the_seed() {
        let mut a = CutPlan::new(None, Some((7, 1_000_000)), 5_000);
        let mut b = CutPlan::new(None, Some((7, 1_000_000)), 5_000);
        let mut seen = std::collections::HashSet::new();
        for i in 0..200u64 {
            let now = i * 10_000_000;
            a.draw(now);
            b.draw(now);
            let at = a.next.unwrap();
            assert_eq!(Some(at), b.next, "the same seed, the same moments");
            assert!((now + 500_000..now + 1_000_000).contains(&at), "{at} after {now}");
            seen.insert(at - now);
        }
        assert!(seen.len() > 150, "the moments vary");
        assert_eq!(CutPlan::new(Some(42), None, 0).next, Some(42));
        let mut once = CutPlan::new(Some(42), None, 0);
        once.draw(50);
        assert_eq!(once.next, None, "a cut at a given time happens once");
    }
}
