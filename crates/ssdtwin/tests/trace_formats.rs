//! Trace formats: hand-written files with every field variant parse to
//! the expected requests, malformed lines give an error naming the file,
//! line and field, the format is told from the content, compressed files
//! are read as streams, and random bytes never panic the reader.

use std::io::{BufRead, Cursor, Write};

use proptest::prelude::*;
use ssdtwin::run::trace::{TraceFormat, TraceOp, TraceReader, TraceRequest, TraceSpec, TraceStats};
use ssdtwin::TraceError;

use crate::common::TempFile;

fn reader(text: &str, format: Option<TraceFormat>) -> Result<TraceReader, TraceError> {
    let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(text.as_bytes().to_vec()));
    TraceReader::from_reader("t.trace", input, format)
}

fn all(text: &str, format: Option<TraceFormat>) -> Result<(TraceFormat, Vec<TraceRequest>), TraceError> {
    let mut r = reader(text, format)?;
    let mut out = Vec::new();
    while let Some(req) = r.next_request()? {
        out.push(req);
    }
    Ok((r.format(), out))
}

/// (time_ns, op, address, len_bytes, device, line)
fn brief(reqs: &[TraceRequest]) -> Vec<(u64, TraceOp, u64, u64, u64, u64)> {
    reqs.iter().map(|r| (r.time_ns, r.op, r.address, r.len_bytes, r.device, r.line)).collect()
}

fn parse_error(text: &str, format: Option<TraceFormat>) -> (u64, &'static str, String) {
    match all(text, format) {
        Err(TraceError::Parse { file, line, field, reason }) => {
            assert_eq!(file, "t.trace");
            (line, field, reason)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// `bytes` written as `name` in a temporary directory of its own, removed
/// when the returned file is dropped.
pub fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
    TempFile::new(name, bytes)
}

#[test]
fn mqsim_lines() {
    let text = "# MQSim trace\n1000 0 2048 8 1\n\n1500 1 16 1 0\n1500 0 0 256 0\n";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::Mqsim);
    assert_eq!(
        brief(&reqs),
        vec![
            (0, TraceOp::Read, 2048, 4096, 0, 2),
            (500, TraceOp::Write, 16, 512, 1, 4),
            (500, TraceOp::Write, 0, 131072, 0, 5),
        ]
    );
    assert_eq!(
        parse_error("0 0 0 8 1\n10 0 0 8 2\n", None),
        (2, "type", "expected 0 (write) or 1 (read), found `2`".into())
    );
    assert_eq!(parse_error("0 0 0 8 1\n10 0 x 8 1\n", None).1, "start sector");
    assert_eq!(parse_error("0 0 0 8 1\n10 0 8 1\n", None).1, "type");
    assert_eq!(parse_error("0 0 0 8 1\n10 0 8 1 1 7\n", None).1, "type");
}

#[test]
fn msr_lines() {
    let text = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
                128166372003061629,hm,1,Read,7014609920,24576,41286\n\
                128166372003061729,hm,0,write,512,512,100\n\
                128166372013061629, hm , 1 , WRITE , 4096 , 4096 , 7\n";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::Msr);
    assert_eq!(
        brief(&reqs),
        vec![
            (0, TraceOp::Read, 7014609920, 24576, 1, 2),
            (10_000, TraceOp::Write, 512, 512, 0, 3),
            (1_000_000_000, TraceOp::Write, 4096, 4096, 1, 4),
        ]
    );
    assert_eq!(reqs[0].response_ns, Some(4_128_600));
    let bad = "128166372003061629,hm,1,Read,7014609920,24576,41286\n128166372003061630,hm,1,Erase,0,512,1\n";
    assert_eq!(parse_error(bad, None), (2, "Type", "expected Read or Write, found `Erase`".into()));
    let short = "128166372003061629,hm,1,Read,7014609920,24576,41286\n128166372003061630,hm,1,Read,0,512\n";
    assert_eq!(parse_error(short, None), (2, "ResponseTime", "missing".into()));
}

#[test]
fn spc_lines() {
    let text = "0,20941264,8192,W,0.551706\n1,3436288,15872,r,0.554041\n0,0,512,R,1.5,extra\n";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::Spc);
    assert_eq!(
        brief(&reqs),
        vec![
            (0, TraceOp::Write, 20941264, 8192, 0, 1),
            (2_335_000, TraceOp::Read, 3436288, 15872, 1, 2),
            (948_294_000, TraceOp::Read, 0, 512, 0, 3),
        ]
    );
    assert_eq!(parse_error("0,1,512,w,0.5\n0,1,512,w,soon\n", None).1, "Timestamp");
    assert_eq!(parse_error("0,1,512,w,0.5\n0,1,512,x,1\n", None).1, "Opcode");
}

#[test]
fn blkparse_lines() {
    let text = "\
  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [jbd2/sda3-8]
  8,0    3        2     0.000001000  4162  G  WS 3417048 + 8 [jbd2/sda3-8]
  8,0    3        3     0.000003000  4162  D  WS 3417048 + 8 [jbd2/sda3-8]
  8,0    1        4     0.000100000     0  C  WS 3417048 + 8 [0]
  8,0    3        5     0.001000000  4162  Q   R 100 + 16 [cat]
  8,16   3        6     0.002000000  4162  Q   D 2048 + 2048 [fstrim]
  8,0    3        7     0.003000000  4162  Q FWS [kworker/3:1H]
  8,0    3        8     1.500000000  4162  Q  RA 200 + 8 [cat]
  8,0    3        9     1.600000000  4162  Q   N 0 + 0 [cat]
CPU3 (8,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           1,        4KiB
Total (8,0):
";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::Blkparse);
    let sda = 8 << 20;
    assert_eq!(
        brief(&reqs),
        vec![
            (0, TraceOp::Write, 3417048, 4096, sda, 1),
            (1_000_000, TraceOp::Read, 100, 8192, sda, 5),
            (2_000_000, TraceOp::Trim, 2048, 1 << 20, sda | 16, 6),
            (3_000_000, TraceOp::Flush, 0, 0, sda, 7),
            (1_500_000_000, TraceOp::Read, 200, 4096, sda, 8),
        ]
    );
    // Dispatch events instead of queue events.
    let mut r = reader(text, None).unwrap();
    r.set_blkparse_dispatch(true);
    let d = r.next_request().unwrap().unwrap();
    assert_eq!((d.line, d.time_ns), (3, 0));
    assert!(r.next_request().unwrap().is_none());

    let bad = "  8,0  3  1  0.000000000  4162  Q  WS 3417048 - 8 [x]\n";
    assert_eq!(
        parse_error(bad, Some(TraceFormat::Blkparse)),
        (1, "+", "expected `+` between sector and count, found `-`".into())
    );
    let bad = "  8,0  3  1  0.000000000  4162  Q  WS 3417048 + 8 [x]\n  8,0  3  2  0.1.0  4162  Q  WS 1 + 8 [x]\n";
    assert_eq!(parse_error(bad, None).1, "time");
    let bad = "  8,0  3  1  0.000000000  4162  Q  WS 3417048 + 8 [x]\n  garbage here\n";
    assert_eq!(parse_error(bad, None).0, 2);
}

#[test]
fn fio_v2_lines() {
    let text = "fio version 2 iolog\n/dev/nvme0n1 add\n/dev/nvme0n1 open\n/dev/nvme0n1 write 0 4096\n\
                /dev/nvme0n1 wait 50\n/dev/nvme0n1 read 4096 8192\n/dev/nvme0n1 wait 1000\n\
                /dev/nvme0n1 trim 0 4096\n/dev/nvme0n1 sync 0 0\n/dev/nvme0n1 close\n";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::FioV2);
    assert!(!f.timed());
    assert_eq!(
        brief(&reqs),
        vec![
            (0, TraceOp::Write, 0, 4096, 0, 4),
            // A wait under 100 µs is discarded, as fio does.
            (0, TraceOp::Read, 4096, 8192, 0, 6),
            (1_000_000, TraceOp::Trim, 0, 4096, 0, 8),
            (1_000_000, TraceOp::Flush, 0, 0, 0, 9),
        ]
    );
    assert_eq!(parse_error("fio version 2 iolog\nf write 0\n", None), (2, "length", "missing".into()));
    assert_eq!(parse_error("fio version 2 iolog\nf erase 0 1\n", None).1, "action");
}

#[test]
fn fio_v3_lines() {
    let text =
        "fio version 3 iolog\n19 f add\n137 f open\n140 f read 61440 4096\n10178 f write 774144 4096\n53585 f close\n";
    let (f, reqs) = all(text, None).unwrap();
    assert_eq!(f, TraceFormat::FioV3);
    assert_eq!(
        brief(&reqs),
        vec![(0, TraceOp::Read, 61440, 4096, 0, 4), (10_038_000, TraceOp::Write, 774144, 4096, 0, 5)]
    );
    // v3 has no wait action.
    assert_eq!(parse_error("fio version 3 iolog\n5 f wait 100 0\n", None).1, "action");
    assert_eq!(
        parse_error("fio version 3 iolog\nsoon f read 0 4096\n", None),
        (2, "timestamp", "expected a whole number, found `soon`".into())
    );
    // The header decides the version; a missing header is an error.
    assert_eq!(all("fio version 2 iolog\nf read 0 1\n", Some(TraceFormat::FioV3)).unwrap().0, TraceFormat::FioV2);
    assert_eq!(
        parse_error("0 f read 0 1\n", Some(TraceFormat::FioV3)),
        (
            1,
            "header",
            "expected `fio version 2 iolog` or `fio version 3 iolog` as the first line of a fio-v3 trace".into()
        )
    );
}

#[test]
fn explicit_format_overrides_detection() {
    // Five numbers with a last 0/1 look like MQSim; as SPC this is not CSV.
    assert!(matches!(all("0 1 2 3 1\n", Some(TraceFormat::Spc)), Err(TraceError::Parse { field: "ASU", line: 1, .. })));
}

#[test]
fn unknown_content_names_the_line() {
    match all("\n\nhello world\n", None) {
        Err(TraceError::UnknownFormat { file, reason, .. }) => {
            assert_eq!(file, "t.trace");
            assert_eq!(reason, "line 3 is `hello world`");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(all("", None), Err(TraceError::UnknownFormat { .. })));
    let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(b"0 0 0 8 1\n\xff\xfe\n".to_vec()));
    let mut r = TraceReader::from_reader("t.trace", input, None).unwrap();
    r.next_request().unwrap();
    let e = r.next_request().unwrap_err().to_string();
    assert!(e.starts_with("t.trace:2: field `line`"), "{e}");
}

#[test]
fn compressed_files_are_streamed() {
    let text = "0 0 0 8 1\n1000 0 8 8 0\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = temp_file("t.mqsim.gz", &gz.finish().unwrap());
    let zst = temp_file("t.mqsim.zst", &zstd::encode_all(text.as_bytes(), 3).unwrap());
    // The content, not the name, tells the compression.
    let plain = temp_file("t.mqsim.zst.not", text.as_bytes());
    for (path, kind) in [(gz, "gzip"), (zst, "zstd"), (plain, "none")] {
        let mut r = TraceReader::open(path.to_str().unwrap(), None).unwrap();
        assert_eq!((r.format(), r.compression()), (TraceFormat::Mqsim, kind));
        let a = r.next_request().unwrap().unwrap();
        let b = r.next_request().unwrap().unwrap();
        assert_eq!((a.op, b.op, b.time_ns), (TraceOp::Read, TraceOp::Write, 1000));
        assert!(r.next_request().unwrap().is_none());
    }
    match TraceReader::open("/nonexistent/trace", None) {
        Err(TraceError::Io { file, .. }) => assert_eq!(file, "/nonexistent/trace"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn trace_stats_count_exactly() {
    let text = "0 0 0 8 1\n1000 0 8 8 1\n3000 0 100 16 0\n3000 0 100 16 0\n10000 0 0 0 1\n";
    let (_, reqs) = all(text, None).unwrap();
    let mut s = TraceStats::default();
    for r in &reqs {
        s.record(r.op, r.address * 512, r.len_bytes, r.time_ns, r.response_ns);
    }
    s.finish();
    assert_eq!((s.requests, s.ios, s.bytes), (4, [2, 2, 0], [8192, 16384, 0]));
    assert_eq!(s.skipped.zero_length, 1);
    // The second read continues the first.
    assert_eq!(s.sequential, 1);
    // Pages 0 and 1, then bytes 51200..59392 (pages 12..14).
    assert_eq!(s.footprint_bytes, 5 * 4096);
    assert_eq!((s.lowest_byte, s.highest_byte), (0, 59392));
    assert_eq!(s.recorded_ns, 3000);
    assert_eq!(s.inter_arrival_max_ns, 2000);
    assert_eq!(s.inter_arrival_mean_ns(), 1000.0);
    assert_eq!(s.recorded_queue_depth(), None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), f in 0usize..7) {
        let format = TraceFormat::ALL.get(f).copied();
        let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(bytes));
        if let Ok(mut r) = TraceReader::from_reader("fuzz", input, format) {
            for _ in 0..1000 {
                match r.next_request() {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
        }
    }

    #[test]
    fn mutated_lines_never_panic(line in "[0-9 ,.a-zA-Z+\\[\\]-]{0,60}", f in 0usize..6) {
        let format = TraceFormat::ALL[f];
        let header = match format {
            TraceFormat::FioV2 => "fio version 2 iolog\n",
            TraceFormat::FioV3 => "fio version 3 iolog\n",
            _ => "",
        };
        let text = format!("{header}{line}\n{line}\n");
        let _ = all(&text, Some(format));
        let _ = all(&text, None);
    }
}

#[test]
fn blkparse_queue_depth_from_completion_events() {
    // Two overlapping requests and a third alone: Σ (C − Q) = 100 + 100 +
    // 50 µs over the recorded 1 ms from the first request to the last.
    let text = "\
  8,0  0  1  0.000000000  1  Q  W 0 + 8 [a]
  8,0  0  2  0.000005000  1  D  W 0 + 8 [a]
  8,0  0  3  0.000010000  1  Q  R 8 + 8 [a]
  8,0  0  4  0.000020000  1  D  R 8 + 8 [a]
  8,0  0  5  0.000100000  0  C  W 0 + 8 [0]
  8,0  0  6  0.000110000  0  C  R 8 + 8 [0]
  8,0  0  7  0.001000000  1  Q  R 16 + 8 [a]
  8,0  0  8  0.001010000  1  D  R 16 + 8 [a]
  8,0  0  9  0.001050000  0  C  R 16 + 8 [0]
";
    let path = temp_file("qd.blkparse", text.as_bytes());
    let spec = TraceSpec::new("t", path.to_str().unwrap());
    let (_, s) = ssdtwin::run::trace::trace_stats(&spec).unwrap();
    assert_eq!(s.requests, 3);
    assert_eq!(s.recorded_ns, 1_000_000);
    assert_eq!(s.response_sum_ns, Some(250_000));
    assert!((s.recorded_queue_depth().unwrap() - 0.25).abs() < 1e-12);
    // From dispatch events: 95 + 90 + 40 µs over 1.005 ms.
    let mut d = spec.clone();
    d.blkparse_dispatch = true;
    let (_, s) = ssdtwin::run::trace::trace_stats(&d).unwrap();
    assert_eq!(s.response_sum_ns, Some(225_000));
    // Without completion events there is no recorded depth.
    let only_q: String = text.lines().filter(|l| !l.contains(" C ")).map(|l| format!("{l}\n")).collect();
    let path = temp_file("noc.blkparse", only_q.as_bytes());
    let (_, s) = ssdtwin::run::trace::trace_stats(&TraceSpec::new("t", path.to_str().unwrap())).unwrap();
    assert_eq!(s.recorded_queue_depth(), None);
}
