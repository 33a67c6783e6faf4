//! Saving and restoring a drive's state: [`Drive::image`] borrows every
//! part's state for serialising ([`DriveImageRef`]) and
//! [`Drive::from_image`] rebuilds the drive from a loaded one
//! ([`DriveImage`]) and the model, checking that the sizes agree. Leaves
//! out the file format and compression (the caller's: `ssdtwin-nbd`'s
//! image files) and the model itself, which is rebuilt from the spec.

use super::{Drive, DriveCounters};
use crate::model::controller::{Cores, WriteBuffer};
use crate::model::flash::Flash;
use crate::model::ftl::Ftl;
use crate::model::host::HostInterface;
use crate::model::media::Media;
use crate::model::nand::{CellTiming, SECTOR_BYTES};
use crate::model::params::{DriveModel, OpOrder};
use crate::model::power::PowerMeter;
use crate::model::thermal::Thermal;

/// A drive's state without its model (which is rebuilt from the spec):
/// what [`Drive::image`] saves and [`Drive::from_image`] restores — the
/// FTL's maps and blocks, the flash's and parts' counters, wear, power
/// and temperature. Field for field the parts of [`Drive`].
#[derive(serde::Serialize)]
pub struct DriveImageRef<'a> {
    host: &'a HostInterface,
    cores: &'a Cores,
    buffer: &'a WriteBuffer,
    ftl: &'a Ftl,
    flash: &'a Flash,
    counters: &'a DriveCounters,
    power: &'a PowerMeter,
    thermal: &'a Option<Thermal>,
    media: &'a Option<Media>,
    clock_base_ns: u64,
    last_t: u64,
    timings: &'a [CellTiming; 2],
    gc_ready: &'a [u64],
    reloc_done: &'a [u64],
    submits: u32,
    /// [`Drive`]'s `serial_done` (the name is the image format's).
    merge_done: u64,
    /// The mapping scheme's parts per merge unit (kept for the image
    /// format; the loaded drive asks its scheme).
    merge_parts: u32,
}

/// A loaded [`DriveImageRef`].
#[derive(serde::Deserialize)]
pub struct DriveImage {
    host: HostInterface,
    cores: Cores,
    buffer: WriteBuffer,
    ftl: Ftl,
    flash: Flash,
    counters: DriveCounters,
    power: PowerMeter,
    thermal: Option<Thermal>,
    media: Option<Media>,
    clock_base_ns: u64,
    last_t: u64,
    timings: [CellTiming; 2],
    gc_ready: Vec<u64>,
    #[serde(default)]
    reloc_done: Vec<u64>,
    submits: u32,
    merge_done: u64,
    #[serde(rename = "merge_parts")]
    _merge_parts: u32,
}

impl Drive {
    /// The drive's state for saving (see [`DriveImageRef`]).
    pub fn image(&self) -> DriveImageRef<'_> {
        DriveImageRef {
            host: &self.host,
            cores: &self.cores,
            buffer: &self.buffer,
            ftl: &self.ftl,
            flash: &self.flash,
            counters: &self.counters,
            power: &self.power,
            thermal: &self.thermal,
            media: &self.media,
            clock_base_ns: self.clock_base_ns,
            last_t: self.last_t,
            timings: &self.timings,
            gc_ready: &self.gc_ready,
            reloc_done: &self.reloc_done,
            submits: self.submits,
            merge_done: self.serial_done,
            merge_parts: self.booking.of(crate::model::ftl::Purpose::Merge).parts,
        }
    }

    /// The drive `model` describes, in the state `image` saved. The
    /// image must come from a drive of the same model (the caller keeps
    /// the spec with the image); a mismatch in the parts' sizes is an
    /// error, not a panic later.
    pub fn from_image(model: DriveModel, image: DriveImage) -> Result<Drive, String> {
        let fresh = Drive::new(model);
        let dies = fresh.model.geometry.dies as usize;
        if image.gc_ready.len() != dies {
            return Err(format!("the image has {} dies, the drive {dies}", image.gc_ready.len()));
        }
        if image.flash.block_prog_done.len() != fresh.flash.block_prog_done.len() {
            return Err(format!(
                "the image has {} blocks, the drive {}",
                image.flash.block_prog_done.len(),
                fresh.flash.block_prog_done.len()
            ));
        }
        if image.ftl.user_lpns() != fresh.ftl.user_lpns() {
            return Err(format!(
                "the image maps {} logical pages, the drive {}",
                image.ftl.user_lpns(),
                fresh.ftl.user_lpns()
            ));
        }
        if image.ftl.l2p().len() != fresh.ftl.l2p().len() {
            // Images saved before a zoned drive's sequential zones were
            // mapped by zone carry a page map entry for every page.
            return Err(format!(
                "the image's page map has {} entries, the drive's {} (a zoned drive's image saved before its \
                 sequential zones were mapped by zone: save it again with this version)",
                image.ftl.l2p().len(),
                fresh.ftl.l2p().len()
            ));
        }
        let booking = image.ftl.scheme_timing();
        let mut flash = image.flash;
        flash.set_reads_first(fresh.model.spec.controller.op_order == OpOrder::ReadsFirst);
        flash.set_gang(fresh.model.spec.geometry.gang, fresh.model.member_row_slots());
        flash.set_read_cache(fresh.model.spec.nand.read_cache);
        let mut drive = Drive {
            model: fresh.model,
            host: image.host,
            cores: image.cores,
            buffer: image.buffer,
            ftl: image.ftl,
            flash,
            counters: image.counters,
            power: image.power,
            thermal: image.thermal,
            media: image.media,
            clock_base_ns: image.clock_base_ns,
            last_t: image.last_t,
            last_error: None,
            next_pid: 0,
            clocked: fresh.clocked,
            relocate_block: crate::model::nand::NONE,
            timings: image.timings,
            reloc_done: if image.reloc_done.len() == dies { image.reloc_done } else { vec![0; dies] },
            gc_ready: image.gc_ready,
            submits: image.submits,
            serial_done: image.merge_done,
            booking,
            erase_done: 0,
            gang_released: 0,
        };
        if drive.model.spec.geometry.gang > 1 {
            // The complete member pages of the partial unit left the
            // buffer when they were written (`Drive::release_member_pages`).
            let member = drive.model.member_row_slots() * drive.model.geometry.program_rows;
            drive.gang_released = (drive.ftl.host_pending_slots() / member * member) as u64 * SECTOR_BYTES as u64;
        }
        Ok(drive)
    }
}
