//! Block traces on the command line: the `--trace` options of `ssdtwin
//! run` (replay a trace as the run's phase, record a run as a trace) and
//! `ssdtwin trace stats|convert`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use ssdtwin::run::device::Device;
use ssdtwin::run::trace::{self, options::apply_option, TraceFormat, TraceSpec, TraceWriter};

use crate::output::write_atomically;

/// Trace options of `ssdtwin run`.
#[derive(Args)]
#[command(next_help_heading = "Trace replay")]
pub struct TraceArgs {
    /// Replay a block trace instead of a fio workload: MQSim, MSR
    /// Cambridge / SNIA CSV, blkparse text, fio iolog v2/v3 or SPC/UMass,
    /// plain or .gz/.zst (read as a stream; format told from the content).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["job_file"])]
    pub trace: Option<String>,
    /// Format of the trace: mqsim, msr, blkparse, fio (version from its
    /// header), spc (default: told from the content).
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub trace_format: Option<String>,
    /// Timing: as-recorded (open loop; the default for timed formats),
    /// capped-idle:MS (as recorded, idle gaps cut to MS ms),
    /// dependent:MS (recorded groups of concurrent requests, each issued
    /// once the previous completed and its gap, idle cut to MS ms, has
    /// elapsed), think[:MS] (the same groups, each issued its recorded
    /// idle, cut to MS ms, after the previous completed; uncapped without
    /// MS), closed:QD (QD outstanding, trace order; the default for fio
    /// v2).
    #[arg(long, value_name = "MODE", requires = "trace")]
    pub replay: Option<String>,
    /// Multiply recorded times by X (0.5 = twice as fast).
    #[arg(long, value_name = "X", requires = "trace")]
    pub time_scale: Option<String>,
    /// Bytes per trace sector (default: the format's, 512 for MQSim,
    /// blkparse and SPC; MSR and fio give bytes).
    #[arg(long, value_name = "BYTES", requires = "trace")]
    pub sector_size: Option<String>,
    /// Add BYTES to every address (e.g. -1g to remove a partition's start).
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, requires = "trace")]
    pub trace_offset: Option<String>,
    /// Requests beyond the drive wrap around (address modulo capacity)
    /// instead of being an error.
    #[arg(long, requires = "trace", conflicts_with = "lba_scale")]
    pub lba_wrap: bool,
    /// Scale addresses so that the trace's span fits the drive (a first
    /// pass over the file finds the span).
    #[arg(long, requires = "trace")]
    pub lba_scale: bool,
    /// Replay only this device / disk / ASU (blkparse: major·2²⁰ + minor).
    #[arg(long, value_name = "N", requires = "trace")]
    pub trace_device: Option<String>,
    /// blkparse: replay dispatch (D) events instead of queue (Q) events.
    #[arg(long, requires = "trace")]
    pub blkparse_dispatch: bool,
    /// Replay at most N requests.
    #[arg(long, value_name = "N", requires = "trace")]
    pub max_requests: Option<String>,
    /// Record the run's commands (every phase, in submission order) as a
    /// trace in FILE (.gz/.zst compressed).
    #[arg(long, value_name = "FILE")]
    pub record_trace: Option<String>,
    /// Format of --record-trace.
    #[arg(long, value_name = "FORMAT", default_value = "fio-v3", requires = "record_trace")]
    pub record_format: String,
}

impl TraceArgs {
    /// The trace phase the options ask for, if any.
    pub fn spec(&self, name: &str) -> Result<Option<TraceSpec>> {
        let Some(file) = &self.trace else { return Ok(None) };
        let mut spec = TraceSpec::new(name, file);
        let mut set = |key: &str, value: Option<&str>| -> Result<()> {
            if let Some(v) = value {
                apply_option(&mut spec, key, v).map_err(|r| anyhow!("--{}: {r}", key.replace('_', "-")))?;
            }
            Ok(())
        };
        set("trace_format", self.trace_format.as_deref())?;
        set("replay", self.replay.as_deref())?;
        set("time_scale", self.time_scale.as_deref())?;
        set("sector_size", self.sector_size.as_deref())?;
        set("trace_offset", self.trace_offset.as_deref())?;
        set("lba_wrap", self.lba_wrap.then_some("1"))?;
        set("lba_scale", self.lba_scale.then_some("1"))?;
        set("trace_device", self.trace_device.as_deref())?;
        set("blkparse_dispatch", self.blkparse_dispatch.then_some("1"))?;
        set("max_requests", self.max_requests.as_deref())?;
        Ok(Some(spec))
    }

    /// The format of `--record-trace`, checked before the run.
    pub fn record_format(&self) -> Result<Option<(String, TraceFormat)>> {
        let Some(file) = &self.record_trace else { return Ok(None) };
        let f = parse_format(&self.record_format, "--record-format")?;
        Ok(Some((file.clone(), f)))
    }
}

/// Write the commands the simulator logged as a trace.
pub fn write_recording(device: &mut Device, file: &str, format: TraceFormat) -> Result<()> {
    let mut log = device.take_log();
    let mut w = TraceWriter::create(file, format)?;
    w.write_log(&mut log, 0)?;
    let (written, dropped) = (w.written(), w.dropped());
    w.finish()?;
    if dropped > 0 {
        errln!("note: {file}: {dropped} requests dropped ({} cannot hold trims)", format.name());
    }
    errln!("recorded {written} requests to {file} ({})", format.name());
    Ok(())
}

fn parse_format(name: &str, option: &str) -> Result<TraceFormat> {
    TraceFormat::parse(name).ok_or_else(|| anyhow!("{option} {name}: not a trace format ({})", TraceFormat::known()))
}

/// `ssdtwin trace`.
#[derive(Args)]
pub struct TraceCmdArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print a trace's statistics: requests, read/write mix by count and
    /// bytes, sizes, sequential fraction, footprint, inter-arrival times
    /// and the queue depth recorded response times imply.
    Stats(StatsArgs),
    /// Convert a trace to another format (the output is compressed when
    /// its name ends in .gz or .zst).
    Convert(ConvertArgs),
    /// Write a synthetic generator's trace (atsb-destroyer-synthetic,
    /// atsb-heavy-synthetic, atsb-light-synthetic or a generator .toml
    /// file) to a file, streamed; `--list` names the built-in generators.
    Generate(GenerateArgs),
}

#[derive(Args)]
struct GenerateArgs {
    /// Generator: a built-in name or a generator .toml file.
    #[arg(required_unless_present = "list")]
    generator: Option<String>,
    /// Trace to write (.gz/.zst compressed).
    #[arg(required_unless_present = "list")]
    output: Option<String>,
    /// Format to write: mqsim, msr, blkparse, fio-v2, fio-v3, spc.
    #[arg(long, value_name = "FORMAT", default_value = "fio-v3")]
    to: String,
    /// Write only this fraction of the generator's requests (its first
    /// ones: the same mix, a shorter trace).
    #[arg(long, value_name = "X", default_value = "1")]
    scale: f64,
    /// List the built-in generators with their figures.
    #[arg(long)]
    list: bool,
}

/// How to read the input trace.
#[derive(Args)]
struct InputArgs {
    /// Format of the input (default: told from the content).
    #[arg(long, value_name = "FORMAT")]
    trace_format: Option<String>,
    /// Bytes per trace sector (default: the format's).
    #[arg(long, value_name = "BYTES")]
    sector_size: Option<String>,
    /// Only this device / disk / ASU.
    #[arg(long, value_name = "N")]
    trace_device: Option<String>,
    /// blkparse: dispatch (D) events instead of queue (Q) events.
    #[arg(long)]
    blkparse_dispatch: bool,
}

impl InputArgs {
    fn spec(&self, file: &str) -> Result<TraceSpec> {
        let mut spec = TraceSpec::new("trace", file);
        for (key, value) in [
            ("trace_format", self.trace_format.as_deref()),
            ("sector_size", self.sector_size.as_deref()),
            ("trace_device", self.trace_device.as_deref()),
            ("blkparse_dispatch", self.blkparse_dispatch.then_some("1")),
        ] {
            if let Some(v) = value {
                apply_option(&mut spec, key, v).map_err(|r| anyhow!("--{}: {r}", key.replace('_', "-")))?;
            }
        }
        Ok(spec)
    }
}

#[derive(Args)]
struct StatsArgs {
    /// Trace file.
    file: String,
    #[command(flatten)]
    input: InputArgs,
    /// Also write the statistics as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
}

#[derive(Args)]
struct ConvertArgs {
    /// Trace to read.
    input: String,
    /// Trace to write.
    output: String,
    /// Format to write: mqsim, msr, blkparse, fio-v2, fio-v3, spc.
    #[arg(long, value_name = "FORMAT")]
    to: String,
    #[command(flatten)]
    from: InputArgs,
}

/// Run `ssdtwin trace ...`.
pub fn run(args: TraceCmdArgs) -> Result<ExitCode> {
    match args.command {
        TraceCommand::Stats(a) => {
            let spec = a.input.spec(&a.file)?;
            let (format, stats) = trace::trace_stats(&spec)?;
            let mut json = stats.to_json();
            json["file"] = a.file.clone().into();
            json["format"] = format.name().into();
            let text = serde_json::to_string_pretty(&json)? + "\n";
            // The file first: a reader gone from standard output ends the
            // command at its next line.
            if let Some(out) = a.json.as_deref().filter(|o| *o != "-") {
                write_atomically(Path::new(out), text.as_bytes())?;
            }
            if a.json.as_deref() == Some("-") {
                out!("{text}");
            } else {
                outln!("{} ({})", a.file, format.name());
                out!("{}", stats.summary());
            }
        }
        TraceCommand::Convert(a) => {
            let to = parse_format(&a.to, "--to")?;
            let spec = a.from.spec(&a.input)?;
            convert_to(&spec, &a.input, &a.output, to)?;
        }
        TraceCommand::Generate(a) => {
            if a.list {
                for name in trace::synth::builtin_names() {
                    let g = trace::synth::load(name)?;
                    let p = &g.published;
                    outln!(
                        "{name}: {} requests ({} reads, {} writes; {:.2} GB read, {:.2} GB written; QD {}, {:.0}% \
                         sequential; figures {})",
                        g.requests,
                        p.reads,
                        p.writes,
                        p.read_bytes as f64 / 1e9,
                        p.write_bytes as f64 / 1e9,
                        p.queue_depth,
                        100.0 * p.sequential,
                        p.status
                    );
                    outln!("    {}", g.title);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let (generator, output) = (a.generator.unwrap_or_default(), a.output.unwrap_or_default());
            let to = parse_format(&a.to, "--to")?;
            if !(a.scale > 0.0 && a.scale <= 1.0) {
                return Err(anyhow!("--scale {}: must be above 0 and at most 1", a.scale));
            }
            if !trace::synth::is_generator(&generator) {
                return Err(anyhow!(
                    "{generator}: not a generator (built-in: {}; or a generator .toml file)",
                    trace::synth::builtin_names().join(", ")
                ));
            }
            let def = trace::synth::load(&generator)?;
            let mut spec = TraceSpec::new("trace", &generator);
            if a.scale < 1.0 {
                spec.max_requests = Some(((def.requests as f64 * a.scale).round() as u64).max(1));
            }
            convert_to(&spec, &generator, &output, to)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `spec`'s trace to `output` in `to` (through a temporary file
/// beside it: a failed conversion leaves nothing behind).
fn convert_to(spec: &TraceSpec, input: &str, output: &str, to: TraceFormat) -> Result<()> {
    Path::new(output).file_name().ok_or_else(|| anyhow!("{output}: no file name"))?;
    let (from, [written, widened, dropped]) = trace::convert(spec, output, to)?;
    outln!("{input} ({}) → {output} ({}): {written} requests", from.name(), to.name());
    if widened > 0 {
        outln!("  {widened} requests widened to whole 512-byte sectors");
    }
    if dropped > 0 {
        outln!("  {dropped} requests dropped ({} holds only reads and writes)", to.name());
    }
    Ok(())
}
