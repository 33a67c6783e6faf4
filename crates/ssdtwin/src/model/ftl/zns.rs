//! The zoned mapping scheme: a zoned namespace (`[zns]`) on the FTL.
//!
//! Each sequential zone writes into erase blocks of its own: its program
//! units go round the dies, channel first, as if the namespace's units
//! were striped over the dies in LBA order (unit *k* of zone *z* on die
//! `(z × units per zone + k) mod dies`, so that writing one zone after the
//! other keeps the round unbroken, as a conventional drive's host stream
//! does), each die's units filling one block of the zone after another,
//! taken from the die's free list when the zone first needs one. Its data
//! is never moved: zone blocks stay out of the GC victim index, so
//! sequential zones cost no device GC and their write amplification is 1
//! (plus the padding a Finish adds to complete a program unit). A Zone
//! Reset unmaps the zone and erases its blocks, which return to the free
//! lists. Each zone's partially written program unit waits in the write
//! buffer until the unit is complete (the drive's write buffer is power
//! safe, so a flush does not pad it); Finish pads it.
//!
//! The map of a sequential zone is its block list, not a page map (the
//! zone-granular map of Bjørling et al., "ZNS: Avoiding the Block
//! Interface Tax", USENIX ATC 2021): since its data is written in LBA
//! order at the write pointer and never moved, page *o* of the zone is
//! unit *o* / U (U slots per program unit) of the stripe above, on the
//! zone's (*o* / U mod dies)-th die of its round, in that die's
//! (*o* / U / dies)-th unit, and the zone's blocks are held in the order
//! the stripe opened them (block *i* of the round on every die, then
//! block *i* + 1). A read finds its slot from the zone's block list and
//! its count of pages written ([`ZonedMapping::lookup`]): no page map
//! entry to fetch from DRAM, and the FTL's logical-to-physical array
//! (`l2p`, 4 bytes per 4 KiB) covers the conventional zones only, so a
//! zoned drive's page map shrinks by its sequential zones' share. The
//! reverse map (`p2l`, slot → logical page, as a real drive keeps in a
//! page's spare area) is kept, for the integrity checks and the version
//! stamps. Nothing relocates a sequential zone's data in this model:
//! validation refuses the map cache, bad blocks and static wear leveling
//! with `[zns]`, device GC never picks a zone block, and an
//! uncorrectable read relocates nothing in a zone ([`Ftl::relocate`]),
//! so the block list stays exact until a reset. Conventional zones are
//! page-mapped like a conventional drive (the host stream, GC over their
//! blocks, `l2p`).
//!
//! The zone states and the rules commands must follow are
//! [`super::zones`]; this module acts on the transitions. Left out: zones
//! backed by SLC, media failures turning zones read-only or offline (see
//! [`super::zones::Zones::set_condition`]), the Zone Random Write Area, zone
//! descriptor extensions, and variable-capacity zones.

use super::mapping::Scheme;
use super::mapping::{MappingScheme, SchemeTiming};
use super::streams::StreamId;
use super::zones::{Transition, ZoneAction, ZoneState, ZoneStatus, Zones};
use super::{Ftl, FtlCore, NandOp, Purpose};
use crate::model::nand::{CellMode, Geometry, Slot, NONE};
use crate::model::params::ZnsModel;

/// Counters of one zone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ZoneCounters {
    /// Pages the host wrote into it.
    pub host_pages: u64,
    /// Times it was reset.
    pub resets: u64,
    /// Times it was finished before it was full.
    pub finishes: u64,
    /// Slots programmed as padding by finishes.
    pub padding_slots: u64,
}

/// The zoned namespace's placement state (see the module doc).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ZonedMapping {
    /// Zone states and write pointers.
    pub(super) zones: Zones,
    dies: u32,
    /// Open block of each zone on each die (`zone × dies + die`; `NONE`).
    open: Vec<u32>,
    /// Die receiving each zone's next slot.
    next_die: Vec<u32>,
    /// Blocks each zone holds (`zone × per_zone + i`), and how many.
    held: Vec<u32>,
    held_count: Vec<u32>,
    per_zone: u32,
    /// Program units per zone.
    units: u32,
    /// The zone a block belongs to (`NONE`: conventional or free).
    owner: Vec<u32>,
    /// Per-zone counters.
    counters: Vec<ZoneCounters>,
    /// Pages of data each sequential zone holds (its write pointer, or
    /// less once a Finish moved the pointer to the capacity): the pages at
    /// and past it read as deallocated.
    #[serde(default)]
    filled: Vec<u32>,
    /// The zone map's strides, in slots: a program unit, a round of units
    /// over the dies, and a block on every die.
    #[serde(default)]
    unit: u32,
    #[serde(default)]
    round: u32,
    #[serde(default)]
    layer: u32,
}

impl ZonedMapping {
    /// Every zone empty, no block held.
    pub fn new(model: &ZnsModel, geo: &Geometry) -> ZonedMapping {
        let zones = model.zones as usize;
        let per_zone = model.blocks_per_die * geo.dies;
        let units = model.zone_cap_lpns / geo.unit_slots(CellMode::Native);
        let first_die = |z: u32| ((z as u64 * units as u64) % geo.dies as u64) as u32;
        ZonedMapping {
            zones: Zones::new(model),
            dies: geo.dies,
            open: vec![NONE; zones * geo.dies as usize],
            next_die: (0..model.zones).map(first_die).collect(),
            held: vec![NONE; zones * per_zone as usize],
            held_count: vec![0; zones],
            per_zone,
            units,
            owner: vec![NONE; geo.total_blocks as usize],
            counters: vec![ZoneCounters::default(); zones],
            filled: vec![0; zones],
            unit: geo.unit_slots(CellMode::Native),
            round: geo.unit_slots(CellMode::Native) * geo.dies,
            layer: geo.slots_per_block * geo.dies,
        }
    }

    /// The slot holding page `lpn` of a zoned drive (`NONE`: unmapped):
    /// a conventional zone's from the page map, a sequential zone's from
    /// its block list (see the module doc). A look with no cost in the
    /// model.
    #[inline(always)]
    pub fn lookup(&self, core: &FtlCore, lpn: u32) -> Slot {
        let z = self.zones.zone_of(lpn);
        if z < self.zones.model().conventional {
            return core.l2p[lpn as usize];
        }
        self.zone_slot(core, z, lpn - z * self.zones.model().zone_lpns)
    }

    /// The slot holding page `o` of sequential zone `z` (`NONE`: not
    /// written): the zone's stripe (module doc) taken apart, layer of
    /// blocks, unit of the die's block, die of the round, slot of the
    /// unit.
    #[inline(always)]
    fn zone_slot(&self, core: &FtlCore, z: u32, o: u32) -> Slot {
        if o >= self.filled[z as usize] {
            return NONE;
        }
        let (layer, in_layer) = (o / self.layer, o % self.layer);
        let (unit, in_round) = (in_layer / self.round, in_layer % self.round);
        let (die, in_unit) = (in_round / self.unit, in_round % self.unit);
        let block = self.held[z as usize * self.per_zone as usize + (layer * self.dies + die) as usize];
        core.geo.first_slot(block) + unit * self.unit + in_unit
    }

    /// The zone states and write pointers.
    pub fn zones(&self) -> &Zones {
        &self.zones
    }

    /// Counters of zone `z`.
    pub fn zone_counters(&self, z: u32) -> ZoneCounters {
        self.counters[z as usize]
    }

    /// The die that receives zone `z`'s first program unit.
    fn first_die(&self, z: u32) -> u32 {
        ((z as u64 * self.units as u64) % self.dies as u64) as u32
    }

    /// Whether `block` holds a sequential zone's data (never moved).
    #[inline]
    pub fn owns(&self, block: u32) -> bool {
        self.owner[block as usize] != NONE
    }

    /// Open a new block of zone `z` on `die` (once per block).
    #[inline(never)]
    fn open_zone_block(&mut self, core: &mut FtlCore, z: u32, die: u32) -> u32 {
        let block = core
            .blocks
            .take_free(die, CellMode::Native)
            .expect("validation leaves every sequential zone its blocks on each die");
        let zi = z as usize;
        let i = self.held_count[zi];
        self.held[zi * self.per_zone as usize + i as usize] = block;
        self.held_count[zi] = i + 1;
        self.owner[block as usize] = z;
        self.open[zi * self.dies as usize + die as usize] = block;
        block
    }

    /// Place `n` host pages from `first` on in a sequential zone, whose
    /// write pointer the zone rules have just moved over them: the same
    /// slots, stamps and programs as [`MappingScheme::write`] page by page,
    /// with the zone's lookups once per program unit instead of once per
    /// page. The pages are unmapped (nothing maps a page at or after a
    /// zone's write pointer: a reset unmaps what was written). Returns false,
    /// doing nothing, in a conventional zone.
    #[inline]
    pub(super) fn write_run(&mut self, core: &mut FtlCore, first: u32, n: u32) -> bool {
        let z = self.zones.zone_of(first);
        if z < self.zones.model().conventional {
            return false;
        }
        let zi = z as usize;
        let unit = core.geo.unit_slots(CellMode::Native);
        let (mut lpn, end) = (first, first + n);
        while lpn < end {
            let die = self.next_die[zi];
            let mut block = self.open[zi * self.dies as usize + die as usize];
            if block == NONE {
                block = self.open_zone_block(core, z, die);
            }
            let b = block as usize;
            let room = unit - (core.blocks.wp[b] - core.blocks.programmed[b]);
            let k = room.min(end - lpn);
            for l in lpn..lpn + k {
                let slot = core.place_next_slot(block, l);
                core.stamp(l, slot);
            }
            lpn += k;
            if k == room {
                self.program_unit(core, z, block, unit);
            }
        }
        core.mapped_lpns += n as u64;
        self.counters[zi].host_pages += n as u64;
        self.filled[zi] += n;
        true
    }

    /// Issue the program of the unit just completed (or padded) in
    /// `block` of zone `z`, and move the zone to its next die.
    #[inline(never)]
    fn program_unit(&mut self, core: &mut FtlCore, z: u32, block: u32, slots: u32) {
        let b = block as usize;
        let wp = core.blocks.wp[b];
        core.blocks.programmed[b] = wp;
        if core.emit_ops {
            let row = core.geo.row_of(wp - slots);
            core.ops.push(NandOp::Program { purpose: Purpose::HostWrite, block, row, slots });
        }
        let die = core.geo.die_of_block(block);
        if wp == core.geo.slots_per_block {
            // Full: it stays with the zone (open, never a GC candidate).
            self.open[z as usize * self.dies as usize + die as usize] = NONE;
        }
        let next = &mut self.next_die[z as usize];
        *next = if *next + 1 == self.dies { 0 } else { *next + 1 };
    }

    /// Act on a Zone Management Send transition: a reset unmaps the zone
    /// and erases its blocks; a finish pads its partial program unit.
    /// Returns the slots dropped from the write buffer unprogrammed (a
    /// reset's partial unit).
    pub(super) fn on_transition(&mut self, core: &mut FtlCore, t: Transition) -> u32 {
        let z = t.zone;
        let zi = z as usize;
        let new = self.zones.state(z);
        match new {
            ZoneState::Empty if t.written > 0 || self.held_count[zi] > 0 => {
                // Unmap the zone: its pages' reverse entries, its blocks'
                // valid counts, its count of pages written.
                core.mapped_lpns -= self.filled[zi] as u64;
                self.filled[zi] = 0;
                let mut dropped = 0;
                let held = &self.held[zi * self.per_zone as usize..][..self.held_count[zi] as usize];
                for &block in held {
                    let b = block as usize;
                    let first = core.geo.first_slot(block) as usize;
                    core.p2l[first..first + core.blocks.wp[b] as usize].fill(NONE);
                    core.blocks.valid[b] = 0;
                    dropped += core.blocks.wp[b] - core.blocks.programmed[b];
                    core.journal(super::journal::Relocation::Erased { block });
                    if core.emit_ops {
                        core.ops.push(NandOp::Erase { purpose: Purpose::ZoneReset, block });
                    }
                    core.blocks.release(block);
                    self.owner[b] = NONE;
                }
                self.held_count[zi] = 0;
                self.open[zi * self.dies as usize..][..self.dies as usize].fill(NONE);
                self.next_die[zi] = self.first_die(z);
                self.counters[zi].resets += 1;
                dropped
            }
            ZoneState::Full if t.from != ZoneState::Full && t.from != ZoneState::Empty => {
                self.counters[zi].finishes += 1;
                let die = self.next_die[zi];
                let block = self.open[zi * self.dies as usize + die as usize];
                if block != NONE {
                    let b = block as usize;
                    let unit = core.geo.unit_slots(CellMode::Native);
                    let fill = core.blocks.wp[b] - core.blocks.programmed[b];
                    if fill > 0 {
                        let pad = unit - fill;
                        core.blocks.wp[b] += pad;
                        core.counters.padding_slots += pad as u64;
                        self.counters[zi].padding_slots += pad as u64;
                        self.program_unit(core, z, block, unit);
                    }
                }
                self.open[zi * self.dies as usize..][..self.dies as usize].fill(NONE);
                0
            }
            _ => 0,
        }
    }

    /// Forget everything (secure erase): zones empty, no block held.
    fn clear(&mut self) {
        self.zones.reset_all_state();
        self.open.fill(NONE);
        for z in 0..self.next_die.len() as u32 {
            self.next_die[z as usize] = self.first_die(z);
        }
        self.held.fill(NONE);
        self.held_count.fill(0);
        self.owner.fill(NONE);
        self.counters.fill(ZoneCounters::default());
        self.filled.fill(0);
    }
}

impl MappingScheme for ZonedMapping {
    #[inline]
    fn write(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        let z = self.zones.zone_of(lpn);
        if z < self.zones.model().conventional {
            return core.append(StreamId::Host, lpn);
        }
        let zi = z as usize;
        let die = self.next_die[zi];
        let mut block = self.open[zi * self.dies as usize + die as usize];
        if block == NONE {
            block = self.open_zone_block(core, z, die);
        }
        let slot = core.place_next_slot(block, lpn);
        core.mapped_lpns += 1;
        self.counters[zi].host_pages += 1;
        self.filled[zi] += 1;
        let b = block as usize;
        let unit = core.geo.unit_slots(CellMode::Native);
        if core.blocks.wp[b] - core.blocks.programmed[b] == unit {
            self.program_unit(core, z, block, unit);
        }
        slot
    }

    /// A sequential zone's page from the zone map (no map cache with
    /// `[zns]`: the lookup costs the controller's map access alone).
    #[inline]
    fn read(&mut self, core: &mut FtlCore, lpn: u32) -> Slot {
        let z = self.zones.zone_of(lpn);
        if z < self.zones.model().conventional {
            return core.map_read(lpn);
        }
        self.zone_slot(core, z, lpn - z * self.zones.model().zone_lpns)
    }

    /// The conventional zones' partial unit is padded and programmed; the
    /// sequential zones' stay in the power-safe buffer.
    fn flush(&mut self, core: &mut FtlCore) {
        core.flush_stream(StreamId::Host);
    }

    fn pending_slots(&self, core: &FtlCore) -> u32 {
        let zoned: u32 = self
            .open
            .iter()
            .filter(|&&b| b != NONE)
            .map(|&b| core.blocks.wp[b as usize] - core.blocks.programmed[b as usize])
            .sum();
        core.host_pending_slots() + zoned
    }

    /// Conventional zones are collected page by page.
    fn reclaims_by_page_gc(&self) -> bool {
        true
    }

    fn timing(&self) -> SchemeTiming {
        SchemeTiming::COMMON
    }

    fn reset(&mut self) {
        self.clear();
    }

    /// Every held block belongs to its zone and holds only that zone's
    /// pages, each where the zone map finds it; a zone's mapped pages are
    /// those below its write pointer (all of them, unless it was finished
    /// early); the page map covers the conventional zones alone.
    fn check(&self, core: &FtlCore) -> Result<(), String> {
        let m = *self.zones.model();
        if core.l2p.len() != (m.conventional * m.zone_lpns) as usize {
            return Err(format!(
                "the page map has {} entries for {} conventional zones",
                core.l2p.len(),
                m.conventional
            ));
        }
        for z in m.conventional..m.zones {
            let zi = z as usize;
            let written = self.zones.written(z);
            let filled = self.filled[zi];
            // A finished zone's write pointer is at its capacity, past its
            // data.
            let full = self.zones.state(z) == ZoneState::Full;
            if filled != written && !(full && filled <= written) {
                return Err(format!("zone {z}: {filled} pages mapped, write pointer at {written}"));
            }
            let mut mapped = 0;
            for &block in &self.held[zi * self.per_zone as usize..][..self.held_count[zi] as usize] {
                if self.owner[block as usize] != z {
                    return Err(format!("zone {z} holds block {block}, owned by {}", self.owner[block as usize]));
                }
                let s = core.geo.first_slot(block);
                for slot in s..s + core.geo.slots_per_block {
                    let lpn = core.p2l[slot as usize];
                    if lpn == NONE {
                        continue;
                    }
                    if self.zones.zone_of(lpn) != z {
                        return Err(format!("block {block} of zone {z} holds page {lpn} of another zone"));
                    }
                    if self.lookup(core, lpn) != slot {
                        return Err(format!(
                            "page {lpn} is in slot {slot}, the zone map says {}",
                            self.lookup(core, lpn)
                        ));
                    }
                    mapped += 1;
                }
            }
            if mapped != filled {
                return Err(format!("zone {z}: {mapped} pages in its blocks, {filled} written"));
            }
        }
        Ok(())
    }
}

/// The zone commands on the FTL (a conventional namespace refuses them
/// with *Invalid Command Opcode*). Pages are 4 KiB logical pages.
impl Ftl {
    /// The zoned namespace's state (`None`: a conventional namespace).
    #[inline]
    pub fn zoned(&self) -> Option<&ZonedMapping> {
        match &self.scheme {
            Scheme::Zoned(z) => Some(z),
            _ => None,
        }
    }

    fn zoned_mut(&mut self) -> Result<&mut ZonedMapping, ZoneStatus> {
        match &mut self.scheme {
            Scheme::Zoned(z) => Ok(z),
            _ => Err(ZoneStatus::InvalidOpcode),
        }
    }

    /// A host write of `n` pages at `first` is about to be placed: check
    /// it against the zone rules and move the write pointer (the pages
    /// then go through [`Ftl::write`]).
    pub fn zone_write(&mut self, first: u32, n: u32) -> Result<(), ZoneStatus> {
        self.zoned_mut()?.zones.write(first, n).map(|_| ())
    }

    /// A Zone Append of `n` pages to the zone starting at `zslba`: returns
    /// the first page it is written at (the pages then go through
    /// [`Ftl::write`]).
    pub fn zone_append(&mut self, zslba: u32, n: u32) -> Result<u32, ZoneStatus> {
        self.zoned_mut()?.zones.append(zslba, n)
    }

    /// Whether a read of `n` pages at `first` is allowed.
    #[inline]
    pub fn zone_check_read(&self, first: u32, n: u32) -> Result<(), ZoneStatus> {
        self.zoned().ok_or(ZoneStatus::InvalidOpcode)?.zones.check_read(first, n)
    }

    /// Whether a deallocate of `n` pages at `first` is allowed.
    pub fn zone_check_trim(&self, first: u32, n: u32) -> Result<(), ZoneStatus> {
        self.zoned().ok_or(ZoneStatus::InvalidOpcode)?.zones.check_trim(first, n)
    }

    /// Zone Management Send: `action` on the zone starting at page
    /// `zslba`, or on every zone it applies to (`None`: Select All). The
    /// NAND work (a reset's erases, a finish's padding program) is
    /// appended to the operations. Returns the slots of unprogrammed data
    /// dropped from the write buffer (reset zones' partial units).
    pub fn zone_send(&mut self, action: ZoneAction, zslba: Option<u32>) -> Result<u32, ZoneStatus> {
        let Scheme::Zoned(z) = &mut self.scheme else { return Err(ZoneStatus::InvalidOpcode) };
        let done = match zslba {
            Some(lba) => vec![z.zones.send(action, lba)?],
            None => z.zones.send_all(action)?,
        };
        Ok(done.into_iter().map(|t| z.on_transition(&mut self.core, t)).sum())
    }

    /// Mark zone `z` read-only or offline (fault injection; see
    /// [`Zones::set_condition`]).
    pub fn set_zone_condition(&mut self, z: u32, state: ZoneState) -> Result<(), ZoneStatus> {
        self.zoned_mut()?.zones.set_condition(z, state)
    }
}
