"""gpuopt.torch: plans applied to PyTorch through its own API.

Real PyTorch first (Debian's python3-torch, a CPU build, 1.13; make check
installs it): each scenario runs in a fresh interpreter, since torch sizes
its inter-op pool once per process, and reads every setting back with
torch's own getters before and after. Then stand-ins for a CUDA build, a
ROCm build, PyTorch 2.9's fp32_precision API and a torch too old to have
any of it, for what a CPU build cannot show: what a GPU plan sets, what is
kept, what comes too late, and that nothing crashes.

Run by CTest like test_gpuopt.py (GPUOPT_LIBRARY, PYTHONPATH), with the CUDA
test double in GPUOPT_TEST_FAKE_CUDA (libcuda path and device file, joined
by os.pathsep) for a real plan of a CUDA device. Standard library only.
"""

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import types
import unittest
import warnings

import gpuopt
import gpuopt.torch as gt

HAVE_TORCH = importlib.util.find_spec("torch") is not None

FAKE_CUDA = os.environ.get("GPUOPT_TEST_FAKE_CUDA", "")


def run_python(code, **env):
    """Runs code in a fresh interpreter; returns the JSON it prints last."""
    full = dict(os.environ)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    r = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


PRELUDE = r'''
import dataclasses, json, os, warnings
import torch
import gpuopt, gpuopt.torch as gt
def state():
    return {"threads": torch.get_num_threads(), "interop": torch.get_num_interop_threads(),
            "precision": torch.get_float32_matmul_precision(),
            "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_tf32": torch.backends.cudnn.allow_tf32,
            "benchmark": torch.backends.cudnn.benchmark}
def kinds(report):
    return {"set": {s.what: s.after for s in report.set},
            "kept": {s.what: s.before for s in report.kept},
            "na": {s.what: s.note for s in report.not_applicable}}
'''


@unittest.skipUnless(HAVE_TORCH, "no torch (Debian: apt-get install python3-torch)")
class RealTorch(unittest.TestCase):
    """Debian's torch (CPU build): the CPU knobs apply, read back by torch."""

    def test_cpu_plan_sets_threads_and_precision_through_torch(self):
        out = run_python(PRELUDE + r'''
before = state()
threads = before["threads"] % 2 + 1           # differs from torch's choice
with gpuopt.Context(backends="cpu") as ctx:
    ctx.set_knob("threads", threads)
    ctx.set_knob("cpu.fpmath_mode", "BF16")
    plan = ctx.plan(level=1)
report = gt.apply(plan)
print(json.dumps({"before": before, "after": state(), "threads": threads, **kinds(report),
                  "device": str(gt.device(plan)), "omp": os.environ.get("OMP_NUM_THREADS"),
                  "asdict": json.loads(json.dumps(dataclasses.asdict(report), default=str))["plan_device"]}))
''', OMP_NUM_THREADS=None, MKL_NUM_THREADS=None)
        n = out["threads"]
        self.assertNotEqual(out["before"]["threads"], n)
        self.assertEqual(out["after"]["threads"], n)
        self.assertEqual(out["after"]["interop"], n)
        self.assertEqual(out["set"]["torch.set_num_threads"], n)
        self.assertEqual(out["set"]["torch.set_num_interop_threads"], n)
        # cpu.fpmath_mode BF16 is torch's "medium" (bf16 allowed in fp32 matmuls).
        self.assertEqual(out["before"]["precision"], "highest")
        self.assertEqual(out["after"]["precision"], "medium")
        self.assertEqual(out["set"]["torch.set_float32_matmul_precision"], "medium")
        # The plan's environment, set where it was unset.
        self.assertEqual(out["omp"], str(n))
        self.assertEqual(out["set"]["OMP_NUM_THREADS"], str(n))
        self.assertEqual(out["kept"], {})
        self.assertEqual(out["device"], "cpu")
        self.assertEqual(out["asdict"], "cpu:0")
        # A CPU plan has no CUDA knob: cuDNN's flags are not touched (the
        # matmul's allow_tf32 reads the precision just set: one state in torch).
        self.assertEqual(out["after"]["cudnn_tf32"], out["before"]["cudnn_tf32"])
        self.assertEqual(out["after"]["benchmark"], out["before"]["benchmark"])

    def test_what_the_user_set_is_kept_unless_overridden(self):
        code = PRELUDE + r'''
torch.set_float32_matmul_precision("high")      # the user's, before apply()
with gpuopt.Context(backends="cpu") as ctx:
    ctx.set_knob("threads", 2)
    plan = ctx.plan(level=1)                    # cpu.fpmath_mode STRICT: "highest"
report = gt.apply(plan, override=OVERRIDE)
print(json.dumps({"after": state(), **kinds(report), "places": os.environ["OMP_PLACES"]}))
'''
        env = dict(OMP_NUM_THREADS="1", OMP_PLACES="sockets", MKL_NUM_THREADS=None)
        kept = run_python(code.replace("OVERRIDE", "False"), **env)
        self.assertEqual(kept["after"]["precision"], "high")
        self.assertEqual(kept["kept"]["torch.set_float32_matmul_precision"], "high")
        self.assertEqual(kept["after"]["threads"], 1)            # OMP_NUM_THREADS=1 chose it
        self.assertIn("torch.set_num_threads", kept["kept"])
        self.assertEqual(kept["places"], "sockets")
        self.assertEqual(kept["kept"]["OMP_PLACES"], "sockets")
        forced = run_python(code.replace("OVERRIDE", "True"), **env)
        self.assertEqual(forced["after"]["precision"], "highest")
        self.assertEqual(forced["after"]["threads"], 2)
        self.assertEqual(forced["places"], "cores")
        self.assertEqual(forced["kept"], {})

    def test_the_default_plan_is_for_a_device_this_torch_drives(self):
        # A CPU build drives the CPU only, whatever GPU the machine (here
        # the CUDA double) has.
        env = {}
        if FAKE_CUDA:
            lib, devices = FAKE_CUDA.split(os.pathsep)
            env = dict(GPUOPT_CUDA_LIBRARY=lib, GPUOPT_FAKE_CUDA_DEVICES=devices)
        out = run_python(PRELUDE + r'''
plan = gt.default_plan()
print(json.dumps({"device": plan.device.id, "torch": str(gt.device())}))
''', **env)
        self.assertEqual(out, {"device": "cpu:0", "torch": "cpu"})

    @unittest.skipUnless(FAKE_CUDA, "GPUOPT_TEST_FAKE_CUDA not set")
    def test_a_cuda_plan_on_a_cpu_build_applies_nothing_and_says_why(self):
        lib, devices = FAKE_CUDA.split(os.pathsep)
        out = run_python(PRELUDE + r'''
before = state()
with gpuopt.Context(backends="cuda") as ctx:
    plan = ctx.plan(level=1)
with warnings.catch_warnings():
    warnings.simplefilter("error")             # no warning escapes: the report says it
    report = gt.apply(plan)
try:
    gt.device(plan)
    err = ""
except ValueError as e:
    err = str(e)
print(json.dumps({"before": before, "after": state(), **kinds(report), "plan": plan.device.id,
                  "knobs": [k.name for k in plan.knobs], "device_error": err,
                  "alloc": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
                  "warnings": report.warnings}))
''', GPUOPT_CUDA_LIBRARY=lib, GPUOPT_FAKE_CUDA_DEVICES=devices, PYTORCH_CUDA_ALLOC_CONF=None)
        self.assertEqual(out["plan"], "cuda:0")
        self.assertIn("cuda.tf32", out["knobs"])
        self.assertEqual(out["set"], {})
        self.assertEqual(out["kept"], {})
        self.assertTrue(out["na"])
        for note in out["na"].values():
            self.assertIn("CPU-only build", note)
        self.assertIn("cannot use cuda devices", out["device_error"])
        self.assertEqual(out["before"], out["after"])
        self.assertIsNone(out["alloc"])
        self.assertTrue(out["warnings"])


# ---- stand-ins for the builds this machine does not have ---------------------


class _Flags(types.SimpleNamespace):
    pass


def fake_torch(version="2.4.0", cuda="12.4", hip=None, initialised=False, new_api=False,
               bare=False):
    """A torch-shaped namespace: settings with PyTorch's defaults, getters,
    and a record of calls. bare: none of the settings (an old torch)."""
    t = types.SimpleNamespace(__version__=version, calls=[])
    t.version = types.SimpleNamespace(cuda=cuda, hip=hip)
    t.float32, t.float16, t.bfloat16 = "torch.float32", "torch.float16", "torch.bfloat16"
    t.device = lambda kind, index=None: f"{kind}:{index}" if index is not None else kind
    state = {"precision": "highest", "threads": 4, "interop": 4}
    t.cuda = types.SimpleNamespace(is_initialized=lambda: initialised)
    if bare:
        t.backends = types.SimpleNamespace()
    elif new_api:
        t.backends = types.SimpleNamespace(
            cuda=types.SimpleNamespace(matmul=_Flags(fp32_precision="none")),
            cudnn=_Flags(benchmark=False, conv=_Flags(fp32_precision="none")))
    else:
        t.backends = types.SimpleNamespace(
            cuda=types.SimpleNamespace(matmul=_Flags(allow_tf32=False)),
            cudnn=_Flags(allow_tf32=True, benchmark=False))

    def set_precision(p):
        t.calls.append(("set_float32_matmul_precision", p))
        state["precision"] = p
    t.set_float32_matmul_precision = set_precision
    t.get_float32_matmul_precision = lambda: state["precision"]

    def fraction(f, index):
        t.calls.append(("set_per_process_memory_fraction", f, index))
    t.cuda.set_per_process_memory_fraction = fraction
    t.get_num_threads = lambda: state["threads"]
    t.set_num_threads = lambda n: state.__setitem__("threads", n)
    t.get_num_interop_threads = lambda: state["interop"]
    t.set_num_interop_threads = lambda n: state.__setitem__("interop", n)
    t.autocast = lambda kind, enabled=True, **kw: ("autocast", kind, enabled, kw)
    return t


def make_plan(backend="cuda", index=1, memory=80 << 30, **knobs):
    """A Plan for a stand-in device, its knobs given as name=(value, env)."""
    with gpuopt.Context(backends="cpu") as ctx:
        cpu = ctx.select("cpu")
    dev = dataclasses.replace(cpu, id=f"{backend}:{index}", backend=backend, index=index,
                              routes=[backend], memory_bytes=memory)
    ks = []
    for name, (value, env) in knobs.items():
        name = name.replace("__", ".")
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "string"
        text = str(value).lower() if isinstance(value, bool) else str(value)
        ks.append(gpuopt.Knob(name=name, type=kind, value=value, text=text, tier=1,
                              source="detected", env=env, reason="test"))
    return gpuopt.Plan(level_requested=1, level_applied=1, device=dev, knobs=ks, warnings=[])


class StandIns(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("PYTORCH_CUDA_ALLOC_CONF",
                                                       "CUDA_MODULE_LOADING")}
        for k in self.saved:
            os.environ.pop(k, None)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def gpu_plan(self, tf32=True, **extra):
        return make_plan(cuda__tf32=(tf32, None), cuda__cudnn_benchmark=(True, None),
                         cuda__autocast_dtype=("bfloat16", None),
                         cuda__alloc_conf=("expandable_segments:True", "PYTORCH_CUDA_ALLOC_CONF"),
                         cuda__module_loading=("EAGER", "CUDA_MODULE_LOADING"), **extra)

    def test_a_cuda_plan_sets_tf32_benchmark_and_the_environment(self):
        t = fake_torch()
        report = gt.apply(self.gpu_plan(), torch=t)
        self.assertTrue(t.backends.cuda.matmul.allow_tf32)
        self.assertTrue(t.backends.cudnn.allow_tf32)
        self.assertTrue(t.backends.cudnn.benchmark)
        self.assertEqual(t.get_float32_matmul_precision(), "high")
        self.assertEqual(os.environ["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True")
        self.assertEqual(os.environ["CUDA_MODULE_LOADING"], "EAGER")
        self.assertEqual(report.autocast_dtype, "torch.bfloat16")
        self.assertEqual(report.autocast(torch=t),
                         ("autocast", "cuda", True, {"dtype": "torch.bfloat16"}))
        self.assertEqual(report.device, "cuda:1")
        self.assertEqual(gt.device(self.gpu_plan(), torch=t), "cuda:1")
        self.assertEqual(report.kept, [])
        # No memory budget in the plan: said, not guessed.
        self.assertIn("memory.budget_bytes", " ".join(s.note for s in report.not_applicable))
        json.dumps(dataclasses.asdict(report))

    def test_tf32_off_turns_cudnns_default_off(self):
        t = fake_torch()
        gt.apply(self.gpu_plan(tf32=False), torch=t)
        self.assertFalse(t.backends.cudnn.allow_tf32)
        self.assertEqual(t.get_float32_matmul_precision(), "highest")

    def test_settings_the_user_changed_are_kept(self):
        t = fake_torch()
        t.backends.cudnn.allow_tf32 = False          # the user's, against PyTorch's default
        os.environ["CUDA_MODULE_LOADING"] = "LAZY"
        report = gt.apply(self.gpu_plan(), torch=t)
        self.assertFalse(t.backends.cudnn.allow_tf32)
        self.assertEqual(os.environ["CUDA_MODULE_LOADING"], "LAZY")
        self.assertEqual({s.what for s in report.kept},
                         {"torch.backends.cudnn.allow_tf32", "CUDA_MODULE_LOADING"})
        gt.apply(self.gpu_plan(), torch=t, override=True)
        self.assertTrue(t.backends.cudnn.allow_tf32)
        self.assertEqual(os.environ["CUDA_MODULE_LOADING"], "EAGER")

    def test_after_cuda_started_the_environment_is_too_late_and_a_warning_says_so(self):
        t = fake_torch(initialised=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            report = gt.apply(self.gpu_plan(), torch=t)
        self.assertNotIn("PYTORCH_CUDA_ALLOC_CONF", os.environ)
        self.assertTrue(any("too late" in str(w.message) for w in seen), seen)
        late = {s.what for s in report.not_applicable if "too late" in s.note}
        self.assertEqual(late, {"PYTORCH_CUDA_ALLOC_CONF", "CUDA_MODULE_LOADING"})
        self.assertTrue(t.backends.cudnn.benchmark)   # the API settings still apply

    def test_a_torch_with_only_fp32_precision_gets_that_api_alone(self):
        t = fake_torch(version="3.0.0", new_api=True)
        del t.set_float32_matmul_precision, t.get_float32_matmul_precision
        gt.apply(self.gpu_plan(), torch=t)
        self.assertEqual(t.backends.cuda.matmul.fp32_precision, "tf32")
        self.assertEqual(t.backends.cudnn.conv.fp32_precision, "tf32")

    def test_with_both_tf32_apis_the_legacy_setters_which_write_both_are_used(self):
        # PyTorch 2.9-2.11: allow_tf32 writes the fp32_precision state too,
        # while setting only fp32_precision makes the legacy getters raise.
        t = fake_torch(version="2.11.0")
        t.backends.cuda.matmul.fp32_precision = "none"
        gt.apply(self.gpu_plan(), torch=t)
        self.assertTrue(t.backends.cuda.matmul.allow_tf32)
        self.assertEqual(t.backends.cuda.matmul.fp32_precision, "none")

    def test_a_getter_torch_refuses_is_reported_not_raised(self):
        t = fake_torch(version="2.11.0")

        def refuse():
            raise RuntimeError("you have used mix of the legacy and new APIs")
        t.get_float32_matmul_precision = refuse
        report = gt.apply(self.gpu_plan(), torch=t)
        notes = {s.what: s.note for s in report.not_applicable}
        self.assertIn("mix of the legacy and new APIs",
                      notes["torch.set_float32_matmul_precision"])
        self.assertTrue(t.backends.cuda.matmul.allow_tf32)

    def test_an_old_torch_reports_what_it_lacks_and_never_crashes(self):
        t = fake_torch(version="1.6.0", bare=True)
        del t.set_float32_matmul_precision, t.set_num_interop_threads
        report = gt.apply(self.gpu_plan(), torch=t)
        notes = " ".join(s.note for s in report.not_applicable)
        self.assertIn("torch 1.6.0 has no torch.backends.cuda", notes)
        self.assertIn("has no torch.backends.cudnn", notes)
        cpu = make_plan(backend="cpu", index=0, threads=(3, None))
        report = gt.apply(cpu, torch=t)
        self.assertIn("torch.set_num_interop_threads",
                      {s.what for s in report.not_applicable})
        self.assertEqual(t.get_num_threads(), 3)

    def test_a_memory_budget_becomes_the_process_memory_fraction(self):
        t = fake_torch()
        plan = self.gpu_plan(memory__budget_bytes=(20 << 30, None))
        report = gt.apply(plan, torch=t)
        self.assertIn(("set_per_process_memory_fraction", 0.25, 1), t.calls)
        self.assertIn("torch.cuda.set_per_process_memory_fraction", {s.what for s in report.set})


    def test_a_memory_budget_in_percent_becomes_the_same_fraction(self):
        t = fake_torch()
        plan = self.gpu_plan(memory__budget_percent=(25, None))
        report = gt.apply(plan, torch=t)
        self.assertIn(("set_per_process_memory_fraction", 0.25, 1), t.calls)
        self.assertIn("memory.budget_percent", {s.knob for s in report.set})
    def test_rocm_devices_are_cuda_devices_to_pytorch(self):
        t = fake_torch(cuda=None, hip="6.2")
        plan = make_plan(backend="rocm", index=0, rocm__tf32=(True, None),
                         rocm__miopen_benchmark=(True, None))
        report = gt.apply(plan, torch=t)
        self.assertEqual(gt.device(plan, torch=t), "cuda:0")
        self.assertTrue(t.backends.cuda.matmul.allow_tf32)
        self.assertTrue(t.backends.cudnn.benchmark)
        # MIOpen has no TF32 convolutions: cuDNN's flag is not ROCm's.
        self.assertNotIn("torch.backends.cudnn.allow_tf32", {s.what for s in report.set})
        # The plan's HIP_VISIBLE_DEVICES, once set, leaves torch one device: 0.
        os.environ.pop("HIP_VISIBLE_DEVICES", None)
        try:
            plan = make_plan(backend="rocm", index=1,
                             rocm__visible_devices=("GPU-0123456789abcdef", "HIP_VISIBLE_DEVICES"))
            self.assertEqual(gt.apply(plan, torch=t).device, "cuda:0")
            self.assertEqual(gt.device(plan, torch=t), "cuda:0")
        finally:
            os.environ.pop("HIP_VISIBLE_DEVICES", None)
        # A CUDA build cannot drive a ROCm device, nor a ROCm build a CUDA one.
        with self.assertRaises(ValueError):
            gt.device(plan, torch=fake_torch())

    @unittest.skipUnless(FAKE_CUDA, "GPUOPT_TEST_FAKE_CUDA not set")
    def test_variables_the_driver_reads_at_start_are_too_late_once_gpuopt_started_it(self):
        # gpuopt finding the GPU starts the driver (cuInit) in this process:
        # CUDA_MODULE_LOADING is read then (measured on an H200), while the
        # allocator's configuration waits for torch. The CUDA double answers
        # CUDA_ERROR_NOT_INITIALIZED before cuInit, as the driver does.
        lib, devices = FAKE_CUDA.split(os.pathsep)
        here = os.path.dirname(os.path.abspath(__file__))
        out = run_python(r'''
import ctypes, json, sys, warnings
sys.path.insert(0, HERE)
import gpuopt, gpuopt.torch as gt
from test_torch import fake_torch
states = [gt._driver_started("cuda")]
ctypes.CDLL(LIB)                               # loaded, not started
states.append(gt._driver_started("cuda"))
with gpuopt.Context(backends="cuda") as ctx:   # gpuopt starts it
    ctx.set_knob("cuda.module_loading", "EAGER")
    plan = ctx.plan(level=1)
states.append(gt._driver_started("cuda"))
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    report = gt.apply(plan, torch=fake_torch())
print(json.dumps({"states": states,
                  "na": {s.what: s.note for s in report.not_applicable},
                  "set": {s.what: s.note for s in report.set},
                  "warned": [str(w.message) for w in seen]}))
'''.replace("HERE", repr(here)).replace("LIB", repr(lib)),
            GPUOPT_CUDA_LIBRARY=lib, GPUOPT_FAKE_CUDA_DEVICES=devices,
            CUDA_MODULE_LOADING=None, PYTORCH_CUDA_ALLOC_CONF=None)
        self.assertEqual(out["states"], [False, False, True])
        self.assertIn("the GPU driver of this process has started",
                      out["na"]["CUDA_MODULE_LOADING"])
        self.assertIn("PYTORCH_CUDA_ALLOC_CONF", out["set"])
        self.assertTrue(any("CUDA_MODULE_LOADING" in w for w in out["warned"]))

    def test_every_public_name_has_a_docstring(self):
        for name in gt.__all__:
            with self.subTest(name=name):
                self.assertTrue((getattr(gt, name).__doc__ or "").strip())
        for cls in (gt.Report, gt.Setting):
            for name, member in vars(cls).items():
                if callable(member) and not name.startswith("_"):
                    self.assertTrue((member.__doc__ or "").strip(), f"{cls.__name__}.{name}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
