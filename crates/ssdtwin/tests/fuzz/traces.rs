//! The trace readers and `trace stats`' statistics on mutated traces of
//! every format, read with the format told from the content and forced.

use std::io::Cursor;

use ssdtwin::run::trace::{byte_extent, TraceFormat, TraceReader, TraceStats};

use super::engine::{fuzz, message};

fn corpus() -> Vec<Vec<u8>> {
    [
        "0 1 2048 8 1\n1000 1 2056 16 0\n2500 2 0 256 1\n",
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166372003061629,hm,1,Read,7014609920,24576,41286\n\
         128166372003061630,hm,1,Write,7014634496,4096,11\n128166372013061630,hm,0,Read,0,512,1\n",
        "  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [jbd2/sda3-8]\n  8,0    3        2     0.000001000  \
         4162  D  WS 3417048 + 8 [jbd2/sda3-8]\n  8,0    3        3     0.000101000     0  C  WS 3417048 + 8 [0]\n  \
         8,0    1        4     0.000200000  4162  Q  FWS [kworker]\n  8,0    1        5     0.000300000  4162  Q   D 0 + \
         2048 [mkfs]\n  8,0    1        6     0.000310000  4162  M   W 8 + 8 [x]\nCPU0 (sda):\n Reads Queued: 0\n",
        "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n/dev/x wait 500\n/dev/x read 4096 8192\n\
         /dev/x trim 0 4096\n/dev/x sync\n/dev/x close\n",
        "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n10 /dev/x read 0 4096\n20 /dev/x write 8192 65536\n\
         30 /dev/x trim 0 1048576\n40 /dev/x datasync\n50 /dev/x close\n",
        "ASU,LBA,Size,Opcode,Timestamp\n0,20941264,8192,W,0.551706\n1,20939840,8192,r,0.554041\n0,0,512,R,1.000000,extra\n",
        "# comment\n\n0 1 0 8 1\r\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

/// Read every request (as `trace stats` does) and count it.
fn read(input: &[u8], format: Option<TraceFormat>) {
    let reader = TraceReader::from_reader("fuzz.trace", Box::new(Cursor::new(input.to_vec())), format);
    let mut r = match reader {
        Ok(r) => r,
        Err(e) => {
            message(&e);
            return;
        }
    };
    let mut stats = TraceStats::default();
    let f = r.format();
    loop {
        match r.next_request() {
            Ok(Some(req)) => {
                let (offset, len) = byte_extent(f, None, &req);
                stats.record(req.op, offset, len, req.time_ns, req.response_ns);
            }
            Ok(None) => break,
            Err(e) => {
                let m = message(&e);
                assert!(m.starts_with("fuzz.trace"), "an error names the file: {m}");
                break;
            }
        }
    }
    stats.finish();
    let _ = stats.summary();
    let _ = stats.to_json();
}

#[test]
fn trace_readers() {
    let formats = [
        None,
        Some(TraceFormat::Mqsim),
        Some(TraceFormat::Msr),
        Some(TraceFormat::Blkparse),
        Some(TraceFormat::FioV2),
        Some(TraceFormat::FioV3),
        Some(TraceFormat::Spc),
    ];
    let mut k = 0;
    let runs = fuzz("traces", &corpus(), |input| {
        // Told from the content, and one forced format in turn.
        read(input, None);
        k = (k + 1) % formats.len();
        read(input, formats[k]);
    });
    assert!(runs > 100, "{runs}");
}
