//! NAND media: geometry, physical addresses and per-mode timings.
//!
//! The unit of mapping is a 4 KiB **slot** (a sector of a page). A physical
//! address is a `u32` slot number, so the map of a 2 TB drive costs 4 bytes
//! per 4 KiB. The FTL manages **multi-plane blocks**: block `b` of a die is
//! erase block `b` of every plane of that die, erased, programmed and read
//! with multi-plane operations (as SM22xx-class controllers do), so the FTL
//! sees `blocks_per_plane` blocks per die. Inside a block, slots are laid out
//! row by row (a row is one page index in every plane):
//!
//! ```text
//! slot_in_block = (row * planes + plane) * sectors_per_page + sector
//! ```
//!
//! so a sequential stream fills a multi-plane page before moving on, and one
//! program unit (`program_pages` rows, one-shot wordline) is a contiguous
//! run of slots. Bit errors and bad blocks are in [`crate::model::media`]
//! and [`crate::model::ftl::badblocks`]; not modelled: per-plane
//! independent blocks.

/// Bytes per mapping unit (slot).
pub const SECTOR_BYTES: u32 = 4096;

/// A physical 4 KiB location in the flash array.
pub type Slot = u32;
/// Marker for "no slot" / "no logical page".
pub const NONE: u32 = u32::MAX;

/// How the cells of a block are programmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum CellMode {
    /// The die's native mode (MLC/TLC/QLC).
    Native = 0,
    /// Pseudo-SLC: one bit per cell (used by SLC caches).
    Slc = 1,
}

/// Derived geometry of a drive, with address arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Geometry {
    /// Channels.
    pub channels: u32,
    /// Dies in the drive (channels × dies per channel).
    pub dies: u32,
    /// Planes per die.
    pub planes: u32,
    /// FTL (multi-plane) blocks per die.
    pub blocks_per_die: u32,
    /// Rows (page indices) per block in native mode.
    pub rows_per_block: u32,
    /// 4 KiB sectors per page.
    pub sectors_per_page: u32,
    /// Bits per cell in native mode.
    pub bits_per_cell: u32,
    /// Bytes per page.
    pub page_bytes: u32,
    /// Slots in one row (planes × sectors per page).
    pub slots_per_row: u32,
    /// Slots per block in native mode.
    pub slots_per_block: u32,
    /// Rows per native program operation.
    pub program_rows: u32,
    /// Blocks in the drive.
    pub total_blocks: u32,
    /// Slots in the drive (native mode).
    pub total_slots: u64,
}

impl Geometry {
    /// Block holding a slot.
    #[inline]
    pub fn block_of(&self, slot: Slot) -> u32 {
        slot / self.slots_per_block
    }
    /// Offset of a slot inside its block.
    #[inline]
    pub fn offset_in_block(&self, slot: Slot) -> u32 {
        slot % self.slots_per_block
    }
    /// Die holding a block.
    #[inline]
    pub fn die_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_die
    }
    /// Channel of a die (dies are numbered channel first).
    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }
    /// First slot of a block.
    #[inline]
    pub fn first_slot(&self, block: u32) -> Slot {
        block * self.slots_per_block
    }
    /// Row of an offset in a block.
    #[inline]
    pub fn row_of(&self, offset: u32) -> u32 {
        offset / self.slots_per_row
    }
    /// Slots per block when programmed in `mode`.
    #[inline]
    pub fn slots_in_mode(&self, mode: CellMode) -> u32 {
        match mode {
            CellMode::Native => self.slots_per_block,
            CellMode::Slc => self.slots_per_block / self.bits_per_cell,
        }
    }
    /// Slots per program operation in `mode`.
    #[inline]
    pub fn unit_slots(&self, mode: CellMode) -> u32 {
        match mode {
            CellMode::Native => self.program_rows * self.slots_per_row,
            CellMode::Slc => self.slots_per_row,
        }
    }
    /// Raw bytes of the flash array.
    pub fn raw_bytes(&self) -> u64 {
        self.total_slots * SECTOR_BYTES as u64
    }
}

/// Timings of one cell mode, in ns.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellTiming {
    /// Array read time per page type (index `row % len`).
    pub tr_ns: Vec<u64>,
    /// Program time per program operation (index `row % len` when NAND is
    /// programmed page by page).
    pub tprog_ns: Vec<u64>,
    /// Erase time.
    pub tbers_ns: u64,
}

impl CellTiming {
    /// Read time of a row.
    #[inline]
    pub fn tr(&self, row: u32) -> u64 {
        self.tr_ns[row as usize % self.tr_ns.len()]
    }
    /// Program time of the operation starting at `row`.
    #[inline]
    pub fn tprog(&self, row: u32) -> u64 {
        self.tprog_ns[row as usize % self.tprog_ns.len()]
    }
}

/// Time to move `bytes` over a link of `fs_per_byte` femtoseconds per byte.
#[inline]
pub fn transfer_ns(bytes: u64, fs_per_byte: u64) -> u64 {
    (bytes * fs_per_byte).div_ceil(1_000_000)
}

/// Femtoseconds per byte of a link of `bytes_per_s` bytes per second.
pub fn fs_per_byte(bytes_per_s: f64) -> u64 {
    (1e15 / bytes_per_s).round().max(1.0) as u64
}
