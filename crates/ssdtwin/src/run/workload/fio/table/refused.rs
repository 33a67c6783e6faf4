//! fio's options that shape the I/O in a way the twin cannot reproduce
//! (yet): each is refused with the reason, unless its value is fio's
//! default, which changes nothing.

use super::{refused, Kind, OptionDef};

/// The refused options.
pub(super) const REFUSED: &[OptionDef] = &[
    refused("file_append", &[], Kind::Bool, "0", "IO will start at the end of the file(s)", "appending at the end of a file has no meaning on the twin's block device"),
    refused("offset_align", &[], Kind::Int, "0", "Start IO from this offset alignment", "offset alignment of percentage offsets is not modelled"),
    refused("bs_is_seq_rand", &[], Kind::Bool, "0", "Consider any blocksize setting to be sequential,random", "block sizes chosen by sequential/random rather than by direction are not modelled"),
    refused("write_barrier", &[], Kind::Int, "0", "Make every Nth write a barrier write", "barrier writes: only fio's libpmem engine issues them (persistent memory, not a block device)"),
    refused("sync_file_range", &[], Kind::Text, "", "SYNC_FILE_RANGE_WAIT_BEFORE", "it writes back a range of the host's page cache, which the twin's host does not have (use fsync or fdatasync for the drive's FLUSH)"),
    refused("ramp_size", &[], Kind::Size, "", "Amount of data transferred before measuring performance", "a ramp measured in bytes is not modelled (use ramp_time)"),
    refused("trim_percentage", &[], Kind::Int, "0", "Number of verify blocks to trim (i.e., discard)", "fio's verify-trim (trims of verified blocks) is not modelled"),
    refused("trim_verify_zero", &[], Kind::Bool, "1", "Verify that trimmed (i.e., discarded) blocks are returned as zeroes", "fio's verify-trim (trims of verified blocks) is not modelled"),
    refused("trim_backlog", &[], Kind::Size, "", "Trim after this number of blocks are written", "fio's verify-trim (trims of verified blocks) is not modelled"),
    refused("trim_backlog_batch", &[], Kind::Int, "", "Trim this number of IO blocks", "fio's verify-trim (trims of verified blocks) is not modelled"),
    refused("read_iolog", &[], Kind::Text, "", "Playback IO pattern from file", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("read_iolog_chunked", &[], Kind::Bool, "0", "Parse IO pattern in chunks", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_no_stall", &[], Kind::Bool, "0", "Playback IO pattern file as fast as possible without stalls", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_redirect", &[], Kind::Text, "", "Replay all I/O onto this device, regardless of trace device", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_scale", &[], Kind::Int, "1", "Align offsets to this blocksize", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_align", &[], Kind::Int, "", "Scale offset down by this factor", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_time_scale", &[], Kind::Int, "100", "Scale time for replay events", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("replay_skip", &[], Kind::Text, "", "Skip certain IO types (read,write,trim,flush)", "the twin replays fio iologs as traces: use trace=FILE (trace_format=iolog)"),
    refused("merge_blktrace_file", &[], Kind::Text, "", "Merged blktrace output filename", "merging blktrace files is not modelled; replay each with trace=FILE"),
    refused("merge_blktrace_scalars", &[], Kind::Float, "", "Percentage to scale each trace", "merging blktrace files is not modelled; replay each with trace=FILE"),
    refused("merge_blktrace_iters", &[], Kind::Float, "", "Number of iterations to run per trace", "merging blktrace files is not modelled; replay each with trace=FILE"),
    refused("thinkcycles", &[], Kind::Int, "0", "Spin for a constant amount of cycles between requests", "the twin's host has no CPU clock to spin cycles on (use thinktime)"),
    refused("thinktime_blocks_type", &[], Kind::Text, "complete", "How thinktime_blocks takes effect", "only fio's default (thinktime after thinktime_blocks completions) is modelled"),
    refused("thinktime_iotime", &[], Kind::Int, "0", "IO time interval between 'thinktime'", "think time after an I/O time interval is not modelled"),
    refused("log_window_value", &["log_max_value"], Kind::Text, "avg", "Log max, average or both sample in a window", "the twin's logs hold window averages (fio's default) only"),
    refused("profile", &[], Kind::Text, "", "Select a specific builtin performance test", "fio's built-in profiles (act, tiobench) are not modelled"),
    refused("readfua", &[], Kind::Bool, "0", "Set FUA flag (force unit access) for all Read operations", "FUA reads (which may not be served from the write buffer) are not modelled; writefua is"),
    refused("deac", &[], Kind::Bool, "0", "Set DEAC (deallocate) flag for write zeroes command", "write zeroes is not modelled"),
    refused("sg_write_mode", &[], Kind::Text, "write", "Specify SCSI WRITE mode", "only plain SCSI WRITE is modelled (not WRITE AND VERIFY, VERIFY or WRITE SAME)"),
];
