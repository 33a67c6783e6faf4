//! The report of a small real suite run: every test has its charts and
//! every chart its data, the page references nothing outside itself, the
//! same JSON renders the same bytes, and headless Chromium draws it
//! without console errors.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use ssdtwin::study::suite::{self, DriveUnderTest, SuiteOptions};
use tempfile::TempDir;

/// Two small drives (TLC, and the 660p scaled down, with its SLC cache)
/// through the client-2015 tests that exercise every kind of chart:
/// consistency (scatter), a QD sweep, a mix sweep, a long write, and the
/// synthetic Light (a trace test, scaled down).
fn doc() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let s = suite::load("client-2015").unwrap();
        let tlc = DriveUnderTest::load(
            "generic-tlc-nvme",
            &["geometry.blocks_per_plane=64".into(), "ftl.user_capacity_bytes=999_997_440".into()],
        )
        .unwrap();
        let qlc = DriveUnderTest::load(
            "intel-660p-1tb",
            &[
                "geometry.blocks_per_plane=64".into(),
                "geometry.pages_per_block=256".into(),
                "ftl.user_capacity_bytes=3199995904".into(),
                "slc_cache.static_bytes=200000000".into(),
                "slc_cache.capacity_curve=[[0.0, 1.2e9], [0.5, 1.2e9], [0.78, 0.2e9], [1.0, 0.2e9]]".into(),
            ],
        )
        .unwrap();
        let only = ["consistency", "random-write", "mixed-random", "seq-write", "atsb-light-synthetic"];
        let opts = SuiteOptions {
            scale: 0.01,
            time_scale: 0.01,
            trace_scale: 0.01,
            only: only.iter().map(|x| x.to_string()).collect(),
            ..SuiteOptions::default()
        };
        let r = suite::run_suite(&s, &[tlc, qlc], &opts, None).unwrap();
        // Through text, as the CLI writes and `ssdtwin report` reads it.
        serde_json::from_str(&serde_json::to_string_pretty(&suite::json::suite_json(&r)).unwrap()).unwrap()
    })
}

/// An empty temporary directory of the test's own, removed with what it
/// holds when dropped (also when the test panics).
fn out_dir(name: &str) -> TempDir {
    tempfile::Builder::new().prefix(&format!("ssdtwin-report-{name}-")).tempdir().unwrap()
}

#[test]
fn every_test_has_its_charts_with_data_and_nothing_external() {
    let rep = ssdtwin_report::render(doc()).unwrap();
    let html = &rep.html;
    for needle in ["http", "src=", "<link", "@import", "url(", "<script", "<iframe", "<img"] {
        assert!(!html.to_lowercase().contains(needle), "report.html contains `{needle}`");
    }
    assert!(html.contains("intel-660p-1tb") && html.contains("QLC") && html.contains("Seed"));
    let chart = |test: &str, kind: &str| {
        let file =
            rep.files.iter().find(|(n, _)| n.starts_with("charts/") && n.ends_with(&format!("-{test}-{kind}.svg")));
        let (_, svg) = file.unwrap_or_else(|| panic!("no {kind} chart for {test}"));
        // Inline in the page too (without the namespace attribute).
        let inline = svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
        assert!(html.contains(&inline), "{test} {kind} chart is not in the page");
        let n: usize = svg.split(r#"data-points=""#).nth(1).and_then(|x| x.split('"').next()).unwrap().parse().unwrap();
        assert!(n > 0, "{test} {kind}: no data points");
        let values: Vec<f64> =
            svg.split(r#"data-value=""#).skip(1).map(|x| x.split('"').next().unwrap().parse().unwrap()).collect();
        assert!(!values.is_empty() && values.iter().any(|v| *v > 0.0), "{test} {kind}: no drawn values");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{test} {kind}: bad numbers");
        assert!(svg.contains("#0072B2") && svg.contains("#D55E00"), "{test} {kind}: both drives in their colours");
        values.len()
    };
    for test in ["consistency", "random-write", "mixed-random", "seq-write"] {
        assert_eq!(chart(test, "scores"), 2, "one bar per drive");
        assert_eq!(chart(test, "latency"), 8, "p50, p99, p99.9, max per drive");
        assert!(html.contains(&format!(r#"<section id="{test}">"#)));
    }
    // The synthetic trace test: data rate bars, and its six latencies
    // on their own axis, labelled synthetic.
    assert_eq!(chart("atsb-light-synthetic", "scores"), 2, "one data-rate bar per drive");
    assert_eq!(chart("atsb-light-synthetic", "scores-latency"), 12, "6 latencies × 2 drives");
    assert!(html.contains("Light, empty drive (synthetic ATSB-like trace, not the original)"));
    assert!(html.contains("not AnandTech&#x27;s trace") || html.contains("not AnandTech's trace"));
    assert_eq!(chart("random-write", "qd-curve"), 12, "6 queue depths × 2 drives");
    assert_eq!(chart("mixed-random", "mix-curve"), 12, "6 mixes × 2 drives");
    chart("consistency", "consistency");
    chart("consistency", "consistency-window");
    chart("seq-write", "throughput");
    let slc = rep.files.iter().find(|(n, _)| n.ends_with("-seq-write-slc-cache.svg")).expect("SLC chart");
    assert!(slc.1.contains("#D55E00"), "the 660p's SLC occupancy is drawn");
    assert_eq!(html.matches("How to read this").count(), rep.files.iter().filter(|f| f.0.ends_with(".svg")).count());
    let scores = &rep.files.iter().find(|f| f.0 == "scores.csv").unwrap().1;
    // Four tests × two drives: consistency scores IOPS and mean/σ, the
    // other three MB/s, efficiency and power; the synthetic Light ten
    // scores per drive (with its two outlier shares).
    assert_eq!(scores.lines().count(), 1 + (2 + 3 * 3) * 2 + 10 * 2, "{scores}");
    assert!(scores.contains("I/Os above 10 ms,%") && scores.contains("I/Os above 100 ms,%"));
    assert!(
        rep.files.iter().any(|(n, _)| n.ends_with("-atsb-light-synthetic-scores-outliers.svg")),
        "the Storage Bench's outliers have their chart"
    );
    let steps = &rep.files.iter().find(|f| f.0 == "steps.csv").unwrap().1;
    assert!(steps.lines().count() > 2 * (1 + 6 + 6 + 6));
}

#[test]
fn same_json_gives_the_same_bytes() {
    let a = ssdtwin_report::render(doc()).unwrap();
    let b = ssdtwin_report::render(doc()).unwrap();
    assert!(a.html == b.html && a.files == b.files);
    let tmp = out_dir("bytes");
    let dir = tmp.path().to_path_buf();
    let page = a.write(&dir).unwrap();
    assert_eq!(std::fs::read_to_string(&page).unwrap(), a.html);
    for (name, text) in &a.files {
        assert_eq!(&std::fs::read_to_string(dir.join(name)).unwrap(), text, "{name}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

/// The PCMark 8 test as the reviews draw it: the Storage score, the
/// bandwidth and the ten traces' service times, one bar per drive each,
/// labelled as Futuremark's traces' synthetic equivalents.
#[test]
fn pcmark8_charts_draw_the_score_the_bandwidth_and_every_trace() {
    let s = suite::load("vendor-2018").unwrap();
    let small = |name: &str, extra: &str| {
        let mut set = vec!["geometry.blocks_per_plane=64".to_string(), "ftl.user_capacity_bytes=999_997_440".into()];
        set.push(extra.to_string());
        let mut d = DriveUnderTest::load("generic-tlc-nvme", &set).unwrap();
        d.name = name.into();
        d
    };
    let drives = [small("fast", "controller.cores=3"), small("slow", "host.pcie_lanes=1")];
    let opts = SuiteOptions {
        scale: 0.01,
        time_scale: 0.01,
        trace_scale: 0.005,
        only: vec!["pcmark8-storage".into()],
        ..SuiteOptions::default()
    };
    let r = suite::run_suite(&s, &drives, &opts, None).unwrap();
    let rep = ssdtwin_report::render_record(&suite::json::suite_record(&r)).unwrap();
    let bars = |kind: &str| {
        let (_, svg) = rep
            .files
            .iter()
            .find(|(n, _)| n.ends_with(&format!("-pcmark8-storage-{kind}.svg")))
            .unwrap_or_else(|| panic!("no {kind} chart"));
        svg.matches("data-value=").count()
    };
    assert_eq!(bars("scores"), 2, "the Storage score per drive");
    assert_eq!(bars("scores-bandwidth"), 2, "the bandwidth per drive");
    assert_eq!(bars("scores-time"), 20, "ten service times per drive");
    assert!(rep.html.contains("not Futuremark&#x27;s traces") || rep.html.contains("not Futuremark's traces"));
}

/// The PCMark 10 Data Drive test as reviews draw it: the score, then the
/// bandwidths (overall and per trace) and the access times on their own
/// axes, labelled as synthetic and unscaled.
#[test]
fn pcmark10_charts_draw_the_score_bandwidths_and_access_times() {
    let s = suite::load("vendor-2018").unwrap();
    let small = |name: &str, extra: &str| {
        let set = vec![
            "geometry.blocks_per_plane=64".to_string(),
            "ftl.user_capacity_bytes=999_997_440".into(),
            extra.to_string(),
        ];
        let mut d = DriveUnderTest::load("generic-tlc-nvme", &set).unwrap();
        d.name = name.into();
        d
    };
    let drives = [small("fast", "controller.cores=3"), small("slow", "host.pcie_lanes=1")];
    let opts = SuiteOptions {
        scale: 0.01,
        time_scale: 0.01,
        trace_scale: 0.01,
        only: vec!["pcmark10-data-drive".into()],
        ..SuiteOptions::default()
    };
    let r = suite::run_suite(&s, &drives, &opts, None).unwrap();
    let rep = ssdtwin_report::render_record(&suite::json::suite_record(&r)).unwrap();
    let bars = |kind: &str| {
        let (_, svg) = rep
            .files
            .iter()
            .find(|(n, _)| n.ends_with(&format!("-pcmark10-data-drive-{kind}.svg")))
            .unwrap_or_else(|| panic!("no {kind} chart"));
        svg.matches("data-value=").count()
    };
    assert_eq!(bars("scores"), 2, "the score per drive");
    assert_eq!(bars("scores-bandwidth"), 8, "overall and three traces' bandwidth per drive");
    assert_eq!(bars("scores-latency"), 8, "overall and three traces' access time per drive");
    assert!(rep.html.contains("UL's constant is not published") || rep.html.contains("UL&#x27;s constant"));
}

/// A suite of the data-placement interfaces: zones written with fio's
/// `zonemode=zbd` on a zoned drive (open and full zones over time), and
/// hot and cold data through two placement handles on an FDP drive (WAF
/// per handle).
#[test]
fn zoned_and_fdp_drives_get_zone_state_and_handle_charts() {
    let s = suite::parse(
        "name = \"placement\"\ntitle = \"Placement\"\nsource = \"test\"\n\
         [[test]]\nname = \"zones\"\ntitle = \"Zoned writes\"\nstate = \"fresh\"\n\
         [[test.step]]\nrw = \"write\"\nbs = \"128KiB\"\niodepth = 8\nzonemode = \"zbd\"\nsize = \"160MiB\"\n\
         [test.score]\nkind = \"each\"\nmetric = \"mbps\"\n",
        "placement.toml",
    )
    .unwrap();
    let zoned = DriveUnderTest::load(
        "generic-tlc-nvme",
        &[
            "geometry.channels=2".into(),
            "geometry.dies_per_channel=2".into(),
            "geometry.blocks_per_plane=64".into(),
            "geometry.pages_per_block=48".into(),
            "ftl.user_capacity_bytes=268435456".into(),
            "zns.zone_size_bytes=8388608".into(),
            "zns.zone_capacity_bytes=6291456".into(),
            "zns.max_open_zones=4".into(),
            "zns.max_active_zones=4".into(),
        ],
    )
    .unwrap();
    let r = suite::run_suite(&s, &[zoned], &SuiteOptions::default(), None).unwrap();
    let rep = ssdtwin_report::render_record(&suite::json::suite_record(&r)).unwrap();
    let chart = |kind: &str| rep.files.iter().find(|(n, _)| n.ends_with(&format!("-{kind}.svg"))).map(|(_, s)| s);
    let full = chart("full-zones").expect("a full-zones chart");
    // 160 MiB of LBA space is 20 zones: the last second ends with them full.
    assert!(full.contains("data-chart=\"full-zones\""));
    assert!(chart("open-zones").is_some() && chart("handle-waf").is_none());

    let s = suite::parse(
        "name = \"placement\"\ntitle = \"Placement\"\nsource = \"test\"\n\
         [[test]]\nname = \"hot-cold\"\ntitle = \"Hot and cold\"\nstate = \"fresh\"\n\
         [[test.step]]\nname = \"cold\"\nrw = \"write\"\nbs = \"128KiB\"\niodepth = 4\nsize = \"64MiB\"\nfdp = 1\nplids = \"1\"\n\
         [[test.step]]\nname = \"hot\"\nrw = \"write\"\nbs = \"128KiB\"\niodepth = 4\noffset = \"64MiB\"\nsize = \"32MiB\"\nfdp = 1\nplids = \"0\"\n\
         [test.score]\nkind = \"each\"\nmetric = \"mbps\"\n",
        "placement.toml",
    )
    .unwrap();
    let fdp = DriveUnderTest::load(
        "generic-tlc-nvme",
        &[
            "geometry.blocks_per_plane=64".into(),
            "ftl.user_capacity_bytes=999_997_440".into(),
            "fdp.reclaim_unit_handles=2".into(),
            "fdp.isolation=initially".into(),
        ],
    )
    .unwrap();
    let r = suite::run_suite(&s, &[fdp], &SuiteOptions::default(), None).unwrap();
    let rep = ssdtwin_report::render_record(&suite::json::suite_record(&r)).unwrap();
    let (_, svg) = rep.files.iter().find(|(n, _)| n.ends_with("-handle-waf.svg")).expect("a handle-waf chart");
    // Two handles written, one bar each, at 1 (nothing moved; at most a
    // partial program unit left in the buffer or padded).
    let values: Vec<f64> =
        svg.split("data-value=\"").skip(1).map(|x| x.split('"').next().unwrap().parse().unwrap()).collect();
    assert_eq!(values.len(), 2, "{svg}");
    assert!(values.iter().all(|&w| w > 0.99 && w < 1.01), "{values:?}");
    assert!(!rep.files.iter().any(|(n, _)| n.ends_with("-open-zones.svg")));
}

#[test]
fn not_a_suite_run_is_refused() {
    let err = ssdtwin_report::render(&serde_json::json!({ "jobs": [] })).err().expect("refused");
    assert!(err.to_string().contains("not a suite run"), "{err}");
}

/// Open `page` in headless Chromium; returns the screenshot's pixels
/// (RGB(A), row by row) and the console lines Chromium logged.
fn chromium(page: &Path, dir: &Path) -> (Vec<u8>, usize, Vec<String>) {
    let shot = dir.join("screenshot.png");
    let exe = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|e| Command::new(e).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("headless Chromium is needed: apt-get install -y chromium (.ci/run installs it)");
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(90) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = reader.join().unwrap();
    let console: Vec<String> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load resource") || l.contains("Refused to"))
        .map(String::from)
        .collect();
    let file = std::fs::File::open(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}); chromium said:\n{log}"));
    let mut png = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut buf = vec![0; png.output_buffer_size().unwrap()];
    let info = png.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (buf, info.color_type.samples(), console)
}

/// A script appended to a copy of the page (the report itself has none):
/// once the page has loaded it reports, through the console, every
/// resource the browser fetched, every image that failed, and every chart
/// drawn smaller than 100 px, then how many charts it measured.
const PROBE: &str = r#"<script>
addEventListener('load', () => {
  const fetched = performance.getEntriesByType('resource').map(e => e.name);
  if (fetched.length) console.error('fetched ' + fetched.join(' '));
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src);
  if (broken.length) console.error('broken images ' + broken.join(' '));
  const charts = [...document.querySelectorAll('figure > svg')];
  const small = charts.filter(c => { const b = c.getBoundingClientRect(); return b.width < 100 || b.height < 100; });
  if (small.length) console.error(small.length + ' charts drawn smaller than 100 px');
  console.log('probe measured ' + charts.length + ' charts');
});
</script>"#;

/// Open a copy of `page` with [`PROBE`]: the console lines other than the
/// probe's count, the number of charts the probe measured, and the
/// screenshot's pixels.
fn probe(page: &Path, dir: &Path) -> (Vec<String>, usize, Vec<u8>, usize) {
    let html = std::fs::read_to_string(page).unwrap().replace("</body>", &format!("{PROBE}</body>"));
    let probed = dir.join(format!("probed-{}", page.file_name().unwrap().to_string_lossy()));
    std::fs::write(&probed, html).unwrap();
    let (px, samples, console) = chromium(&probed, dir);
    let count = console
        .iter()
        .find_map(|l| l.split("probe measured ").nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("the probe did not run; console: {console:#?}"));
    let others = console.into_iter().filter(|l| !l.contains("probe measured")).collect();
    (others, count, px, samples)
}

#[test]
fn headless_chromium_draws_the_page_without_console_errors() {
    let tmp = out_dir("chromium");
    let dir = tmp.path().to_path_buf();
    let page = ssdtwin_report::render(doc()).unwrap().write(&dir).unwrap();
    let (console, charts, px, samples) = probe(&page, &dir);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(charts, html.matches("<figure><svg").count(), "every chart is laid out");
    let rgb = |p: &[u8]| if samples >= 3 { [p[0], p[1], p[2]] } else { [p[0]; 3] };
    let luma: Vec<f64> = px
        .chunks(samples)
        .map(|p| {
            let [r, g, b] = rgb(p);
            0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64
        })
        .collect();
    let mean = luma.iter().sum::<f64>() / luma.len() as f64;
    let sd = (luma.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / luma.len() as f64).sqrt();
    let inked = luma.iter().filter(|l| **l < 200.0).count() as f64 / luma.len() as f64;
    assert!(sd > 10.0 && inked > 0.01, "screenshot looks blank: mean {mean:.1}, sd {sd:.1}, inked {inked:.3}");
    // The charts are drawn, not just the text: both drives' colours show.
    for hex in [ssdtwin_report::svg::colour(0), ssdtwin_report::svg::colour(1)] {
        let want: Vec<i32> = (0..3).map(|i| i32::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap()).collect();
        let n =
            px.chunks(samples).filter(|p| rgb(p).iter().zip(&want).all(|(a, b)| (*a as i32 - b).abs() <= 12)).count();
        assert!(n > 500, "{n} pixels of the drive colour {hex} in the screenshot");
    }
    // The checks themselves work: a page with a script error, a missing
    // image and an empty chart is caught on every count.
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><body><p>x</p><img src=\"missing.png\"><figure><svg width=\"10\" height=\"10\"></svg></figure>\
         <script>console.error('broken chart')</script></body>",
    )
    .unwrap();
    let (console, charts, _, _) = probe(&bad, &dir);
    assert_eq!(charts, 1);
    for needle in ["broken chart", "broken images", "smaller than 100 px"] {
        assert!(console.iter().any(|l| l.contains(needle)), "`{needle}` is not detected: {console:#?}");
    }
}
