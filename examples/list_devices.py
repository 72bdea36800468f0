#!/usr/bin/env python3
"""Lists the compute devices libgpuopt finds and prints the level-1 plan of
the one it selects, through the ctypes binding (bindings/python/gpuopt).

    PYTHONPATH=bindings/python GPUOPT_LIBRARY=build/lib/libgpuopt.so.0 \\
        python3 examples/list_devices.py
"""

import sys

import gpuopt

TYPES = {gpuopt.DEVICE_TYPE_CPU: "cpu", gpuopt.DEVICE_TYPE_GPU: "gpu",
         gpuopt.DEVICE_TYPE_ACCELERATOR: "accelerator"}


def main():
    print(f"libgpuopt {gpuopt.version()}")
    try:
        with gpuopt.Context() as ctx:
            selected = ctx.select()  # the context's policy: GPUOPT_DEVICE or "auto"
            devices = ctx.devices()
            print(f"{len(devices)} device(s):")
            for dev in devices:
                mark = "*" if dev.id == selected.id else " "
                line = f"{mark} {dev.id:<10} {TYPES.get(dev.type, 'other'):<4} {dev.name}"
                arch = " ".join(a for a in (dev.arch_family, dev.arch_name) if a)
                if arch:
                    line += f" [{arch}]"
                if dev.compute_units:
                    line += f", {dev.compute_units} compute units"
                if dev.memory_bytes:
                    line += f", {dev.memory_bytes >> 20} MiB"
                print(line)

            plan = ctx.plan(selected, level=1)
            print(f"plan: level {plan.level_requested} requested, level {plan.level_applied} "
                  f"applied, {len(plan.knobs)} knob(s)")
            for k in plan.knobs:
                print(f"  {k.name:<24} = {k.text:<16} tier {k.tier}, {k.source}: {k.reason}")
            for w in plan.warnings:
                print(f"  warning: {w}")
    except gpuopt.GpuoptError as e:
        print(f"list_devices.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
