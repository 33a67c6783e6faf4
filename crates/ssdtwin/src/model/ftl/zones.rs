//! The zone state machine of an NVMe zoned namespace (ZNS Command Set
//! Specification 1.1, §2.1 "Zoned Namespace" and its zone state machine
//! figure; TP 4053): each sequential zone's state and write pointer, the
//! open and active resource counts, and the status a command gets when the
//! rules refuse it. Pure logic, no flash: the FTL's zoned mapping
//! ([`super::zns`]) acts on the transitions (a reset erases, a finish pads).
//!
//! The rules, as the specification gives them:
//! - a write must start at the zone's write pointer (else *Zone Invalid
//!   Write*) and end within its capacity (*Zone Boundary Error*); a full,
//!   read-only or offline zone refuses writes (*Zone Is Full*, *Zone Is
//!   Read Only*, *Zone Is Offline*);
//! - writing an empty or closed zone opens it implicitly; opening needs an
//!   open resource (at most `max_open` zones implicitly or explicitly
//!   opened) and, from empty, an active one (at most `max_active` zones
//!   opened or closed): *Too Many Open Zones*, *Too Many Active Zones*.
//!   When the open resources are used up and an implicitly opened zone
//!   exists, the controller closes the one opened longest ago to make room,
//!   as the specification permits (QEMU's ZNS emulation does the same);
//! - Zone Management Send: open (empty, implicitly opened, closed →
//!   explicitly opened), close (opened → closed, or empty when nothing was
//!   written, as Linux's null_blk and ZBC do), finish (→ full), reset
//!   (→ empty), offline (read-only → offline); any other pair is *Invalid
//!   Zone State Transition*. With Select All, each action applies to the
//!   zones in the states it names (close: opened; finish: opened, closed;
//!   open: closed; reset: opened, closed, full; offline: read-only);
//! - a zone that fills to its capacity becomes full and gives its
//!   resources back.
//!
//! Read-only and offline are the drive's own decisions after media
//! failures; this model reaches them only through [`Zones::set_condition`]
//! (fault injection): no media path turns a zone read-only here.

use crate::model::params::ZnsModel;

/// A zone's state (the Zone State field of a zone descriptor, upper
/// nibble of byte 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum ZoneState {
    /// A conventional zone: no write pointer (Not Write Pointer, 0h).
    NotWritePointer = 0x0,
    /// ZSE: empty (1h).
    Empty = 0x1,
    /// ZSIO: implicitly opened by a write (2h).
    ImplicitlyOpened = 0x2,
    /// ZSEO: explicitly opened by Zone Management Send (3h).
    ExplicitlyOpened = 0x3,
    /// ZSC: closed, written in part, still active (4h).
    Closed = 0x4,
    /// ZSRO: read only (Dh).
    ReadOnly = 0xD,
    /// ZSF: full (Eh).
    Full = 0xE,
    /// ZSO: offline (Fh).
    Offline = 0xF,
}

impl ZoneState {
    /// Every state, in report order (for counts by state).
    pub const ALL: [ZoneState; 8] = [
        ZoneState::NotWritePointer,
        ZoneState::Empty,
        ZoneState::ImplicitlyOpened,
        ZoneState::ExplicitlyOpened,
        ZoneState::Closed,
        ZoneState::ReadOnly,
        ZoneState::Full,
        ZoneState::Offline,
    ];

    /// The specification's name of the state.
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::NotWritePointer => "not-write-pointer",
            ZoneState::Empty => "empty",
            ZoneState::ImplicitlyOpened => "implicitly-opened",
            ZoneState::ExplicitlyOpened => "explicitly-opened",
            ZoneState::Closed => "closed",
            ZoneState::ReadOnly => "read-only",
            ZoneState::Full => "full",
            ZoneState::Offline => "offline",
        }
    }

    /// Index in [`ZoneState::ALL`].
    pub fn index(self) -> usize {
        ZoneState::ALL.iter().position(|&s| s == self).expect("every state is listed")
    }

    fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
    }

    fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// Why the drive refused a command on a zoned namespace: the NVMe status
/// (status code type and code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ZoneStatus {
    /// Generic 01h: Invalid Command Opcode (a zone command to a
    /// conventional namespace).
    InvalidOpcode,
    /// Generic 02h: Invalid Field in Command (a Zone Append or management
    /// command not naming a zone's first LBA; an unaligned command; a
    /// deallocate of a sequential zone).
    InvalidField,
    /// Generic 80h: LBA Out of Range.
    LbaOutOfRange,
    /// Command specific B8h: Zone Boundary Error.
    ZoneBoundaryError,
    /// Command specific B9h: Zone Is Full.
    ZoneIsFull,
    /// Command specific BAh: Zone Is Read Only.
    ZoneIsReadOnly,
    /// Command specific BBh: Zone Is Offline.
    ZoneIsOffline,
    /// Command specific BCh: Zone Invalid Write.
    ZoneInvalidWrite,
    /// Command specific BDh: Too Many Active Zones.
    TooManyActiveZones,
    /// Command specific BEh: Too Many Open Zones.
    TooManyOpenZones,
    /// Command specific BFh: Invalid Zone State Transition.
    InvalidZoneStateTransition,
}

impl ZoneStatus {
    /// Every status, in a fixed order (Python's status codes 3, 4, ...).
    pub const ALL: [ZoneStatus; 11] = [
        ZoneStatus::InvalidOpcode,
        ZoneStatus::InvalidField,
        ZoneStatus::LbaOutOfRange,
        ZoneStatus::ZoneBoundaryError,
        ZoneStatus::ZoneIsFull,
        ZoneStatus::ZoneIsReadOnly,
        ZoneStatus::ZoneIsOffline,
        ZoneStatus::ZoneInvalidWrite,
        ZoneStatus::TooManyActiveZones,
        ZoneStatus::TooManyOpenZones,
        ZoneStatus::InvalidZoneStateTransition,
    ];

    /// Index in [`ZoneStatus::ALL`].
    pub fn index(self) -> usize {
        ZoneStatus::ALL.iter().position(|&s| s == self).expect("every status is listed")
    }

    /// Status code type (bits 10:8) and status code (7:0), as Linux's
    /// `nvme.h` spells them (`NVME_SC_ZONE_INVALID_WRITE` = 0x1bc, ...).
    pub fn code(self) -> u16 {
        match self {
            ZoneStatus::InvalidOpcode => 0x001,
            ZoneStatus::InvalidField => 0x002,
            ZoneStatus::LbaOutOfRange => 0x080,
            ZoneStatus::ZoneBoundaryError => 0x1b8,
            ZoneStatus::ZoneIsFull => 0x1b9,
            ZoneStatus::ZoneIsReadOnly => 0x1ba,
            ZoneStatus::ZoneIsOffline => 0x1bb,
            ZoneStatus::ZoneInvalidWrite => 0x1bc,
            ZoneStatus::TooManyActiveZones => 0x1bd,
            ZoneStatus::TooManyOpenZones => 0x1be,
            ZoneStatus::InvalidZoneStateTransition => 0x1bf,
        }
    }

    /// The specification's name of the status.
    pub fn name(self) -> &'static str {
        match self {
            ZoneStatus::InvalidOpcode => "Invalid Command Opcode",
            ZoneStatus::InvalidField => "Invalid Field in Command",
            ZoneStatus::LbaOutOfRange => "LBA Out of Range",
            ZoneStatus::ZoneBoundaryError => "Zone Boundary Error",
            ZoneStatus::ZoneIsFull => "Zone Is Full",
            ZoneStatus::ZoneIsReadOnly => "Zone Is Read Only",
            ZoneStatus::ZoneIsOffline => "Zone Is Offline",
            ZoneStatus::ZoneInvalidWrite => "Zone Invalid Write",
            ZoneStatus::TooManyActiveZones => "Too Many Active Zones",
            ZoneStatus::TooManyOpenZones => "Too Many Open Zones",
            ZoneStatus::InvalidZoneStateTransition => "Invalid Zone State Transition",
        }
    }
}

/// A Zone Management Send action (Zone Send Action field values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneAction {
    /// Close Zone (01h).
    Close,
    /// Finish Zone (02h).
    Finish,
    /// Open Zone (03h).
    Open,
    /// Reset Zone (04h).
    Reset,
    /// Offline Zone (05h).
    Offline,
}

impl ZoneAction {
    /// Whether Select All applies the action to a zone in `s`.
    fn selects(self, s: ZoneState) -> bool {
        match self {
            ZoneAction::Close => s.is_open(),
            ZoneAction::Finish => s.is_active(),
            ZoneAction::Open => s == ZoneState::Closed,
            ZoneAction::Reset => s.is_active() || s == ZoneState::Full,
            ZoneAction::Offline => s == ZoneState::ReadOnly,
        }
    }
}

/// One zone as Zone Management Receive (Report Zones) describes it, in
/// 4 KiB logical pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneDescriptor {
    /// Its state (`NotWritePointer` for a conventional zone).
    pub state: ZoneState,
    /// First logical page (ZSLBA).
    pub start: u32,
    /// Writable pages (ZCAP).
    pub capacity: u32,
    /// Write pointer, absolute (`None` where the specification leaves it
    /// undefined: full, read-only, offline and conventional zones).
    pub wp: Option<u32>,
}

/// A transition done by [`Zones::send`]: what the FTL must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The zone.
    pub zone: u32,
    /// Its state before.
    pub from: ZoneState,
    /// Pages written in it before.
    pub written: u32,
}

/// Every zone's state and write pointer, and the resources in use.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Zones {
    model: ZnsModel,
    state: Vec<ZoneState>,
    /// Pages written in each zone (its write pointer relative to its start).
    wp: Vec<u32>,
    open: u32,
    active: u32,
    /// Implicitly opened zones, opened longest ago first (at most
    /// `max_open`; changed only when a zone opens or closes).
    implicit: Vec<u32>,
    /// Changes of any zone's state or write pointer so far (not saved:
    /// only equality within one run is asked of it).
    #[serde(skip)]
    changes: u64,
}

impl Zones {
    /// Every sequential zone empty.
    pub fn new(model: &ZnsModel) -> Zones {
        let mut state = vec![ZoneState::Empty; model.zones as usize];
        state[..model.conventional as usize].fill(ZoneState::NotWritePointer);
        Zones {
            model: *model,
            state,
            wp: vec![0; model.zones as usize],
            open: 0,
            active: 0,
            implicit: Vec::with_capacity(model.max_open as usize),
            changes: 0,
        }
    }

    /// The namespace's zone parameters.
    pub fn model(&self) -> &ZnsModel {
        &self.model
    }

    /// Zones currently open (implicitly or explicitly) and active.
    pub fn resources(&self) -> (u32, u32) {
        (self.open, self.active)
    }

    /// Zone `z`'s state.
    #[inline]
    pub fn state(&self, z: u32) -> ZoneState {
        self.state[z as usize]
    }

    /// Pages written in zone `z` (its write pointer relative to its start).
    #[inline]
    pub fn written(&self, z: u32) -> u32 {
        self.wp[z as usize]
    }

    /// The zone holding logical page `lpn`.
    #[inline]
    pub fn zone_of(&self, lpn: u32) -> u32 {
        lpn / self.model.zone_lpns
    }

    /// Zone `z` as Report Zones describes it.
    pub fn descriptor(&self, z: u32) -> ZoneDescriptor {
        let s = self.state[z as usize];
        let start = z * self.model.zone_lpns;
        let conventional = s == ZoneState::NotWritePointer;
        let capacity = if conventional { self.model.zone_lpns } else { self.model.zone_cap_lpns };
        let defined = !conventional && !matches!(s, ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline);
        ZoneDescriptor { state: s, start, capacity, wp: defined.then(|| start + self.wp[z as usize]) }
    }

    /// How many zones are in each state (indexed as [`ZoneState::ALL`]).
    pub fn counts(&self) -> [u32; 8] {
        let mut c = [0u32; 8];
        for s in &self.state {
            c[s.index()] += 1;
        }
        c
    }

    /// Forget everything (format): every sequential zone empty.
    pub fn reset_all_state(&mut self) {
        let changes = self.changes + 1;
        *self = Zones::new(&self.model);
        self.changes = changes;
    }

    /// How many times a zone's state or write pointer changed: equal
    /// counts, no zone changed in between.
    #[inline]
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// A write of `n` pages at `first`: check it against the rules, open
    /// the zone if needed and move its write pointer. Returns the zone
    /// written, or the status refusing the write (nothing changes then).
    pub fn write(&mut self, first: u32, n: u32) -> Result<u32, ZoneStatus> {
        let end = first as u64 + n as u64;
        if end > self.model.zones as u64 * self.model.zone_lpns as u64 {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        let z = self.zone_of(first);
        if z < self.model.conventional {
            // Randomly writable, but not across into a sequential zone.
            return if end > self.model.conventional as u64 * self.model.zone_lpns as u64 {
                Err(ZoneStatus::ZoneBoundaryError)
            } else {
                Ok(z)
            };
        }
        self.writable(z)?;
        let at = first - z * self.model.zone_lpns;
        if at != self.wp[z as usize] {
            return Err(ZoneStatus::ZoneInvalidWrite);
        }
        self.advance(z, n)?;
        Ok(z)
    }

    /// A Zone Append of `n` pages to the zone starting at `zslba`: the
    /// drive writes them at the write pointer and returns that first page.
    pub fn append(&mut self, zslba: u32, n: u32) -> Result<u32, ZoneStatus> {
        if zslba as u64 >= self.model.zones as u64 * self.model.zone_lpns as u64 {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        let z = self.zone_of(zslba);
        if zslba % self.model.zone_lpns != 0 || z < self.model.conventional {
            return Err(ZoneStatus::InvalidField);
        }
        self.writable(z)?;
        let at = z * self.model.zone_lpns + self.wp[z as usize];
        self.advance(z, n)?;
        Ok(at)
    }

    /// A read of `n` pages at `first`: within the namespace, not across a
    /// zone boundary (the twin does not report Read Across Zone
    /// Boundaries), not in an offline zone.
    #[inline]
    pub fn check_read(&self, first: u32, n: u32) -> Result<(), ZoneStatus> {
        // One division gives the zone and the offset in it: a read within
        // its zone ends in the namespace when the zone is in it.
        let zl = self.model.zone_lpns;
        let z = first / zl;
        let within = first - z * zl;
        match self.state.get(z as usize) {
            None => Err(ZoneStatus::LbaOutOfRange),
            Some(_) if within as u64 + n as u64 > zl as u64 => {
                let end = first as u64 + n as u64;
                Err(if end > self.model.zones as u64 * zl as u64 {
                    ZoneStatus::LbaOutOfRange
                } else {
                    ZoneStatus::ZoneBoundaryError
                })
            }
            Some(ZoneState::Offline) => Err(ZoneStatus::ZoneIsOffline),
            Some(_) => Ok(()),
        }
    }

    /// A deallocate of `n` pages at `first`: only in conventional zones (a
    /// sequential zone's data goes with a zone reset).
    pub fn check_trim(&self, first: u32, n: u32) -> Result<(), ZoneStatus> {
        let end = first as u64 + n as u64;
        if end > self.model.zones as u64 * self.model.zone_lpns as u64 {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        if end > self.model.conventional as u64 * self.model.zone_lpns as u64 {
            return Err(ZoneStatus::InvalidField);
        }
        Ok(())
    }

    /// Zone Management Send of `action` to the zone starting at page
    /// `zslba`. Returns the transition, or the status refusing it.
    pub fn send(&mut self, action: ZoneAction, zslba: u32) -> Result<Transition, ZoneStatus> {
        if zslba as u64 >= self.model.zones as u64 * self.model.zone_lpns as u64 {
            return Err(ZoneStatus::LbaOutOfRange);
        }
        let z = self.zone_of(zslba);
        if zslba % self.model.zone_lpns != 0 || z < self.model.conventional {
            return Err(ZoneStatus::InvalidField);
        }
        self.apply(action, z)
    }

    /// Zone Management Send of `action` with Select All: the zones it
    /// applies to, in zone order. Opening all closed zones needs an open
    /// resource for each, or none opens (*Too Many Open Zones*).
    pub fn send_all(&mut self, action: ZoneAction) -> Result<Vec<Transition>, ZoneStatus> {
        let chosen: Vec<u32> =
            (self.model.conventional..self.model.zones).filter(|&z| action.selects(self.state[z as usize])).collect();
        if action == ZoneAction::Open && self.open + chosen.len() as u32 > self.model.max_open {
            return Err(ZoneStatus::TooManyOpenZones);
        }
        chosen.into_iter().map(|z| self.apply(action, z)).collect()
    }

    /// Set zone `z` read-only or offline, as a drive does when its media
    /// fails (fault injection: nothing else here reaches those states).
    /// Only a sequential zone, only to read-only or offline (else
    /// *Invalid Field in Command*).
    pub fn set_condition(&mut self, z: u32, state: ZoneState) -> Result<(), ZoneStatus> {
        if !matches!(state, ZoneState::ReadOnly | ZoneState::Offline)
            || z < self.model.conventional
            || z >= self.model.zones
        {
            return Err(ZoneStatus::InvalidField);
        }
        self.changes += 1;
        self.release(z);
        self.state[z as usize] = state;
        Ok(())
    }

    fn apply(&mut self, action: ZoneAction, z: u32) -> Result<Transition, ZoneStatus> {
        use ZoneState::*;
        self.changes += 1;
        let from = self.state[z as usize];
        let t = Transition { zone: z, from, written: self.wp[z as usize] };
        let invalid = Err(ZoneStatus::InvalidZoneStateTransition);
        match action {
            ZoneAction::Open => match from {
                Empty | Closed => {
                    self.take_resources(z)?;
                    self.state[z as usize] = ExplicitlyOpened;
                }
                ImplicitlyOpened => {
                    self.implicit.retain(|&i| i != z);
                    self.state[z as usize] = ExplicitlyOpened;
                }
                ExplicitlyOpened => {}
                _ => return invalid,
            },
            ZoneAction::Close => match from {
                ImplicitlyOpened | ExplicitlyOpened => self.close(z),
                Closed => {}
                _ => return invalid,
            },
            ZoneAction::Finish => match from {
                Empty | ImplicitlyOpened | ExplicitlyOpened | Closed => {
                    if from == Empty && self.active >= self.model.max_active {
                        return Err(ZoneStatus::TooManyActiveZones);
                    }
                    self.release(z);
                    self.state[z as usize] = Full;
                    self.wp[z as usize] = self.model.zone_cap_lpns;
                }
                Full => {}
                _ => return invalid,
            },
            ZoneAction::Reset => match from {
                Empty | ImplicitlyOpened | ExplicitlyOpened | Closed | Full => {
                    self.release(z);
                    self.state[z as usize] = Empty;
                    self.wp[z as usize] = 0;
                }
                _ => return invalid,
            },
            ZoneAction::Offline => match from {
                ReadOnly => self.state[z as usize] = Offline,
                Offline => {}
                _ => return invalid,
            },
        }
        Ok(t)
    }

    /// Refuse writes to zones that take none.
    fn writable(&self, z: u32) -> Result<(), ZoneStatus> {
        match self.state[z as usize] {
            ZoneState::Full => Err(ZoneStatus::ZoneIsFull),
            ZoneState::ReadOnly => Err(ZoneStatus::ZoneIsReadOnly),
            ZoneState::Offline => Err(ZoneStatus::ZoneIsOffline),
            _ => Ok(()),
        }
    }

    /// Write `n` pages at zone `z`'s write pointer (already checked to be
    /// where the write starts): bounds, implicit open, full at capacity.
    fn advance(&mut self, z: u32, n: u32) -> Result<(), ZoneStatus> {
        let zi = z as usize;
        if self.wp[zi] as u64 + n as u64 > self.model.zone_cap_lpns as u64 {
            return Err(ZoneStatus::ZoneBoundaryError);
        }
        self.changes += 1;
        if matches!(self.state[zi], ZoneState::Empty | ZoneState::Closed) {
            self.take_resources(z)?;
            self.state[zi] = ZoneState::ImplicitlyOpened;
            self.implicit.push(z);
        }
        self.wp[zi] += n;
        if self.wp[zi] == self.model.zone_cap_lpns {
            self.release(z);
            self.state[zi] = ZoneState::Full;
        }
        Ok(())
    }

    /// Open resources (and, from empty, an active one) for zone `z`,
    /// closing the implicitly opened zone opened longest ago if the open
    /// ones are used up. Changes nothing when refused.
    fn take_resources(&mut self, z: u32) -> Result<(), ZoneStatus> {
        let from = self.state[z as usize];
        if from == ZoneState::Empty && self.active >= self.model.max_active {
            return Err(ZoneStatus::TooManyActiveZones);
        }
        if self.open >= self.model.max_open {
            if self.implicit.is_empty() {
                return Err(ZoneStatus::TooManyOpenZones);
            }
            let oldest = self.implicit[0];
            self.close(oldest);
        }
        if from == ZoneState::Empty {
            self.active += 1;
        }
        self.open += 1;
        Ok(())
    }

    /// Close an opened zone: closed, or empty when nothing was written.
    fn close(&mut self, z: u32) {
        let zi = z as usize;
        debug_assert!(self.state[zi].is_open());
        self.implicit.retain(|&i| i != z);
        self.open -= 1;
        if self.wp[zi] == 0 {
            self.active -= 1;
            self.state[zi] = ZoneState::Empty;
        } else {
            self.state[zi] = ZoneState::Closed;
        }
    }

    /// Give back zone `z`'s resources (it leaves the open and closed
    /// states; the caller sets the new one).
    fn release(&mut self, z: u32) {
        let s = self.state[z as usize];
        if s.is_open() {
            self.open -= 1;
            self.implicit.retain(|&i| i != z);
        }
        if s.is_active() {
            self.active -= 1;
        }
    }
}
