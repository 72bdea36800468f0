#!/usr/bin/env python3
"""Profiles the phases of an inference program with gpuopt.Profiler:
load_model, then for each batch preprocess, inference and postprocess.
Registers its data with the memory manager, prints where the time went and
what was registered, and writes a Chrome trace (open it in
https://ui.perfetto.dev or chrome://tracing) and an SVG picture beside it.

    PYTHONPATH=bindings/python GPUOPT_LIBRARY=build/lib/libgpuopt.so.0 \\
        python3 examples/profile_phases.py [TRACE.json]

The work is a stand-in (a small matrix product in pure Python); a real
program would call its framework in each section, and would pass
stream=torch.cuda.current_stream() with the device to have the GPU's own
time of each section.
"""

import sys

import gpuopt

N, BATCHES, BATCH = 24, 4, 4


def main():
    trace = sys.argv[1] if len(sys.argv) > 1 else "profile_phases_py.json"
    with gpuopt.Context() as ctx, ctx.profiler() as prof, ctx.memory() as mem:
        with prof.section("load_model"):
            weights = [[((r * N + c) * 7919 % 1000) / 1000 for c in range(N)] for r in range(N)]
            # A real program registers what it puts on the GPU (place="device").
            mem.register("weights", N * N * 8, place="host")

        @prof.profile("preprocess")
        def preprocess(b):
            return [[((i + b) % 17) / 17 for i in range(N)] for _ in range(BATCH)]

        @prof.profile("postprocess")
        def postprocess(out):
            return sum(row[0] for row in out)

        checksum = 0.0
        for b in range(BATCHES):
            batch = preprocess(b)
            with prof.section("inference", items=len(batch)), \
                    mem.allocation("activations", BATCH * N * 8, place="host"):
                out = [[sum(x[k] * weights[k][c] for k in range(N)) for c in range(N)]
                       for x in batch]
            checksum += postprocess(out)

        print(f"checksum {checksum:.3f}")
        print(prof.table(), end="")
        stats = mem.stats()
        print(f"memory: {len(stats['allocations'])} allocation(s) live, "
              f"{stats['registered']['host']} bytes on the host "
              f"(high water {stats['high_water']['host']})")
        svg = trace[:-5] + ".svg" if trace.endswith(".json") else trace + ".svg"
        prof.write_trace(trace)
        prof.write_svg(svg)
        print(f"trace: {trace}\npicture: {svg}")


if __name__ == "__main__":
    main()
