//! Second stage of reading a drive: check that the spec describes a drive
//! that can exist and derive the quantities the simulator uses.

use super::mapcache;
use super::{DriveSpec, Interface, MappingScheme, WriteCachePolicy};
use crate::error::SpecError;
use crate::model::nand::{fs_per_byte, CellTiming, Geometry, SECTOR_BYTES};
use crate::model::params::{DriveModel, SlcModel, WearLevelingModel};
use crate::model::power::PowerModel;
use crate::model::thermal::ThermalModel;

/// Makes the error for a field of the drive file `0` names.
#[derive(Clone, Copy)]
struct Bad<'a>(&'a str);

impl Bad<'_> {
    /// The error: `field` holds a value no drive can have, for `reason`.
    fn at(self, field: &str, reason: String) -> SpecError {
        SpecError::Invalid { origin: self.0.to_string(), field: field.to_string(), reason }
    }

    /// `v` must be at least 1.
    fn positive(self, field: &str, v: u64) -> Result<(), SpecError> {
        if v == 0 {
            Err(self.at(field, "must be at least 1".into()))
        } else {
            Ok(())
        }
    }

    fn at_most(self, field: &str, v: u64, max: u64) -> Result<(), SpecError> {
        if v > max {
            Err(self.at(field, format!("{v} is more than {max}")))
        } else {
            Ok(())
        }
    }

    /// Times per page type: as many values as `allowed` says, all
    /// positive.
    fn per_type(self, field: &str, v: &[u64], allowed: &[usize], bits_per_cell: u32) -> Result<(), SpecError> {
        if !allowed.contains(&v.len()) {
            return Err(
                self.at(field, format!("has {} values; give one, or one per page type ({})", v.len(), bits_per_cell))
            );
        }
        if v.contains(&0) {
            return Err(self.at(field, "times must be positive".into()));
        }
        Ok(())
    }
}

impl DriveSpec {
    /// Validate the spec and derive the model. `origin` names the file or
    /// preset in error messages. The sections are checked in the order
    /// below; the first invalid field is the error.
    pub fn build(&self, origin: &str) -> Result<DriveModel, SpecError> {
        let bad = Bad(origin);
        let (g, n, f) = (&self.geometry, &self.nand, &self.ftl);
        self.check_geometry(bad)?;
        self.check_nand(bad)?;
        let (link_bytes_per_s, full_duplex) = self.host_link(bad)?;
        let sectors_per_page = g.page_bytes / SECTOR_BYTES;
        // A gang's dies work as one: the FTL's die is the gang, its row
        // (and program unit) one row of every member die.
        let member_row_slots = g.planes_per_die * sectors_per_page;
        let slots_per_row = g.gang * member_row_slots;
        let write_through = self.check_controller(bad, member_row_slots)?;
        let dies = self.die_count(bad)? / g.gang;
        let slots_per_block = g.pages_per_block * slots_per_row;
        let total_blocks = dies as u64 * g.blocks_per_plane as u64;
        let total_slots = total_blocks * slots_per_block as u64;
        if total_slots >= u32::MAX as u64 {
            return Err(bad.at(
                "geometry",
                format!("{total_slots} 4 KiB slots exceed the 32-bit physical address space (16 TiB)"),
            ));
        }
        self.check_ftl(bad)?;
        let slc = self.slc_model(bad, dies, slots_per_block / g.bits_per_cell)?;
        let slc_timing = self.slc_timing(bad, slc.is_some())?;
        let geometry = Geometry {
            channels: g.channels / g.gang,
            dies,
            planes: g.planes_per_die,
            blocks_per_die: g.blocks_per_plane,
            rows_per_block: g.pages_per_block,
            sectors_per_page,
            bits_per_cell: g.bits_per_cell,
            page_bytes: g.page_bytes,
            slots_per_row,
            slots_per_block,
            program_rows: n.program_pages,
            total_blocks: total_blocks as u32,
            total_slots,
        };
        let map_cache = mapcache::resolve(
            self,
            &geometry,
            f.user_capacity_bytes / SECTOR_BYTES as u64,
            n.slc.is_some(),
            |field, reason| bad.at(field, reason),
        )?;
        let wear_leveling = self.wear_leveling(bad)?;
        let media = super::media::resolve(self, origin)?;
        // Per die: the open blocks of further placement handles (FDP), the
        // free-block reserve, one open block per write stream
        // (host, GC, fold), one block of slack so that GC always gains, and
        // the static SLC blocks; then the translation blocks, and factory
        // bad blocks and the spare that replaces grown ones, which are not
        // there for data.
        let (fdp, fdp_blocks) =
            super::fdp::resolve(self, origin, dies, slots_per_block, n.program_pages * slots_per_row)?;
        let reserved_blocks_per_die = fdp_blocks
            + f.gc_low_free_blocks as u64
            + 4
            + slc.as_ref().map_or(0, |s| s.static_blocks_per_die as u64)
            + map_cache.as_ref().map_or(0, |m| m.blocks_per_die as u64)
            + media
                .as_ref()
                .and_then(|m| m.bad_blocks.as_ref())
                .map_or(0, |b| b.factory_per_die as u64 + b.spare_blocks_per_die as u64);
        let zns = super::zns::resolve(
            self,
            origin,
            &super::zns::Flash {
                dies,
                slots_per_block,
                unit_slots: n.program_pages * slots_per_row,
                reserved_blocks_per_die,
            },
        )?;
        // A zoned namespace's LBA space (whole zones) may exceed the flash:
        // only zone capacities are written, and resolve checked they fit.
        let user_slots = match &zns {
            Some(_) => f.user_capacity_bytes / SECTOR_BYTES as u64,
            None => self.user_slots(bad, reserved_blocks_per_die, dies, slots_per_block, total_slots)?,
        };
        let hybrid = super::hybrid::resolve(
            self,
            origin,
            &super::hybrid::Flash { dies, slots_per_block, unit_slots: n.program_pages * slots_per_row, user_slots },
        )?;
        let power = self.power_model(bad)?;
        let thermal = self.thermal_model(bad)?;
        let t = &n.native;
        let channel_bytes_per_s = n.channel_mts as f64 * 1e6 * n.channel_width_bits as f64 / 8.0;
        Ok(DriveModel {
            spec: self.clone(),
            geometry,
            native: CellTiming { tr_ns: t.tr_ns.clone(), tprog_ns: t.tprog_ns.clone(), tbers_ns: t.tbers_ns },
            channel_fs_per_byte: fs_per_byte(channel_bytes_per_s),
            link_fs_per_byte: fs_per_byte(link_bytes_per_s),
            link_full_duplex: full_duplex,
            link_bytes_per_s,
            user_lpns: user_slots as u32,
            write_through,
            gc_policy: f.gc_policy,
            slc_timing,
            slc,
            channel_bytes_per_slot: SECTOR_BYTES as u64 * (g.page_bytes as u64 + n.page_spare_bytes as u64)
                / g.page_bytes as u64,
            read_suspend_ns: n.read_suspend.then_some(n.suspend_overhead_ns),
            hybrid,
            power,
            thermal,
            map_cache,
            wear_leveling,
            media,
            zns,
            fdp,
        })
    }

    /// `[geometry]`: counts at least 1, planes, bits per cell, page size,
    /// whole wordlines per block.
    fn check_geometry(&self, bad: Bad) -> Result<(), SpecError> {
        let g = &self.geometry;
        let positive = |field: &str, v: u64| bad.positive(field, v);
        positive("geometry.channels", g.channels as u64)?;
        positive("geometry.dies_per_channel", g.dies_per_channel as u64)?;
        positive("geometry.blocks_per_plane", g.blocks_per_plane as u64)?;
        positive("geometry.pages_per_block", g.pages_per_block as u64)?;
        if !(1..=8).contains(&g.planes_per_die) {
            return Err(bad.at("geometry.planes_per_die", format!("{} is not between 1 and 8", g.planes_per_die)));
        }
        if !(1..=4).contains(&g.bits_per_cell) {
            return Err(bad.at(
                "geometry.bits_per_cell",
                format!("{} is not 1 (SLC), 2 (MLC), 3 (TLC) or 4 (QLC)", g.bits_per_cell),
            ));
        }
        if g.page_bytes == 0 || g.page_bytes % SECTOR_BYTES != 0 {
            return Err(bad.at("geometry.page_bytes", format!("{} is not a positive multiple of 4096", g.page_bytes)));
        }
        if g.gang == 0 || g.channels % g.gang != 0 {
            return Err(bad.at(
                "geometry.gang",
                format!("{} does not divide the {} channels into whole gangs", g.gang, g.channels),
            ));
        }
        if g.gang > 1 && g.dies.is_some_and(|d| d != g.channels * g.dies_per_channel) {
            return Err(bad.at(
                "geometry.gang",
                "ganged channels need the same dies on every channel (leave geometry.dies out)".into(),
            ));
        }
        if g.gang > 1 && (self.zns.is_some() || self.fdp.is_some()) {
            return Err(bad.at(
                "geometry.gang",
                "ganged channels with [zns] or [fdp] (several open program units) are not modelled".into(),
            ));
        }
        if g.pages_per_block % g.bits_per_cell != 0 {
            return Err(bad.at(
                "geometry.pages_per_block",
                format!("{} is not a whole number of wordlines ({} bits per cell)", g.pages_per_block, g.bits_per_cell),
            ));
        }
        Ok(())
    }

    /// `[nand]`: the program unit, the channel bus, native timings.
    fn check_nand(&self, bad: Bad) -> Result<(), SpecError> {
        let g = &self.geometry;
        let n = &self.nand;
        if n.program_pages == 0 || g.pages_per_block % n.program_pages != 0 {
            return Err(bad.at(
                "nand.program_pages",
                format!("{} does not divide pages_per_block ({})", n.program_pages, g.pages_per_block),
            ));
        }
        if n.channel_mts == 0 {
            return Err(bad.at("nand.channel_mts", "must be at least 1".into()));
        }
        if ![8, 16].contains(&n.channel_width_bits) {
            return Err(bad.at("nand.channel_width_bits", format!("{} is not 8 or 16", n.channel_width_bits)));
        }
        let t = &n.native;
        let per_type = |field: &str, v: &[u64], allowed: &[usize]| bad.per_type(field, v, allowed, g.bits_per_cell);
        per_type("nand.native.tr_ns", &t.tr_ns, &[1, g.bits_per_cell as usize])?;
        let prog_allowed: &[usize] = if n.program_pages == 1 { &[1, g.bits_per_cell as usize] } else { &[1] };
        per_type("nand.native.tprog_ns", &t.tprog_ns, prog_allowed)?;
        bad.positive("nand.native.tbers_ns", t.tbers_ns)?;
        Ok(())
    }

    /// `[host]`: the link's usable bytes per second (one direction) and
    /// whether it is full duplex.
    fn host_link(&self, bad: Bad) -> Result<(f64, bool), SpecError> {
        let h = &self.host;
        if !(h.link_efficiency > 0.0 && h.link_efficiency <= 1.0) {
            return Err(bad.at("host.link_efficiency", format!("{} is not in (0, 1]", h.link_efficiency)));
        }
        bad.positive("host.max_queue_depth", h.max_queue_depth as u64)?;
        // The host keeps a slot per outstanding command: bounded, as NVMe's
        // queue size (16 bits) bounds it.
        bad.at_most("host.max_queue_depth", h.max_queue_depth as u64, 65_536)?;
        let (raw_bytes_per_s, full_duplex) = match h.interface {
            Interface::Nvme => {
                if h.sata_gbps.is_some() {
                    return Err(bad.at("host.sata_gbps", "only for interface = \"sata\"".into()));
                }
                let gen = h.pcie_gen.ok_or_else(|| bad.at("host.pcie_gen", "required for NVMe".into()))?;
                let lanes = h.pcie_lanes.ok_or_else(|| bad.at("host.pcie_lanes", "required for NVMe".into()))?;
                // Per-lane payload rate after line encoding (8b/10b up to
                // gen 2, 128b/130b from gen 3), bytes per second.
                let lane = match gen {
                    1 => 2.5e9 * 0.8 / 8.0,
                    2 => 5e9 * 0.8 / 8.0,
                    3 => 8e9 * 128.0 / 130.0 / 8.0,
                    4 => 16e9 * 128.0 / 130.0 / 8.0,
                    5 => 32e9 * 128.0 / 130.0 / 8.0,
                    _ => return Err(bad.at("host.pcie_gen", format!("{gen} is not 1 to 5"))),
                };
                if ![1, 2, 4, 8, 16].contains(&lanes) {
                    return Err(bad.at("host.pcie_lanes", format!("{lanes} is not 1, 2, 4, 8 or 16")));
                }
                (lane * lanes as f64, true)
            }
            Interface::Sata => {
                if h.pcie_gen.is_some() || h.pcie_lanes.is_some() {
                    return Err(bad.at("host.pcie_gen", "only for interface = \"nvme\"".into()));
                }
                let gbps = h.sata_gbps.ok_or_else(|| bad.at("host.sata_gbps", "required for SATA".into()))?;
                if ![1.5, 3.0, 6.0].contains(&gbps) {
                    return Err(bad.at("host.sata_gbps", format!("{gbps} is not 1.5, 3 or 6")));
                }
                if h.max_queue_depth > 32 {
                    return Err(bad.at("host.max_queue_depth", format!("{} exceeds SATA NCQ's 32", h.max_queue_depth)));
                }
                (gbps * 1e9 * 0.8 / 8.0, false)
            }
        };
        if let Some(a) = &h.arbitration {
            if h.interface == Interface::Sata {
                return Err(bad.at("host.arbitration", "NVMe queue arbitration; SATA has one queue".into()));
            }
            if let Some(b) = a.burst {
                if !b.is_power_of_two() || b > 64 {
                    return Err(bad.at("host.arbitration.burst", format!("{b} is not a power of two from 1 to 64")));
                }
            }
            for (w, name) in a.weights.iter().zip(["high", "medium", "low"]) {
                if !(1..=256).contains(w) {
                    return Err(bad.at("host.arbitration.weights", format!("the {name} weight {w} is not 1 to 256")));
                }
            }
        }
        Ok((raw_bytes_per_s * h.link_efficiency, full_duplex))
    }

    /// `[controller]`: cores, and a write-back buffer that holds at least
    /// one program operation of a die (with ganged channels, of one member
    /// die: the gang's program unit is assembled in its dies' page
    /// registers). Whether writes are acknowledged only once programmed.
    fn check_controller(&self, bad: Bad, slots_per_row: u32) -> Result<bool, SpecError> {
        let (g, n, c) = (&self.geometry, &self.nand, &self.controller);
        bad.positive("controller.cores", c.cores as u64)?;
        bad.at_most("controller.cores", c.cores as u64, 1024)?;
        let unit_bytes = (n.program_pages * slots_per_row) as u64 * SECTOR_BYTES as u64;
        let write_through = c.write_cache == WriteCachePolicy::WriteThrough;
        if !write_through && c.write_buffer_bytes < unit_bytes {
            return Err(bad.at(
                "controller.write_buffer_bytes",
                format!(
                    "{} is smaller than one program operation ({unit_bytes} bytes = {} pages × {} planes × {} bytes); \
                 a write-back buffer must hold at least that",
                    c.write_buffer_bytes, n.program_pages, g.planes_per_die, g.page_bytes
                ),
            ));
        }
        Ok(write_through)
    }

    /// `geometry.dies`: the dies populated (default: every channel full).
    fn die_count(&self, bad: Bad) -> Result<u32, SpecError> {
        let g = &self.geometry;
        Ok(match g.dies {
            None => g.channels * g.dies_per_channel,
            Some(d) => {
                let lo = g.channels * (g.dies_per_channel - 1) + 1;
                let hi = g.channels * g.dies_per_channel;
                if !(lo..=hi).contains(&d) {
                    return Err(bad.at(
                        "geometry.dies",
                        format!(
                            "{d} dies do not fit {} channels with at most {} dies each (give {lo} to {hi})",
                            g.channels, g.dies_per_channel
                        ),
                    ));
                }
                d
            }
        })
    }

    /// `[ftl]`: capacity in whole 4 KiB pages, the GC watermarks.
    fn check_ftl(&self, bad: Bad) -> Result<(), SpecError> {
        let f = &self.ftl;
        if f.user_capacity_bytes == 0 || f.user_capacity_bytes % SECTOR_BYTES as u64 != 0 {
            return Err(bad.at(
                "ftl.user_capacity_bytes",
                format!("{} is not a positive multiple of 4096", f.user_capacity_bytes),
            ));
        }
        if f.gc_low_free_blocks < 2 {
            return Err(
                bad.at("ftl.gc_low_free_blocks", "must be at least 2 (GC needs a free block to copy into)".into())
            );
        }
        if f.gc_high_free_blocks < f.gc_low_free_blocks {
            return Err(bad.at(
                "ftl.gc_high_free_blocks",
                format!("{} is below gc_low_free_blocks ({})", f.gc_high_free_blocks, f.gc_low_free_blocks),
            ));
        }
        Ok(())
    }

    /// `[slc_cache]` in the FTL's units (`None`: no cache).
    fn slc_model(&self, bad: Bad, dies: u32, slots_per_slc_block: u32) -> Result<Option<SlcModel>, SpecError> {
        let g = &self.geometry;
        Ok(match &self.slc_cache {
            None => None,
            Some(c) => {
                if g.bits_per_cell < 2 {
                    return Err(bad.at("slc_cache", "an SLC cache needs multi-bit native cells".into()));
                }
                let slc_block_bytes = slots_per_slc_block as f64 * SECTOR_BYTES as f64;
                let static_blocks = (c.static_bytes as f64 / slc_block_bytes).ceil() as u64;
                let static_blocks_per_die = static_blocks.div_ceil(dies as u64) as u32;
                if c.capacity_curve.is_empty() {
                    return Err(bad.at("slc_cache.capacity_curve", "needs at least one [fill, bytes] point".into()));
                }
                let mut prev = -1.0;
                let mut curve = Vec::new();
                for (i, &[fill, bytes]) in c.capacity_curve.iter().enumerate() {
                    let field = format!("slc_cache.capacity_curve[{i}]");
                    if !(0.0..=1.0).contains(&fill) || fill < prev {
                        return Err(bad.at(
                            &field,
                            format!("fill fraction {fill} must be in [0, 1] and not below the previous point"),
                        ));
                    }
                    if bytes < c.static_bytes as f64 {
                        return Err(bad.at(&field, format!("{bytes} bytes is below static_bytes ({})", c.static_bytes)));
                    }
                    prev = fill;
                    curve.push((fill, bytes / slc_block_bytes));
                }
                if curve[0].0 != 0.0 {
                    return Err(bad.at("slc_cache.capacity_curve[0]", "the first point must be at fill 0".into()));
                }
                Some(SlcModel {
                    static_blocks_per_die,
                    curve,
                    write_policy: c.write_policy,
                    fold_threshold_blocks: (c.fold_threshold_bytes as f64 / slc_block_bytes).ceil() as u32,
                    idle_fold: c.idle_fold,
                    idle_fold_target_slots: c.idle_fold_target_bytes / SECTOR_BYTES as u64,
                    idle_fold_room_blocks: c.idle_fold_room_bytes.map(|b| b as f64 / slc_block_bytes),
                    slots_per_slc_block,
                })
            }
        })
    }

    /// Rated cycles of both modes, and the pSLC timings (the native ones
    /// when the drive has no SLC cache).
    fn slc_timing(&self, bad: Bad, has_slc_cache: bool) -> Result<CellTiming, SpecError> {
        let (g, n) = (&self.geometry, &self.nand);
        let t = &n.native;
        let per_type = |field: &str, v: &[u64], allowed: &[usize]| bad.per_type(field, v, allowed, g.bits_per_cell);
        if n.native.pe_cycles == Some(0) || n.slc.as_ref().and_then(|t| t.pe_cycles) == Some(0) {
            let field = if n.native.pe_cycles == Some(0) { "nand.native.pe_cycles" } else { "nand.slc.pe_cycles" };
            return Err(bad.at(field, "a block endures at least one cycle".into()));
        }
        if has_slc_cache && n.native.pe_cycles.is_some() != n.slc.as_ref().is_some_and(|t| t.pe_cycles.is_some()) {
            return Err(bad.at(
                "nand.slc.pe_cycles",
                "with an SLC cache, rate both modes' cycles or neither (wear is counted per mode)".into(),
            ));
        }
        let slc_timing = match (&n.slc, has_slc_cache) {
            (Some(t), _) => {
                per_type("nand.slc.tr_ns", &t.tr_ns, &[1])?;
                per_type("nand.slc.tprog_ns", &t.tprog_ns, &[1])?;
                bad.positive("nand.slc.tbers_ns", t.tbers_ns)?;
                CellTiming { tr_ns: t.tr_ns.clone(), tprog_ns: t.tprog_ns.clone(), tbers_ns: t.tbers_ns }
            }
            (None, true) => return Err(bad.at("nand.slc", "pSLC timings are required with an SLC cache".into())),
            (None, false) => CellTiming { tr_ns: t.tr_ns.clone(), tprog_ns: t.tprog_ns.clone(), tbers_ns: t.tbers_ns },
        };
        Ok(slc_timing)
    }

    /// `[ftl.wear_leveling]` (default: off).
    fn wear_leveling(&self, bad: Bad) -> Result<WearLevelingModel, SpecError> {
        let f = &self.ftl;
        Ok(match &f.wear_leveling {
            None => WearLevelingModel::default(),
            Some(_) if f.mapping != MappingScheme::Page => {
                return Err(bad.at("ftl.wear_leveling", "wear leveling by erase count needs mapping = \"page\"".into()))
            }
            Some(w) => {
                if w.static_threshold == Some(0) {
                    return Err(bad.at("ftl.wear_leveling.static_threshold", "must be at least 1 erase".into()));
                }
                WearLevelingModel {
                    least_worn: w.dynamic == super::DynamicWearLeveling::LeastWorn,
                    static_threshold: w.static_threshold,
                }
            }
        })
    }

    /// The host's 4 KiB pages: the capacity must fit the blocks left for
    /// data after `reserved_blocks_per_die`.
    fn user_slots(
        &self,
        bad: Bad,
        reserved_blocks_per_die: u64,
        dies: u32,
        slots_per_block: u32,
        total_slots: u64,
    ) -> Result<u64, SpecError> {
        let (g, f) = (&self.geometry, &self.ftl);
        if reserved_blocks_per_die >= g.blocks_per_plane as u64 {
            return Err(bad.at(
                "ftl.gc_low_free_blocks",
                format!("{} leaves no blocks for data ({} blocks per plane)", f.gc_low_free_blocks, g.blocks_per_plane),
            ));
        }
        let usable_slots = (g.blocks_per_plane as u64 - reserved_blocks_per_die) * dies as u64 * slots_per_block as u64;
        let user_slots = f.user_capacity_bytes / SECTOR_BYTES as u64;
        if user_slots > usable_slots {
            return Err(bad.at(
                "ftl.user_capacity_bytes",
                format!(
                    "{} bytes is larger than the raw flash can hold ({} bytes raw, {} usable after \
                 GC reserve and open blocks)",
                    f.user_capacity_bytes,
                    total_slots * SECTOR_BYTES as u64,
                    usable_slots * SECTOR_BYTES as u64
                ),
            ));
        }
        // The background target may exceed what the spare area allows
        // (GC then paces host writes all the time), but not a die's blocks.
        if f.gc_high_free_blocks >= g.blocks_per_plane {
            return Err(bad.at(
                "ftl.gc_high_free_blocks",
                format!(
                    "{} free blocks per die is more than a die has ({} blocks per plane)",
                    f.gc_high_free_blocks, g.blocks_per_plane
                ),
            ));
        }
        Ok(user_slots)
    }

    /// `[power]` and its states (`None`: energy is not modelled).
    fn power_model(&self, bad: Bad) -> Result<Option<PowerModel>, SpecError> {
        Ok(match &self.power {
            None => None,
            Some(p) => {
                let watts = |field: &str, w: f64| {
                    if w.is_finite() && w >= 0.0 {
                        Ok(())
                    } else {
                        Err(bad.at(&format!("power.{field}"), format!("{w} is not a power in watts (≥ 0)")))
                    }
                };
                watts("active_idle_w", p.active_idle_w)?;
                watts("controller_active_w", p.controller_active_w)?;
                watts("nand_read_w", p.nand_read_w)?;
                watts("nand_program_w", p.nand_program_w)?;
                watts("nand_erase_w", p.nand_erase_w)?;
                watts("channel_pj_per_byte", p.channel_pj_per_byte)?;
                watts("link_pj_per_byte", p.link_pj_per_byte)?;
                // NVMe describes at most 32 power states.
                bad.at_most("power.state", p.states.len() as u64, 32)?;
                for (i, st) in p.states.iter().enumerate() {
                    watts(&format!("state[{i}].max_w"), st.max_w)?;
                    if let Some(w) = st.idle_w {
                        watts(&format!("state[{i}].idle_w"), w)?;
                    }
                    // NVMe's fields are 32-bit µs; longer would overflow
                    // the APST timeouts derived from them.
                    for (name, us) in [
                        ("entry_latency_us", Some(st.entry_latency_us)),
                        ("exit_latency_us", Some(st.exit_latency_us)),
                        ("wake_latency_us", st.wake_latency_us),
                    ] {
                        if let Some(us) = us {
                            bad.at_most(&format!("power.state[{i}].{name}"), us, u32::MAX as u64)?;
                        }
                    }
                    if !st.non_operational && (st.idle_w.is_some() || st.wake_latency_us.is_some()) {
                        return Err(bad.at(
                            &format!("power.state[{i}]"),
                            "idle_w and wake_latency_us describe non-operational states only".into(),
                        ));
                    }
                }
                let mut after = 0;
                for (i, ls) in p.link_states.iter().enumerate() {
                    let at = |f: &str| format!("power.link_state[{i}].{f}");
                    watts(&format!("link_state[{i}].idle_w"), ls.idle_w)?;
                    if ls.idle_w > p.active_idle_w {
                        return Err(bad.at(
                            &at("idle_w"),
                            format!(
                                "{} W is above power.active_idle_w ({} W): a resting link saves power",
                                ls.idle_w, p.active_idle_w
                            ),
                        ));
                    }
                    if ls.enter_after_us <= after && i > 0 || ls.enter_after_us == 0 {
                        return Err(bad.at(
                            &at("enter_after_us"),
                            "must be above 0 and above the shallower state's (list them shallowest first)".into(),
                        ));
                    }
                    after = ls.enter_after_us;
                    bad.at_most(&at("enter_after_us"), ls.enter_after_us, u32::MAX as u64)?;
                    bad.at_most(&at("exit_latency_us"), ls.exit_latency_us, u32::MAX as u64)?;
                }
                match p.states.first() {
                    Some(ps0) if ps0.non_operational => {
                        return Err(bad.at("power.state[0]", "PS0 must be an operational state".into()))
                    }
                    Some(ps0) if p.active_idle_w > ps0.max_w => {
                        return Err(bad.at(
                            "power.active_idle_w",
                            format!("{} W is more than PS0's maximum of {} W", p.active_idle_w, ps0.max_w),
                        ))
                    }
                    _ => {}
                }
                Some(PowerModel::new(p))
            }
        })
    }

    /// `[thermal]` (`None`: temperature is not modelled; needs `[power]`).
    fn thermal_model(&self, bad: Bad) -> Result<Option<ThermalModel>, SpecError> {
        Ok(match &self.thermal {
            None => None,
            Some(th) => {
                let Some(p) = &self.power else {
                    return Err(bad.at("thermal", "the thermal model is driven by the power model: add [power]".into()));
                };
                let positive = |field: &str, v: f64, unit: &str| {
                    if v.is_finite() && v > 0.0 {
                        Ok(())
                    } else {
                        Err(bad.at(&format!("thermal.{field}"), format!("{v} is not a positive {unit}")))
                    }
                };
                positive("controller_j_per_k", th.controller_j_per_k, "heat capacity in J/K")?;
                positive("nand_j_per_k", th.nand_j_per_k, "heat capacity in J/K")?;
                positive("controller_ambient_k_per_w", th.controller_ambient_k_per_w, "resistance in K/W")?;
                positive("nand_ambient_k_per_w", th.nand_ambient_k_per_w, "resistance in K/W")?;
                positive("controller_nand_k_per_w", th.controller_nand_k_per_w, "resistance in K/W")?;
                positive("airflow", th.airflow, "factor")?;
                if let Some(r) = th.heatsink_k_per_w {
                    positive("heatsink_k_per_w", r, "resistance in K/W")?;
                }
                for (field, c) in
                    [("ambient_c", th.ambient_c), ("warning_c", th.warning_c), ("critical_c", th.critical_c)]
                {
                    if !(c.is_finite() && (-40.0..=150.0).contains(&c)) {
                        return Err(bad.at(&format!("thermal.{field}"), format!("{c} °C is outside −40…150 °C")));
                    }
                }
                if th.critical_c <= th.warning_c {
                    return Err(bad.at(
                        "thermal.critical_c",
                        format!("{} °C must be above the warning temperature {} °C", th.critical_c, th.warning_c),
                    ));
                }
                if th.warning_c <= th.ambient_c {
                    return Err(bad.at(
                        "thermal.warning_c",
                        format!("{} °C must be above the ambient temperature {} °C", th.warning_c, th.ambient_c),
                    ));
                }
                if !(th.hysteresis_c.is_finite() && th.hysteresis_c >= 0.0) {
                    return Err(bad.at(
                        "thermal.hysteresis_c",
                        format!("{} is not a temperature difference ≥ 0", th.hysteresis_c),
                    ));
                }
                if th.sensor_poll_ms == 0 {
                    return Err(bad.at("thermal.sensor_poll_ms", "must be at least 1 ms".into()));
                }
                if let Some([t1, t2]) = th.host_tmt_c {
                    // NVMe: TMT1 below TMT2 when both are set; a threshold
                    // at or below ambient would throttle an idle drive.
                    if !(t1.is_finite() && t2.is_finite() && th.ambient_c < t1 && t1 < t2 && t2 <= 150.0) {
                        return Err(bad.at(
                            "thermal.host_tmt_c",
                            format!(
                                "[{t1}, {t2}]: TMT1 must be above the ambient {} °C and below TMT2, TMT2 at most 150 °C",
                                th.ambient_c
                            ),
                        ));
                    }
                }
                for (field, st) in [("warning_state", th.warning_state), ("critical_state", th.critical_state)] {
                    if let Some(i) = st {
                        match p.states.get(i) {
                            Some(ps) if !ps.non_operational && ps.max_w > 0.0 => {}
                            Some(_) => {
                                return Err(bad.at(
                                    &format!("thermal.{field}"),
                                    format!("PS{i} is not an operational state with a power above 0"),
                                ))
                            }
                            None => {
                                return Err(bad.at(
                                    &format!("thermal.{field}"),
                                    format!("PS{i} does not exist ([[power.state]] lists {})", p.states.len()),
                                ))
                            }
                        }
                        if p.states[i].max_w <= p.active_idle_w {
                            return Err(bad.at(
                                &format!("thermal.{field}"),
                                format!(
                            "PS{i}'s {} W cap is not above power.active_idle_w ({} W): the drive could never work",
                            p.states[i].max_w, p.active_idle_w
                        ),
                            ));
                        }
                    }
                }
                Some(ThermalModel::new(th, p))
            }
        })
    }
}
