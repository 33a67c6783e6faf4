//! Fuzzing the NBD protocol's parsers on stable Rust: mutated client byte
//! streams (option haggling, then transmission requests) through
//! `read_option`, `parse_info_request` and `parse_request`, for a short
//! bounded run in the normal `cargo test` (`SSDTWIN_FUZZ_SECS`, default
//! 2 s; `SSDTWIN_FUZZ_SEED`). The invariant: no panic, no allocation over
//! 1 MiB (this binary's allocator refuses one, which aborts the run), and
//! a malformed stream is an `Err` with a message. Longer campaigns:
//! docs/testing.md. The server's own handling of the parsed requests is
//! exercised by real clients (`clients.rs`), not here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Cursor;
use std::time::{Duration, Instant};

use ssdtwin_nbd::proto::{self, ProtoError, Request};

/// Largest allocation allowed (an option body is at most 64 KiB).
const MAX_ONE: usize = 1 << 20;

struct Guard;

// SAFETY: every call is forwarded to `System` with the same layout.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ONE {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ONE {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GUARD: Guard = Guard;

fn option(opt: u32, body: &[u8]) -> Vec<u8> {
    let mut v = proto::IHAVEOPT.to_be_bytes().to_vec();
    v.extend_from_slice(&opt.to_be_bytes());
    v.extend_from_slice(&(body.len() as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn info_body(name: &[u8], infos: &[u16]) -> Vec<u8> {
    let mut v = (name.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(name);
    v.extend_from_slice(&(infos.len() as u16).to_be_bytes());
    for i in infos {
        v.extend_from_slice(&i.to_be_bytes());
    }
    v
}

/// A client's whole conversation: options, then requests.
fn seed_stream() -> Vec<u8> {
    let mut s = Vec::new();
    s.extend(option(proto::OPT_LIST, &[]));
    s.extend(option(proto::OPT_INFO, &info_body(b"twin", &[proto::INFO_BLOCK_SIZE, proto::INFO_NAME])));
    s.extend(option(proto::OPT_STRUCTURED_REPLY, &[]));
    s.extend(option(proto::OPT_GO, &info_body(b"", &[])));
    for (kind, flags, offset, len) in [
        (proto::CMD_READ, 0, 0, 4096),
        (proto::CMD_WRITE, proto::CMD_FLAG_FUA, 4096, 512),
        (proto::CMD_TRIM, 0, 1 << 20, 1 << 20),
        (proto::CMD_WRITE_ZEROES, proto::CMD_FLAG_NO_HOLE, 0, 65536),
        (proto::CMD_FLUSH, 0, 0, 0),
        (proto::CMD_DISC, 0, 0, 0),
    ] {
        s.extend(proto::encode_request(&Request { flags, kind, cookie: 7, offset, len }));
    }
    s
}

/// Feed `bytes` to the parsers as the server reads a client.
fn serve(bytes: &[u8]) {
    let mut r = Cursor::new(bytes);
    loop {
        match proto::read_option(&mut r) {
            Ok((hdr, body)) => {
                assert!(hdr.len <= proto::MAX_OPTION_LEN && body.len() == hdr.len as usize);
                if let Some(info) = proto::parse_info_request(&body) {
                    assert_eq!(4 + info.name.len() + 2 + 2 * info.requests.len(), body.len());
                }
                if hdr.option == proto::OPT_GO {
                    break;
                }
            }
            Err(ProtoError::Io(_)) => return,
            Err(e @ ProtoError::Violation(_)) => {
                assert!(!e.to_string().is_empty());
                // The session ends; go on with the rest as requests.
                break;
            }
        }
    }
    let rest = &bytes[r.position() as usize..];
    for chunk in rest.chunks_exact(proto::REQUEST_LEN) {
        match proto::parse_request(chunk.try_into().unwrap()) {
            Ok(req) => assert_eq!(proto::encode_request(&req), chunk, "a request re-encodes to its bytes"),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Values that matter in a binary protocol's fields.
const WORDS: &[u32] =
    &[0, 1, 0xffff_ffff, 0x8000_0000, 1 << 16, (1 << 16) + 1, 1 << 25, (1 << 25) + 1, 4096, 0x2560_9513];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        let at = rng.below(len + 1);
        match rng.below(6) {
            0 if len > 0 => b[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => b[at.min(len - 1)] = rng.next() as u8,
            2 if len >= 4 => {
                // A length, option or magic field replaced by an edge value.
                let at = at.min(len - 4);
                b[at..at + 4].copy_from_slice(&WORDS[rng.below(WORDS.len())].to_be_bytes());
            }
            3 => {
                let n = 1 + rng.below(32);
                b.splice(at..at, (0..n).map(|_| rng.next() as u8));
            }
            4 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                b.drain(at.min(len - 1)..end);
            }
            _ => b.truncate(at),
        }
    }
    b.truncate(1 << 16);
    b
}

#[test]
fn nbd_request_parser() {
    let secs = std::env::var("SSDTWIN_FUZZ_SECS").ok().and_then(|s| s.parse::<f64>().ok()).unwrap_or(2.0);
    let seed = std::env::var("SSDTWIN_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng(seed);
    let corpus = seed_stream();
    serve(&corpus);
    let (start, mut runs) = (Instant::now(), 0u64);
    while start.elapsed() < Duration::from_secs_f64(secs.max(0.0)) {
        let input = mutate(&mut rng, &corpus);
        if std::panic::catch_unwind(|| serve(&input)).is_err() {
            panic!("seed {seed}: the parsers panicked on {input:02x?}");
        }
        runs += 1;
    }
    println!("fuzz nbd: {runs} inputs in {:.1} s, seed {seed}", start.elapsed().as_secs_f64());
}
