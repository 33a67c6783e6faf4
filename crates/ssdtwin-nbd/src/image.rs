//! Saving a served drive with its data (`ssdtwin serve --save FILE`) and
//! loading it again (`--load FILE`), so that work continues later.
//!
//! A drive image is the drive's whole state, not a replay: the spec it
//! was built from, every part of the drive ([`Drive::image`]: the FTL's
//! maps, block table, open blocks, SLC cache and GC state, erase counts,
//! the flash's and controller's counters, health, temperature) and every
//! page of client data by the physical slot that holds it.
//!
//! **What is saved.** Saving is a clean shutdown: outstanding commands
//! complete and the drive flushes its write buffer first (what a drive
//! does on the host's shutdown notification), so the image holds no
//! volatile data; to lose unflushed data, cut the power before saving
//! (`--power-loss-after N`). On load the clock
//! starts again at 0 (a drive has no notion of the time it was off) and
//! temperatures, counters and wear are those saved.
//!
//! **Format** (version [`VERSION`]): the magic bytes [`MAGIC`], a
//! little-endian `u32` version, then one zstd frame (with its content
//! checksum) holding, in postcard encoding, the header (spec as JSON,
//! the drive's name, the number of data pages), the drive's parts, then
//! each data page as a `u32` slot and its 4096 bytes, and the end marker
//! [`END`]. A file of another version, a foreign file, a truncated or
//! corrupted one is refused with an error naming the file and what is
//! wrong; the image is written to a temporary file beside the target and
//! renamed, so a crash leaves the previous image intact.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use ssdtwin::model::drive::DriveImage;
use ssdtwin::{Drive, DriveSpec};

use crate::store::PAGE;
use crate::twin::Twin;

/// The first bytes of a drive image.
pub const MAGIC: &[u8; 20] = b"ssdtwin drive image\n";
/// The format version this build writes and reads (2: the map cache's
/// journal state, issue 33, and the host stripe's per-die deficits, issue
/// 34; 3: an FDP drive's event logs, issue 35; 4: the Reclaim Unit Not
/// Fully Written event's count; 5: the hybrid FTL's stripe, issue 33; 6:
/// the host stream's per-placement runs held in place and a zoned drive's
/// zone-granular map, issue 35).
pub const VERSION: u32 = 6;
/// The last bytes inside the compressed frame.
pub const END: &[u8; 8] = b"ssdtwin.";

#[derive(Serialize, Deserialize)]
struct Header {
    /// The drive's spec, as JSON (the model is rebuilt from it).
    spec_json: String,
    /// Where the spec came from (preset name or file), for messages.
    origin: String,
    /// Data pages that follow the drive's parts.
    data_pages: u64,
}

/// Why an image could not be saved or loaded.
#[derive(Debug)]
pub struct ImageError(String);

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImageError {}

fn err(path: &Path, what: impl std::fmt::Display) -> ImageError {
    ImageError(format!("drive image {}: {what}", path.display()))
}

/// Save `twin` (quiesced first: see the module docs) with the spec it was
/// built from to `path`, atomically.
pub fn save(twin: &mut Twin, spec: &DriveSpec, origin: &str, path: &Path) -> Result<(), ImageError> {
    twin.quiesce();
    path.file_name().ok_or_else(|| err(path, "the path has no file name"))?;
    let tmp = ssdtwin::fsio::temp_beside(path);
    let written = write_image(twin, spec, origin, &tmp);
    if let Err(e) = written {
        ssdtwin::fsio::remove_temp(&tmp);
        return Err(err(path, format!("writing {}: {e}", tmp.display())));
    }
    ssdtwin::fsio::install(&tmp, path).map_err(|e| err(path, format!("renaming {} to it: {e}", tmp.display())))
}

fn write_image(twin: &Twin, spec: &DriveSpec, origin: &str, tmp: &Path) -> io::Result<()> {
    let mut file = BufWriter::new(ssdtwin::fsio::create_temp(tmp)?);
    file.write_all(MAGIC)?;
    file.write_all(&VERSION.to_le_bytes())?;
    let mut z = zstd::stream::write::Encoder::new(file, 3)?;
    z.include_checksum(true)?;
    let mut w = BufWriter::with_capacity(1 << 20, z);
    let header = Header {
        spec_json: serde_json::to_string(spec).map_err(io::Error::other)?,
        origin: origin.to_string(),
        data_pages: twin.store().live_pages(),
    };
    let to_io = |e: postcard::Error| io::Error::other(e.to_string());
    postcard::to_io(&header, &mut w).map_err(to_io)?;
    postcard::to_io(&twin.device().drive().image(), &mut w).map_err(to_io)?;
    for (slot, page) in twin.store().pages() {
        w.write_all(&slot.to_le_bytes())?;
        w.write_all(page)?;
    }
    w.write_all(END)?;
    let z = w.into_inner().map_err(|e| e.into_error())?;
    let mut file = z.finish()?;
    file.flush()?;
    file.get_ref().sync_all()
}

/// A drive loaded from an image: its spec, where the spec came from, and
/// the twin ready to serve (clock at 0).
pub struct Loaded {
    /// The drive's spec.
    pub spec: DriveSpec,
    /// The preset name or file the spec came from when it was saved.
    pub origin: String,
    /// The drive and its data.
    pub twin: Twin,
}

/// Load an image saved by [`save`].
pub fn load(path: &Path) -> Result<Loaded, ImageError> {
    let file = File::open(path).map_err(|e| err(path, e))?;
    let mut r = BufReader::new(file);
    let mut magic = [0u8; MAGIC.len()];
    r.read_exact(&mut magic).map_err(|_| err(path, "not a drive image (too short)"))?;
    if &magic != MAGIC {
        return Err(err(path, "not a drive image (wrong magic bytes; `ssdtwin serve --save` writes them)"));
    }
    let mut v = [0u8; 4];
    r.read_exact(&mut v).map_err(|_| err(path, "truncated after the magic bytes"))?;
    let version = u32::from_le_bytes(v);
    if version != VERSION {
        return Err(err(
            path,
            format!(
                "format version {version}, this build reads version {VERSION} (save it again with a matching build)"
            ),
        ));
    }
    let mut body = Vec::new();
    zstd::stream::read::Decoder::with_buffer(r)
        .and_then(|mut d| d.read_to_end(&mut body))
        .map_err(|e| err(path, format!("corrupt or truncated ({e})")))?;
    let corrupt = |what: &str, e: postcard::Error| err(path, format!("corrupt {what} ({e})"));
    let (header, rest): (Header, &[u8]) = postcard::take_from_bytes(&body).map_err(|e| corrupt("header", e))?;
    let spec: DriveSpec = serde_json::from_str(&header.spec_json)
        .map_err(|e| err(path, format!("its drive spec does not parse: {e}")))?;
    let model = spec.build(&header.origin).map_err(|e| err(path, format!("its drive spec is not valid: {e}")))?;
    let (image, mut rest): (DriveImage, &[u8]) =
        postcard::take_from_bytes(rest).map_err(|e| corrupt("drive state", e))?;
    let mut drive =
        Drive::from_image(model, image).map_err(|e| err(path, format!("drive state does not fit its spec: {e}")))?;
    // The clock restarts; the write buffer's cumulative stall time is a
    // counter, kept.
    drive.reset_time_keeping_counters();
    let mut twin = Twin::new(drive);
    let slots = twin.store().total_slots();
    for i in 0..header.data_pages {
        if rest.len() < 4 + PAGE {
            return Err(err(path, format!("truncated data: page {i} of {}", header.data_pages)));
        }
        let slot = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
        if slot as u64 >= slots {
            return Err(err(path, format!("corrupt data: page {i} at slot {slot}, the drive has {slots}")));
        }
        twin.put_saved_page(slot, &rest[4..4 + PAGE]);
        rest = &rest[4 + PAGE..];
    }
    if rest != END {
        return Err(err(path, "corrupt: the end marker is missing after the data"));
    }
    Ok(Loaded { spec, origin: header.origin, twin })
}
