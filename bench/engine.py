"""Benchmark: the compiled attention engine against the plain NumPy layer map and against a
re-implementation of the authors' batched PyTorch step, in one run.

Tables
1. The authors' case: B = 128 systems of n = 32 tokens on the circle (d = 2), A = V = I, SA,
   dt = 0.1, 300 steps, 5 values of beta on linspace(0.1, 9, 5). Columns: the project engine
   (``simulate_batch``: here the lanes kernel, 64 systems in the SIMD lanes, parallel over
   blocks), the per-system symmetric-score kernel (one exponential per pair, parallel over
   systems), the per-row kernel, the authors' PyTorch step (``bench/authors_torch.py``, run in a
   subprocess by an interpreter that has torch: ``--torch PYTHON``, default
   ``/work/torchvenv/bin/python``; column left out if absent) with its default threads and with
   1 thread, and the NumPy reference (``simulate_reference``, one system at a time, timed on 8
   systems and scaled to B).
2. Single systems, d = 3, beta = 1, dt = 0.1: n = 32, 128, 1024 with A = V = I (symmetric
   path) and with general A, V (per-row path); engine vs NumPy reference, pair-steps/s =
   steps * n * n / time.
3. The full protocol of the paper's phase diagram (2048 systems x 90 beta, n = 32, d = 2,
   300 steps, with the cluster statistics at 31 checkpoints), measured on 2 (``--quick``: 1)
   beta at beta = 9 and scaled, on 1 thread (as a heavy job of the app runs) and on all threads.
5. The float32 path (``simulate_batch_float32``, 128 systems per block, 8 floats per AVX2
   register; ``phase_diagram(precision="float32")``): the protocol case (B = 512, n = 32, d = 2,
   300 steps, beta = 9) float32 lanes vs float64 lanes vs the NumPy references (float64 and
   float32, timed on 4 systems and scaled), pair-steps/s; the float32 exp (ns, ulp); agreement of
   the per-system cluster counts and close-pair fractions with float64; the full protocol in
   float32 on 1 and on all threads, split into layers and statistics. ``--only-f32`` runs only
   this table (about 30 s).
4. Physical limit: ns per exp of the scalar libm exp and of the vector exp (one thread), the
   exp's largest error in ulp, the lanes kernel timed by parts (pair pass with the exp,
   accumulation, whole layer), flops per pair-step and the resulting bounds for this CPU.

Every figure is the best of several repeats taken in turns, so that load from other processes
hits all columns alike; compilation is excluded. The load average is printed: on a shared
machine only the ratios within one run mean something.

Run:  .venv/bin/python bench/engine.py [--quick] [--only-f32] [--torch PYTHON]
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import numba  # noqa: E402

from sim import attention as att  # noqa: E402
from sim.attention import api, kernels, lanes  # noqa: E402
from sim import hemisphere as hs  # noqa: E402


class Torch:
    """The authors' step in a torch subprocess (None-like if the interpreter is missing)."""

    def __init__(self, python: str):
        self.proc = None
        if not os.path.exists(python):
            return
        self.proc = subprocess.Popen(
            [python, os.path.join(HERE, "authors_torch.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.info = self.ask({"info": 1})
        self.dir = tempfile.mkdtemp(prefix="bench_torch_")

    def ask(self, req: dict) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def run(self, Z0, beta, eta, steps, threads):
        z0, out = os.path.join(self.dir, "z0.npy"), os.path.join(self.dir, "out.npy")
        np.save(z0, Z0)
        ans = self.ask({"z0": z0, "out": out, "beta": beta, "eta": eta, "steps": steps, "threads": threads})
        return np.load(out), (ans["seconds"], ans["cpu_seconds"])

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def _best(fns: dict, repeats: int) -> tuple[dict, dict]:
    """Best wall time and best CPU time (all threads of this process, or of the torch process:
    a function may return its own (wall, cpu) pair) of each function."""
    wall = {k: np.inf for k in fns}
    cpu = {k: np.inf for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            res = fn()
            w, c = res if isinstance(res, tuple) else (time.perf_counter() - t0, time.process_time() - c0)
            wall[name] = min(wall[name], w)
            cpu[name] = min(cpu[name], c)
    return wall, cpu


def authors_case(torch: Torch, repeats: int) -> None:
    B, n, d, steps, dt = 128, 32, 2, 300, 0.1
    betas = np.linspace(0.1, 9.0, 5)
    g = np.random.default_rng(2023).standard_normal((B, n, d))
    Z0s = g / np.linalg.norm(g, axis=2, keepdims=True)
    I2 = np.eye(2)
    out = np.empty((B, 2, n, d))
    n_ref = 8

    def engine():
        for beta in betas:
            att.simulate_batch(Z0s, beta, dt, steps, record_every=steps)

    def per_row():
        for beta in betas:
            kernels._run_batch(Z0s, beta, dt, steps, I2, I2, False, steps, out, False)

    def per_system_sym():
        for beta in betas:
            kernels._run_batch(Z0s, beta, dt, steps, I2, I2, False, steps, out, True)

    def numpy_ref():
        t0, c0 = time.perf_counter(), time.process_time()
        for beta in betas:
            for b in range(n_ref):
                att.simulate_reference(Z0s[b], beta, dt, steps, record_every=steps)
        return ((time.perf_counter() - t0) * B / n_ref, (time.process_time() - c0) * B / n_ref)

    def torch_run(th):
        res = [torch.run(Z0s, float(b), dt, steps, th)[1] for b in betas]
        return sum(r[0] for r in res), sum(r[1] for r in res)

    assert api._choose_kernel(B, n, betas[-1], I2, numba.get_num_threads()) == "lanes"
    fns = {"engine": engine, "per-system sym": per_system_sym, "per-row kernel": per_row, "numpy": numpy_ref}
    if torch.proc is not None:
        for th in sorted({torch.info["threads"], 1}):
            fns[f"torch {th} thr"] = lambda th=th: torch_run(th)
    engine(), per_row(), per_system_sym()  # compile / warm
    best, cpu = _best(fns, repeats)
    # agreement on the last beta: engine vs reference (2 systems) and vs torch (all systems)
    fin = att.simulate_batch(Z0s, betas[-1], dt, steps, record_every=steps)[:, -1]
    dref = max(
        np.abs(fin[b] - att.simulate_reference(Z0s[b], betas[-1], dt, steps, record_every=steps)[-1]).max()
        for b in range(2)
    )
    print(
        f"\n1. authors' case: B={B}, n={n}, d={d}, A=V=I, SA, dt={dt}, {steps} steps, "
        f"{len(betas)} beta (best of {repeats}; NumPy timed on {n_ref} systems, scaled)"
    )
    head = f"{'implementation':>18} {'wall s':>9} {'engine speed-up':>16} {'CPU s':>9} {'CPU ratio':>10}"
    print(head + "\n" + "-" * len(head))
    for name, sec in best.items():
        print(
            f"{name:>18} {sec:>9.3f} {sec / best['engine']:>15.2f}x {cpu[name]:>9.3f} "
            f"{cpu[name] / cpu['engine']:>9.2f}x"
        )
    print(f"max |engine - NumPy reference| = {dref:.1e}", end="")
    if torch.proc is not None:
        tfin, _ = torch.run(Z0s, float(betas[-1]), dt, steps, torch.info["threads"])
        print(f";  max |engine - torch| = {np.abs(fin - tfin).max():.1e} (torch {torch.info['torch']})")
    else:
        print(";  torch: not available (no interpreter with torch given)")


def single_systems(pair_steps: float, repeats: int) -> None:
    rng = np.random.default_rng(2024)
    d = 3
    Ag, Vg = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    print(f"\n2. single systems: SA, d={d}, beta=1, dt=0.1; best of {repeats}")
    head = (
        f"{'n':>6} {'A, V':>8} {'steps':>6} {'engine ms':>10} {'numpy ms':>10} {'ratio':>7} "
        f"{'engine pair-steps/s':>20} {'numpy pair-steps/s':>19} {'max |diff|':>11}"
    )
    print(head + "\n" + "-" * len(head))
    for n in (32, 128, 1024):
        Z0 = rng.standard_normal((n, d))
        steps = max(4, int(pair_steps / (n * n)))
        for label, A, V in (("I, I", None, None), ("general", Ag, Vg)):
            args = (Z0, 1.0, 0.1, steps, A, V, "SA")
            fast = att.simulate(*args, record_every=steps)
            ref = att.simulate_reference(*args, record_every=steps)
            fns = {
                "engine": lambda: (att.simulate(*args, record_every=steps), None)[1],
                "numpy": lambda: (att.simulate_reference(*args, record_every=steps), None)[1],
            }
            best, _ = _best(fns, repeats)
            work = steps * n * n
            print(
                f"{n:>6} {label:>8} {steps:>6} {best['engine'] * 1e3:>10.2f} "
                f"{best['numpy'] * 1e3:>10.2f} {best['numpy'] / best['engine']:>7.2f} "
                f"{work / best['engine']:>20.3e} {work / best['numpy']:>19.3e} "
                f"{np.abs(fast - ref).max():>11.1e}"
            )


def full_protocol(n_betas: int = 2) -> None:
    hs.phase_diagram(B=64, n_betas=1)  # warm
    threads = numba.get_num_threads()
    print(
        f"\n3. full protocol (2048 systems x 90 beta, n=32, d=2, 300 steps, statistics at 31 "
        f"checkpoints), measured on {n_betas} of the 90 beta (beta = 9, the slowest end) and "
        f"scaled by {90 / n_betas:g}"
    )
    for th in sorted({1, threads}):
        numba.set_num_threads(th)
        t0, c0 = time.perf_counter(), time.process_time()
        hs.phase_diagram(B=2048, n_betas=n_betas, beta_min=9.0, beta_max=9.0)
        sec, csec = time.perf_counter() - t0, time.process_time() - c0
        f = 90 / n_betas
        print(
            f"   {th} thread(s): {sec:.2f} s wall, {csec:.2f} s CPU -> full protocol "
            f"{f * sec:.0f} s wall ({f * csec:.0f} s CPU; {f * csec / th:.0f} s wall if "
            f"{th} core(s) were free)  [load {os.getloadavg()[0]:.1f}]"
        )
    numba.set_num_threads(threads)


# --------------------------------------------------------------------------- physical limit
@numba.njit(cache=True, nogil=True)
def _libm_exp(x, out):
    for j in range(x.size):  # math.exp: a call to the scalar libm exp per element
        out[j] = math.exp(x[j])


@numba.njit(cache=True, nogil=True)
def _lanes_parts(Z, BAZ, q, H, TU, E, reps, part):
    """part 0: the pair pass (scores + exp) only; 1: the accumulation only; 2: both."""
    n = Z.shape[1]
    for _ in range(reps):
        for i in range(n):
            if part != 1:
                lanes._pairs(i, Z, BAZ, q, E)
            if part != 0:
                lanes._accumulate(i, E, H, TU)


def physical_limit(repeats: int) -> None:
    numba.set_num_threads(1)
    x = np.random.default_rng(0).uniform(-30.0, 0.0, 4096)
    buf = np.empty_like(x)
    _libm_exp(x, buf), att.fast_exp(x)
    reps = 500
    t = _best(
        {
            "libm": lambda: [_libm_exp(x, buf) for _ in range(reps)],
            "vector": lambda: [att.fast_exp(x) for _ in range(reps)],
        },
        repeats,
    )[1]
    ns_libm, ns_vec = (t[k] / reps / x.size * 1e9 for k in ("libm", "vector"))
    xs = np.concatenate(
        [np.linspace(-708.0, 709.4, 1_000_001), np.random.default_rng(1).uniform(-40.0, 0.0, 1_000_000)]
    )
    ref = np.exp(xs)
    ulp = float(np.max(np.abs(att.fast_exp(xs) - ref) / np.spacing(ref)))
    # one block of the lanes kernel, n = 32, d = 2 (the protocol case), timed by parts
    n, d, L = 32, 2, lanes.LANES[np.dtype(np.float64)]
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((d, n, L))
    Z /= np.linalg.norm(Z, axis=0)
    beta = 9.0
    BAZ, q = beta * Z, np.full((n, L), beta / 2)
    H = np.concatenate([np.ones((1, n, L)), Z])
    TU, E = np.zeros((d + 1, n, L)), np.empty((n, L))
    r = 200
    for part in (0, 1, 2):
        _lanes_parts(Z, BAZ, q, H, TU, E, 1, part)
    I2 = np.eye(2)
    Z0s = np.ascontiguousarray(Z.transpose(2, 1, 0))
    out = np.empty((L, 2, n, d))
    lanes.run_lanes(Z0s, beta, 0.1, 1, I2, I2, False, 1, out)
    parts = _best(
        {
            "pairs": lambda: _lanes_parts(Z, BAZ, q, H, TU, E, r, 0),
            "acc": lambda: _lanes_parts(Z, BAZ, q, H, TU, E, r, 1),
            "both": lambda: _lanes_parts(Z, BAZ, q, H, TU, E, r, 2),
            "step": lambda: lanes.run_lanes(Z0s, beta, 0.1, r, I2, I2, False, r, out),
        },
        repeats,
    )[1]
    per = {k: v / (r * L) * 1e9 for k, v in parts.items()}  # ns per system-step
    pairs = n * (n + 1) // 2  # exponentials per system-step
    # flops per unordered pair (d = 2): score 2 mul + 1 add, minus 2 shifts: 5; exp: 11 FMA
    # (22) + reduction 2 FMA (4) + shifter add/sub 2 + scale 1 + clamp/compare 2: 31;
    # accumulation (d + 1 channels, both rows): 2 (d + 1) FMA = 12. Total 48.
    flops_pair = 5 + 31 + 12
    mhz = _cpu_mhz()
    peak = 2 * 4 * 2 * mhz * 1e6  # per core: 2 FMA pipes x 4 doubles x 2 flops
    cores = os.cpu_count()
    bound_flops = cores * peak / flops_pair * (n * n / pairs)  # ordered pair-steps/s
    bound_exp = cores / (ns_vec * 1e-9) * (n * n / pairs)
    print(f"\n4. physical limit (one thread, CPU seconds, best of {repeats}; load {os.getloadavg()[0]:.1f})")
    print(
        f"   exp: scalar libm (math.exp in a Numba loop) {ns_libm:.2f} ns/exp, vector exp "
        f"(fast_exp, AVX2, no SVML) {ns_vec:.2f} ns/exp = {ns_libm / ns_vec:.1f}x; max error "
        f"{ulp:.0f} ulp vs np.exp on [-708, 709.4]"
    )
    print(
        f"   per system-step (n={n}, d={d}): {n * n} ordered pairs, {pairs} exponentials "
        f"(one per unordered pair, diagonal included); ~{flops_pair} flops per exponential "
        f"= {flops_pair * pairs / (n * n):.1f} flops per pair-step"
    )
    print(
        f"   lanes kernel, ns per system-step: pair pass (scores + exp) {per['pairs']:.0f}, "
        f"accumulation {per['acc']:.0f}, both {per['both']:.0f}, whole layer {per['step']:.0f} "
        f"-> exp pass {per['pairs'] / per['step']:.0%}, accumulation "
        f"{per['acc'] / per['step']:.0%}, rest (scores prep, shifts, normalisation, copies) "
        f"{max(0.0, per['step'] - per['both']) / per['step']:.0%}"
    )
    print(
        f"   {pairs} exp x {ns_vec:.2f} ns = {pairs * ns_vec:.0f} ns per system-step at the "
        f"flat-loop rate of fast_exp (which also stores its results): "
        f"{pairs * ns_vec / per['step']:.0%} of the layer"
    )
    print(
        f"   bound with {cores} cores at {mhz:.0f} MHz: flops {bound_flops:.2e} pair-steps/s "
        f"(16 flop/cycle/core); exp throughput {bound_exp:.2e} pair-steps/s; the lanes kernel "
        f"runs at {cores * n * n / (per['step'] * 1e-9):.2e} pair-steps/s with {cores} free cores "
        f"(1 thread x {cores})"
    )
    numba.set_num_threads(os.cpu_count() or 1)


def float32_path(repeats: int, n_betas: int = 2) -> None:
    """Table 5: the float32 lanes kernel against float64 and NumPy, and the full protocol in float32."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    B, n, d, steps, dt, beta = 512, 32, 2, 300, 0.1, 9.0
    g = np.random.default_rng(2025).standard_normal((B, n, d))
    Z0s = g / np.linalg.norm(g, axis=2, keepdims=True)
    n_ref = 4
    att.simulate_batch_float32(Z0s[:8], beta, dt, 2), att.simulate_batch(Z0s[:8], beta, dt, 2)

    def numpy_ref(fn):
        def run():
            t0, c0 = time.perf_counter(), time.process_time()
            for b in range(n_ref):
                fn(Z0s[b], beta, dt, steps, record_every=steps)
            return ((time.perf_counter() - t0) * B / n_ref, (time.process_time() - c0) * B / n_ref)

        return run

    fns = {
        "float32 lanes": lambda: att.simulate_batch_float32(Z0s, beta, dt, steps, record_every=steps),
        "float64 lanes": lambda: att.simulate_batch(Z0s, beta, dt, steps, record_every=steps),
        "NumPy float64": numpy_ref(att.simulate_reference),
        "NumPy float32": numpy_ref(att.simulate_reference_float32),
    }
    wall, cpu = _best(fns, repeats)
    work = B * steps * n * n
    print(
        f"\n5. float32 path, one thread: B={B}, n={n}, d={d}, A=V=I, SA, dt={dt}, {steps} steps, "
        f"beta={beta:g} (best of {repeats}; NumPy timed on {n_ref} systems, scaled; load "
        f"{os.getloadavg()[0]:.1f})"
    )
    head = f"{'implementation':>15} {'CPU s':>8} {'pair-steps/s (CPU)':>19} {'vs float32 lanes':>17} {'wall s':>8}"
    print(head + "\n" + "-" * len(head))
    for name in fns:
        print(
            f"{name:>15} {cpu[name]:>8.3f} {work / cpu[name]:>19.3e} "
            f"{cpu[name] / cpu['float32 lanes']:>16.2f}x {wall[name]:>8.3f}"
        )
    x = np.concatenate(
        [
            np.linspace(-87.0, 88.3, 1_000_001, dtype=np.float32),
            np.random.default_rng(1).uniform(-40.0, 0.0, 1_000_000).astype(np.float32),
        ]
    )
    y, ref32, exact = att.fast_exp_float32(x), np.exp(x), np.exp(x.astype(np.float64))
    ulp32 = float(np.max(np.abs(y.astype(np.float64) - ref32) / np.spacing(ref32)))
    ulpx = float(np.max(np.abs(y - exact) / np.spacing(exact.astype(np.float32))))
    npx = float(np.max(np.abs(ref32 - exact) / np.spacing(exact.astype(np.float32))))
    xs = x[-4096:]
    reps = 500
    t = _best(
        {
            "f32": lambda: [att.fast_exp_float32(xs) for _ in range(reps)],
            "f64": lambda: [att.fast_exp(xs.astype(np.float64)) for _ in range(reps)],
        },
        repeats,
    )[1]
    print(
        f"   float32 exp: {t['f32'] / reps / xs.size * 1e9:.2f} ns/exp (float64 exp "
        f"{t['f64'] / reps / xs.size * 1e9:.2f}); max error {ulp32:.2f} ulp vs np.exp(float32), "
        f"{ulpx:.2f} ulp vs the correctly rounded exp (np.exp(float32) itself: {npx:.2f})"
    )
    # flops per exponential (d = 2): score 5; float32 exp: 6 FMA (12) + reduction 2 FMA (4) + shifter
    # add/sub 2 + scale 1 + clamp/compare 2 = 21; accumulation 12. Per core: 2 FMA pipes x 8 floats x 2.
    pairs = n * (n + 1) // 2
    flops_pair = 5 + 21 + 12
    mhz = _cpu_mhz()
    bound = (os.cpu_count() or 1) * 2 * 8 * 2 * mhz * 1e6 / flops_pair * (n * n / pairs)
    print(
        f"   float32 bound with {os.cpu_count()} cores at {mhz:.0f} MHz: {bound:.2e} pair-steps/s "
        f"(~{flops_pair} flops per exponential, 32 flop/cycle/core); the float32 lanes kernel: "
        f"{work / cpu['float32 lanes']:.2e} per core-second = "
        f"{work / cpu['float32 lanes'] / (bound / (os.cpu_count() or 1)):.0%} of one core's bound"
    )
    Bc = 256
    for bt in (0.1, 3.0, 9.0):
        a = hs.pair_stats(att.simulate_batch_float32(Z0s[:Bc], bt, dt, steps, record_every=10), 0.999)
        b = hs.pair_stats(att.simulate_batch(Z0s[:Bc], bt, dt, steps, record_every=10), 0.999)
        print(
            f"   beta={bt:g}, {Bc} systems x 31 checkpoints: cluster count identical in "
            f"{(a.clusters == b.clusters).mean():.2%} (worst checkpoint "
            f"{(a.clusters == b.clusters).mean(axis=0).min():.2%}); max |d close-pair fraction| "
            f"{np.abs(a.close_fraction - b.close_fraction).max():.4f} per system, "
            f"{np.abs(a.close_fraction.mean(0) - b.close_fraction.mean(0)).max():.1e} of the mean"
        )
    hs.phase_diagram(B=64, n_betas=1, precision="float32")
    print(
        f"   full protocol in float32 (2048 systems x 90 beta, statistics at 31 checkpoints), "
        f"measured on {n_betas} beta at beta = 9, scaled by {90 / n_betas:g}:"
    )
    traj_s = {}
    for th in sorted({1, threads}):
        numba.set_num_threads(th)
        Zp = hs._rng(0).standard_normal((2048, n, d))
        c0 = time.process_time()
        traj = att.simulate_batch_float32(Zp, 9.0, dt, steps, record_every=10)
        c1 = time.process_time()
        hs.pair_stats(traj, 0.999)
        c2 = time.process_time()
        traj_s[th] = (c1 - c0, c2 - c1)
        t0, c0 = time.perf_counter(), time.process_time()
        hs.phase_diagram(B=2048, n_betas=n_betas, beta_min=9.0, beta_max=9.0, precision="float32")
        sec, csec = time.perf_counter() - t0, time.process_time() - c0
        f = 90 / n_betas
        lay, st = traj_s[th]
        print(
            f"   {th} thread(s): {f * sec:.0f} s wall, {f * csec:.0f} s CPU (per beta: layers "
            f"{lay:.2f} s CPU, statistics {st:.2f} s CPU, rest {csec / n_betas - lay - st:.2f} s)"
            f"  [load {os.getloadavg()[0]:.1f}]"
        )
    numba.set_num_threads(threads)


def _cpu_mhz() -> float:
    try:
        with open("/proc/cpuinfo") as f:
            return max(float(line.split(":")[1]) for line in f if line.startswith("cpu MHz"))
    except (OSError, ValueError):
        return float("nan")


def main(quick: bool = False, torch_python: str = "/work/torchvenv/bin/python", only_f32: bool = False) -> None:
    att.warm()  # compile or load every kernel first
    if only_f32:
        print(
            f"numba {numba.__version__}, threads {numba.get_num_threads()}, cores {os.cpu_count()}, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        float32_path(2, 1)
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
        return
    torch = Torch(torch_python)
    print(
        f"numba {numba.__version__} (threading layer {numba.threading_layer()}), "
        f"threads {numba.get_num_threads()}, numpy {np.__version__}, cores {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    try:
        authors_case(torch, 2 if quick else 3)
    finally:
        torch.close()
    single_systems(5e6 if quick else 2e7, 3 if quick else 5)
    physical_limit(2 if quick else 3)
    full_protocol(1 if quick else 2)
    float32_path(2 if quick else 3, 1 if quick else 2)
    t = os.times()
    print(f"\nprocess CPU time {t.user + t.system:.1f} s (user {t.user:.1f}, system {t.system:.1f})")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    argv = sys.argv[1:]
    tp = argv[argv.index("--torch") + 1] if "--torch" in argv else "/work/torchvenv/bin/python"
    main(quick="--quick" in argv, torch_python=tp, only_f32="--only-f32" in argv)
