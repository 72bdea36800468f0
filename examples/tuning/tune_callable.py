#!/usr/bin/env python3
"""Tunes a Python callable through the binding (gpuopt.CallbackTuner): the
chunk size of a chunked sum, each candidate checked, the answer cached.

    PYTHONPATH=bindings/python GPUOPT_LIBRARY=build/lib/libgpuopt.so.0 \\
        python3 examples/tuning/tune_callable.py

Runs on any machine: the host-callback subject needs no GPU.
"""

import gpuopt

DATA = list(range(200_000))
EXPECTED = sum(DATA)
result_of = {}


def chunked_sum(point):
    """The work, once, with one point of the space ({"CHUNK": ..., "HOW": ...})."""
    chunk = point["CHUNK"]
    if point["HOW"] == "slices":
        total = sum(sum(DATA[i:i + chunk]) for i in range(0, len(DATA), chunk))
    else:
        total = 0
        for i in range(0, len(DATA), chunk):
            for v in DATA[i:i + chunk]:
                total += v
    result_of[(chunk, point["HOW"])] = total


def main():
    space = (gpuopt.Space().add_int("CHUNK", [64, 1024, 16384, 200_000])
             .add_enum("HOW", ["slices", "loop"]))
    with gpuopt.Context(backends="cpu") as ctx, \
            gpuopt.CallbackTuner(ctx, space, chunked_sum,
                                 validate=lambda p: result_of[(p["CHUNK"], p["HOW"])]
                                 == EXPECTED) as tuner:
        # Settings not named keep the library's defaults; all are checked together.
        tuner.configure(timing=(0, 20, 3, 10), workload_key="examples/tuning/tune_callable.py")
        result = tuner.run()
        if result.best is None:  # an answer too: every candidate failed
            print("no valid candidate:", {c.status for c in result.candidates})
            return 1
        print(f"best {result.best.point}: {result.best.median_ns / 1e6:.2f} ms median of "
              f"{result.best.runs} runs ({result.origin}, {len(result.candidates)} candidates)")
    space.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
