"""A re-implementation of the authors' batched PyTorch layer step, for ``bench/engine.py``.

Source: Geshkovski, Letrouit, Polyanskiy, Rigollet, code of "A mathematical perspective on
Transformers" (2023), ``phase-diagrams.py``, method ``simu_xform.step_1`` in the phase-diagram
setting (``--use_softmax``, ``randomKQ = 0``, ``randomV = 0``: A = V = I), float64 as in that
script (``torch.set_default_dtype(torch.float64)``), on the CPU instead of CUDA. One step on B
systems of n tokens in d dimensions is, with M of shape (B, n, d):

    SM = softmax(beta * M @ M^T, dim=2);  M2 = eta * (SM @ M) + M;  M = M2 / |M2| (row-wise)

i.e. exactly the layer map of ``sim.attention`` with SA weights, A = V = I, dt = eta. The
statistics that script computes at its 200 checkpoints are not part of the timed step.

torch is NOT a dependency of the project: run this file with an interpreter that has torch
(e.g. a separate venv: ``python -m venv /work/torchvenv && /work/torchvenv/bin/pip install
torch numpy``). ``bench/engine.py`` starts it as a subprocess and talks to it over stdin/stdout
(one JSON object per line), so that the timings interleave with the engine's.

Protocol: a request ``{"z0": "<path.npy>", "beta": b, "eta": e, "steps": s, "out": "<path.npy>",
"threads": t}`` runs ``steps`` steps from the (B, n, d) array in z0 and answers
``{"seconds": wall time of the steps, "cpu_seconds": CPU time of this process}`` after saving the
final configuration to ``out``;
``{"info": 1}`` answers the versions; end of input stops the process.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch


def step_1(M, M2, SM, beta, eta):
    """The authors' ``step_1`` for randomKQ = randomV = 0 and softmax (same calls, same order)."""
    M2.copy_(M)  # "store M into M2"
    torch.matmul(M2, M.transpose(1, 2), out=SM)
    SM *= beta
    SM = torch.nn.functional.softmax(SM, dim=2)
    torch.matmul(SM, M, out=M2)
    M2 *= eta
    M2 += M
    torch.nn.functional.normalize(M2, dim=2, out=M)


def run(Z0: np.ndarray, beta: float, eta: float, steps: int) -> tuple[np.ndarray, float, float]:
    """``steps`` steps from ``Z0`` (B, n, d); returns (final configuration, wall seconds,
    CPU seconds of this process)."""
    torch.set_default_dtype(torch.float64)
    B, n, d = Z0.shape
    M = torch.from_numpy(np.array(Z0, dtype=np.float64))
    torch.nn.functional.normalize(M.clone(), dim=2, out=M)
    M2 = torch.empty(B, n, d)
    SM = torch.zeros(B, n, n)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step_1(M, M2, SM, beta, eta)
    return M.numpy().copy(), time.perf_counter() - t0, time.process_time() - c0


def serve() -> None:
    for line in sys.stdin:
        req = json.loads(line)
        if "info" in req:
            ans = {"torch": torch.__version__, "threads": torch.get_num_threads()}
        else:
            if "threads" in req:
                torch.set_num_threads(int(req["threads"]))
            out, sec, cpu = run(np.load(req["z0"]), float(req["beta"]), float(req["eta"]), int(req["steps"]))
            np.save(req["out"], out)
            ans = {"seconds": sec, "cpu_seconds": cpu}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
