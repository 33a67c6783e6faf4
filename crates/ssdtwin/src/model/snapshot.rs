//! A drive's state kept compactly, to start several runs from it.
//!
//! A suite prepares a drive state once (a full drive, the test data) and
//! starts several tests from it. Keeping a clone costs a second copy of
//! the drive's per-page arrays — 2 GB for a 1 TB drive — for the whole
//! pass. A [`DriveSnapshot`] keeps those arrays packed ([`PackedU32`]:
//! runs of arithmetic progressions, which is what a sequentially written
//! map is; random parts are kept as they are, so a snapshot is never larger
//! than a clone) and everything else as a plain clone. Restoring writes the
//! arrays back into a drive's own memory, so no second drive is allocated
//! while it happens. A restored drive equals the snapshotted one in every
//! field.
//!
//! Left out: the model (shared by value in both), and any compression of
//! a randomly written map (a steady-state drive's snapshot costs what a
//! clone costs).

use crate::mem::PackedU32;
use crate::model::drive::Drive;

/// A drive's state, its per-page arrays packed.
#[derive(Debug, Clone)]
pub struct DriveSnapshot {
    /// The drive without its per-page arrays.
    shell: Drive,
    /// The per-page arrays, packed.
    arrays: [PackedU32; 4],
}

impl DriveSnapshot {
    /// Snapshot `drive` (unchanged on return: its arrays are moved out
    /// while the rest is cloned, then put back).
    pub fn take(drive: &mut Drive) -> DriveSnapshot {
        let arrays = drive.ftl.take_page_arrays();
        let shell = drive.clone();
        let packed = [0, 1, 2, 3].map(|i| PackedU32::pack(&arrays.0[i]));
        drive.ftl.put_page_arrays(arrays);

        DriveSnapshot { shell, arrays: packed }
    }

    /// Make `drive` the snapshotted drive again, reusing its array memory
    /// when the sizes agree (the same drive model).
    pub fn restore_into(&self, drive: &mut Drive) {
        let mut arrays = drive.ftl.take_page_arrays();
        *drive = self.shell.clone();
        for (packed, array) in self.arrays.iter().zip(arrays.0.iter_mut()) {
            packed.unpack_into(array);
        }
        drive.ftl.put_page_arrays(arrays);
    }

    /// A new drive in the snapshotted state.
    pub fn to_drive(&self) -> Drive {
        let mut drive = self.shell.clone();
        self.restore_into(&mut drive);
        drive
    }

    /// Heap bytes of the packed arrays (the shell's are the drive's own
    /// small tables).
    pub fn packed_bytes(&self) -> usize {
        self.arrays.iter().map(PackedU32::heap_bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::DriveSnapshot;
    use crate::model::drive::Drive;
    use crate::run::state::DriveState;
    use crate::spec::DriveSpec;

    fn small_drive() -> Drive {
        let spec = DriveSpec::load(
            "generic-tlc-nvme",
            &["geometry.blocks_per_plane=64".to_string(), "ftl.user_capacity_bytes=999997440".to_string()],
        )
        .expect("preset");
        Drive::new(spec.build("test").expect("valid"))
    }

    /// A restored drive is the snapshotted one: its image (every part's
    /// state, maps included) serialises to the same bytes, for a
    /// sequentially filled drive (packed small) and a randomly written one
    /// (kept raw), restored over a drive in another state.
    #[test]
    fn a_restored_drive_equals_the_snapshotted_one() {
        for state in [DriveState::Filled(100.0), DriveState::SteadyExact] {
            let mut d = small_drive();
            state.apply_fast(&mut d, 3);
            let before = serde_json::to_vec(&d.image()).unwrap();
            let snap = DriveSnapshot::take(&mut d);
            assert_eq!(serde_json::to_vec(&d.image()).unwrap(), before, "snapshot left {state} as it was");
            let mut other = small_drive();
            DriveState::Filled(30.0).apply_fast(&mut other, 9);
            snap.restore_into(&mut other);
            assert_eq!(serde_json::to_vec(&other.image()).unwrap(), before, "{state} restored");
            assert_eq!(serde_json::to_vec(&snap.to_drive().image()).unwrap(), before);
            let raw = d.model.user_lpns as usize * 4 + d.model.geometry.total_slots as usize * 4;
            if state == DriveState::Filled(100.0) {
                assert!(snap.packed_bytes() * 20 < raw, "a full drive packs: {} of {raw}", snap.packed_bytes());
            } else {
                assert!(snap.packed_bytes() <= raw + raw / 100, "never larger than raw: {}", snap.packed_bytes());
            }
        }
    }
}
