//! The drive file's sections as serde reads them: [`DriveSpec`] and every
//! table in it (geometry, NAND timings, host interface, controller, FTL,
//! power and thermal; the SLC cache's is in [`super::slc`]), with their
//! defaults. What each field means is in `docs/drive-file.md`. Leaves out
//! reading the file (TOML, `base` presets, `--set` overrides) and
//! checking it: those are `crate::spec`'s.

use serde::{Deserialize, Serialize};

use super::{BadBlockSpec, EccSpec, MapCacheSpec, RberSpec, SlcCacheSpec};

/// A whole drive: geometry, NAND, host interface, controller and FTL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    /// Short identifier, e.g. `generic-tlc-nvme`.
    pub name: String,
    /// One line saying what drive this is.
    #[serde(default)]
    pub description: String,
    /// Physical organisation of the flash array.
    pub geometry: GeometrySpec,
    /// NAND timings and bus.
    pub nand: NandSpec,
    /// Host interface (NVMe over PCIe, or SATA).
    pub host: HostSpec,
    /// Controller: cores, ECC, write buffer.
    pub controller: ControllerSpec,
    /// Flash translation layer: capacity, mapping, GC.
    pub ftl: FtlSpec,
    /// SLC cache (absent: the drive writes natively).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheSpec>,
    /// Power model and NVMe power states (absent: energy is not modelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSpec>,
    /// Thermal model and throttling (absent: temperature is not modelled;
    /// needs `[power]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalSpec>,
    /// A zoned namespace (absent: the namespace is conventional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zns: Option<super::ZnsSpec>,
    /// Flexible data placement (absent: writes carry no placement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<super::FdpSpec>,
}

/// Heat: the lumped RC network from the drive's parts to ambient air, the
/// NVMe temperature thresholds and what the firmware does above them (see
/// [`crate::model::thermal`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThermalSpec {
    /// Ambient air temperature, °C.
    #[serde(default = "default_ambient_c")]
    pub ambient_c: f64,
    /// Heat capacity of the controller node (die and package), J/K.
    pub controller_j_per_k: f64,
    /// Heat capacity of the NAND and board node, J/K.
    pub nand_j_per_k: f64,
    /// Thermal resistance from the controller to ambient (still air), K/W.
    pub controller_ambient_k_per_w: f64,
    /// Thermal resistance from the NAND and board to ambient (still air), K/W.
    pub nand_ambient_k_per_w: f64,
    /// Thermal resistance between the controller and the NAND and board, K/W.
    pub controller_nand_k_per_w: f64,
    /// Airflow: multiplies both conductances to ambient (1 = still air in
    /// a case; forced air 2–4).
    #[serde(default = "one_f64")]
    pub airflow: f64,
    /// A heatsink's resistance to ambient, K/W (absent: bare drive); half
    /// its conductance is added to each node's path to ambient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heatsink_k_per_w: Option<f64>,
    /// Warning composite temperature threshold (NVMe WCTEMP), °C.
    pub warning_c: f64,
    /// Critical composite temperature threshold (NVMe CCTEMP), °C.
    pub critical_c: f64,
    /// The composite must fall this far below a threshold to leave its
    /// throttle level, K.
    #[serde(default = "default_hysteresis_c")]
    pub hysteresis_c: f64,
    /// How often the firmware reads its temperature sensor, ms.
    #[serde(default = "default_poll_ms")]
    pub sensor_poll_ms: u64,
    /// Operational power state (index) the firmware drops to above the
    /// warning temperature: its `max_w` caps the average power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning_state: Option<usize>,
    /// Delay inserted before every command above the warning temperature, µs.
    #[serde(default)]
    pub warning_delay_us: u64,
    /// Operational power state dropped to above the critical temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_state: Option<usize>,
    /// Delay inserted before every command above the critical temperature, µs.
    #[serde(default)]
    pub critical_delay_us: u64,
    /// Host Controlled Thermal Management (NVMe 1.3, Set Features FID
    /// 10h): the host's thresholds `[TMT1, TMT2]`, °C, as its driver sets
    /// them at power-on (absent: HCTM off). At or above TMT1 the drive
    /// throttles lightly (the warning level's state and delay), at or
    /// above TMT2 heavily (the critical level's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_tmt_c: Option<[f64; 2]>,
}

fn default_ambient_c() -> f64 {
    25.0
}
fn one_f64() -> f64 {
    1.0
}
fn default_hysteresis_c() -> f64 {
    2.0
}
fn default_poll_ms() -> u64 {
    100
}

impl Default for ThermalSpec {
    fn default() -> Self {
        ThermalSpec {
            ambient_c: 25.0,
            controller_j_per_k: 1.0,
            nand_j_per_k: 10.0,
            controller_ambient_k_per_w: 40.0,
            nand_ambient_k_per_w: 15.0,
            controller_nand_k_per_w: 5.0,
            airflow: 1.0,
            heatsink_k_per_w: None,
            warning_c: 70.0,
            critical_c: 80.0,
            hysteresis_c: 2.0,
            sensor_poll_ms: 100,
            warning_state: None,
            warning_delay_us: 0,
            critical_state: None,
            critical_delay_us: 0,
            host_tmt_c: None,
        }
    }
}

/// Power: what each part of the drive draws, and its power states (see
/// [`crate::model::power`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    /// Power of the awake, idle drive with no power saving (PS0, link up), W.
    pub active_idle_w: f64,
    /// Extra controller power while commands or background work are in
    /// progress, W.
    pub controller_active_w: f64,
    /// Power of one die during an array read, W.
    pub nand_read_w: f64,
    /// Power of one die during a program, W.
    pub nand_program_w: f64,
    /// Power of one die during an erase, W.
    pub nand_erase_w: f64,
    /// Energy per byte moved over a NAND channel, pJ.
    #[serde(default)]
    pub channel_pj_per_byte: f64,
    /// Energy per byte moved over the host link, pJ.
    #[serde(default)]
    pub link_pj_per_byte: f64,
    /// Power states as the drive reports them, PS0 first (NVMe power
    /// state descriptors). Non-operational states are what APST uses.
    #[serde(default, rename = "state", skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<PowerStateSpec>,
    /// Link power states (`[[power.link_state]]`, shallowest first): PCIe
    /// ASPM L1 substates on NVMe drives, SATA partial, slumber and
    /// DevSleep on SATA drives; used when the host enables link power
    /// management (`link_pm`).
    #[serde(default, rename = "link_state", skip_serializing_if = "Vec::is_empty")]
    pub link_states: Vec<LinkStateSpec>,
}

/// One link power state and what the drive draws while its link rests in
/// it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkStateSpec {
    /// Its name, e.g. `L1.2`, `partial`, `slumber`, `devsleep`.
    pub name: String,
    /// The drive's power while idle with the link in this state (the
    /// controller otherwise in its operational idle), W.
    pub idle_w: f64,
    /// Idle time before the link enters it (the host's or the drive's
    /// policy: ASPM's L1 entry timer, HIPM/DIPM, the platform's DevSleep
    /// timeout), µs from the moment the drive became idle.
    pub enter_after_us: u64,
    /// Time a command waits for the link to return to its active state
    /// (L1.2 exit, COMRESET-free wake from slumber), µs.
    pub exit_latency_us: u64,
}

/// One NVMe power state descriptor, with what was measured of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerStateSpec {
    /// Maximum power the drive reports for the state, W.
    pub max_w: f64,
    /// A non-operational (idle) state: no I/O is processed in it.
    #[serde(default)]
    pub non_operational: bool,
    /// Reported entry latency, µs.
    #[serde(default)]
    pub entry_latency_us: u64,
    /// Reported exit latency, µs.
    #[serde(default)]
    pub exit_latency_us: u64,
    /// Power actually drawn while resting in the state, W (default:
    /// `max_w`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_w: Option<f64>,
    /// Time a command actually waits for the drive to wake from the
    /// state, µs (default: `exit_latency_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_latency_us: Option<u64>,
}

/// Physical organisation of the flash array.
///
/// Dies are numbered channel first: die `d` sits on channel
/// `d % channels`, so consecutive dies are on different channels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometrySpec {
    /// Number of NAND channels (buses) of the controller.
    pub channels: u32,
    /// Dies (LUNs) on each channel (the most on any channel).
    pub dies_per_channel: u32,
    /// Total dies, when the channels are populated unevenly (dies are
    /// numbered channel first, so the first channels get the extra die).
    /// Default: `channels × dies_per_channel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dies: Option<u32>,
    /// Planes per die (1–8); multi-plane operations use all of them.
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block in native mode (wordlines × bits per cell).
    pub pages_per_block: u32,
    /// Bytes per page (user data; a multiple of 4096).
    pub page_bytes: u32,
    /// Bits per cell of the native mode: 1 SLC, 2 MLC, 3 TLC, 4 QLC.
    pub bits_per_cell: u32,
    /// Channels driven in lockstep (ganged): a program, read or erase goes
    /// to one die on each of `gang` channels at once, so the FTL's die is
    /// a gang of dies and its block a superblock (Agrawal et al. 2008,
    /// "ganging"; Kang et al. 2006, "superblock"). Must divide `channels`.
    /// Default 1: every die on its own.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub gang: u32,
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// NAND timings and channel bus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandSpec {
    /// The NAND part, e.g. `"Intel 64-layer 3D QLC, 1 Tb per die"`.
    /// Descriptive only (shown in reports), not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Channel bus rate in mega-transfers per second.
    pub channel_mts: u32,
    /// Channel bus width in bits (8 for ONFI/Toggle NAND).
    #[serde(default = "default_bus_width")]
    pub channel_width_bits: u32,
    /// Pages per plane programmed by one program operation in native mode:
    /// `bits_per_cell` for one-shot (3D) NAND, which programs all pages of a
    /// wordline together, 1 for NAND programmed page by page (planar MLC).
    pub program_pages: u32,
    /// Timings of the native cell mode.
    pub native: CellTimingSpec,
    /// Timings of blocks used in pSLC mode (required with an SLC cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc: Option<CellTimingSpec>,
    /// Spare (ECC parity and metadata) bytes per page, moved over the
    /// channel with the data (default 0).
    #[serde(default)]
    pub page_spare_bytes: u32,
    /// Whether a read that finds its die programming or erasing suspends
    /// that operation (costing `suspend_overhead_ns` and delaying it)
    /// instead of waiting for it (default false).
    #[serde(default)]
    pub read_suspend: bool,
    /// Time to suspend and later resume a program or erase, ns.
    #[serde(default)]
    pub suspend_overhead_ns: u64,
    /// Whether the controller reads with the NAND's cache register (ONFI
    /// READ CACHE): a die starts its next array read while the previous
    /// page is still crossing the bus (default true). Without, a die holds
    /// its page register, and so stays busy, until its data has been
    /// transferred out.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub read_cache: bool,
    /// Factory and grown bad blocks and the spare pool (absent: every
    /// block good forever; see [`BadBlockSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_blocks: Option<BadBlockSpec>,
}

fn default_bus_width() -> u32 {
    8
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Timings of one cell mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellTimingSpec {
    /// Array read time (tR) in ns, one value for every page type, or one per
    /// page type (lower, upper, extra, top) when they differ.
    pub tr_ns: Vec<u64>,
    /// Program time (tPROG) in ns of one program operation. One value, or
    /// one per page type for NAND programmed page by page.
    pub tprog_ns: Vec<u64>,
    /// Block erase time (tBERS) in ns.
    pub tbers_ns: u64,
    /// Rated program/erase cycles of a block used in this mode, for the
    /// health log's percentage used (optional; with an SLC cache, both
    /// modes or neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe_cycles: Option<u32>,
    /// Raw bit error rate of reads in this mode (absent: no errors; see
    /// [`RberSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<RberSpec>,
}

/// Host interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// `"nvme"` (PCIe, full duplex) or `"sata"` (half duplex, NCQ).
    pub interface: Interface,
    /// PCIe generation (1–5), NVMe only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_gen: Option<u32>,
    /// PCIe lanes (1, 2, 4, 8, 16), NVMe only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_lanes: Option<u32>,
    /// SATA line rate in Gb/s (1.5, 3 or 6), SATA only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sata_gbps: Option<f64>,
    /// Fraction of the encoded line rate left for data after protocol
    /// overhead (packet headers, FIS, flow control), 0 < x ≤ 1.
    pub link_efficiency: f64,
    /// Commands the drive accepts at once: NCQ depth 32 for SATA; NVMe
    /// queue entries for NVMe. More outstanding I/Os wait in the host.
    pub max_queue_depth: u32,
    /// Host memory buffer (NVMe HMB) the host lends a DRAM-less drive, in
    /// bytes; with `controller.dram_bytes = 0` and `[ftl.map_cache]` the
    /// map is cached there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hmb_bytes: Option<u64>,
    /// Latency in ns of one map lookup in the host memory buffer (a PCIe
    /// round trip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hmb_access_ns: Option<u64>,
    /// NVMe submission-queue arbitration (`None`: round robin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arbitration: Option<ArbitrationSpec>,
}

/// `[host.arbitration]`: how the controller picks the next command among
/// the host's submission queues (NVMe base specification 2.0, §3.4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArbitrationSpec {
    /// Round robin or weighted round robin with urgent priority class.
    pub mechanism: Arbitration,
    /// Arbitration burst: commands a queue gives in one turn, a power of
    /// two from 1 to 64 (NVMe's AB field is its log2); `None`: no limit
    /// (AB = 111b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Commands per round of the high, medium and low classes (NVMe's
    /// HPW, MPW, LPW plus one), each 1 to 256.
    #[serde(default = "default_weights")]
    pub weights: [u32; 3],
}

fn default_weights() -> [u32; 3] {
    [1, 1, 1]
}

impl ArbitrationSpec {
    /// The burst in commands (`u32::MAX`: no limit).
    pub fn burst_commands(&self) -> u32 {
        self.burst.unwrap_or(u32::MAX)
    }
}

/// NVMe's arbitration mechanisms (CC.AMS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Round robin (every controller supports it).
    RoundRobin,
    /// Weighted round robin with urgent priority class.
    WeightedRoundRobin,
}

/// Host interface kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// NVMe over PCIe: independent links in each direction.
    Nvme,
    /// Serial ATA: one half-duplex link.
    Sata,
}

/// Controller: processor, ECC and write buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    /// The controller's name, e.g. `"Silicon Motion SM2263"`. Descriptive
    /// only (shown in reports), not simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// DRAM beside the controller in bytes (0: DRAM-less; absent: not
    /// stated). Without `[ftl.map_cache]` descriptive only (the map is held
    /// in full); with it, `ftl.map_cache.dram_share` of it caches the map.
    /// The part that stages user data is `write_buffer_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bytes: Option<u64>,
    /// The controller's SRAM in bytes; a DRAM-less drive without a host
    /// memory buffer caches its map there (`[ftl.map_cache]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sram_bytes: Option<u64>,
    /// Processor cores that handle commands in parallel.
    pub cores: u32,
    /// Processor time per host command in ns (fetch, FTL lookup,
    /// completion); at high queue depth this caps IOPS.
    pub cmd_overhead_ns: u64,
    /// ECC decode latency in ns added to every NAND page read.
    pub ecc_decode_ns: u64,
    /// Bytes of DRAM/SRAM that hold user writes until they are programmed.
    pub write_buffer_bytes: u64,
    /// `"write-back"`: acknowledge a write once it is in the buffer;
    /// `"write-through"`: acknowledge once it is programmed.
    pub write_cache: WriteCachePolicy,
    /// Latency in ns of a read served from the write buffer.
    #[serde(default = "default_buffer_hit")]
    pub buffer_read_ns: u64,
    /// When buffered host data leaves the write buffer: `"program-done"`
    /// (default: once its program completes) or `"program-start"` (once the
    /// die starts programming it; the data then waits in the NAND page
    /// register, as controllers with a few KB of SRAM stream it).
    #[serde(default, skip_serializing_if = "BufferRelease::is_default")]
    pub buffer_release: BufferRelease,
    /// The order in which a die's operations run: `"reads-first"`
    /// (default: a host read goes ahead of programs, erases, garbage
    /// collection and folding that have not started) or `"fifo"` (in the
    /// order submitted: a host read waits for all work queued before it).
    #[serde(default, skip_serializing_if = "OpOrder::is_default")]
    pub op_order: OpOrder,
    /// The decoder's strength, read retry and soft decoding (needed with
    /// `[nand.native.errors]`; see [`EccSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc: Option<EccSpec>,
}

/// When buffered host data leaves the write buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferRelease {
    /// When the program that carries it completes.
    #[default]
    ProgramDone,
    /// When the die starts that program.
    ProgramStart,
}

impl BufferRelease {
    fn is_default(&self) -> bool {
        *self == BufferRelease::ProgramDone
    }
}

/// The order in which a die's queued operations run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpOrder {
    /// Host reads before queued programs, erases and relocation.
    #[default]
    ReadsFirst,
    /// First come, first served.
    Fifo,
}

impl OpOrder {
    fn is_default(&self) -> bool {
        *self == OpOrder::ReadsFirst
    }
}

fn default_buffer_hit() -> u64 {
    1_000
}

/// When the controller acknowledges a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCachePolicy {
    /// Acknowledge once the data is in the buffer.
    WriteBack,
    /// Acknowledge once the data is programmed to flash.
    WriteThrough,
}

/// Flash translation layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlSpec {
    /// Mapping scheme: `"page"` (every 4 KiB independently) or `"hybrid"`
    /// (log-block FTL: data blocks mapped per block, a few log blocks
    /// mapped per page; needs `[ftl.hybrid]`).
    pub mapping: MappingScheme,
    /// Parameters of the hybrid log-block FTL (`mapping = "hybrid"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridSpec>,
    /// The map cached in limited memory (page mapping only); absent: the
    /// whole map is held in DRAM at no cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_cache: Option<MapCacheSpec>,
    /// Wear leveling by erase count (page mapping only); absent: free
    /// blocks are used oldest-freed first and nothing else levels wear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear_leveling: Option<WearLevelingSpec>,
    /// Capacity the host sees, in bytes (a multiple of 4096). The rest of
    /// the raw flash is over-provisioning.
    pub user_capacity_bytes: u64,
    /// Victim selection: `"greedy"`, `"cost-benefit"` or `"fifo"`.
    pub gc_policy: GcPolicy,
    /// Foreground GC runs when a die has fewer free blocks than this.
    pub gc_low_free_blocks: u32,
    /// Background GC (during idle) reclaims until a die has this many free
    /// blocks.
    pub gc_high_free_blocks: u32,
    /// How foreground GC reclaims space: `"paced"` (default: below the
    /// high watermark every host program unit moves its share of a victim)
    /// or `"one-go"` (nothing until a die falls below the low watermark,
    /// then whole victims while the host waits, as firmware that collects
    /// in one go does).
    #[serde(default, skip_serializing_if = "GcMode::is_default")]
    pub gc_mode: GcMode,
    /// Host idle time in ns after which background work starts.
    pub idle_threshold_ns: u64,
    /// Keep a version stamp per logical page and per flash slot so that
    /// integrity can be checked (costs 8 bytes per 4 KiB; off for speed).
    #[serde(default)]
    pub version_stamps: bool,
}

/// `[ftl.wear_leveling]`: spreading erases over the blocks of a die.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WearLevelingSpec {
    /// Dynamic leveling, which free block a stream takes: `"oldest-free"`
    /// (the block freed longest ago, default) or `"least-worn"` (host data
    /// to the free block with the fewest erases, moved data to the one with
    /// the most).
    #[serde(default)]
    pub dynamic: DynamicWearLeveling,
    /// Static leveling: when a die's most erased block has been erased
    /// more than this many times more than its least erased block holding
    /// data, that block's cold data is moved off it. Absent: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_threshold: Option<u32>,
}

/// Dynamic wear leveling: which free block a stream takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DynamicWearLeveling {
    /// The block freed longest ago.
    #[default]
    OldestFree,
    /// By erase count: the youngest for host data, the most worn for data
    /// that GC and folding move.
    LeastWorn,
}

/// Mapping scheme of the FTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingScheme {
    /// Page-level map at 4 KiB granularity.
    Page,
    /// Hybrid log-block mapping (BAST / FAST family).
    Hybrid,
}

/// Hybrid log-block FTL. A logical block is one erase block's worth of
/// logical pages (striped over the dies one program unit at a time, so
/// that sequential data spreads over every die); its data block holds each
/// page at a fixed offset. Host writes go to log blocks, mapped per page;
/// merges fold a log block back into data blocks: a **switch** merge when
/// the log holds the whole logical block in order (it becomes the data
/// block), a **partial** merge when it holds an in-order prefix (the rest is
/// copied after it), otherwise a **full** merge (every valid page copied
/// into a new block, the old blocks erased).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HybridSpec {
    /// Log blocks in the whole drive, spread evenly over the dies (a
    /// multiple of the die count). With `association = "full"` one log block
    /// per die is the sequential log and the others are shared random logs.
    pub log_blocks: u32,
    /// `"block"` (BAST: each log block serves one logical block) or
    /// `"full"` (FAST: random log blocks are shared by every logical block of
    /// their die, plus one sequential log block per die for switch merges).
    pub association: LogAssociation,
    /// Which log block to merge when a die has none left: `"fifo"` (the
    /// one allocated first) or `"lru"` (the one written least recently).
    pub merge_policy: MergePolicy,
    /// Whether the firmware runs a merge on the core handling the command,
    /// so that core takes no other command until the merge's last NAND
    /// operation completes (single-core DRAM-less controllers; default
    /// false: merges only occupy the flash).
    #[serde(default)]
    pub merge_holds_core: bool,
    /// Whether a merge rewrites the whole logical block (block-level
    /// firmware that keeps no per-page validity: every logical block has a
    /// data block from the format on, so a full or partial merge reads
    /// every page it does not take from the log and programs every page of
    /// the new block, written by the host or not). Default false: a merge
    /// copies the pages the host has written and programs padding only up
    /// to the last of them.
    #[serde(default)]
    pub whole_block_merge: bool,
    /// Log blocks the firmware merges in one go when a die needs a log
    /// block and has none left (the least recently used / oldest first),
    /// instead of one at a time: the write that finds the pool exhausted
    /// waits for all of them, the next ones find free log blocks. At least
    /// 1 (the default: one merge per exhausted pool); a die with fewer log
    /// blocks (with full association: random logs) merges all it has.
    #[serde(default = "one")]
    pub merge_batch: u32,
    /// Bytes of the physical page a merge copies at a time (0, the
    /// default: a whole row, all planes of a multi-plane page, per read and
    /// per program). Smaller — the chips' page per plane, for firmware
    /// that copies without multi-plane operations — splits each of the
    /// merge's reads and programs into `row bytes / merge_page_bytes`
    /// single-plane operations, each paying `tR` or `tPROG`, one after
    /// another. Must divide the row (`page_bytes × planes_per_die`) and be
    /// at least 512.
    #[serde(default)]
    pub merge_page_bytes: u32,
    /// Which logical pages a logical block holds: `"striped"` (the
    /// default: consecutive program units go to consecutive dies, so a
    /// logical block is every `dies`-th unit and a write of several units
    /// touches several logical blocks) or `"contiguous"` (the BAST, FAST
    /// and superblock papers' layout: logical block `n` is the contiguous
    /// range of logical pages `n × block … (n + 1) × block − 1`, and
    /// consecutive logical blocks go to consecutive dies).
    #[serde(default, skip_serializing_if = "HybridLayout::is_striped")]
    pub layout: HybridLayout,
    /// With the striped layout, bytes of consecutive addresses a logical
    /// block takes before the next die's logical block continues (the
    /// stripe unit of the log over the dies): a whole number of program
    /// units that divides the block. Default: one program unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_bytes: Option<u64>,
}

fn one() -> u32 {
    1
}

/// Which logical pages make up a logical block of the hybrid FTL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HybridLayout {
    /// Every `dies`-th program unit of the address space.
    #[default]
    Striped,
    /// One block's worth of consecutive logical pages.
    Contiguous,
}

impl HybridLayout {
    fn is_striped(&self) -> bool {
        *self == HybridLayout::Striped
    }
}

/// How log blocks are associated with logical blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogAssociation {
    /// One logical block per log block (BAST).
    Block,
    /// Fully associative random logs plus a sequential log (FAST).
    Full,
}

/// Victim choice among log blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergePolicy {
    /// The log block allocated first.
    Fifo,
    /// The log block written least recently.
    Lru,
}

/// GC victim selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages first.
    Greedy,
    /// Maximise (1 − u) · age / (1 + u) (Rosenblum & Ousterhout's LFS).
    CostBenefit,
    /// Oldest sealed block first.
    Fifo,
}

/// How foreground GC reclaims space (`ftl.gc_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// Below the high watermark, every host program unit moves its share
    /// of a victim.
    #[default]
    Paced,
    /// Below the low watermark, whole victims while the host waits.
    OneGo,
}

impl GcMode {
    fn is_default(&self) -> bool {
        *self == GcMode::Paced
    }
}
