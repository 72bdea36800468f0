"""python3 -m gpuopt devices|plan|doctor: the gpuopt command's answers from
Python, for a machine with the package and the library but not the command.

The options, the output (text, --json, plan --env, devices --list) and the
exit status (0 success, 1 failure, 2 usage error) are the command's; see
gpuopt(1). As there, GPUOPT_DEVICE is --device's default, and a value the
library does not understand is a usage error from either.
"""

import argparse
import contextlib
import difflib
import os
import re
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import (ERR_CONFIG, ERR_INVALID_ARGUMENT, ERR_NO_DEVICE, ERR_OUT_OF_RANGE, Context,
               GpuoptError, Workload)

USAGE_STATUSES = (ERR_INVALID_ARGUMENT, ERR_CONFIG, ERR_OUT_OF_RANGE)


class _Usage(Exception):
    """A usage error, in the command's words; `command` overrides the name
    the message starts with ("" for none)."""

    def __init__(self, message: str, command: Optional[str] = None) -> None:
        super().__init__(message)
        self.command = command


def _fail(cmd: str, what: str, e: GpuoptError, backends: Optional[str] = None) -> int:
    detail = e.detail or e.name
    # The library names the API field it was given; the command what the
    # user typed (as tools/gpuopt/cli_context.c does).
    head, sep, why = detail.partition(" is not accepted: ")
    if sep and head.startswith("gpuopt_options.backends ") and backends:
        what, detail = f"--backend {backends}", f"not understood; {why}"
    print(f"gpuopt {cmd}: {what}: {detail}", file=sys.stderr)
    return 2 if e.status in USAGE_STATUSES else 1


def _widest(items: Sequence[Dict[str, Any]], key: str, least: int) -> int:
    return max([least] + [len(i.get(key) or "") for i in items])


def _bytes(b: float) -> str:
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while b >= 1024 and u < 4:
        b /= 1024
        u += 1
    return f"{b:.{1 if u else 0}f} {units[u]}"


# ---- devices ----------------------------------------------------------------

def _device_lines(d: Dict[str, Any], idw: int) -> List[str]:
    arch = d.get("arch") or {}
    mark = "*" if d.get("selected") else " "
    out = [f"  {mark} {d.get('id', ''):<{idw}} {d.get('name') or '(unnamed)'}"]
    facts = [d.get("type") or "device"]
    fam, an, cc = arch.get("family"), arch.get("name"), arch.get("compute_capability")
    if fam or an:
        facts.append(" ".join(x for x in (fam, an) if x))
    if cc:
        facts[-1] += f" (compute capability {cc})"
    if arch.get("extrapolated"):
        facts[-1] += " [newer than the tables: extrapolated]"
    if (d.get("compute_units") if d.get("compute_units") is not None else -1) >= 0:
        facts.append(f"{d['compute_units']:.0f} compute units")
    if (d.get("simd_width") or 0) > 0:
        facts.append(f"SIMD {d['simd_width']:.0f}")
    if (d.get("clock_mhz") or 0) > 0:
        facts.append(f"{d['clock_mhz']:.0f} MHz")
    if (d.get("memory_bytes") or 0) > 0:
        facts.append(_bytes(d["memory_bytes"]))
    pad = " " * (4 + idw + 1)
    out.append(pad + ", ".join(facts))
    ocl = (d.get("details") or {}).get("opencl") or {}
    if ocl.get("platform_name"):
        out.append(f"{pad}platform: {ocl['platform_name']}")
    pci, uuid = d.get("pci_bus_id"), d.get("uuid")
    if pci or uuid:
        out.append(pad + "  ".join(x for x in (pci, uuid) if x))
    routes = d.get("routes") or ""
    if "," in routes:
        out.append(f"{pad}also reachable through: {routes.split(',', 1)[1]}")
    out.extend(f"{pad}warning: {w}" for w in d.get("warnings") or [] if isinstance(w, str))
    return out


def _devices_table(doc: Dict[str, Any]) -> str:
    backends, devices = doc.get("backends") or [], doc.get("devices") or []
    bw, idw = _widest(backends, "name", 7), _widest(devices, "id", 11)
    lines = []
    for b in backends:
        head = f"{b.get('name', ''):<{bw}} {b.get('status', '')}"
        if b.get("init_ms") is not None and b["init_ms"] >= 0:
            head += f" ({b['init_ms']:.1f} ms)"
        versions = [f"{w} {b[k]}" for w, k in (("runtime", "runtime_version"),
                                                ("driver", "driver_version")) if b.get(k)]
        if versions:
            head += ", " + ", ".join(versions)
        lines.append(head)
        if b.get("library"):
            lines.append(f"{'':<{bw}} library: {b['library']}")
        if b.get("reason"):
            reason = b["reason"]
            field = "excluded by gpuopt_options.backends="
            if reason.startswith(field):  # from --backend, as the command says it
                reason = "excluded by --backend " + reason[len(field):]
            lines.append(f"{'':<{bw}} {reason}")
        mine = [d for d in devices if d.get("backend") == b.get("name")]
        for d in mine:
            lines.extend(_device_lines(d, idw))
        if not mine and b.get("status") == "available":
            lines.append(f"{'':<{bw}} no devices")
    sel = doc.get("selection") or {}
    if sel.get("device"):
        lines += ["", f"* selected by policy \"{sel.get('policy')}\": "
                      f"{sel.get('reason') or sel.get('device')}"]
    elif sel.get("error"):
        lines += ["", f"no device selected: {sel['error']}"]
    return "\n".join(lines)


def _devices_list(doc: Dict[str, Any]) -> str:
    devices = doc.get("devices") or []
    idw = _widest(devices, "id", 0)
    lines = []
    for d in devices:
        line = f"{d.get('id', ''):<{idw}}  {d.get('name') or '(unnamed)'}"
        if d.get("uuid"):
            line += f"  (UUID: {d['uuid']})"
        elif d.get("pci_bus_id"):
            line += f"  (PCI: {d['pci_bus_id']})"
        lines.append(line)
    return "\n".join(lines)


# ---- plan ---------------------------------------------------------------------

def _plan_text(plan: Any) -> str:
    name_w, value_w = 28, 18
    for k in plan.knobs:
        name_w = max(name_w, len(k.name))
        if value_w < len(k.text) <= 24:
            value_w = len(k.text)
    level = f"level {plan.level_applied}"
    if plan.level_requested != plan.level_applied:
        level += f" (asked {plan.level_requested})"
    lines = [f"Plan for {plan.device.id} ({plan.device.name}): {level}"]
    reason = (plan.to_dict().get("selection") or {}).get("reason")
    if reason:
        lines.append(f"Selected: {reason}")
    lines.append("")
    for k in plan.knobs:
        tier = f"tier {k.tier}" if k.tier >= 0 else "user"
        env = f"  env {k.env}" if k.env else ""
        lines.append(f"  {k.name:<{name_w}} {k.text:<{value_w}} [{tier}, {k.source}]{env}")
        lines.append(f"  {'':<{name_w}} {k.reason}")
    if not plan.knobs:
        lines.append("  (no knobs)")
    if plan.warnings:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in plan.warnings]
    return "\n".join(lines)


def _size(text: str) -> int:
    units = {"": 1, "k": 1024, "KiB": 1024, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30,
             "GiB": 1 << 30, "T": 1 << 40, "TiB": 1 << 40, "KB": 10**3, "MB": 10**6,
             "GB": 10**9, "TB": 10**12}
    num = text.rstrip("kKMGTiB")
    try:
        value = float(num) * units[text[len(num):]]
    except (KeyError, ValueError):
        value = -1
    if not 0 <= value < 9.2e18:
        raise argparse.ArgumentTypeError(
            f"{text}: accepted a size in bytes such as 7e9, 4096, 512MiB or 16GiB")
    return int(value)


def _count(text: str) -> int:
    if not re.fullmatch(r"[+]?[0-9]+", text.strip()) or not 1 <= int(text) <= 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{text}: accepted a whole number from 1")
    return int(text)


def _duration(text: str) -> float:
    """Seconds from "100ms", "0.1s", "2500us", "250000ns" or a bare number
    of seconds, in the bounds the command accepts (1 ns to an hour)."""
    m = re.fullmatch(r"\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(ms|us|ns|s)?",
                     text)
    ns = float(m.group(1)) * {"ms": 1e6, "us": 1e3, "ns": 1.0}.get(m.group(2) or "", 1e9) if m \
        else -1.0
    if not 1 <= ns <= 3.6e12:
        raise argparse.ArgumentTypeError(
            f"{text}: accepted a time up to an hour such as 100ms, 0.1s, 2500us")
    return ns / 1e9


def _level(text: str) -> int:
    if text not in ("0", "1", "2"):
        raise argparse.ArgumentTypeError(
            f"{text}: accepted 0 (safe defaults), 1 (from detected hardware), 2 (measured)")
    return int(text)


@contextlib.contextmanager
def _device_variable_hidden() -> Iterator[Optional[str]]:
    """GPUOPT_DEVICE (yielded) out of the library's sight, as the command keeps it."""
    env = os.environ.pop("GPUOPT_DEVICE", None)
    try:
        yield env
    finally:
        if env is not None:
            os.environ["GPUOPT_DEVICE"] = env


def _open(backends: Optional[str], device: Optional[str]) -> Tuple[Context, str]:
    """A context whose device selector is --device, else GPUOPT_DEVICE, read
    here as the command reads it: a value the library does not understand
    is a usage error (_Usage), not the library's warning and "auto". Returns
    the context and where its selector came from, for messages."""
    with _device_variable_hidden() as env:
        policy = device or env or None  # an empty variable counts as unset
        origin = (f"--device {device}" if device else f"GPUOPT_DEVICE={env}" if policy
                  else "cannot select a device")
        ctx = Context(backends=backends)
        if policy:
            try:
                ctx.select(policy)
            except GpuoptError as e:
                if e.status == ERR_INVALID_ARGUMENT:
                    ctx.close()
                    raise _Usage(f"{origin}: {e.detail}") from None
            ctx.close()
            ctx = Context(backends=backends, device=policy)
        return ctx, origin


def _workload(a: argparse.Namespace) -> Optional[Workload]:
    given = (a.model_bytes is not None or a.item_bytes is not None or a.precision_sensitive
             or a.reduced_precision or a.quantized or a.latency or a.throughput
             or a.fixed_shapes or a.memory_bound or a.compute_bound
             or any(v is not None for v in (a.launches_per_step, a.step_time, a.items_per_step,
                                            a.h2d_bytes, a.d2h_bytes)))
    if not given:
        return None
    if a.precision_sensitive and a.reduced_precision:
        raise _Usage("--precision-sensitive and --reduced-precision contradict each other: "
                     "describe one")
    if a.latency and a.throughput:
        raise _Usage("--latency and --throughput contradict each other: describe one objective")
    if a.precision_sensitive and a.quantized:
        raise _Usage("--precision-sensitive and --quantized contradict each other: a quantised "
                     "model already trades precision")
    if a.memory_bound and a.compute_bound:
        raise _Usage("--memory-bound and --compute-bound contradict each other: give one")
    reduced = False if a.precision_sensitive else True if a.reduced_precision else None
    return Workload(model_bytes=a.model_bytes, item_bytes=a.item_bytes,
                    reduced_precision=reduced, quantized=a.quantized,
                    objective="latency" if a.latency else "throughput",
                    fixed_shapes=a.fixed_shapes,
                    bound="memory" if a.memory_bound else
                    "compute" if a.compute_bound else "unknown",
                    launches_per_step=a.launches_per_step, step_time_s=a.step_time,
                    items_per_step=a.items_per_step, h2d_bytes_per_step=a.h2d_bytes,
                    d2h_bytes_per_step=a.d2h_bytes)


def _run_plan(a: argparse.Namespace) -> int:
    if sum((a.json, a.env, a.apply_env)) > 1:
        raise _Usage("--json, --env and --apply-env are exclusive: choose one")
    if a.apply_env and not a.command:
        raise _Usage("--apply-env needs a command: gpuopt plan --apply-env -- COMMAND [ARGS...]")
    if a.command and not a.apply_env:
        raise _Usage(f"'{a.command[0]}' is a command to run, which only --apply-env does "
                     "(gpuopt plan --apply-env -- COMMAND [ARGS...])")
    workload = _workload(a)
    try:
        ctx, origin = _open(a.backend, a.device)
    except GpuoptError as e:
        return _fail("plan", "cannot create a context", e, a.backend)
    with ctx:
        # The plan selects: the choice sees the workload and says why.
        try:
            plan = ctx.plan(level=a.level, workload=workload)
        except GpuoptError as e:
            return _fail("plan", origin if e.status == ERR_NO_DEVICE else "cannot make a plan", e)
    if a.apply_env:
        env = dict(os.environ)
        for k in plan.knobs:
            if k.env and k.env not in env:  # what the user set is kept
                env[k.env] = k.text
        sys.stdout.flush()
        try:
            os.execvpe(a.command[0], a.command, env)
        except OSError as e:
            print(f"gpuopt plan: cannot run '{a.command[0]}': {e.strerror}", file=sys.stderr)
            return 127 if isinstance(e, FileNotFoundError) else 126
    if a.json:
        print(plan.json)
    elif a.env:
        sys.stdout.write(plan.env)
    else:
        print(_plan_text(plan))
    return 0


# ---- doctor -----------------------------------------------------------------------

MARKS = {"ok": "[ ok ]", "info": "[info]", "warning": "[warn]"}


def _doctor_text(doc: Dict[str, Any], verbose: bool) -> str:
    user = doc.get("user") or {}
    head = f"gpuopt doctor {doc.get('gpuopt_version') or ''}"
    if doc.get("sysfs_root"):
        head += f" (recorded root {doc['sysfs_root']})"
    groups = [g for g in user.get("groups") or [] if isinstance(g, str)]
    lines = [head, f"user: {user.get('name') or '?'}"
             + (", groups: " + " ".join(groups) if groups else "")]
    if doc.get("container"):
        lines.append(f"container: {doc['container']}")
    findings, backends = doc.get("findings") or [], doc.get("backends") or []
    bw, cw = _widest(backends, "name", 7), _widest(findings, "check", 18)
    for b in backends:
        lines += ["", f"{MARKS.get(b.get('worst'), '[FAIL]')} {b.get('name') or '?':<{bw}} "
                      f"{b.get('status') or ''}"]
        for f in findings:
            if not b.get("name") or f.get("backend") != b.get("name"):
                continue
            st = f.get("status")
            lines.append(f"  {MARKS.get(st, '[FAIL]')} {f.get('check') or '?':<{cw}} "
                         f"{f.get('summary') or ''}")
            if not verbose and st in ("ok", "info"):
                continue
            lines += [f"         {'':<{cw}} - {e}" for e in f.get("evidence") or []
                      if isinstance(e, str)]
            if f.get("fix"):
                lines.append(f"         {'':<{cw}} fix: {f['fix']}")
    lines += ["", doc.get("verdict") or ""]
    return "\n".join(lines)


def _run_doctor(a: argparse.Namespace) -> int:
    try:
        with _device_variable_hidden():  # doctor selects nothing
            ctx = Context()
        with ctx:
            text = ctx.doctor_json()
    except GpuoptError as e:
        return _fail("doctor", "cannot diagnose", e)
    import json  # noqa: PLC0415
    doc = json.loads(text)
    print(text if a.json else _doctor_text(doc, a.verbose))
    return 0 if (doc.get("accelerators_usable") or 0) >= 1 else 1


def _run_devices(a: argparse.Namespace) -> int:
    if a.json and a.list:
        raise _Usage("--json and --list are exclusive: choose one")
    try:
        ctx, _ = _open(a.backend, None)
    except GpuoptError as e:
        return _fail("devices", "cannot create a context", e, a.backend)
    with ctx:
        try:
            text = ctx.devices_json()
        except GpuoptError as e:
            return _fail("devices", "cannot list devices", e)
    if a.json:
        print(text)
        return 0
    import json  # noqa: PLC0415
    doc = json.loads(text)
    print(_devices_list(doc) if a.list else _devices_table(doc))
    return 0


# ---- the command line -------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse with the command's exit status and message style."""

    def error(self, message: str) -> Any:  # noqa: D401 - argparse's hook
        m = re.match(r"argument COMMAND: invalid choice: '([^']*)'", message)
        if m:
            near = difflib.get_close_matches(m.group(1), ["devices", "plan", "doctor"], n=1)
            raise _Usage(f"unknown command '{m.group(1)}'"
                         + (f"; did you mean '{near[0]}'?" if near else ""), "")
        m = re.match(r"argument (?:-\w/)?(--[\w-]+): (.*)", message)
        if m:
            raise _Usage(f"{m.group(1)} {m.group(2)}")
        m = re.match(r"unrecognized arguments: (-\S+)", message)
        if m:
            parsers = [self] + [p for a in self._actions
                                if isinstance(a, argparse._SubParsersAction)
                                for p in a.choices.values()]
            names = [o for p in parsers for a in p._actions for o in a.option_strings
                     if o.startswith("--") and o != "--help"]
            near = difflib.get_close_matches(m.group(1).split("=")[0], names, n=1)
            raise _Usage(f"unknown option '{m.group(1)}'"
                         + (f"; did you mean '{near[0]}'?" if near else ""))
        raise _Usage(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python3 -m gpuopt",
                description="The gpuopt command's devices, plan and doctor, from Python.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    d = sub.add_parser("devices", help="list backends and devices; mark the selected one")
    d.add_argument("-j", "--json", action="store_true", help="one JSON object")
    d.add_argument("-l", "--list", action="store_true", help="one line per device")
    d.add_argument("-b", "--backend", metavar="LIST", help="only these backends")
    pl = sub.add_parser("plan", help="show the settings (knobs) for a device, with reasons")
    pl.add_argument("-l", "--level", type=_level, metavar="N", help="0, 1 or 2")
    pl.add_argument("-d", "--device", metavar="SPEC", help="auto, gpu, cpu:0, cuda:1, a UUID...")
    pl.add_argument("-b", "--backend", metavar="LIST", help="only these backends")
    pl.add_argument("-j", "--json", action="store_true", help="the plan as JSON")
    pl.add_argument("-e", "--env", action="store_true",
                    help="shell lines that set each variable where it is unset")
    pl.add_argument("--apply-env", action="store_true",
                    help="run COMMAND with the plan's environment (yours kept)")
    pl.add_argument("--model-bytes", type=_size, metavar="N")
    pl.add_argument("--item-bytes", type=_size, metavar="N")
    for flag in ("--precision-sensitive", "--reduced-precision", "--quantized", "--latency",
                 "--throughput", "--fixed-shapes", "--memory-bound", "--compute-bound"):
        pl.add_argument(flag, action="store_true")
    # One step of latency-oriented work (docs/latency.md).
    pl.add_argument("--launches-per-step", type=_count, metavar="N")
    pl.add_argument("--step-time", type=_duration, metavar="T")
    pl.add_argument("--items-per-step", type=_count, metavar="N")
    pl.add_argument("--h2d-bytes", type=_size, metavar="N")
    pl.add_argument("--d2h-bytes", type=_size, metavar="N")
    pl.add_argument("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    doc = sub.add_parser("doctor", help="say why each backend can or cannot use a GPU")
    doc.add_argument("-j", "--json", action="store_true", help="one JSON object")
    doc.add_argument("-v", "--verbose", action="store_true", help="every finding's evidence")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """Runs `python3 -m gpuopt ARGS`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv and not argv[0].startswith("-") else ""
    try:
        a = _parser().parse_args(argv)
        if a.cmd is None:
            raise _Usage("missing COMMAND: devices, plan or doctor")
        if a.cmd == "plan" and a.command and a.command[0] == "--":
            a.command = a.command[1:]
        return {"devices": _run_devices, "plan": _run_plan, "doctor": _run_doctor}[a.cmd](a)
    except _Usage as e:
        cmd = cmd if e.command is None else e.command
        print(f"gpuopt{' ' + cmd if cmd else ''}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
