"""libgpuopt for Python: which compute devices are here, which one to use,
and how to set work up for it.

A ctypes binding over the same shared library C programs link, so it needs
no compiler and no package beyond the standard library::

    import gpuopt

    with gpuopt.Context() as ctx:
        for dev in ctx.devices():
            print(dev.id, dev.name)
        plan = ctx.plan(level=1)            # for the selected device
        print(plan.knob("threads").value)

gpuopt.torch applies a plan to PyTorch (gpuopt.torch.apply()), and
``python3 -m gpuopt devices|plan|doctor`` answers as the gpuopt command does.

The library is found through, in order: the GPUOPT_LIBRARY environment
variable (a path; the only one tried when set), the library installed with
this package by ``make install`` (the path _install.py records), the dynamic
loader's search by soname (LD_LIBRARY_PATH, ld.so.cache), the libdir that
``pkg-config gpuopt`` names (a ``make install`` to any prefix on
PKG_CONFIG_PATH or pkg-config's own path), and ctypes.util.find_library.

Devices, backends, knobs and plans come back as frozen dataclasses holding
plain Python values (dataclasses.asdict works on each); the C enums are
enum.IntEnum classes (DeviceType, Status, ...), the JSON the library writes
comes back as dicts (the *_json methods give the text). A failure raises
GpuoptError with the status name and the library's detail
(gpuopt_last_error) for that call.

Every number shared with C (statuses, enum values, flags, API_VERSION) comes
from gpuopt._constants, which tools/python_constants.py generates from the
public headers: GpuoptError.status compares with gpuopt.ERR_NO_DEVICE etc.
"""

import contextlib
import ctypes
import ctypes.util
import functools
import json as _json
import os
import subprocess
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import _constants
from ._constants import *  # noqa: F401,F403 - the header's numbers, re-exported
from ._constants import (API_VERSION, APPLY_ENV, BACKEND_STATUS, CACHE_MODE, CANDIDATE_STATUS,
                         COUNT_BYTES, COUNT_ITEMS, ERR_LAUNCH, ERR_NOT_FOUND, FEATURE,
                         KNOB_SOURCE, KNOB_TYPE, LEVEL_DEFAULT, MEMORY_PLACE, MEMORY_SOURCE,
                         MEMORY_SOURCE_NONE, OBJECTIVE, OK, OPTION_IGNORE_CONFIG_FILE,
                         OPTION_IGNORE_ENV, PROFILE_JSON, PROFILE_SVG, PROFILE_TABLE,
                         PROFILE_TRACE, PROFILER_NO_VENDOR_RANGES, PROFILER_START_DISABLED,
                         RESULT_ORIGIN, STRATEGY, TRISTATE_NO, TRISTATE_UNKNOWN, TRISTATE_YES,
                         VERSION_MAJOR, DeviceType)

__all__ = [
    "Backend", "CallbackTuner", "Candidate", "Context", "Device", "GpuoptError",
    "Knob", "Memory", "MemoryAdvice", "MemoryInfo", "Plan", "Profiler", "Space", "TuneResult",
    "Workload",
    "api_version", "last_error", "library_path", "status_name", "strerror", "version",
] + _constants.__all__

# API_VERSION is the GPUOPT_API_VERSION of the headers this module mirrors.
# The loaded library must be at least this new: every declaration below
# exists there.

# The words this module has always used: the enumerators' own, except that
# a backend that was not probed yet reads "not probed".
_BACKEND_STATUS = {v: w.replace("_", " ") for v, w in BACKEND_STATUS.items()}
_OBJECTIVES = {w: v for v, w in OBJECTIVE.items()}
_BOUNDS = {w: v for v, w in BOUND.items()}
_FEATURES = tuple((w, bit) for bit, w in sorted(FEATURE.items()))


# ---------------------------------------------------------------------------
# Structs, field for field as in gpuopt.h. Each starts with struct_size,
# which this module sets to ctypes.sizeof(the mirror): the library writes at
# most that many bytes, so a newer library is safe to load.
# ---------------------------------------------------------------------------

_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p)
# int32_t (*gpuopt_constraint_fn)(const gpuopt_point *point, void *user)
_CONSTRAINT_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
# gpuopt_status (*gpuopt_run_fn)(const gpuopt_point *, void *, double *measured_ns)
_RUN_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.POINTER(ctypes.c_double))
# void (*gpuopt_pre_run_fn)(const gpuopt_point *, void *)
_PRE_RUN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
# int32_t (*gpuopt_validate_fn)(const gpuopt_point *, void *)
_VALIDATE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
# void (*gpuopt_progress_fn)(int32_t done, int32_t total, double best_ns, double left_s, void *)
_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_double,
                                ctypes.c_double, ctypes.c_void_p)


def _struct(name: str, fields: List[Any]) -> Any:
    """The mirror of a gpuopt.h struct: struct_size, which every one starts
    with, then `fields`."""
    return type(name, (ctypes.Structure,),
                {"_fields_": [("struct_size", ctypes.c_size_t)] + fields})


_Options = _struct("_Options", [
    ("flags", ctypes.c_uint32),
    ("backends", ctypes.c_char_p),
    ("device", ctypes.c_char_p),
    ("level", ctypes.c_char_p),
    ("log_level", ctypes.c_char_p),
    ("config_path", ctypes.c_char_p),
    ("sysfs_root", ctypes.c_char_p),
    ("cache_dir", ctypes.c_char_p),
    ("reduced_precision", ctypes.c_char_p),
    ("log_fn", _LOG_FN),
    ("log_user", ctypes.c_void_p),
])


_BackendInfo = _struct("_BackendInfo", [
    ("name", ctypes.c_char_p),
    ("status", ctypes.c_int32),
    ("device_count", ctypes.c_int32),
    ("init_ms", ctypes.c_double),
    ("reason", ctypes.c_char_p),
    ("library", ctypes.c_char_p),
    ("driver_version", ctypes.c_char_p),
    ("runtime_version", ctypes.c_char_p),
])


_DeviceInfo = _struct("_DeviceInfo", [
    ("id", ctypes.c_char * 32),
    ("backend", ctypes.c_char * 16),
    ("routes", ctypes.c_char * 64),
    ("index", ctypes.c_int32),
    ("type", ctypes.c_int32),
    ("vendor", ctypes.c_char * 64),
    ("name", ctypes.c_char * 256),
    ("arch_family", ctypes.c_char * 32),
    ("arch_name", ctypes.c_char * 64),
    ("cc_major", ctypes.c_int32),
    ("cc_minor", ctypes.c_int32),
    ("arch_extrapolated", ctypes.c_int32),
    ("compute_units", ctypes.c_int32),
    ("simd_width", ctypes.c_int32),
    ("clock_mhz", ctypes.c_int32),
    ("integrated", ctypes.c_int32),
    ("unified_memory", ctypes.c_int32),
    ("ecc", ctypes.c_int32),
    ("max_threads_per_block", ctypes.c_int32),
    ("memory_bytes", ctypes.c_uint64),
    ("memory_free_bytes", ctypes.c_uint64),
    ("l2_bytes", ctypes.c_uint64),
    ("shared_mem_per_block", ctypes.c_uint64),
    ("pci_bus_id", ctypes.c_char * 32),
    ("uuid", ctypes.c_char * 64),
    ("driver_version", ctypes.c_char * 64),
    ("runtime_version", ctypes.c_char * 64),
    ("features", ctypes.c_uint32),
    ("features_known", ctypes.c_uint32),
])


_Knob = _struct("_Knob", [
    ("name", ctypes.c_char_p),
    ("type", ctypes.c_int32),
    ("tier", ctypes.c_int32),
    ("source", ctypes.c_int32),
    ("reserved", ctypes.c_int32),
    ("int_value", ctypes.c_int64),
    ("value", ctypes.c_char_p),
    ("env", ctypes.c_char_p),
    ("reason", ctypes.c_char_p),
])


_Workload = _struct("_Workload", [
    ("model_bytes", ctypes.c_uint64),
    ("item_bytes", ctypes.c_uint64),
    ("reduced_precision", ctypes.c_int32),
    ("quantized", ctypes.c_int32),
    ("objective", ctypes.c_int32),
    ("fixed_shapes", ctypes.c_int32),
    ("bound", ctypes.c_int32),
    ("launches_per_step", ctypes.c_int32),
    ("step_time_ns", ctypes.c_uint64),
    ("h2d_bytes_per_step", ctypes.c_uint64),
    ("d2h_bytes_per_step", ctypes.c_uint64),
    ("items_per_step", ctypes.c_int32),
])


_MemoryInfo = _struct("_MemoryInfo", [
    ("total_bytes", ctypes.c_uint64),
    ("free_bytes", ctypes.c_uint64),
    ("used_bytes", ctypes.c_uint64),
    ("source", ctypes.c_int32),
    ("reserved", ctypes.c_int32),
    ("age_s", ctypes.c_double),
    ("source_text", ctypes.c_char * 256),
])


_MemoryStats = _struct("_MemoryStats", [
    ("budget_bytes", ctypes.c_uint64),
    ("device_bytes", ctypes.c_uint64),
    ("host_bytes", ctypes.c_uint64),
    ("pinned_bytes", ctypes.c_uint64),
    ("device_high_water_bytes", ctypes.c_uint64),
    ("host_high_water_bytes", ctypes.c_uint64),
    ("pinned_high_water_bytes", ctypes.c_uint64),
    ("allocations", ctypes.c_int32),
    ("threshold_percent", ctypes.c_int32),
    ("budget_share", ctypes.c_double),
    ("live_total_bytes", ctypes.c_uint64),
    ("live_free_bytes", ctypes.c_uint64),
    ("live_used_bytes", ctypes.c_uint64),
    ("live_source", ctypes.c_int32),
    ("reserved", ctypes.c_int32),
])


_MemoryAdvice = _struct("_MemoryAdvice", [
    ("free_bytes", ctypes.c_uint64),
    ("usable_bytes", ctypes.c_uint64),
    ("quantize_bits", ctypes.c_int32),
    ("reserved", ctypes.c_int32),
    ("offload_bytes", ctypes.c_uint64),
    ("max_batch", ctypes.c_int64),
    ("reason", ctypes.c_char * 1024),
])


_KernelDesc = _struct("_KernelDesc", [
    ("source", ctypes.c_char_p),
    ("entry", ctypes.c_char_p),
    ("language", ctypes.c_int32),
    ("build_options", ctypes.c_char_p),
    ("global", ctypes.c_char_p * 3),
    ("local", ctypes.c_char_p * 3),
    ("local_memory", ctypes.c_char_p),
])


_BufferDesc = _struct("_BufferDesc", [
    ("type", ctypes.c_int32),
    ("init", ctypes.c_int32),
    ("count", ctypes.c_char_p),
    ("constant", ctypes.c_double),
    ("data", ctypes.c_void_p),
    ("is_output", ctypes.c_int32),
])


_ScalarDesc = _struct("_ScalarDesc", [
    ("type", ctypes.c_int32),
    ("expression", ctypes.c_char_p),
    ("value", ctypes.c_double),
])


_ReferenceDesc = _struct("_ReferenceDesc", [
    ("source", ctypes.c_char_p),
    ("entry", ctypes.c_char_p),
    ("build_options", ctypes.c_char_p),
    ("global", ctypes.c_char_p * 3),
    ("local", ctypes.c_char_p * 3),
])


_CallbackDesc = _struct("_CallbackDesc", [
    ("run", _RUN_FN),
    ("pre_run", _PRE_RUN_FN),
    ("validate", _VALIDATE_FN),
    ("user", ctypes.c_void_p),
])


_TunerSettings = _struct("_TunerSettings", [
    ("strategy", ctypes.c_int32),
    ("max_evaluations", ctypes.c_int32),
    ("max_seconds", ctypes.c_double),
    ("max_failures", ctypes.c_int32),
    ("cache_mode", ctypes.c_int32),
    ("seed", ctypes.c_uint64),
    ("warmup_ms", ctypes.c_double),
    ("repeat_ms", ctypes.c_double),
    ("min_runs", ctypes.c_int32),
    ("max_runs", ctypes.c_int32),
    ("timeout_s", ctypes.c_double),
    ("abs_tol", ctypes.c_double),
    ("rel_tol", ctypes.c_double),
    ("workload_key", ctypes.c_char_p),
    ("isolation", ctypes.c_int32),
])


_Candidate = _struct("_Candidate", [
    ("point", ctypes.c_void_p),
    ("status", ctypes.c_int32),
    ("runs", ctypes.c_int32),
    ("median_ns", ctypes.c_double),
    ("p20_ns", ctypes.c_double),
    ("p80_ns", ctypes.c_double),
    ("min_ns", ctypes.c_double),
    ("compile_ms", ctypes.c_double),
    ("message", ctypes.c_char_p),
])


_ProfilerOptions = _struct("_ProfilerOptions", [
    ("flags", ctypes.c_uint32),
    ("max_sections", ctypes.c_int32),
    ("stream", ctypes.c_void_p),
    ("trace_path", ctypes.c_char_p),
    ("stream_backend", ctypes.c_char_p),
])


def _sized(struct_type):
    s = struct_type()
    s.struct_size = ctypes.sizeof(struct_type)
    return s


# ---------------------------------------------------------------------------
# Loading the library and declaring every public function.
# ---------------------------------------------------------------------------

class GpuoptError(Exception):
    """A libgpuopt call failed.

    status: the gpuopt_status number; name: its symbolic name
    ("GPUOPT_ERR_NO_DEVICE"); detail: the library's words for this failure
    (gpuopt_last_error), "" when it gave none; function: the C function."""

    def __init__(self, status: int, name: str, detail: str, function: str = "") -> None:
        self.status = status
        self.name = name
        self.detail = detail
        self.function = function
        where = function + ": " if function else ""
        super().__init__(f"{where}{name}" + (f": {detail}" if detail else ""))


_c_status = ctypes.c_int  # a C enum is an int on every ABI the library supports
_p = ctypes.c_void_p      # opaque handles
_i32p = ctypes.POINTER(ctypes.c_int32)

# name: (restype, argtypes). A function that returns a gpuopt_status has
# it checked: non-OK becomes an exception. This table covers the whole
# header; tests/python checks it against include/gpuopt/gpuopt.h.
_PROTOTYPES = {
    "gpuopt_version": (ctypes.c_char_p, []),
    "gpuopt_api_version": (ctypes.c_uint32, []),
    "gpuopt_strerror": (ctypes.c_char_p, [_c_status]),
    "gpuopt_status_name": (ctypes.c_char_p, [_c_status]),
    "gpuopt_last_error": (ctypes.c_char_p, []),
    "gpuopt_context_create": (_c_status, [ctypes.POINTER(_Options), ctypes.POINTER(_p)]),
    "gpuopt_context_set_log": (_c_status, [_p, ctypes.c_int32, _LOG_FN, _p]),
    "gpuopt_context_set_knob": (_c_status, [_p, ctypes.c_char_p, ctypes.c_char_p]),
    "gpuopt_backend_at": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(_BackendInfo)]),
    "gpuopt_device_at": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(_p)]),
    "gpuopt_device_get_info": (_c_status, [_p, ctypes.POINTER(_DeviceInfo)]),
    "gpuopt_device_select": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(_p)]),
    "gpuopt_plan_create": (_c_status, [_p, _p, ctypes.c_int32, ctypes.POINTER(_p)]),
    "gpuopt_workload_init": (None, [ctypes.POINTER(_Workload)]),
    "gpuopt_plan_create_for": (_c_status, [_p, _p, ctypes.c_int32, ctypes.POINTER(_Workload),
                                          ctypes.POINTER(_p)]),
    "gpuopt_plan_level": (_c_status, [_p, _i32p, _i32p]),
    "gpuopt_plan_knob_at": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(_Knob)]),
    "gpuopt_plan_knob_find": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(_Knob)]),
    "gpuopt_plan_warning_at": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p)]),
    "gpuopt_plan_apply": (_c_status, [_p, ctypes.c_uint32, ctypes.POINTER(_p)]),
    "gpuopt_device_memory": (_c_status, [_p, ctypes.POINTER(_MemoryInfo)]),
    "gpuopt_memory_set_budget": (_c_status, [_p, ctypes.c_uint64]),
    "gpuopt_memory_set_threshold": (_c_status, [_p, ctypes.c_int32]),
    "gpuopt_memory_register": (_c_status, [_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_uint64]),
    "gpuopt_memory_release": (_c_status, [_p, ctypes.c_char_p]),
    "gpuopt_memory_get_stats": (_c_status, [_p, ctypes.POINTER(_MemoryStats)]),
    "gpuopt_memory_recommend": (_c_status, [_p, ctypes.c_uint64, ctypes.c_uint64,
                                            ctypes.POINTER(_MemoryAdvice)]),
    "gpuopt_cache_clear": (_c_status, [_p, _p]),
    "gpuopt_cache_export": (_c_status, [_p, _p, ctypes.POINTER(_p)]),
    "gpuopt_cache_import": (_c_status, [_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                                        ctypes.POINTER(_p)]),
    "gpuopt_profiler_create": (_c_status, [_p, _p, ctypes.POINTER(_ProfilerOptions),
                                          ctypes.POINTER(_p)]),
    "gpuopt_profiler_set_enabled": (_c_status, [_p, ctypes.c_int32]),
    "gpuopt_profiler_begin": (_c_status, [_p, ctypes.c_char_p]),
    "gpuopt_profiler_count": (_c_status, [_p, ctypes.c_int32, ctypes.c_uint64]),
    "gpuopt_profiler_end": (_c_status, [_p, ctypes.c_char_p]),
    "gpuopt_profiler_report": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(_p)]),
    "gpuopt_profiler_write": (_c_status, [_p, ctypes.c_int32, ctypes.c_char_p]),
    "gpuopt_space_create": (_c_status, [ctypes.POINTER(_p)]),
    "gpuopt_space_add_int": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64),
                                        ctypes.c_int32]),
    "gpuopt_space_add_enum": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                         ctypes.c_int32]),
    "gpuopt_space_add_constraint": (_c_status, [_p, ctypes.c_char_p]),
    "gpuopt_space_add_constraint_fn": (_c_status, [_p, _CONSTRAINT_FN, _p, ctypes.c_char_p]),
    "gpuopt_space_set_size": (_c_status, [_p, ctypes.c_char_p, ctypes.c_int64]),
    "gpuopt_space_count": (_c_status, [_p, ctypes.POINTER(ctypes.c_uint64),
                                      ctypes.POINTER(ctypes.c_uint64)]),
    "gpuopt_point_get_int": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "gpuopt_point_get_text": (_c_status, [_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]),
    "gpuopt_tuner_create": (_c_status, [_p, _p, _p, ctypes.POINTER(_p)]),
    "gpuopt_tuner_set_size": (_c_status, [_p, ctypes.c_char_p, ctypes.c_int64]),
    "gpuopt_tuner_set_kernel": (_c_status, [_p, ctypes.POINTER(_KernelDesc)]),
    "gpuopt_tuner_set_buffer": (_c_status, [_p, ctypes.c_uint32, ctypes.POINTER(_BufferDesc)]),
    "gpuopt_tuner_set_scalar": (_c_status, [_p, ctypes.c_uint32, ctypes.POINTER(_ScalarDesc)]),
    "gpuopt_tuner_set_reference_kernel": (_c_status, [_p, ctypes.POINTER(_ReferenceDesc)]),
    "gpuopt_tuner_set_reference_data": (_c_status, [_p, ctypes.c_uint32, _p, ctypes.c_size_t]),
    "gpuopt_tuner_set_callback": (_c_status, [_p, ctypes.POINTER(_CallbackDesc)]),
    "gpuopt_tuner_get_settings": (_c_status, [_p, ctypes.POINTER(_TunerSettings)]),
    "gpuopt_tuner_set_settings": (_c_status, [_p, ctypes.POINTER(_TunerSettings)]),
    "gpuopt_tuner_set_progress": (_c_status, [_p, _PROGRESS_FN, _p]),
    "gpuopt_tuner_step": (_c_status, [_p, ctypes.POINTER(_p), _i32p]),
    "gpuopt_result_best": (_c_status, [_p, ctypes.POINTER(_Candidate)]),
    "gpuopt_result_at": (_c_status, [_p, ctypes.c_int32, ctypes.POINTER(_Candidate)]),
}

# The families of one signature: the destructors, the functions that
# answer through one out-pointer (a handle, or text for gpuopt_free), the
# counts.
for _names, _proto in (
        (("free", "context_destroy", "plan_destroy", "memory_destroy", "profiler_destroy",
          "space_destroy", "tuner_destroy", "result_destroy"), (None, [_p])),
        (("context_to_json", "context_diagnose", "plan_device", "plan_to_json", "plan_to_env",
          "plan_to_build_options", "memory_create", "memory_to_json", "memory_check",
          "cache_path", "cache_list", "cache_verify", "point_to_string", "tuner_run",
          "result_to_json", "result_to_csv"), (_c_status, [_p, ctypes.POINTER(_p)])),
        (("backend_count", "device_count", "plan_knob_count", "plan_warning_count",
          "result_count", "result_get_origin"), (_c_status, [_p, _i32p]))):
    _PROTOTYPES.update({f"gpuopt_{name}": _proto for name in _names})

# Every descriptor's size function, size_t gpuopt_<name>_size(void).
_PROTOTYPES.update({f"gpuopt_{name}_size": (ctypes.c_size_t, []) for name in (
    "options", "backend_info", "device_info", "knob", "workload", "memory_info", "memory_stats",
    "memory_advice", "profiler_options", "kernel_desc", "buffer_desc", "scalar_desc",
    "reference_desc", "callback_desc", "tuner_settings", "candidate")})


_SONAME = "libgpuopt.so.%d" % VERSION_MAJOR  # SOVERSION is the major version


def _installed_library():
    """The library `make install` put beside this package: _install.py,
    written at install time, holds its path relative to the package."""
    try:
        from ._install import LIBRARY  # type: ignore[import-not-found]
    except ImportError:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY))


def _pkg_config_library():
    """The library of the gpuopt.pc that pkg-config finds: a `make install`
    to any prefix whose lib/pkgconfig is on PKG_CONFIG_PATH, or to one of
    pkg-config's own directories (/usr/local/lib/pkgconfig)."""
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "gpuopt"], capture_output=True,
                           text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = r.stdout.strip()
    return os.path.join(libdir, _SONAME) if r.returncode == 0 and libdir else None


def _candidates():
    """Where the library may be, in the order the module docstring gives;
    each found only when the ones before it failed."""
    env = os.environ.get("GPUOPT_LIBRARY")
    if env:
        # An explicit choice is the only one tried: falling back to another
        # copy would hide the mistake.
        yield env
        return
    installed = _installed_library()
    if installed:
        yield installed
    yield _SONAME
    from_pc = _pkg_config_library()
    if from_pc:
        yield from_pc
    found = ctypes.util.find_library("gpuopt")
    if found:
        yield found


def _load():
    errors = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append(f"{name}: {e}")
    raise ImportError("gpuopt: cannot load libgpuopt (set GPUOPT_LIBRARY to its path, or "
                      "install it: make install); tried " + "; ".join(errors))


_lib, _lib_name = _load()


def _text(raw):
    if raw is None:
        return ""
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw).decode("utf-8", "replace")
    return str(raw)


def _errcheck(result, func, args):
    if result != OK:
        raise GpuoptError(result, _text(_lib.gpuopt_status_name(result)),
                          _text(_lib.gpuopt_last_error()), func.__name__)
    return result


def _declare():
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(_lib, name)
        except AttributeError:
            raise ImportError(f"gpuopt: {_lib_name} has no {name}: too old for this module "
                              f"(needs API version {API_VERSION:#x})") from None
        fn.restype = restype
        fn.argtypes = argtypes
        if restype is _c_status:
            fn.errcheck = _errcheck


_declare()

if _lib.gpuopt_api_version() < API_VERSION:
    raise ImportError(f"gpuopt: {_lib_name} has API version {_lib.gpuopt_api_version():#x}, "
                      f"this module needs at least {API_VERSION:#x}")


def version() -> str:
    """Release version of the loaded library, "MAJOR.MINOR.PATCH"."""
    return _text(_lib.gpuopt_version())


def api_version() -> int:
    """GPUOPT_API_VERSION of the loaded library."""
    return int(_lib.gpuopt_api_version())


def strerror(status: int) -> str:
    """The status's description, as gpuopt_strerror gives it ("not found")."""
    return _text(_lib.gpuopt_strerror(status))


def status_name(status: int) -> str:
    """The status's name, as gpuopt_status_name gives it ("GPUOPT_ERR_NOT_FOUND")."""
    return _text(_lib.gpuopt_status_name(status))


def last_error() -> str:
    """The calling thread's detail for the library's last failure."""
    return _text(_lib.gpuopt_last_error())


def library_path() -> str:
    """What this module loaded: the name or path given to the loader."""
    return _lib_name


def _take_string(ptr):
    """Copies a string the library allocated and frees it."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace") if ptr.value else ""
    finally:
        _lib.gpuopt_free(ptr)


def _out(fn: Any, *args: Any, kind: Any = _p) -> Any:
    """fn(*args, &out) for a function that answers through its last
    argument: the value it wrote there (a handle, a number)."""
    out = kind()
    fn(*args, ctypes.byref(out))
    return out.value


def _string(fn: Any, *args: Any) -> str:
    """fn(*args, &text) for a function that answers with a string it
    allocated: the text, copied and freed."""
    out = _p()
    fn(*args, ctypes.byref(out))
    return _take_string(out)


def _fill(fn: Any, *args: Any, struct: Any) -> Any:
    """fn(*args, &s) for a function that fills a struct: s, with its
    struct_size set."""
    s = _sized(struct)
    fn(*args, ctypes.byref(s))
    return s


def _each(count_fn: Any, at_fn: Any, handle: int, struct: Any) -> List[Any]:
    """Every element of a list the library counts (count_fn(handle, &n)),
    each filled by at_fn(handle, i, &s)."""
    return [_fill(at_fn, handle, i, struct=struct)
            for i in range(_out(count_fn, handle, kind=ctypes.c_int32))]


# ---------------------------------------------------------------------------
# Python objects.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Backend:
    """One backend of a context (gpuopt_backend_info): whether it loaded,
    why not, the library it opened and its versions."""
    name: str
    status: str          # "available", "unavailable", "error", "disabled", "not probed"
    device_count: int
    init_ms: Optional[float]
    reason: str
    library: str
    driver_version: str
    runtime_version: str


@dataclass(frozen=True)
class Device:
    """One device, facts as the library normalised them (None where unknown).

    Plain data: dataclasses.asdict and copy work on it. It remembers, out of
    its fields, the Context it came from, and can be passed back only to
    that Context while it is open."""
    id: str
    backend: str
    routes: List[str]
    index: int
    type: DeviceType
    vendor: str
    name: str
    arch_family: str
    arch_name: str
    compute_capability: Optional[str]
    arch_extrapolated: bool
    compute_units: Optional[int]
    simd_width: Optional[int]
    clock_mhz: Optional[int]
    integrated: Optional[bool]
    unified_memory: Optional[bool]
    ecc: Optional[bool]
    max_threads_per_block: Optional[int]
    memory_bytes: Optional[int]
    memory_free_bytes: Optional[int]
    l2_bytes: Optional[int]
    shared_mem_per_block: Optional[int]
    pci_bus_id: str
    uuid: str
    driver_version: str
    runtime_version: str
    features: Dict[str, Optional[bool]]  # {"fp64": True/False/None (unknown), ...}

    @property
    def is_gpu(self) -> bool:
        """True for a GPU (DeviceType.GPU)."""
        return self.type == DeviceType.GPU

    def _bind(self, handle: int, context: "Context") -> "Device":
        # Not dataclass fields: asdict() deep-copies fields, and a Context
        # holds a lock that cannot be copied.
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_context", context)
        return self

    def _handle_for(self, context: "Context") -> int:
        if getattr(self, "_context", None) is not context:
            raise ValueError("gpuopt: the device belongs to another Context")
        return int(getattr(self, "_handle"))


@dataclass(frozen=True)
class Knob:
    """One setting of a plan (gpuopt_knob), with the tier and source that set
    it and the reason in words."""
    name: str
    type: str            # "bool", "int", "bytes", "string" (KNOB_TYPE)
    value: Any           # bool, int or str by type
    text: str            # the value as the library writes it
    tier: int            # 0, 1, 2; TIER_NONE (-1) when only a user set it
    source: str          # "default", "detected", "benchmark", "cache", "config", "env", "api"
    env: Optional[str]   # the environment variable it exports to
    reason: str


@dataclass(frozen=True)
class Workload:
    """What the program will run (gpuopt_workload). None / False mean
    unknown or no; the knobs that need an unknown fact are left out."""
    model_bytes: Optional[int] = None    # weights resident on the device
    item_bytes: Optional[int] = None     # device memory per batch item
    reduced_precision: Optional[bool] = None  # None: the configuration decides
    quantized: bool = False
    objective: str = "throughput"        # or "latency"
    fixed_shapes: bool = False
    bound: str = "unknown"               # what limits it: "compute" or "memory" (bandwidth)
    # One step of latency-oriented work (docs/latency.md); None: unknown.
    launches_per_step: Optional[int] = None   # kernel launches per step
    step_time_s: Optional[float] = None       # the step's time target, in seconds
    h2d_bytes_per_step: Optional[int] = None  # copied host to device per step
    d2h_bytes_per_step: Optional[int] = None  # copied device to host per step
    items_per_step: Optional[int] = None      # items one step holds (concurrent users)

    def _to_c(self) -> "_Workload":
        w = _Workload()
        _lib.gpuopt_workload_init(ctypes.byref(w))
        w.model_bytes = self.model_bytes or 0
        w.item_bytes = self.item_bytes or 0
        if self.reduced_precision is not None:
            w.reduced_precision = TRISTATE_YES if self.reduced_precision else TRISTATE_NO
        w.quantized = 1 if self.quantized else 0
        if self.objective not in _OBJECTIVES:
            raise ValueError(f"gpuopt: objective {self.objective!r}: accepted "
                             + ", ".join(_OBJECTIVES))
        w.objective = _OBJECTIVES[self.objective]
        w.fixed_shapes = 1 if self.fixed_shapes else 0
        if self.bound not in _BOUNDS:
            raise ValueError(f"gpuopt: bound {self.bound!r}: accepted " + ", ".join(_BOUNDS))
        w.bound = _BOUNDS[self.bound]
        w.launches_per_step = self.launches_per_step or 0
        w.step_time_ns = int(round((self.step_time_s or 0) * 1e9))
        w.h2d_bytes_per_step = self.h2d_bytes_per_step or 0
        w.d2h_bytes_per_step = self.d2h_bytes_per_step or 0
        w.items_per_step = self.items_per_step or 0
        return w


@dataclass(frozen=True)
class Plan:
    """The settings for a device at a level (gpuopt_plan), read out of the
    library: the knobs in plan order, the warnings, and the plan written as
    JSON (to_dict() parses it), as shell lines and as OpenCL build options."""
    level_requested: int
    level_applied: int
    device: Device
    knobs: List[Knob]
    warnings: List[str]
    json: str = field(repr=False, default="")  # gpuopt_plan_to_json's text
    env: str = field(repr=False, default="")   # ': "${NAME=value}"; export NAME' lines
    build_options: str = ""                    # for clBuildProgram; "" when none
    apply_report: str = ""                     # what Context.plan(apply=...) did

    def knob(self, name: str) -> Knob:
        """The knob called `name`; KeyError when the plan has none."""
        for k in self.knobs:
            if k.name == name:
                return k
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        """The value of the knob called `name`, or `default`."""
        return self.knob(name).value if name in self else default

    def __contains__(self, name: object) -> bool:
        return any(k.name == name for k in self.knobs)

    def to_dict(self) -> Dict[str, Any]:
        """The plan as the library writes it in JSON (docs/json.md): each
        knob with its domain, framework mapping and inputs."""
        return _json.loads(self.json) if self.json else {}

@dataclass(frozen=True)
class MemoryInfo:
    """One reading of a device's memory (gpuopt_device_memory)."""
    total_bytes: Optional[int]
    free_bytes: Optional[int]     # None: unknown (source "none"; source_text says why)
    used_bytes: Optional[int]
    source: str                   # "management" (NVML), "kernel" (amdgpu sysfs), "context",
                                  # "new_context", "runtime", "host", "none"
    source_text: str
    age_s: float


@dataclass(frozen=True)
class MemoryAdvice:
    """The plan's workload rules on live free memory (gpuopt_memory_recommend)."""
    free_bytes: int
    usable_bytes: int
    quantize_bits: int            # 0: the model fits as it is
    offload_bytes: int
    max_batch: Optional[int]      # None without an item size
    reason: str


def _opt_int(v: int) -> Optional[int]:
    return None if v == -1 else int(v)


def _opt_bool(v: int) -> Optional[bool]:
    """A gpuopt_tristate as None, False or True."""
    return None if v == TRISTATE_UNKNOWN else v == TRISTATE_YES


def _opt_bytes(v: int) -> Optional[int]:
    return None if v == 0 else int(v)


def _device_type(v: int) -> DeviceType:
    try:
        return DeviceType(v)
    except ValueError:  # a newer library's type: "other" until the binding knows it
        return DeviceType.OTHER


def _device_from(handle: int, ctx: "Context") -> Device:
    info = _fill(_lib.gpuopt_device_get_info, handle, struct=_DeviceInfo)
    feats: Dict[str, Optional[bool]] = {}
    for fname, bit in _FEATURES:
        feats[fname] = bool(info.features & bit) if info.features_known & bit else None
    cc = f"{info.cc_major}.{info.cc_minor}" if info.cc_major >= 0 else None
    routes = _text(info.routes)
    return Device(
        id=_text(info.id), backend=_text(info.backend),
        routes=[r for r in routes.split(",") if r], index=info.index,
        type=_device_type(info.type),
        vendor=_text(info.vendor), name=_text(info.name), arch_family=_text(info.arch_family),
        arch_name=_text(info.arch_name), compute_capability=cc,
        arch_extrapolated=info.arch_extrapolated == 1,
        compute_units=_opt_int(info.compute_units), simd_width=_opt_int(info.simd_width),
        clock_mhz=_opt_int(info.clock_mhz), integrated=_opt_bool(info.integrated),
        unified_memory=_opt_bool(info.unified_memory), ecc=_opt_bool(info.ecc),
        max_threads_per_block=_opt_int(info.max_threads_per_block),
        memory_bytes=_opt_bytes(info.memory_bytes),
        memory_free_bytes=_opt_bytes(info.memory_free_bytes), l2_bytes=_opt_bytes(info.l2_bytes),
        shared_mem_per_block=_opt_bytes(info.shared_mem_per_block),
        pci_bus_id=_text(info.pci_bus_id), uuid=_text(info.uuid),
        driver_version=_text(info.driver_version), runtime_version=_text(info.runtime_version),
        features=feats)._bind(handle, ctx)


def _knob_from(k: "_Knob") -> Knob:
    kind = KNOB_TYPE.get(k.type, str(k.type))
    text = _text(k.value)
    value: Any
    if kind == "bool":
        value = bool(k.int_value)
    elif kind in ("int", "bytes"):
        value = int(k.int_value)
    else:
        value = text
    return Knob(name=_text(k.name), type=kind, value=value, text=text, tier=k.tier,
                source=KNOB_SOURCE.get(k.source, str(k.source)),
                env=_text(k.env) if k.env else None, reason=_text(k.reason))


_libc_getenv = ctypes.CDLL(None).getenv
_libc_getenv.restype = ctypes.c_char_p
_libc_getenv.argtypes = [ctypes.c_char_p]


def _sync_environ(plan: Plan) -> None:
    """os.environ is a copy taken at start-up: show it what the library's
    setenv changed, so Python code and subprocess(env=os.environ) see it."""
    for k in plan.knobs:
        if k.env:
            raw = _libc_getenv(k.env.encode())
            if raw is not None and os.environ.get(k.env) != _text(raw):
                os.environ[k.env] = _text(raw)


def _opt_text(v: Any) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, bool):
        return b"true" if v else b"false"
    return str(v).encode()


class _Owned:
    """A library object this Python object owns: _handle, freed once by the
    C function named in _destroy, under _lock, by close() or at the end of
    a `with` block or of the object's life. Touching a closed one raises
    ValueError naming _what."""
    _destroy = ""
    _what = "object"
    _handle: Optional[int]
    _lock: threading.Lock

    def close(self) -> None:
        """Frees the library object; closing twice is harmless."""
        with self._lock:
            if self._handle:
                getattr(_lib, self._destroy)(self._handle)
                self._handle = None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        """True once close() ran."""
        return not self._handle

    def _h(self) -> int:
        if not self._handle:
            raise ValueError(f"gpuopt: the {self._what} is closed")
        return self._handle


LogCallback = Callable[[int, str], None]


class Context(_Owned):
    """A libgpuopt context: configuration, backends and devices.

    Keyword arguments take what the GPUOPT_* environment variables take and
    override them (backends="cpu", device="cuda:1", level=2,
    log_level="debug", config_path="", sysfs_root=..., cache_dir=...,
    reduced_precision=True). ignore_env / ignore_config_file skip those
    layers. log receives (level, message) instead of stderr.

    Use it as a context manager, or call close(). Devices and plans it
    returned stay readable after close (they are plain data), but a Device
    can only be passed back to the Context that made it, while it is open."""
    _destroy = "gpuopt_context_destroy"
    _what = "context"

    def __init__(self, *, backends: Optional[str] = None, device: Optional[str] = None,
                 level: Optional[int] = None, log_level: Optional[str] = None,
                 config_path: Optional[str] = None, sysfs_root: Optional[str] = None,
                 cache_dir: Optional[str] = None, reduced_precision: Optional[bool] = None,
                 ignore_env: bool = False, ignore_config_file: bool = False,
                 log: Optional[LogCallback] = None) -> None:
        self._handle = None
        self._lock = threading.Lock()
        self._dependents = weakref.WeakSet()  # memory managers, profilers: closed first
        opts = _sized(_Options)
        opts.flags = ((OPTION_IGNORE_ENV if ignore_env else 0)
                      | (OPTION_IGNORE_CONFIG_FILE if ignore_config_file else 0))
        # The encoded strings must outlive the call: keep them in a list.
        keep = []
        for fname, v in (("backends", backends), ("device", device), ("level", level),
                         ("log_level", log_level), ("config_path", config_path),
                         ("sysfs_root", sysfs_root), ("cache_dir", cache_dir),
                         ("reduced_precision", reduced_precision)):
            b = _opt_text(v)
            keep.append(b)
            setattr(opts, fname, b)
        self._log_cb = self._make_log_cb(log)
        if self._log_cb is not None:
            opts.log_fn = self._log_cb
        self._handle = _out(_lib.gpuopt_context_create, ctypes.byref(opts))

    @staticmethod
    def _make_log_cb(log: Optional[LogCallback]) -> Any:
        if log is None:
            return None

        def trampoline(level, message, _user):
            try:
                log(int(level), _text(message))
            except Exception:  # an exception must not cross into C
                pass
        # Kept on the Context: the library calls it for the context's life.
        return _LOG_FN(trampoline)

    # -- lifetime ----------------------------------------------------------
    def close(self) -> None:
        """Destroys the context; closing twice is harmless. Its memory
        managers and profilers, which need it (gpuopt.h), close first."""
        for obj in list(getattr(self, "_dependents", ())):
            obj.close()
        super().close()


    # -- settings ----------------------------------------------------------
    def set_log(self, level: int, log: Optional[LogCallback] = None) -> None:
        """Log messages up to `level` (LogLevel) go to `log(level, message)`,
        or to stderr when log is None."""
        cb = self._make_log_cb(log)
        _lib.gpuopt_context_set_log(self._h(), level, cb if cb is not None else _LOG_FN(), None)
        self._log_cb = cb

    def set_knob(self, name: str, value: Any) -> None:
        """Overrides a knob in later plans; value None removes the override."""
        _lib.gpuopt_context_set_knob(self._h(), name.encode(), _opt_text(value))

    # -- backends and devices ----------------------------------------------
    def backends(self) -> List[Backend]:
        """Every backend of the context, in priority order (probing each)."""
        return [Backend(name=_text(b.name), status=_BACKEND_STATUS.get(b.status, str(b.status)),
                        device_count=b.device_count, init_ms=None if b.init_ms < 0 else b.init_ms,
                        reason=_text(b.reason), library=_text(b.library),
                        driver_version=_text(b.driver_version),
                        runtime_version=_text(b.runtime_version))
                for b in _each(_lib.gpuopt_backend_count, _lib.gpuopt_backend_at, self._h(),
                               _BackendInfo)]

    def devices(self) -> List[Device]:
        """Every device, a physical device once even when several backends
        reach it."""
        return [_device_from(_out(_lib.gpuopt_device_at, self._h(), i), self)
                for i in range(_out(_lib.gpuopt_device_count, self._h(), kind=ctypes.c_int32))]

    def select(self, policy: Optional[str] = None) -> Device:
        """The device a policy picks ("auto", "gpu", "cpu", "cuda:1", a UUID or
        PCI bus id); None uses the context's policy (GPUOPT_DEVICE)."""
        h = _out(_lib.gpuopt_device_select, self._h(),
                 policy.encode() if policy is not None else None)
        return _device_from(h, self)

    def describe(self) -> Dict[str, Any]:
        """Backends, devices and the selection, as `gpuopt devices --json`
        prints them (docs/json.md): {gpuopt_version, backends, devices,
        selection}."""
        return _json.loads(self.devices_json())

    def devices_json(self) -> str:
        """describe() as the JSON text the library writes."""
        return _string(_lib.gpuopt_context_to_json, self._h())

    def doctor(self) -> Dict[str, Any]:
        """Why each backend can or cannot use a GPU, with evidence and fixes
        (docs/doctor.md), as `gpuopt doctor --json` prints it."""
        return _json.loads(self.doctor_json())

    def doctor_json(self) -> str:
        """doctor() as the JSON text the library writes."""
        return _string(_lib.gpuopt_context_diagnose, self._h())

    # -- the tuning cache -------------------------------------------------
    def cache_path(self) -> str:
        """The cache directory (GPUOPT_CACHE_DIR, else $XDG_CACHE_HOME/gpuopt)."""
        return _string(_lib.gpuopt_cache_path, self._h())

    def cache_list(self) -> Dict[str, Any]:
        """The cache's files and entries, as `gpuopt cache list --json`."""
        return _json.loads(self.cache_list_json())

    def cache_list_json(self) -> str:
        """cache_list() as the JSON text the library writes."""
        return _string(_lib.gpuopt_cache_list, self._h())

    def cache_verify(self) -> Dict[str, Any]:
        """A check of every cache file, as `gpuopt cache verify --json`
        (nothing is rewritten); "ok" is False when a file has problems."""
        return _json.loads(self.cache_verify_json())

    def cache_verify_json(self) -> str:
        """cache_verify() as the JSON text the library writes."""
        return _string(_lib.gpuopt_cache_verify, self._h())

    def cache_clear(self, device: Optional[Device] = None) -> None:
        """Removes every cache entry, or one device's file."""
        _lib.gpuopt_cache_clear(self._h(),
                                device._handle_for(self) if device is not None else None)

    def cache_export(self, device: Optional[Device] = None) -> str:
        """The finished records of every device (or one), as gpuopt cache export writes them."""
        return _string(_lib.gpuopt_cache_export, self._h(),
                       device._handle_for(self) if device is not None else None)

    def cache_import(self, text: str, all_devices: bool = False) -> str:
        """Imports an export into this cache; the JSON report (gpuopt_cache_import)."""
        data = text.encode()
        return _string(_lib.gpuopt_cache_import, self._h(), data, len(data),
                       CACHE_IMPORT_ALL if all_devices else 0)

    # -- the profiler ------------------------------------------------------
    def profiler(self, device: Optional[Device] = None, **options: Any) -> "Profiler":
        """A Profiler for this context (and `device`, for device time on a
        stream): Profiler(self, device, **options)."""
        return Profiler(self, device, **options)

    # -- memory -------------------------------------------------------------
    def device_memory(self, device: Optional[Device] = None) -> MemoryInfo:
        """The device's memory now (None: the selected device), without
        creating a driver context (gpuopt_device_memory)."""
        dev = device if device is not None else self.select()
        m = _fill(_lib.gpuopt_device_memory, dev._handle_for(self), struct=_MemoryInfo)
        known = m.source != MEMORY_SOURCE_NONE
        return MemoryInfo(total_bytes=_opt_bytes(m.total_bytes),
                          free_bytes=int(m.free_bytes) if known else None,
                          used_bytes=int(m.used_bytes) if known else None,
                          source=MEMORY_SOURCE.get(m.source, str(m.source)),
                          source_text=_text(m.source_text), age_s=float(m.age_s))

    def memory(self, device: Optional[Device] = None, level: Optional[int] = None,
               workload: Optional[Workload] = None) -> "Memory":
        """A memory manager with the budget, threshold and workload of the
        plan for these arguments (as Context.plan). Closed with the Context."""
        h = self._plan_handle(device, level, workload)
        try:
            mem = Memory(_out(_lib.gpuopt_memory_create, h), self)
        finally:
            _lib.gpuopt_plan_destroy(h)
        self._dependents.add(mem)
        return mem

    def _plan_handle(self, device: Optional[Device], level: Optional[int],
                     workload: Optional[Workload]) -> int:
        lvl = LEVEL_DEFAULT if level is None else int(level)
        dev = device._handle_for(self) if device is not None else None
        if workload is None:
            return _out(_lib.gpuopt_plan_create, self._h(), dev, lvl)
        w = workload._to_c()
        return _out(_lib.gpuopt_plan_create_for, self._h(), dev, lvl, ctypes.byref(w))

    # -- plans -------------------------------------------------------------
    def plan(self, device: Optional[Device] = None, level: Optional[int] = None,
             workload: Optional[Workload] = None, apply: int = 0) -> Plan:
        """A plan for `device` (None: the selected one) at `level` 0..2 (None:
        the context's level), for `workload` when given (gpuopt_plan_create_for).

        apply: APPLY_ENV, APPLY_DEVICE and/or APPLY_AFFINITY (bind the calling
        thread to the plan's cpu.affinity, docs/fleet.md) to apply the plan to
        this process (gpuopt_plan_apply) before it is returned; Plan.apply_report says
        what was set and what was kept. Variables the library sets are
        mirrored into os.environ, which does not see C's setenv."""
        h = self._plan_handle(device, level, workload)
        try:
            report = ""
            if apply:
                out = _p()
                try:
                    _lib.gpuopt_plan_apply(h, apply, ctypes.byref(out))
                finally:
                    report = _take_string(out)
            plan = self._read_plan(h, report)
        finally:
            _lib.gpuopt_plan_destroy(h)
        if apply & APPLY_ENV:
            _sync_environ(plan)
        return plan

    def _read_plan(self, plan: int, report: str = "") -> Plan:
        req, app = ctypes.c_int32(), ctypes.c_int32()
        _lib.gpuopt_plan_level(plan, ctypes.byref(req), ctypes.byref(app))
        dev = _out(_lib.gpuopt_plan_device, plan)
        knobs = [_knob_from(k) for k in _each(_lib.gpuopt_plan_knob_count,
                                              _lib.gpuopt_plan_knob_at, plan, _Knob)]
        warnings = [_text(_out(_lib.gpuopt_plan_warning_at, plan, i, kind=ctypes.c_char_p))
                    for i in range(_out(_lib.gpuopt_plan_warning_count, plan,
                                        kind=ctypes.c_int32))]
        return Plan(level_requested=req.value, level_applied=app.value,
                    device=_device_from(dev, self), knobs=knobs, warnings=warnings,
                    json=_string(_lib.gpuopt_plan_to_json, plan),
                    env=_string(_lib.gpuopt_plan_to_env, plan),
                    build_options=_string(_lib.gpuopt_plan_to_build_options, plan),
                    apply_report=report)


# ---------------------------------------------------------------------------
# The memory manager.
# ---------------------------------------------------------------------------

_PLACES = {w: v for v, w in MEMORY_PLACE.items()}


class Memory(_Owned):
    """A memory manager (gpuopt_memory_*, docs/memory.md): a budget for one
    device taken from a plan, allocations registered by name, and advice
    from the plan's workload rules on live numbers. Made by
    Context.memory(); closed with the Context at the latest.

        mem = ctx.memory(workload=gpuopt.Workload(model_bytes=2 << 30))
        with mem.allocation("weights", 2 << 30, place="device"):
            ...
            print(mem.stats()["budget_share"], mem.check())
    """

    _destroy = "gpuopt_memory_destroy"
    _what = "memory manager"

    def __init__(self, handle: int, context: "Context") -> None:
        self._handle = handle
        self._context = context
        self._lock = threading.Lock()

    def set_budget(self, nbytes: int) -> None:
        """The budget in bytes of device memory; 0 goes back to the plan's."""
        _lib.gpuopt_memory_set_budget(self._h(), int(nbytes))

    def set_threshold(self, percent: int) -> None:
        """The share of the budget (percent) at which check() warns."""
        _lib.gpuopt_memory_set_threshold(self._h(), int(percent))

    def register(self, name: str, nbytes: int, place: str = "device") -> None:
        """Counts an allocation of `nbytes` called `name` in `place`
        ("device", "host" or "pinned") against the budget."""
        if place not in _PLACES:
            raise ValueError(f"gpuopt: place {place!r}: accepted " + ", ".join(_PLACES))
        _lib.gpuopt_memory_register(self._h(), name.encode(), _PLACES[place], int(nbytes))

    def release(self, name: str) -> None:
        """Forgets the allocation called `name`."""
        _lib.gpuopt_memory_release(self._h(), name.encode())

    @contextlib.contextmanager
    def allocation(self, name: str, nbytes: int, place: str = "device") -> Iterator[None]:
        """Registers `name` for the length of a with-block."""
        self.register(name, nbytes, place)
        try:
            yield
        finally:
            self.release(name)

    def stats(self) -> Dict[str, Any]:
        """Budget, registered bytes per place, high-water marks, share of the
        budget, the live reading and every allocation, as a dict."""
        return _json.loads(_string(_lib.gpuopt_memory_to_json, self._h()))

    def check(self) -> Optional[str]:
        """The warning (with advice) at or above the threshold, else None."""
        return _string(_lib.gpuopt_memory_check, self._h()) or None

    def recommend(self, model_bytes: int = 0, item_bytes: int = 0) -> MemoryAdvice:
        """The plan's workload rules on the live free memory: whether
        `model_bytes` fits, what to quantise or offload, the largest batch of
        `item_bytes` items."""
        a = _fill(_lib.gpuopt_memory_recommend, self._h(), int(model_bytes), int(item_bytes),
                  struct=_MemoryAdvice)
        return MemoryAdvice(free_bytes=a.free_bytes, usable_bytes=a.usable_bytes,
                            quantize_bits=a.quantize_bits, offload_bytes=a.offload_bytes,
                            max_batch=None if a.max_batch < 0 else int(a.max_batch),
                            reason=_text(a.reason))


# ---------------------------------------------------------------------------
# Tuning a Python callable (the host-callback subject).
# ---------------------------------------------------------------------------

_STRATEGIES = {w: v for v, w in STRATEGY.items()}
_CACHE_MODES = {w: v for v, w in CACHE_MODE.items()}


def _stream_handle(stream):
    """The native handle of a stream: an int (a CUstream, hipStream_t or
    cl_command_queue as a number), or an object carrying one the way
    PyTorch's torch.cuda.Stream does (.cuda_stream)."""
    if stream is None:
        return None
    handle = getattr(stream, "cuda_stream", stream)
    if isinstance(handle, ctypes.c_void_p):
        handle = handle.value
    if not isinstance(handle, int):
        raise TypeError("gpuopt: stream must be an int handle or have .cuda_stream")
    return handle


class Profiler(_Owned):
    """Named, nested sections of this program's run and where the time went
    (gpuopt.h "Profiler", docs/profiler.md)::

        with gpuopt.Context() as ctx, ctx.profiler() as prof:
            with prof.section("load_model"):
                model = load()
            for batch in batches:
                with prof.section("inference", items=len(batch)):
                    run(model, batch)
            print(prof.table())
            prof.write_trace("trace.json")      # Perfetto, chrome://tracing

        @prof.profile("postprocess")            # or @prof.profile()
        def postprocess(x): ...

    Sections nest per thread and end on the thread that began them; an end
    that does not match raises GpuoptError (ERR_NESTING). `device` and
    `stream` (an int handle, or a torch.cuda.Stream: its .cuda_stream) give
    device time on that stream; `stream_backend` says whose API the stream
    is when the device has several ("cuda", "rocm", "opencl").
    `trace_path` is written when the profiler closes (None: the
    GPUOPT_PROFILE variable's, "" nowhere). `enabled=False` starts it
    switched off; `vendor_ranges=False` keeps NVTX and roctx out. close()
    (or the end of a `with` block) writes the trace file, if one is set."""
    _destroy = "gpuopt_profiler_destroy"
    _what = "profiler"

    def __init__(self, context: "Context", device: Optional[Device] = None, *,
                 stream: Any = None, stream_backend: Optional[str] = None,
                 trace_path: Optional[str] = None, max_sections: int = 0,
                 enabled: bool = True, vendor_ranges: bool = True) -> None:
        if device is not None and device._context is not context:
            raise ValueError("gpuopt: the device belongs to another Context")
        self._handle = None
        self._context = context  # the context must outlive the profiler
        self._lock = threading.Lock()
        opts = _sized(_ProfilerOptions)
        opts.flags = ((0 if enabled else PROFILER_START_DISABLED)
                      | (0 if vendor_ranges else PROFILER_NO_VENDOR_RANGES))
        opts.max_sections = int(max_sections)
        opts.stream = _stream_handle(stream)
        keep = (_opt_text(trace_path), _opt_text(stream_backend))
        opts.trace_path, opts.stream_backend = keep
        self._handle = _out(_lib.gpuopt_profiler_create, context._h(),
                            device._handle if device is not None else None, ctypes.byref(opts))
        context._dependents.add(self)  # closed before the context

    # -- recording ---------------------------------------------------------
    def set_enabled(self, enabled: bool) -> None:
        """Switches recording on or off, between sections (gpuopt.h)."""
        _lib.gpuopt_profiler_set_enabled(self._h(), 1 if enabled else 0)

    def begin(self, name: str) -> None:
        """Opens a section on the calling thread, inside its open one."""
        _lib.gpuopt_profiler_begin(self._h(), name.encode())

    def end(self, name: Optional[str] = None) -> None:
        """Ends the innermost open section (which must be `name` when given)."""
        _lib.gpuopt_profiler_end(self._h(), name.encode() if name is not None else None)

    def count(self, items: int = 0, bytes: int = 0) -> None:
        """Adds items and/or bytes to the innermost open section."""
        if items:
            _lib.gpuopt_profiler_count(self._h(), COUNT_ITEMS, int(items))
        if bytes:
            _lib.gpuopt_profiler_count(self._h(), COUNT_BYTES, int(bytes))

    @contextlib.contextmanager
    def section(self, name: str, items: int = 0,
                bytes: int = 0) -> Iterator["Profiler"]:
        """A section for the `with` block, counting `items` and `bytes`. It
        ends when the block does, also when the block raises."""
        self.begin(name)
        try:
            self.count(items, bytes)
            yield self
        except BaseException:
            try:
                self.end(name)
            except GpuoptError:
                pass  # the block's own exception is the one to see
            raise
        self.end(name)

    def profile(self, name: Any = None, *, items: Any = None, bytes: Any = None) -> Any:
        """A decorator timing every call of a function as a section named
        `name` (default: the function's qualified name). `items` and
        `bytes` are numbers, or functions of the call's arguments."""
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            label = name if isinstance(name, str) else fn.__qualname__

            @functools.wraps(fn)
            def timed(*args: Any, **kwargs: Any) -> Any:
                n = items(*args, **kwargs) if callable(items) else (items or 0)
                b = bytes(*args, **kwargs) if callable(bytes) else (bytes or 0)
                with self.section(label, items=n, bytes=b):
                    return fn(*args, **kwargs)
            return timed
        # @prof.profile without parentheses
        return decorate(name) if callable(name) else decorate

    # -- reading -----------------------------------------------------------
    def report(self, fmt: int = PROFILE_TABLE) -> str:
        """The profile in `fmt` (PROFILE_TABLE, _JSON, _TRACE, _SVG) as text."""
        return _string(_lib.gpuopt_profiler_report, self._h(), int(fmt))

    def summary(self) -> Dict[str, Any]:
        """The summary as a dict (docs/profiler.md, "JSON")."""
        return _json.loads(self.report(PROFILE_JSON))

    def table(self) -> str:
        """The summary as an aligned text table."""
        return self.report(PROFILE_TABLE)

    def trace(self) -> str:
        """The Chrome trace-event JSON (Perfetto, chrome://tracing)."""
        return self.report(PROFILE_TRACE)

    def svg(self) -> str:
        """A self-contained SVG timeline and summary."""
        return self.report(PROFILE_SVG)

    def write(self, path: "os.PathLike[str] | str", fmt: int = PROFILE_TRACE) -> None:
        """Writes the profile to `path`, whole or not at all."""
        _lib.gpuopt_profiler_write(self._h(), int(fmt), os.fsencode(path))

    def write_trace(self, path: "os.PathLike[str] | str") -> None:
        """Writes the Chrome trace to `path`."""
        self.write(path, PROFILE_TRACE)

    def write_svg(self, path: "os.PathLike[str] | str") -> None:
        """Writes the SVG picture to `path`."""
        self.write(path, PROFILE_SVG)


class Space(_Owned):
    """A parameter space: integer and enum parameters, problem sizes and
    constraint expressions ("TILE * VEC <= 64"), as gpuopt_space_*."""
    _destroy = "gpuopt_space_destroy"
    _what = "space"

    def __init__(self):
        self._lock = threading.Lock()
        self._handle = _out(_lib.gpuopt_space_create)
        self._params = []  # (name, is_enum), in the order added

    def add_int(self, name: str, values) -> "Space":
        """Adds an integer parameter taking `values`, in order."""
        vals = (ctypes.c_int64 * len(values))(*values)
        _lib.gpuopt_space_add_int(self._handle, name.encode(), vals, len(values))
        self._params.append((name, False))
        return self

    def add_enum(self, name: str, values) -> "Space":
        """Adds a parameter taking the words `values`, in order."""
        vals = (ctypes.c_char_p * len(values))(*[v.encode() for v in values])
        _lib.gpuopt_space_add_enum(self._handle, name.encode(), vals, len(values))
        self._params.append((name, True))
        return self

    def add_constraint(self, expression: str) -> "Space":
        """Keeps only configurations where `expression` ("TILE * VEC <= 64") holds."""
        _lib.gpuopt_space_add_constraint(self._handle, expression.encode())
        return self

    def set_size(self, name: str, value: int) -> "Space":
        """Gives constraint expressions the problem size `name`."""
        _lib.gpuopt_space_set_size(self._handle, name.encode(), value)
        return self

    def count(self):
        """(raw, legal) numbers of configurations."""
        raw, legal = ctypes.c_uint64(), ctypes.c_uint64()
        _lib.gpuopt_space_count(self._handle, ctypes.byref(raw), ctypes.byref(legal))
        return raw.value, legal.value

    def _read(self, point) -> dict:
        out = {}
        for name, is_enum in self._params:
            if is_enum:
                out[name] = _text(_out(_lib.gpuopt_point_get_text, point, name.encode(),
                                       kind=ctypes.c_char_p))
            else:
                out[name] = _out(_lib.gpuopt_point_get_int, point, name.encode(),
                                 kind=ctypes.c_int64)
        return out


@dataclass(frozen=True)
class Candidate:
    """One configuration the tuner tried (gpuopt_candidate), its status and
    timings in nanoseconds (None where not measured)."""
    point: dict          # {parameter: value}, enum parameters by their text
    status: str          # "ok", "invalid", "compile_failed", ... (CANDIDATE_STATUS)
    runs: int
    median_ns: Optional[float]
    p20_ns: Optional[float]
    p80_ns: Optional[float]
    min_ns: Optional[float]
    compile_ms: Optional[float]
    message: str


@dataclass(frozen=True)
class TuneResult:
    """What a tuning run gave: the best candidate (None when none was
    valid), every candidate, where it came from (tuned, or the cache), and the result
    as JSON and CSV text."""
    best: Optional[Candidate]
    candidates: List[Candidate]
    origin: str          # "tuned", "cache_hit", "cache_verified" (RESULT_ORIGIN)
    json: str
    csv: str


def _opt_time(v):
    return None if v < 0 else v


class CallbackTuner(_Owned):
    """Tunes a Python callable over a Space on a device of a Context.

    run(point: dict) does the work once; it may return its own
    measurement in nanoseconds (else the library times the call). A raised
    exception marks the candidate launch_failed. pre_run(point) runs
    before every run, untimed; validate(point) -> bool checks the first
    run of each candidate. Without workload_key nothing is cached."""

    _destroy = "gpuopt_tuner_destroy"
    _what = "tuner"

    def __init__(self, ctx: "Context", space: Space, run, *, pre_run=None, validate=None,
                 device: Optional["Device"] = None):
        self._handle = None
        self._lock = threading.Lock()
        self._space = space
        self._ctx = ctx
        self._handle = _out(_lib.gpuopt_tuner_create, ctx._h(),
                            device._handle if device is not None else None, space._handle)
        self._error = None

        def run_cb(point, _user, measured):
            try:
                ns = run(space._read(point))
                if ns is not None:
                    measured[0] = float(ns)
                return OK
            except Exception as e:  # noqa: BLE001 - reported as the candidate's failure
                self._error = e
                return ERR_LAUNCH

        def pre_cb(point, _user):
            try:
                pre_run(space._read(point))
            except Exception as e:  # noqa: BLE001
                self._error = e

        def validate_cb(point, _user):
            try:
                return 1 if validate(space._read(point)) else 0
            except Exception as e:  # noqa: BLE001
                self._error = e
                return 0

        # Kept alive as long as the tuner: the library calls them later.
        self._cbs = (_RUN_FN(run_cb), _PRE_RUN_FN(pre_cb) if pre_run else _PRE_RUN_FN(),
                     _VALIDATE_FN(validate_cb) if validate else _VALIDATE_FN())
        desc = _sized(_CallbackDesc)
        desc.run, desc.pre_run, desc.validate = self._cbs
        _lib.gpuopt_tuner_set_callback(self._handle, ctypes.byref(desc))

    def configure(self, *, strategy: str = "auto", max_evaluations: int = 0,
                  max_seconds: float = 0, max_failures: int = 0, seed: int = 0,
                  timing=None, timeout_s: Optional[float] = None,
                  workload_key: Optional[str] = None, cache: str = "use") -> "CallbackTuner":
        """timing: (warmup_ms, repeat_ms, min_runs, max_runs). Settings not
        named keep the library's defaults (timing, timeout_s) or take the
        defaults above; all are checked together, and a refused one changes
        nothing (GpuoptError naming the field)."""
        s = _fill(_lib.gpuopt_tuner_get_settings, self._handle, struct=_TunerSettings)
        s.strategy = _STRATEGIES[strategy]
        s.max_evaluations = max_evaluations
        s.max_seconds = max_seconds
        s.max_failures = max_failures
        s.seed = seed
        if timing is not None:
            s.warmup_ms, s.repeat_ms, s.min_runs, s.max_runs = timing
        if timeout_s is not None:
            s.timeout_s = timeout_s
        s.workload_key = workload_key.encode() if workload_key else None
        s.cache_mode = _CACHE_MODES[cache]
        _lib.gpuopt_tuner_set_settings(self._handle, ctypes.byref(s))
        return self

    def _candidate(self, c) -> Candidate:
        return Candidate(point=self._space._read(c.point),
                         status=CANDIDATE_STATUS.get(c.status, str(c.status)), runs=c.runs,
                         median_ns=_opt_time(c.median_ns), p20_ns=_opt_time(c.p20_ns),
                         p80_ns=_opt_time(c.p80_ns), min_ns=_opt_time(c.min_ns),
                         compile_ms=_opt_time(c.compile_ms), message=_text(c.message))

    def run(self) -> TuneResult:
        """Tunes (or answers from the cache). A run where no candidate was
        valid returns a result whose best is None."""
        self._error = None
        res = _out(_lib.gpuopt_tuner_run, self._handle)
        try:
            cands = [self._candidate(c) for c in _each(_lib.gpuopt_result_count,
                                                       _lib.gpuopt_result_at, res, _Candidate)]
            try:
                best = self._candidate(_fill(_lib.gpuopt_result_best, res, struct=_Candidate))
            except GpuoptError as e:
                if e.status != ERR_NOT_FOUND:
                    raise
                best = None
            origin = _out(_lib.gpuopt_result_get_origin, res, kind=ctypes.c_int32)
            return TuneResult(best=best, candidates=cands,
                              origin=RESULT_ORIGIN.get(origin, str(origin)),
                              json=_string(_lib.gpuopt_result_to_json, res),
                              csv=_string(_lib.gpuopt_result_to_csv, res))
        finally:
            _lib.gpuopt_result_destroy(res)

    def step(self):
        """Online tuning: runs the callable once with the next candidate (or
        the best, once found). Returns (point dict, done)."""
        point, done = _p(), ctypes.c_int32()
        _lib.gpuopt_tuner_step(self._handle, ctypes.byref(point), ctypes.byref(done))
        return self._space._read(point.value), bool(done.value)
