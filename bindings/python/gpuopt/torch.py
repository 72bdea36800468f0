"""Applies a gpuopt plan to PyTorch, through PyTorch's own API.

    import torch
    import gpuopt.torch

    report = gpuopt.torch.apply()          # before the first CUDA call
    model.to(gpuopt.torch.device())
    with report.autocast():                # the plan's mixed precision, if any
        ...
    print(report)

apply() reads the plan (by default: a level-1 plan for the device gpuopt
selects among those this torch can drive) and sets, where the plan has the
knob and the installed torch has the setting:

  knob                                   PyTorch
  cuda.tf32, rocm.tf32                   torch.backends.cuda.matmul.allow_tf32,
                                         torch.backends.cudnn.allow_tf32 (CUDA),
                                         torch.set_float32_matmul_precision (a
                                         torch without them: the fp32_precision
                                         settings of PyTorch 2.9 and later)
  cuda.cudnn_benchmark,                  torch.backends.cudnn.benchmark
  rocm.miopen_benchmark
  threads                                torch.set_num_threads,
                                         torch.set_num_interop_threads
  cpu.fpmath_mode                        torch.set_float32_matmul_precision
  memory.budget_bytes, memory.budget_percent
                                         torch.cuda.set_per_process_memory_fraction
  cuda.autocast_dtype,                   Report.autocast_dtype (a value to use:
  rocm.autocast_dtype                    autocast is a context, not a setting)
  every knob with an environment         os.environ (PYTORCH_CUDA_ALLOC_CONF,
  variable                               CUDA_MODULE_LOADING, OMP_NUM_THREADS, ...)

The rules are those of the gpuopt command's --apply-env: what the user set is
kept. A torch setting counts as the user's when it differs from PyTorch's
default for it; a thread count when OMP_NUM_THREADS or MKL_NUM_THREADS (which
torch reads at start) is set; an environment variable when it is set at all.
apply(override=True) sets them anyway.

Some variables of a GPU plan are read once, when the GPU driver starts
(CUDA_MODULE_LOADING, the *_VISIBLE_DEVICES filters) or when torch starts
CUDA (PYTORCH_CUDA_ALLOC_CONF, the cuBLAS workspace): set later, they change
nothing, so apply() leaves them, says so in the report and warns. The driver
starts when torch first uses the GPU, and also when gpuopt finds the GPU to
make the plan in this process; for those, start the program with the plan's
environment (`gpuopt plan --apply-env -- python train.py`) and let apply()
do the rest.

Nothing here fails on an older or smaller torch: a setting it lacks is
reported as not applicable, and so is every setting of a plan for a device
this torch cannot drive (a CUDA plan on a CPU-only build). PyTorch names ROCm
devices "cuda" too, so device() gives torch.device("cuda", i) for both.
"""

import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

from . import Context, Plan

__all__ = ["Report", "Setting", "apply", "default_plan", "device"]

# Variables torch reads when it starts, for its thread pools (torch docs,
# "CPU threading and TorchScript inference": OMP_NUM_THREADS, MKL_NUM_THREADS).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")

# cpu.fpmath_mode (oneDNN's math modes) as torch.set_float32_matmul_precision
# words: "high" allows TF32 or bf16x3, "medium" bf16 (torch docs,
# torch.set_float32_matmul_precision). F16 has no word.
_FPMATH_TO_PRECISION = {"STRICT": "highest", "TF32": "high", "BF16": "medium", "ANY": "medium"}


@dataclass
class Setting:
    """One thing apply() looked at: a PyTorch setting or an environment
    variable (`what`), the plan's knob and value for it, the value before and
    after (read back with torch's own getter; None where it has none), and
    why it was set, kept or not applied (`note`)."""
    what: str
    knob: str
    value: Any
    before: Any = None
    after: Any = None
    note: str = ""


@dataclass
class Report:
    """What apply() did: the settings it set, those it kept because the user
    had set them, and those that do not apply here (the installed torch lacks
    them, the device is not one this torch drives, or CUDA started too
    early). autocast_dtype is the plan's mixed-precision type (torch.bfloat16,
    torch.float16, or torch.float32 for none), None when the plan has none."""
    device: str
    plan_device: str
    torch_version: str
    set: List[Setting] = field(default_factory=list)
    kept: List[Setting] = field(default_factory=list)
    not_applicable: List[Setting] = field(default_factory=list)
    autocast_dtype: Any = None
    warnings: List[str] = field(default_factory=list)

    def autocast(self, torch: Any = None, **kwargs: Any) -> Any:
        """torch.autocast for this report's device with autocast_dtype,
        disabled when the plan asks for float32 or has no such knob."""
        torch = _torch(torch)
        dtype = self.autocast_dtype
        enabled = dtype is not None and dtype != getattr(torch, "float32", None)
        kind = self.device.split(":")[0]
        if enabled:
            kwargs.setdefault("dtype", dtype)
        return torch.autocast(kind, enabled=enabled, **kwargs)

    def __str__(self) -> str:
        lines = [f"gpuopt.torch: the plan for {self.plan_device} on torch {self.torch_version}, "
                 f"device {self.device}"]
        for title, items in (("set", self.set), ("kept", self.kept),
                             ("not applicable", self.not_applicable)):
            for s in items:
                value = s.after if title != "not applicable" else s.value
                lines.append(f"  {title:<14} {s.what} = {value!r}  [{s.knob}] {s.note}")
        if self.autocast_dtype is not None:
            lines.append(f"  autocast dtype {self.autocast_dtype}")
        lines.extend(f"  warning        {w}" for w in self.warnings)
        return "\n".join(lines)


def _torch(torch: Any) -> Any:
    if torch is None:
        import torch as imported  # noqa: PLC0415 - gpuopt does not need torch to import
        return imported
    return torch


def _version(torch: Any) -> Tuple[int, int]:
    """(major, minor) of torch.__version__ ("1.13.0a0", "2.11.0+cu130")."""
    parts = str(getattr(torch, "__version__", "0.0")).split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def _drives(torch: Any) -> List[str]:
    """The gpuopt backends whose devices this torch can use: a ROCm build
    (torch.version.hip) drives HIP devices, a CUDA build CUDA ones; every
    build the CPU."""
    version = getattr(torch, "version", None)
    out = []
    if getattr(version, "cuda", None):
        out.append("cuda")
    if getattr(version, "hip", None):
        out.append("rocm")
    out.append("cpu")
    return out


def default_plan(torch: Any = None, level: Optional[int] = None, **context: Any) -> Plan:
    """The plan apply() uses by default: for the device gpuopt selects
    (GPUOPT_DEVICE, else "auto") among the backends this torch drives, at
    `level` (None: GPUOPT_LEVEL, else 1). Keyword arguments go to
    gpuopt.Context."""
    torch = _torch(torch)
    context.setdefault("backends", ",".join(_drives(torch)))
    with Context(**context) as ctx:
        return ctx.plan(level=level)


def device(plan: Optional[Plan] = None, torch: Any = None) -> Any:
    """The torch.device of the plan's device (None: default_plan(torch)'s): cuda:N
    for CUDA and ROCm devices (PyTorch names both "cuda", with HIP's
    index), cpu for the CPU. ValueError when this torch cannot drive it."""
    torch = _torch(torch)
    plan = plan if plan is not None else default_plan(torch)
    dev = plan.device
    why = _not_driven(torch, dev.backend)
    if why:
        raise ValueError(f"gpuopt.torch: {why}")
    if dev.backend == "cpu":
        return torch.device("cpu")
    return torch.device("cuda", _torch_index(plan))


def _torch_index(plan: Plan) -> int:
    """The device's index as torch counts: the backend's own, except where
    the plan's visibility variable (rocm.visible_devices exports
    HIP_VISIBLE_DEVICES) is in force with the one device, which torch then
    sees as device 0."""
    for k in plan.knobs:
        if k.env in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES") and \
                os.environ.get(k.env) == k.text and "," not in k.text:
            return 0
    return plan.device.index


def _not_driven(torch: Any, backend: str) -> str:
    if backend in _drives(torch):
        return ""
    version = getattr(torch, "version", None)
    build = "CUDA" if getattr(version, "cuda", None) else \
        "ROCm" if getattr(version, "hip", None) else "CPU-only"
    return (f"torch {getattr(torch, '__version__', '?')} is a {build} build: it cannot use "
            f"{backend} devices")


# ---- reading and writing one setting --------------------------------------

class _Missing(Exception):
    """The installed torch has no such setting (`what`)."""

    def __init__(self, torch: Any, what: str, detail: str = "") -> None:
        super().__init__(detail or f"torch {getattr(torch, '__version__', '?')} has no {what}")
        self.what = what


def _attribute(torch: Any, path: str) -> Tuple[Any, str]:
    obj = torch
    parts = path.split(".")
    for i, p in enumerate(parts[:-1]):
        if not hasattr(obj, p):
            raise _Missing(torch, f"torch.{path}",
                           f"torch {getattr(torch, '__version__', '?')} has no "
                           f"torch.{'.'.join(parts[:i + 1])}")
        obj = getattr(obj, p)
    if not hasattr(obj, parts[-1]):
        raise _Missing(torch, f"torch.{path}")
    return obj, parts[-1]


@dataclass
class _Knob:
    """A torch setting with its getter and setter, and what counts as the
    user's (a value other than PyTorch's default)."""
    what: str
    get: Callable[[], Any]
    put: Callable[[Any], None]
    default: Any  # a value, or a tuple of the values that mean "not set"


def _flag(torch: Any, path: str, default: Any) -> _Knob:
    obj, name = _attribute(torch, path)
    return _Knob(f"torch.{path}", lambda: getattr(obj, name),
                 lambda v: setattr(obj, name, v), default)


def _function_pair(torch: Any, setter: str, getter: str, default: Any) -> _Knob:
    for fn in (setter, getter):
        if not callable(getattr(torch, fn, None)):
            raise _Missing(torch, f"torch.{setter}",
                           f"torch {getattr(torch, '__version__', '?')} has no torch.{fn}")
    return _Knob(f"torch.{setter}", getattr(torch, getter), getattr(torch, setter), default)


# ---- the plan's knobs as torch settings -----------------------------------

def _tf32_settings(torch: Any, backend: str, on: bool) -> List[Tuple[Any, Any]]:
    """[(setting or the reason it is missing, value)] for cuda.tf32/rocm.tf32.

    PyTorch 2.9 added fp32_precision settings beside allow_tf32 and the
    float32 matmul precision, and checks that the two agree: reading one
    after only the other was set raises (aten/src/ATen/Context.cpp,
    allowTF32CuBLAS; seen with torch 2.11 on an H200, where
    get_float32_matmul_precision() raised after matmul.fp32_precision was
    set). The legacy setters write both states, so they are used while torch
    has them (deprecated since 2.9, with a warning); the new settings only
    in a torch without them."""
    out: List[Tuple[Any, Any]] = []
    try:
        # allow_tf32 for matmuls defaulted to True in 1.7-1.11 and to False
        # from 1.12 (torch docs, "TensorFloat-32 (TF32) on Ampere devices").
        legacy: Optional[_Knob] = _flag(torch, "backends.cuda.matmul.allow_tf32",
                                        _version(torch) < (1, 12))
    except _Missing:
        legacy = None
    if legacy is None:
        word = "tf32" if on else "ieee"
        try:
            out.append((_flag(torch, "backends.cuda.matmul.fp32_precision", ("none",)), word))
        except _Missing as e:
            return [(e, on)]
        if backend == "cuda":
            # cuDNN convolutions default to TF32 ("tf32" on torch 2.11).
            try:
                out.append((_flag(torch, "backends.cudnn.conv.fp32_precision", ("none", "tf32")),
                            word))
            except _Missing as e:
                out.append((e, word))
        return out
    out.append((legacy, on))
    for make, value in (
            (lambda: _function_pair(torch, "set_float32_matmul_precision",
                                    "get_float32_matmul_precision", "highest"),
             "high" if on else "highest"),
            # cuDNN only: MIOpen convolutions have no TF32 (PyTorch's ROCm notes).
            (lambda: _flag(torch, "backends.cudnn.allow_tf32", True) if backend == "cuda"
             else None, on)):
        try:
            s = make()
        except _Missing as e:
            s = e
        if s is not None:
            out.append((s, value))
    return out


def _settings_for(torch: Any, k: Any, backend: str) -> List[Tuple[Any, Any]]:
    """The torch settings one knob maps to, as (setting, value) pairs; a
    _Missing in place of a setting the installed torch lacks."""
    def one(make: Callable[[], _Knob], value: Any) -> List[Tuple[Any, Any]]:
        try:
            return [(make(), value)]
        except _Missing as e:
            return [(e, value)]

    if k.name in ("cuda.tf32", "rocm.tf32"):
        return _tf32_settings(torch, backend, bool(k.value))
    if k.name in ("cuda.cudnn_benchmark", "rocm.miopen_benchmark"):
        return one(lambda: _flag(torch, "backends.cudnn.benchmark", False), bool(k.value))
    if k.name == "cpu.fpmath_mode":
        word = _FPMATH_TO_PRECISION.get(str(k.value))
        if word is None:
            return [(_Missing(torch, "torch.set_float32_matmul_precision",
                              f"no float32 matmul precision of torch means {k.value}"), k.value)]
        return one(lambda: _function_pair(torch, "set_float32_matmul_precision",
                                          "get_float32_matmul_precision", "highest"), word)
    return []


def _apply_one(report: Report, knob: str, setting: Any, value: Any, before: Any,
               override: bool, user: Optional[str] = None) -> None:
    """Sets one setting unless the user chose its value. `user` is for the
    thread counts, whose default torch computes: the variable by which the
    user chose them ("" for none); a count torch refuses comes too late."""
    if isinstance(setting, _Missing):
        report.not_applicable.append(Setting(setting.what, knob, value,
                                             note=f"not applicable: {setting}"))
        return
    entry = Setting(setting.what, knob, value, before=before)
    if before == value:
        entry.after, entry.note = before, "already so"
        report.set.append(entry)
        return
    defaults = setting.default if isinstance(setting.default, tuple) else (setting.default,)
    kept = ""
    if user is None and before not in defaults:
        kept = f"kept: you set it (PyTorch's default is {defaults[-1]!r})"
    elif user:
        kept = f"kept: {user}={os.environ[user]} chose torch's threads"
    if kept and not override:
        entry.after, entry.note = before, kept
        report.kept.append(entry)
        return
    refused = RuntimeError if user is not None else (RuntimeError, ValueError, TypeError)
    try:
        setting.put(value)
        entry.after = setting.get()
    except refused as e:
        if user is None:
            entry.note = f"not applicable: torch refused it ({e})"
        else:
            # The inter-op pool is sized once, before torch runs parallel work.
            entry.after, entry.note = setting.get(), f"not applicable: too late ({e})"
        report.not_applicable.append(entry)
        return
    entry.note = f"set from {before!r}"
    report.set.append(entry)


def _apply_threads(torch: Any, report: Report, k: Any, user: List[str],
                   override: bool) -> None:
    # The plan's threads respects the affinity mask and the cgroup CPU
    # quota; torch's default counts every physical core.
    for setter, getter in (("set_num_threads", "get_num_threads"),
                           ("set_num_interop_threads", "get_num_interop_threads")):
        if callable(getattr(torch, setter, None)) and callable(getattr(torch, getter, None)):
            setting: Any = _Knob(f"torch.{setter}", getattr(torch, getter),
                                 getattr(torch, setter), None)
        else:
            setting = _Missing(torch, f"torch.{setter}")
        _apply_one(report, k.name, setting, int(k.value),
                   None if isinstance(setting, _Missing) else setting.get(), override,
                   user[0] if user else "")


# When a GPU plan's variables are read, for the ones that cannot wait:
#   driver   the GPU driver reads it when it starts (cuInit, hipInit). Measured
#            for CUDA_MODULE_LOADING on an H200 (driver 580, torch 2.11): set
#            after cuInit, cuModuleGetLoadingMode still gave the mode of
#            before; the visibility variables filter the devices cuInit and
#            hipInit enumerate (CUDA C++ Programming Guide, "CUDA Environment
#            Variables"; ROCm docs, "GPU isolation techniques").
#   torch    torch reads it when it starts CUDA: the caching allocator parses
#            its configuration once (PyTorch docs, "CUDA semantics",
#            PYTORCH_CUDA_ALLOC_CONF); cuBLAS and cuDNN read theirs when torch
#            creates their handles, after that.
# Any other variable is read later or by other libraries: set, it reaches
# what reads it from then on and the processes this one starts.
_READ_AT = {
    "CUDA_MODULE_LOADING": "driver", "CUDA_VISIBLE_DEVICES": "driver",
    "HIP_VISIBLE_DEVICES": "driver", "ROCR_VISIBLE_DEVICES": "driver",
    "HSA_OVERRIDE_GFX_VERSION": "driver",
    "PYTORCH_CUDA_ALLOC_CONF": "torch", "PYTORCH_HIP_ALLOC_CONF": "torch",
    "PYTORCH_ALLOC_CONF": "torch", "CUBLASLT_WORKSPACE_SIZE": "torch",
    "CUBLAS_WORKSPACE_CONFIG": "torch", "NVIDIA_TF32_OVERRIDE": "torch",
    "MIOPEN_FIND_MODE": "torch",
}

# CUDA_ERROR_NOT_INITIALIZED (cuda.h): what the driver answers before cuInit.
_CUDA_ERROR_NOT_INITIALIZED = 3


def _driver_started(backend: str) -> bool:
    """Whether this process's GPU driver has started. CUDA: libcuda.so.1 is
    loaded (RTLD_NOLOAD opens nothing new) and cuDeviceGetCount answers
    anything but CUDA_ERROR_NOT_INITIALIZED. HIP has no such question that
    does not start it: a loaded libamdhip64 counts as started (torch's ROCm
    build loads it on import, and gpuopt's own probe of the GPU starts it)."""
    import ctypes  # noqa: PLC0415
    names = ["libcuda.so.1"] if backend == "cuda" else ["libamdhip64.so.7", "libamdhip64.so.6",
                                                       "libamdhip64.so.5", "libamdhip64.so"]
    for name in names:
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        if backend != "cuda":
            return True
        count = ctypes.c_int(0)
        return lib.cuDeviceGetCount(ctypes.byref(count)) != _CUDA_ERROR_NOT_INITIALIZED
    return False


def _cuda_loading_mode() -> Optional[str]:
    """The module loading mode the started CUDA driver of this process is in
    (cuModuleGetLoadingMode: CU_MODULE_EAGER_LOADING 1, CU_MODULE_LAZY_LOADING
    2, cuda.h), as CUDA_MODULE_LOADING's words; None when it cannot say."""
    import ctypes  # noqa: PLC0415
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        mode = ctypes.c_int(0)
        if lib.cuModuleGetLoadingMode(ctypes.byref(mode)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return {1: "EAGER", 2: "LAZY"}.get(mode.value)


# What a started runtime says it uses, for a variable it read at start: a
# plan asking for what is already in force is not too late.
_IN_FORCE = {"CUDA_MODULE_LOADING": _cuda_loading_mode}


def _apply_environment(torch: Any, report: Report, plan: Plan, gpu: bool,
                       override: bool) -> None:
    cuda = getattr(torch, "cuda", None)
    is_init = getattr(cuda, "is_initialized", None)
    torch_started = gpu and callable(is_init) and bool(is_init())
    driver_started = gpu and (torch_started or _driver_started(plan.device.backend))
    late = []
    for k in plan.knobs:
        if not k.env:
            continue
        have = os.environ.get(k.env)
        entry = Setting(k.env, k.name, k.text, before=have)
        when = _READ_AT.get(k.env) if gpu else None
        too_late = (when == "driver" and driver_started) or (when == "torch" and torch_started)
        if have == k.text:
            entry.after, entry.note = have, "already so"
            report.set.append(entry)
        elif have is not None and not override:
            entry.after, entry.note = have, "kept: already set in the environment"
            report.kept.append(entry)
        elif too_late and k.env in _IN_FORCE and _IN_FORCE[k.env]() == k.text:
            entry.after = k.text
            entry.note = "already so: the driver, started earlier, is in this mode (its default)"
            report.set.append(entry)
        elif too_late:
            entry.after = have
            entry.note = ("not applicable: too late, " +
                          ("the GPU driver of this process has started (torch, or gpuopt "
                           "finding the GPU, started it) and read it then" if when == "driver"
                           else "torch has started CUDA and read it then"))
            report.not_applicable.append(entry)
            late.append(k.env)
        else:
            os.environ[k.env] = k.text
            entry.after = os.environ.get(k.env)
            entry.note = ("set before it is read" if when else
                          "set for what reads it from now on and for child processes")
            report.set.append(entry)
    if late:
        msg = (f"{', '.join(late)} came too late for this process: the GPU driver or torch had "
               "started and read them; start the program with them set, as "
               "`gpuopt plan --apply-env -- python ...` does")
        report.warnings.append(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)


def _apply_memory_budget(torch: Any, report: Report, plan: Plan) -> None:
    # The memory manager's order (src/memory/manager.c): memory.budget_bytes,
    # else memory.budget_percent of the device's total.
    k = next((k for k in plan.knobs if k.name == "memory.budget_bytes"), None) or \
        next((k for k in plan.knobs if k.name == "memory.budget_percent"), None)
    what = "torch.cuda.set_per_process_memory_fraction"
    if k is None:
        report.not_applicable.append(Setting(what, "memory.budget_bytes", None, note=(
            "not applicable: the plan has no memory budget (memory.budget_bytes or "
            "memory.budget_percent)")))
        return
    total = plan.device.memory_bytes
    setter = getattr(getattr(torch, "cuda", None), "set_per_process_memory_fraction", None)
    if not callable(setter) or not total:
        report.not_applicable.append(Setting(what, k.name, k.value, note=(
            "not applicable: " + ("the device's memory size is unknown" if not total else
                                  f"torch {getattr(torch, '__version__', '?')} has no {what}"))))
        return
    percent = k.name == "memory.budget_percent"
    fraction = min(1.0, int(k.value) / 100 if percent else int(k.value) / total)
    getter = getattr(torch.cuda, "get_per_process_memory_fraction", None)
    entry = Setting(what, k.name, fraction)
    index = _torch_index(plan)
    try:
        setter(fraction, index)
        entry.after = getter(index) if callable(getter) else None
    except (RuntimeError, ValueError) as e:
        entry.note = f"not applicable: torch refused it ({e})"
        report.not_applicable.append(entry)
        return
    entry.note = f"{int(k.value)}{'%' if percent else ''} of {total} bytes"
    report.set.append(entry)


def apply(plan: Optional[Plan] = None, torch: Any = None, *, override: bool = False) -> Report:
    """Sets what the plan says through PyTorch's own API (the table in this
    module's docstring) and returns a Report of what was set, what was kept
    because the user had set it, and what does not apply to this torch.

    plan: a gpuopt.Plan (None: default_plan(torch), the selected device's
    plan). torch: the torch module (None: import torch). override: set even
    what the user set. Call it before torch initialises CUDA: the plan's
    environment variables are read when CUDA starts."""
    torch = _torch(torch)
    plan = plan if plan is not None else default_plan(torch)
    backend = plan.device.backend
    gpu = backend in ("cuda", "rocm")
    report = Report(device="cpu" if backend == "cpu" else f"cuda:{plan.device.index}",
                    plan_device=plan.device.id,
                    torch_version=str(getattr(torch, "__version__", "?")))
    why = _not_driven(torch, backend)
    if why:
        report.device = "none"
        for k in plan.knobs:
            report.not_applicable.append(Setting(k.env or k.name, k.name, k.value,
                                                 note=f"not applicable: {why}"))
        report.warnings.append(f"{why}; nothing was applied")
        return report

    # The thread variables the user set, read before the plan's own
    # OMP_NUM_THREADS joins them.
    user_threads = [v for v in _THREAD_VARIABLES if os.environ.get(v)]
    # The environment first: setting the memory fraction starts CUDA.
    _apply_environment(torch, report, plan, gpu, override)
    if gpu:
        report.device = f"cuda:{_torch_index(plan)}"

    # Every "before" is read ahead of any change: two settings may be one
    # state in torch (allow_tf32 and the matmul precision).
    pending = []
    for k in plan.knobs:
        for setting, value in _settings_for(torch, k, backend):
            before = None
            if not isinstance(setting, _Missing):
                try:
                    before = setting.get()
                except RuntimeError as e:  # torch 2.9+: the program mixed the two TF32 APIs
                    setting = _Missing(torch, setting.what, f"torch refused to read it ({e})")
            pending.append((k.name, setting, value, before))
    for name, setting, value, before in pending:
        _apply_one(report, name, setting, value, before, override)

    threads = next((k for k in plan.knobs if k.name == "threads"), None)
    if threads is not None:
        _apply_threads(torch, report, threads, user_threads, override)
    for k in plan.knobs:
        if k.name in ("cuda.autocast_dtype", "rocm.autocast_dtype"):
            report.autocast_dtype = getattr(torch, str(k.value), None)
    if gpu:
        _apply_memory_budget(torch, report, plan)
    return report
