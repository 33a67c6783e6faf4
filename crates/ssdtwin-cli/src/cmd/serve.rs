//! `ssdtwin serve`: the drive as a network block device (NBD) for real
//! clients (qemu-img, nbdcopy, fio's nbd engine, nbdfuse, a VM), with the
//! data kept through the FTL and completions paced onto the wall clock.
//! Stops on SIGINT/SIGTERM (or with `--once` when the last client has
//! gone), then prints the summary of `ssdtwin run` and writes its JSON.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use ssdtwin::run::workload::fio::values::parse_time;
use ssdtwin::{Drive, DriveSpec, DriveState};
use ssdtwin_nbd::image;
use ssdtwin_nbd::report::ServeReport;
use ssdtwin_nbd::server::{
    catch_stop_signals, load_certificates, power_cut_on_sigusr1, stop_on_signals, ReloadImage, TlsMode, TransportDelay,
};
use ssdtwin_nbd::{Listen, ServeOptions, Server, Twin};

use crate::output::{spinner, write_atomically};

/// Options of `ssdtwin serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Preset name or path to a drive TOML file.
    #[arg(long, short = 'd', required_unless_present = "load", conflicts_with = "load")]
    pub drive: Option<String>,
    /// Override a drive field, e.g. `--set controller.write_cache=write-through` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE", conflicts_with = "load")]
    pub set: Vec<String>,
    /// Starting state: fresh, full, filled:N, steady, steady-exact (data
    /// placed by a state reads as zeros: only the client's writes carry bytes).
    #[arg(long, default_value = "fresh", conflicts_with = "load")]
    pub state: String,
    /// Serve a drive saved by `--save` (its spec, state and data) instead
    /// of --drive/--set/--state.
    #[arg(long, value_name = "FILE")]
    pub load: Option<PathBuf>,
    /// When the server stops, save the drive with its data to FILE (a
    /// clean shutdown: the write buffer is flushed first; cut the power
    /// before to lose unflushed data). May be the --load file.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Seed for the starting state.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// TCP address to listen on (loopback unless --allow-remote).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:10809", conflicts_with = "unix")]
    pub listen: String,
    /// Listen on a Unix socket instead of TCP.
    #[arg(long, value_name = "PATH")]
    pub unix: Option<PathBuf>,
    /// Allow listening on a non-loopback address; needs --tls=require
    /// (or the waiver --allow-remote-without-tls).
    #[arg(long)]
    pub allow_remote: bool,
    /// With --allow-remote: serve remote clients without TLS (anyone who
    /// can reach the port can read and write the drive, in the clear).
    #[arg(long, requires = "allow_remote")]
    pub allow_remote_without_tls: bool,
    /// TLS (NBD_OPT_STARTTLS): off, on (offered), require (nothing
    /// before it); needs --tls-certificates.
    #[arg(long, value_name = "off|on|require", default_value = "off")]
    pub tls: String,
    /// Directory with server-cert.pem and server-key.pem (the layout of
    /// nbdkit's and qemu's --tls-certificates / tls-creds-x509 dir).
    #[arg(long, value_name = "DIR")]
    pub tls_certificates: Option<PathBuf>,
    /// Pre-shared keys as nbdkit's --tls-psk: a psktool file of
    /// username:hexkey lines (builds with the `tls-psk` feature, through
    /// OpenSSL; refused with an explanation otherwise).
    #[arg(long, value_name = "FILE")]
    pub tls_psk: Option<PathBuf>,
    /// Wall seconds per simulated second: 1 real time, 10 ten times
    /// slower, 0 as fast as possible.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub time_scale: f64,
    /// Export name (clients asking for the default export "" get it too).
    #[arg(long, default_value = "ssdtwin")]
    pub name: String,
    /// Stop once the last client has disconnected (after at least one
    /// reached the transmission phase).
    #[arg(long)]
    pub once: bool,
    /// Write the statistics as JSON to FILE when the server stops (`-`
    /// for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Simulate a power cut after N requests: data written since the last
    /// flush and not yet on flash is lost (write-back buffer without
    /// --plp), every connection is dropped, the drive restarts and serving
    /// goes on.
    #[arg(long, value_name = "N")]
    pub power_loss_after: Option<u64>,
    /// Cut the power at this simulated time since the start (e.g. 2.5s,
    /// 300ms).
    #[arg(long, value_name = "TIME")]
    pub power_loss_at: Option<String>,
    /// Cut the power at moments drawn from SEED: after the start and after
    /// each restart, the next cut falls uniformly in the second half of
    /// --power-loss-window of simulated time.
    #[arg(long, value_name = "SEED")]
    pub power_loss_random: Option<u64>,
    /// The window random cuts fall in (simulated time).
    #[arg(long, value_name = "TIME", default_value = "1s")]
    pub power_loss_window: String,
    /// Cut the power whenever the process gets SIGUSR1.
    #[arg(long)]
    pub power_loss_signal: bool,
    /// The drive has power-loss protection (capacitors): a power cut loses
    /// nothing acknowledged.
    #[arg(long)]
    pub plp: bool,
    /// How much earlier than its simulated completion each reply is sent,
    /// so that the client sees the drive's latency rather than the drive's
    /// plus the transport's: `auto` (measured per connection: the
    /// mean idle round trip, stalls left out), `off`, or a duration such
    /// as `15us`.
    #[arg(long, value_name = "auto|off|DURATION", default_value = "auto")]
    pub transport_delay: String,
    /// No status line, no connection log, no summary.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Serve until stopped.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    if !(args.time_scale.is_finite() && args.time_scale >= 0.0) {
        bail!("--time-scale must be a number ≥ 0 (0: as fast as possible, 1: real time), not {}", args.time_scale);
    }
    let listen = match &args.unix {
        Some(p) => Listen::Unix(p.clone()),
        None => Listen::Tcp(
            args.listen
                .parse::<SocketAddr>()
                .with_context(|| format!("--listen {}: expected ADDRESS:PORT, e.g. 127.0.0.1:10809", args.listen))?,
        ),
    };
    let time = |flag: &str, v: &str| parse_time(v, 1_000_000_000).map_err(|e| anyhow::anyhow!("--{flag} {v}: {e}"));
    let power_loss_at = args.power_loss_at.as_deref().map(|v| time("power-loss-at", v)).transpose()?;
    let window = time("power-loss-window", &args.power_loss_window)?;
    if window == 0 {
        bail!("--power-loss-window {}: must be above 0", args.power_loss_window);
    }
    let cuts = args.power_loss_after.is_some()
        || power_loss_at.is_some()
        || args.power_loss_random.is_some()
        || args.power_loss_signal;
    let tls: TlsMode = args.tls.parse().map_err(|e: String| anyhow::anyhow!("--tls {e}"))?;
    #[cfg(feature = "tls-psk")]
    let tls_psk = match (&args.tls_psk, tls) {
        (None, _) => None,
        (Some(_), TlsMode::Off) => bail!("--tls-psk: needs --tls on or --tls require"),
        (Some(_), _) if args.tls_certificates.is_some() => {
            bail!("--tls-psk and --tls-certificates: give one (pre-shared keys or certificates)")
        }
        (Some(file), _) => {
            Some(ssdtwin_nbd::server::load_psk_file(file).map_err(|e| anyhow::anyhow!("--tls-psk: {e}"))?)
        }
    };
    #[cfg(not(feature = "tls-psk"))]
    if let Some(psk) = &args.tls_psk {
        bail!(
            "--tls-psk {}: this ssdtwin was built without pre-shared keys (rustls, its TLS library, has none; \
             build with `--features tls-psk`, which uses OpenSSL), or use X.509 certificates (--tls-certificates DIR)",
            psk.display()
        );
    }
    #[cfg(feature = "tls-psk")]
    let psk_given = tls_psk.is_some();
    #[cfg(not(feature = "tls-psk"))]
    let psk_given = false;
    let tls_config = match (&args.tls_certificates, tls) {
        (None, TlsMode::Off) => None,
        (None, _) if psk_given => None,
        (None, _) => bail!("--tls {}: needs --tls-certificates DIR (server-cert.pem, server-key.pem)", args.tls),
        (Some(dir), _) => Some(load_certificates(dir).map_err(|e| anyhow::anyhow!("--tls-certificates: {e}"))?),
    };
    let transport_delay: TransportDelay =
        args.transport_delay.parse().map_err(|e: String| anyhow::anyhow!("--transport-delay {e}"))?;
    if let Some(json) = args.json.as_deref().filter(|j| *j != "-") {
        let dir = Path::new(json).parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            bail!("--json {json}: directory {} does not exist", dir.display());
        }
    }
    if let Some(save) = &args.save {
        let dir = save.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            bail!("--save {}: directory {} does not exist", save.display(), dir.display());
        }
    }
    let terminal = !args.quiet && std::io::stderr().is_terminal();
    // The drive: loaded with its data, or built and brought to its state.
    let (spec, origin, state_name, twin) = match &args.load {
        Some(path) => {
            let bar = spinner(terminal, &format!("loading {}", path.display()));
            let loaded = image::load(path)?;
            bar.finish_and_clear();
            (loaded.spec, loaded.origin, format!("loaded:{}", path.display()), loaded.twin)
        }
        None => {
            let name = args.drive.clone().expect("clap requires --drive without --load");
            let spec = DriveSpec::load(&name, &args.set)?;
            let model = spec.build(&name)?;
            refuse_zoned(&spec, &name)?;
            let state: DriveState = args.state.parse().map_err(|e: String| anyhow::anyhow!("--state {e}"))?;
            let mut drive = Drive::new(model);
            if state != DriveState::Fresh {
                let bar = spinner(terminal, &format!("preconditioning: {state}"));
                state.apply_fast(&mut drive, args.seed);
                bar.finish_and_clear();
            }
            (spec, name, state.to_string(), Twin::new(drive))
        }
    };
    refuse_zoned(&spec, &origin)?;
    let opts = ServeOptions {
        listen: listen.clone(),
        allow_remote: args.allow_remote,
        time_scale: args.time_scale,
        export_name: args.name.clone(),
        description: format!("ssdtwin: {}", spec.description),
        once: args.once,
        log: !args.quiet,
        power_loss_after: args.power_loss_after,
        power_loss_at,
        power_loss_random: args.power_loss_random.map(|seed| (seed, window)),
        power_loss_by_signal: args.power_loss_signal,
        // After each cut the drive restarts from --save's image.
        reload: args.save.clone().filter(|_| cuts).map(|path| ReloadImage {
            spec: spec.clone(),
            origin: origin.clone(),
            path,
        }),
        plp: args.plp,
        transport_delay,
        tls,
        tls_config,
        #[cfg(feature = "tls-psk")]
        tls_psk,
        remote_without_tls: args.allow_remote_without_tls,
        // For tests and campaigns (the library's `server::wire`).
        wire_log: false,
    };
    catch_stop_signals();
    let size = twin.user_bytes();
    let server = Server::bind(twin, opts).with_context(|| match &listen {
        Listen::Tcp(a) => format!("listening on {a}"),
        Listen::Unix(p) => format!("listening on {}", p.display()),
    })?;
    stop_on_signals(server.stopper());
    if args.power_loss_signal {
        power_cut_on_sigusr1(server.power_cutter());
    }
    if !args.quiet {
        let url = match (&listen, server.local_addr()) {
            (_, Some(a)) if tls == TlsMode::Require => format!("nbds://{a}/{}", args.name),
            (_, Some(a)) => format!("nbd://{a}/{}", args.name),
            (Listen::Unix(p), None) => format!("nbd+unix:///{}?socket={}", args.name, p.display()),
            _ => String::new(),
        };
        errln!("ssdtwin serve: {} ({} bytes) at {url}, time scale {}; Ctrl-C stops", spec.name, size, args.time_scale);
    }
    let mut last = Instant::now();
    let outcome = server.run_with(|twin| {
        if terminal && last.elapsed() >= Duration::from_millis(500) {
            last = Instant::now();
            let d = twin.device().drive();
            let c = ssdtwin::run::stats::Counters::of(d);
            err!(
                "\r{:>10.3} s simulated · {} MiB written · {} MiB read · WAF {:.2} · {} outstanding   ",
                twin.now() as f64 / 1e9,
                d.ftl().counters().host_slots_written >> 8,
                d.counters().host_slots_read >> 8,
                c.waf(),
                twin.device().outstanding(),
            );
            let _ = std::io::stderr().flush();
        }
    })?;
    if terminal {
        errln!();
    }
    let mut outcome = outcome;
    let report = ServeReport::of(&mut outcome, args.time_scale);
    let to_stdout = args.json.as_deref() == Some("-");
    // Files first, standard output last: a reader of the summary that has
    // gone away ends the process quietly (output.rs), and must not cost
    // the saved drive or the JSON.
    let json = serde_json::to_string_pretty(&report.to_json(&spec, &state_name, args.seed))? + "\n";
    if let Some(out) = args.json.as_deref().filter(|_| !to_stdout) {
        write_atomically(Path::new(out), json.as_bytes())?;
    }
    if let Some(path) = &args.save {
        let bar = spinner(terminal, &format!("saving {}", path.display()));
        image::save(&mut outcome.twin, &spec, &origin, path)?;
        bar.finish_and_clear();
        if !args.quiet {
            errln!(
                "ssdtwin serve: saved the drive and {} pages of data to {}",
                outcome.twin.store().live_pages(),
                path.display()
            );
        }
    }
    if to_stdout {
        out!("{json}");
    } else if !args.quiet {
        out!("{}", report.summary(&spec, &state_name, args.seed));
    }
    Ok(ExitCode::SUCCESS)
}

/// NBD has no zone commands: a zoned drive cannot be served.
fn refuse_zoned(spec: &DriveSpec, origin: &str) -> Result<()> {
    if spec.zns.is_some() {
        bail!(
            "{origin}: a zoned drive ([zns]) cannot be served: NBD has no zone commands (no write pointer, \
             zone reset or zone report), so a block device client's writes would fail; serve a conventional drive"
        );
    }
    Ok(())
}
