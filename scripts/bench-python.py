"""Speed of the Python package (docs/python.md, "Speed"): in a venv with the package,
  python scripts/bench-python.py sweep     # 64 short points, serial vs local (2 workers)
  python scripts/bench-python.py ray       # per-point time on a local Ray (num_cpus=2)
  python scripts/bench-python.py run CLI   # run() vs the `ssdtwin` binary CLI, ~1 s job
  python scripts/bench-python.py step      # ssdtwin.Device: µs per command, batched and one by one
"""
import os, subprocess, sys, time, json
import ssdtwin

SMALL = {"geometry.channels": 2, "geometry.dies_per_channel": 2, "geometry.blocks_per_plane": 64,
         "geometry.pages_per_block": 48, "ftl.user_capacity_bytes": 256 << 20}
what = sys.argv[1]

def load():
    return os.getloadavg()[0]

if __name__ == "__main__":
    d = ssdtwin.Drive("generic-tlc-nvme", set=SMALL)
    if what == "sweep":
        grid = {"drive": d, "seed": list(range(1, 65)),
                "job": [{"rw": "randwrite", "bs": "4k", "iodepth": 8, "io_size": "96m"}]}
        t = time.perf_counter(); a = ssdtwin.sweep(grid, backend="serial", progress=False); ts = time.perf_counter() - t
        l1 = load()
        t = time.perf_counter(); b = ssdtwin.sweep(grid, backend="local", max_workers=2, progress=False); tl = time.perf_counter() - t
        l2 = load()
        assert a.drop(columns=[]).equals(b)
        print("sweep 64 points: serial %.2f s, local(2) %.2f s, speed-up %.2fx, load %.1f/%.1f" % (ts, tl, ts / tl, l1, l2))
    elif what == "ray":
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        grid = {"drive": d, "seed": list(range(1, 65)), "job": [{"rw": "randread", "bs": "4k", "iodepth": 1, "io_size": "4k"}]}
        # Warm the workers (import, extension load), then time tiny points.
        ssdtwin.sweep(grid, backend="ray", progress=False)
        t = time.perf_counter(); ssdtwin.sweep(grid, backend="serial", progress=False); ts = time.perf_counter() - t
        t = time.perf_counter(); ssdtwin.sweep(grid, backend="ray", progress=False); tr = time.perf_counter() - t
        print("ray: 64 near-empty points: serial %.3f s, ray %.3f s on 2 CPUs → per point %.1f ms (ray), %.1f ms (serial); load %.1f"
              % (ts, tr, tr / 64 * 1000, ts / 64 * 1000, load()))
    elif what == "step":
        import numpy as np
        t = time.perf_counter()
        dev = ssdtwin.Device("generic-tlc-nvme", state="full", seed=1)
        print("Device(generic-tlc-nvme, state=full): built in %.2f s" % (time.perf_counter() - t))
        rng = np.random.default_rng(1)
        pages = dev.capacity_bytes // 4096
        def per_cmd(batch, batches, reps=3):
            """Best of `reps` (each `batches` batches of `batch` random 4 KiB reads): µs per command."""
            best = []
            for _ in range(reps):
                offs = [rng.integers(0, pages, batch) * 4096 for _ in range(batches)]
                t = time.perf_counter()
                for o in offs:
                    dev.submit_many("read", o, 4096)
                    done = dev.run_until_idle()
                    assert len(done) == batch
                best.append((time.perf_counter() - t) / (batch * batches) * 1e6)
            return min(best), sorted(best)[len(best) // 2]
        for batch, batches in ((100_000, 10), (32, 10_000)):
            b, m = per_cmd(batch, batches)
            print("submit_many(%d random 4k reads) + run_until_idle, %d batches: %.3f µs/command (best of 3; median %.3f)"
                  % (batch, batches, b, m))
        offs = (rng.integers(0, pages, 100_000) * 4096).tolist()
        t = time.perf_counter()
        for o in offs:
            dev.submit("read", o, 4096)
            dev.next_completion()
        print("submit + next_completion, one command at a time (QD1), 100k: %.3f µs/command"
              % ((time.perf_counter() - t) / len(offs) * 1e6))
        print("load %.1f" % load())
    elif what == "run":
        cli = sys.argv[2]
        job = {"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": "4g"}
        args = [cli, "run", "--drive", "generic-tlc-nvme", "--state", "full", "--quiet", "--json", "/dev/null"]
        for k, v in SMALL.items():
            args += ["--set", "%s=%s" % (k, v)]
        args += ["--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--io_size", "4g"]
        cl, py = [], []
        for i in range(5):
            t = time.perf_counter(); subprocess.run(args, check=True); cl.append(time.perf_counter() - t)
            t = time.perf_counter(); r = ssdtwin.run(d, job, state="full"); py.append(time.perf_counter() - t)
        cm, pm = sorted(cl)[2], sorted(py)[2]
        print("run() vs CLI (median of 5): CLI %.3f s, run() %.3f s, overhead %+.1f%% (load %.1f)" % (cm, pm, (pm / cm - 1) * 100, load()))
