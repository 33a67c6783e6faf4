//! The line syntax of each trace format: detection from a first line,
//! and parsing one line into a request without allocating.
//!
//! Each parser returns `Ok(None)` for a line that is valid but not a
//! request (fio's file actions, blkparse events other than the replayed
//! one, a CSV header), and `Err((field, reason))` for a malformed line;
//! the reader adds the file and line number.

use std::collections::HashMap;

use super::{GroupMark, TraceFormat, TraceOp};

/// blkparse: most requests waiting for their completion event at once;
/// beyond, new requests are not paired (a trace without completion events
/// must not grow memory).
pub(super) const BLKPARSE_MAX_PENDING: usize = 1 << 16;

/// Longest request a trace line may give, bytes: below 4 GiB, as the
/// twin's commands carry a 32-bit length (and no block layer issues
/// larger). A longer one is an error naming its field, so that no line
/// can make a reader or the statistics work or allocate in proportion to
/// what it says.
pub const MAX_REQUEST_BYTES: u64 = u32::MAX as u64;

/// A request length field in units of `unit` bytes: the count and the
/// bytes, at most [`MAX_REQUEST_BYTES`].
#[inline]
fn length(field: &'static str, s: Option<&str>, unit: u64) -> Result<(u64, u64), LineError> {
    let n = uint(field, s)?;
    match n.checked_mul(unit) {
        Some(bytes) if bytes <= MAX_REQUEST_BYTES => Ok((n, bytes)),
        _ => Err((
            field,
            format!(
                "{n}{} is 4 GiB or more; requests must be shorter than 4 GiB",
                if unit == 1 { " bytes".to_string() } else { format!(" × {unit}-byte sectors") }
            ),
        )),
    }
}

/// A request as one line gives it, before times are made relative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Raw {
    /// Time in the format's ticks (see [`ns_per_tick`]); for fio v2 the
    /// µs of `wait`s so far.
    pub ticks: u64,
    pub op: TraceOp,
    pub address: u64,
    pub len: u64,
    pub len_bytes: u64,
    pub device: u64,
    pub response_ns: Option<u64>,
    /// blkparse with completion grouping on: the request's group, told
    /// from the completion events read so far (`None`: the reader
    /// decides from `response_ns`).
    pub group: Option<GroupMark>,
}

/// What a malformed line is told with: the field and what is wrong.
pub(super) type LineError = (&'static str, String);

/// State carried from line to line.
#[derive(Debug, Default)]
pub(super) struct LineState {
    /// fio v2: µs of `wait` actions so far.
    pub fio_wait_us: u64,
    /// blkparse: the summary after the events has begun.
    pub blkparse_summary: bool,
    /// blkparse: replay `D` (dispatch) events instead of `Q`.
    pub blkparse_dispatch: bool,
    /// A request line was seen (a CSV header is allowed only before).
    pub seen_request: bool,
    /// blkparse: replayed events waiting for their completion (`C`),
    /// by (device, sector): their time in ns and their group.
    pub blkparse_pending: HashMap<(u64, u64), (u64, u64)>,
    /// blkparse: mark each replayed request's group from the completion
    /// events (for `dependent` replay of a trace that has them).
    pub blkparse_groups: bool,
    /// blkparse: the current group's number (counted from 1; 0 before
    /// the first request).
    pub blkparse_group: u64,
    /// blkparse: requests of the current group still waiting for their
    /// completion.
    pub blkparse_group_pending: u64,
    /// blkparse: the current group's last completion so far, ns.
    pub blkparse_group_done: u64,
    /// blkparse: Σ (completion − queue or dispatch time) of the pairs, ns.
    pub blkparse_response_sum_ns: u128,
    /// blkparse: requests paired with their completion.
    pub blkparse_paired: u64,
}

/// Nanoseconds per time tick of a format.
pub(super) fn ns_per_tick(format: TraceFormat) -> u64 {
    match format {
        TraceFormat::Msr => 100,
        TraceFormat::FioV3 | TraceFormat::FioV2 => 1000,
        TraceFormat::Mqsim | TraceFormat::Blkparse | TraceFormat::Spc | TraceFormat::Synthetic => 1,
    }
}

/// The format of a trace whose first meaningful line is `line`.
pub(super) fn detect(line: &str) -> Option<TraceFormat> {
    let t = line.trim();
    if t.starts_with("fio version 2 iolog") {
        return Some(TraceFormat::FioV2);
    }
    if t.starts_with("fio version 3 iolog") {
        return Some(TraceFormat::FioV3);
    }
    let mut ws = t.split_ascii_whitespace();
    let first = ws.next()?;
    let ws_fields = 1 + ws.count();
    if is_dev_pair(first) && ws_fields >= 6 {
        return Some(TraceFormat::Blkparse);
    }
    if t.contains(',') {
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        if f.len() >= 7
            && ((is_uint(f[0]) && is_read_write(f[3]))
                || (f[0].eq_ignore_ascii_case("timestamp") && f[3].eq_ignore_ascii_case("type")))
        {
            return Some(TraceFormat::Msr);
        }
        if f.len() >= 5
            && is_uint(f[0])
            && is_uint(f[1])
            && is_uint(f[2])
            && matches!(f[3], "r" | "R" | "w" | "W")
            && parse_seconds(f[4]).is_ok()
        {
            return Some(TraceFormat::Spc);
        }
        return None;
    }
    let f: Vec<&str> = t.split_ascii_whitespace().collect();
    if f.len() == 5 && f.iter().all(|x| is_uint(x)) && matches!(f[4], "0" | "1") {
        return Some(TraceFormat::Mqsim);
    }
    None
}

fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_dev_pair(s: &str) -> bool {
    s.split_once(',').is_some_and(|(a, b)| is_uint(a) && is_uint(b))
}

fn is_read_write(s: &str) -> bool {
    s.eq_ignore_ascii_case("read") || s.eq_ignore_ascii_case("write")
}

#[inline]
fn uint(field: &'static str, s: Option<&str>) -> Result<u64, LineError> {
    let s = s.ok_or_else(|| (field, "missing".to_string()))?;
    let bad = || (field, format!("expected a whole number, found `{}`", shorten(s)));
    if s.is_empty() || s.len() > 20 {
        return Err(bad());
    }
    let mut n = 0u64;
    for b in s.bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(bad());
        }
        n = n.checked_mul(10).and_then(|n| n.checked_add(d as u64)).ok_or_else(bad)?;
    }
    Ok(n)
}

fn shorten(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `S[.fraction]` seconds, exactly, in ns (digits past the ninth are
/// dropped).
pub(super) fn parse_seconds(s: &str) -> Result<u64, String> {
    let bad = || format!("expected seconds like 12.345678, found `{}`", shorten(s));
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| bad())? };
    let mut ns = 0u64;
    for i in 0..9 {
        ns = ns * 10 + frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64);
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|x| x.checked_add(ns))
        .ok_or_else(|| format!("`{}` seconds is too large", shorten(s)))
}

fn too_many(field: &'static str, extra: Option<&str>) -> Result<(), LineError> {
    match extra {
        Some(x) => Err((field, format!("unexpected text `{}` after the last field", shorten(x)))),
        None => Ok(()),
    }
}

/// Parse one line (already known not to be blank or a `#` comment).
pub(super) fn parse_line(format: TraceFormat, line: &str, st: &mut LineState) -> Result<Option<Raw>, LineError> {
    let r = match format {
        TraceFormat::Mqsim => mqsim(line).map(Some),
        TraceFormat::Msr => msr(line, st.seen_request),
        TraceFormat::Blkparse => blkparse(line, st),
        TraceFormat::FioV2 | TraceFormat::FioV3 => fio(line, format, st),
        TraceFormat::Spc => spc(line, st.seen_request),
        TraceFormat::Synthetic => Err(("line", "a synthetic generator has no text lines".to_string())),
    }?;
    if r.is_some() {
        st.seen_request = true;
    }
    Ok(r)
}

/// `arrival_ns device lba size_in_sectors type` (type 0 write, 1 read).
fn mqsim(line: &str) -> Result<Raw, LineError> {
    let mut f = line.split_ascii_whitespace();
    let ticks = uint("arrival time", f.next())?;
    let device = uint("device", f.next())?;
    let address = uint("start sector", f.next())?;
    let (len, len_bytes) = length("size in sectors", f.next(), 512)?;
    let op = match f.next() {
        Some("0") => TraceOp::Write,
        Some("1") => TraceOp::Read,
        Some(x) => return Err(("type", format!("expected 0 (write) or 1 (read), found `{}`", shorten(x)))),
        None => return Err(("type", "missing".into())),
    };
    too_many("type", f.next())?;
    Ok(Raw { ticks, op, address, len, len_bytes, device, response_ns: None, group: None })
}

/// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
fn msr(line: &str, seen_request: bool) -> Result<Option<Raw>, LineError> {
    let mut f = line.split(',').map(str::trim);
    let first = f.next().unwrap_or("");
    if !seen_request && first.eq_ignore_ascii_case("timestamp") {
        return Ok(None); // header
    }
    let ticks = uint("Timestamp", Some(first))?;
    f.next().ok_or_else(|| ("Hostname", "missing".to_string()))?;
    let device = uint("DiskNumber", f.next())?;
    let op = match f.next() {
        Some(t) if t.eq_ignore_ascii_case("read") => TraceOp::Read,
        Some(t) if t.eq_ignore_ascii_case("write") => TraceOp::Write,
        Some(t) => return Err(("Type", format!("expected Read or Write, found `{}`", shorten(t)))),
        None => return Err(("Type", "missing".into())),
    };
    let address = uint("Offset", f.next())?;
    let (len, _) = length("Size", f.next(), 1)?;
    let response = uint("ResponseTime", f.next())?;
    too_many("ResponseTime", f.next())?;
    Ok(Some(Raw {
        ticks,
        op,
        address,
        len,
        len_bytes: len,
        device,
        response_ns: Some(response.saturating_mul(100)),
        group: None,
    }))
}

/// `ASU,LBA,Size,Opcode,Timestamp[,...]` (UMass traces may carry more
/// fields, which are ignored).
fn spc(line: &str, seen_request: bool) -> Result<Option<Raw>, LineError> {
    let mut f = line.split(',').map(str::trim);
    let first = f.next().unwrap_or("");
    if !seen_request && first.eq_ignore_ascii_case("asu") {
        return Ok(None); // header
    }
    let device = uint("ASU", Some(first))?;
    let address = uint("LBA", f.next())?;
    let (len, _) = length("Size", f.next(), 1)?;
    let op = match f.next() {
        Some("r" | "R") => TraceOp::Read,
        Some("w" | "W") => TraceOp::Write,
        Some(x) => return Err(("Opcode", format!("expected r or w, found `{}`", shorten(x)))),
        None => return Err(("Opcode", "missing".into())),
    };
    let ticks =
        parse_seconds(f.next().ok_or_else(|| ("Timestamp", "missing".to_string()))?).map_err(|e| ("Timestamp", e))?;
    Ok(Some(Raw { ticks, op, address, len, len_bytes: len, device, response_ns: None, group: None }))
}

/// blkparse's default output: `maj,min cpu seq secs.ns pid action rwbs
/// [sector + count] [process]`; the summary after the events (from a
/// line starting `CPU` or `Total`) is skipped.
fn blkparse(line: &str, st: &mut LineState) -> Result<Option<Raw>, LineError> {
    if st.blkparse_summary {
        return Ok(None);
    }
    let mut f = line.split_ascii_whitespace();
    let dev = f.next().unwrap_or("");
    let Some((maj, min)) = dev.split_once(',') else {
        if dev.starts_with("CPU") || dev.starts_with("Total") {
            st.blkparse_summary = true;
            return Ok(None);
        }
        return Err(("device", format!("expected major,minor such as 8,0, found `{}`", shorten(dev))));
    };
    let maj = uint("device", Some(maj))?;
    let min = uint("device", Some(min))?;
    uint("cpu", f.next())?;
    uint("sequence", f.next())?;
    let ticks = parse_seconds(f.next().ok_or_else(|| ("time", "missing".to_string()))?).map_err(|e| ("time", e))?;
    uint("pid", f.next())?;
    let action = f.next().ok_or_else(|| ("action", "missing".to_string()))?;
    let wanted = if st.blkparse_dispatch { "D" } else { "Q" };
    if action == "C" {
        // A completion: pair it with its request (same device and
        // sector) for the queue depth the recorded timing implies.
        let sector = f.nth(1).and_then(|s| s.parse::<u64>().ok());
        if let Some((t0, group)) = sector.and_then(|s| st.blkparse_pending.remove(&((maj << 20) | min, s))) {
            st.blkparse_response_sum_ns += ticks.saturating_sub(t0) as u128;
            st.blkparse_paired += 1;
            if st.blkparse_groups && group == st.blkparse_group {
                st.blkparse_group_pending -= 1;
                st.blkparse_group_done = st.blkparse_group_done.max(ticks);
            }
        }
        return Ok(None);
    }
    if matches!(action, "M" | "F") && !st.blkparse_dispatch {
        // A queued request merged into another: it completes with that
        // one, whose completion names the merged extent's first sector.
        // A back merge (M) appends the new request (its own sector gets
        // no completion); a front merge (F) prepends it (the request it
        // joins, starting `count` sectors later, gets none).
        let sector = f.nth(1).and_then(|s| s.parse::<u64>().ok());
        let count =
            if action == "F" && f.next() == Some("+") { f.next().and_then(|c| c.parse::<u64>().ok()) } else { Some(0) };
        let lost = sector.zip(count).map(|(s, c)| s + c);
        if let Some((_, group)) = lost.and_then(|s| st.blkparse_pending.remove(&((maj << 20) | min, s))) {
            if st.blkparse_groups && group == st.blkparse_group {
                st.blkparse_group_pending -= 1;
            }
        }
        return Ok(None);
    }
    if action != wanted {
        return Ok(None);
    }
    let rwbs = f.next().ok_or_else(|| ("rwbs", "missing".to_string()))?;
    if !rwbs.bytes().all(|b| b"RWDFSMANBE".contains(&b)) {
        return Err(("rwbs", format!("expected letters of RWDFSMANBE, found `{}`", shorten(rwbs))));
    }
    let device = (maj << 20) | min;
    let (address, len) = match f.next() {
        // A flush carries no sector: `Q FWS [kworker]`.
        None => (0, 0),
        Some(s) if s.starts_with('[') => (0, 0),
        Some(s) => {
            let address = uint("sector", Some(s))?;
            match f.next() {
                Some("+") => {}
                Some(x) => return Err(("+", format!("expected `+` between sector and count, found `{}`", shorten(x)))),
                None => return Err(("+", "missing".into())),
            }
            (address, length("count", f.next(), 512)?.0)
        }
    };
    let op = if rwbs.contains('D') {
        TraceOp::Trim
    } else if len == 0 && rwbs.contains('F') {
        // A flush without data (`FWS`): a write with a preflush and data
        // is replayed as the write.
        TraceOp::Flush
    } else if rwbs.contains('W') {
        TraceOp::Write
    } else if rwbs.contains('R') {
        TraceOp::Read
    } else {
        return Ok(None); // N: no data
    };
    let mut group = None;
    if st.blkparse_groups && len > 0 {
        // Joins the current group while one of its requests has not
        // completed (or completed at this very time).
        group = Some(if st.blkparse_group > 0 && (st.blkparse_group_pending > 0 || st.blkparse_group_done > ticks) {
            GroupMark::Joins
        } else {
            let idle_ns = if st.blkparse_group == 0 { 0 } else { ticks.saturating_sub(st.blkparse_group_done) };
            st.blkparse_group += 1;
            st.blkparse_group_pending = 0;
            st.blkparse_group_done = ticks;
            GroupMark::Starts { idle_ns }
        });
    }
    if len > 0 && st.blkparse_pending.len() < BLKPARSE_MAX_PENDING {
        if let Some((_, old)) = st.blkparse_pending.insert((device, address), (ticks, st.blkparse_group)) {
            // Its earlier request at this sector never completed: count
            // it done.
            if st.blkparse_groups && old == st.blkparse_group {
                st.blkparse_group_pending -= 1;
            }
        }
        if st.blkparse_groups {
            st.blkparse_group_pending += 1;
        }
    }
    // `length` bounds `len`: no overflow.
    Ok(Some(Raw { ticks, op, address, len, len_bytes: len * 512, device, response_ns: None, group }))
}

/// fio iolog v2 `filename action [offset length]` or v3 `timestamp
/// filename action [offset length]`.
fn fio(line: &str, format: TraceFormat, st: &mut LineState) -> Result<Option<Raw>, LineError> {
    let mut f = line.split_ascii_whitespace();
    let v3 = format == TraceFormat::FioV3;
    let ticks = if v3 { uint("timestamp", f.next())? } else { st.fio_wait_us };
    f.next().ok_or_else(|| ("filename", "missing".to_string()))?;
    let action = f.next().ok_or_else(|| ("action", "missing".to_string()))?;
    let op = match action {
        "add" | "open" | "close" => {
            too_many("action", f.next())?;
            return Ok(None);
        }
        "read" => TraceOp::Read,
        "write" => TraceOp::Write,
        "trim" => TraceOp::Trim,
        "sync" | "datasync" | "sync_file_range" => TraceOp::Flush,
        "wait" if !v3 => {
            let us = uint("offset", f.next())?;
            // fio: "Everything below 100 is discarded."
            if us >= 100 {
                st.fio_wait_us = st.fio_wait_us.saturating_add(us);
            }
            return Ok(None);
        }
        x => {
            return Err((
                "action",
                format!(
                    "expected add, open, close, read, write, trim, sync, datasync{}, found `{}`",
                    if v3 { "" } else { " or wait" },
                    shorten(x)
                ),
            ))
        }
    };
    let address = uint("offset", f.next())?;
    let (len, _) = length("length", f.next(), 1)?;
    too_many("length", f.next())?;
    Ok(Some(Raw { ticks, op, address, len, len_bytes: len, device: 0, response_ns: None, group: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(parse_seconds("0.000000001"), Ok(1));
        assert_eq!(parse_seconds("12.5"), Ok(12_500_000_000));
        assert_eq!(parse_seconds("3"), Ok(3_000_000_000));
        assert_eq!(parse_seconds(".25"), Ok(250_000_000));
        assert_eq!(parse_seconds("1.0000000019"), Ok(1_000_000_001));
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("1e3").is_err());
        assert!(parse_seconds(".").is_err());
    }

    #[test]
    fn detection() {
        assert_eq!(detect("fio version 2 iolog"), Some(TraceFormat::FioV2));
        assert_eq!(detect("fio version 3 iolog"), Some(TraceFormat::FioV3));
        assert_eq!(detect("0 1 2048 8 1"), Some(TraceFormat::Mqsim));
        assert_eq!(detect("128166372003061629,hm,1,Read,7014609920,24576,41286"), Some(TraceFormat::Msr));
        assert_eq!(detect("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"), Some(TraceFormat::Msr));
        assert_eq!(detect("0,20941264,8192,W,0.551706"), Some(TraceFormat::Spc));
        assert_eq!(
            detect("  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [jbd2/sda3-8]"),
            Some(TraceFormat::Blkparse)
        );
        assert_eq!(detect("hello world"), None);
        assert_eq!(detect("1 2 3"), None);
    }

    #[test]
    fn lengths_of_4_gib_or_more_are_refused_by_field() {
        let mut st = LineState::default();
        let max_sectors = MAX_REQUEST_BYTES / 512;
        let ok = format!("0 1 0 {max_sectors} 1");
        assert_eq!(parse_line(TraceFormat::Mqsim, &ok, &mut st).unwrap().unwrap().len_bytes, max_sectors * 512);
        for (format, line, field) in [
            (TraceFormat::Mqsim, format!("0 1 0 {} 1", max_sectors + 1), "size in sectors"),
            (TraceFormat::Mqsim, format!("0 1 0 {} 1", 1u64 << 55), "size in sectors"),
            (TraceFormat::Msr, format!("1,h,0,Read,0,{},1", 1u64 << 60), "Size"),
            (TraceFormat::Spc, "0,0,1000000000000000,r,0.1".to_string(), "Size"),
            (TraceFormat::FioV3, "0 f read 0 4294967296".to_string(), "length"),
            (TraceFormat::FioV2, format!("f write 0 {}", u64::MAX), "length"),
            (TraceFormat::Blkparse, format!("8,0 0 1 0.1 1 Q W 0 + {}", 1u64 << 60), "count"),
        ] {
            let e = parse_line(format, &line, &mut LineState::default()).unwrap_err();
            assert_eq!(e.0, field, "{line}");
            assert!(e.1.contains("4 GiB"), "{}", e.1);
        }
    }
}
