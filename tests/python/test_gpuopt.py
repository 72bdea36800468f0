"""The ctypes binding (bindings/python/gpuopt) against the built library.

Run by CTest with Debian's /usr/bin/python3, GPUOPT_LIBRARY naming the
built libgpuopt.so, PYTHONPATH the binding, and GPUOPT_TEST_HEADER the
public headers the binding must mirror (separated by os.pathsep). Standard library only.
"""

import ctypes
import dataclasses
import enum
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import gpuopt

HEADER = os.environ.get("GPUOPT_TEST_HEADER", "")


def read_header():
    # GPUOPT_TEST_HEADER lists the public headers (gpuopt.h, tune.h),
    # separated by os.pathsep.
    text = ""
    for path in HEADER.split(os.pathsep):
        with open(path, encoding="utf-8") as f:
            text += f.read()
    # Comments hold example code ("gpuopt_device_select(ctx, ...)"): drop them.
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def header_functions(text):
    return set(re.findall(r"GPUOPT_API\b[^;{]*?\b(gpuopt_\w+)\s*\(", text))


def header_struct_fields(text, name):
    """[(field, array length or None)] of `typedef struct name {...} name;`."""
    m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), text, re.S)
    if not m:
        raise AssertionError(f"{name} not found in {HEADER}")
    fields = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        fm = re.search(r"(\w+)\s*(?:\[(\d+)\])?$", decl)
        fields.append((fm.group(1), int(fm.group(2)) if fm.group(2) else None))
    return fields


class Mirror(unittest.TestCase):
    """The module declares exactly what the header declares."""

    @unittest.skipUnless(HEADER, "GPUOPT_TEST_HEADER not set")
    def test_every_public_function_has_a_prototype(self):
        declared = header_functions(read_header())
        self.assertTrue(declared)
        self.assertEqual(declared, set(gpuopt._PROTOTYPES))

    @unittest.skipUnless(HEADER, "GPUOPT_TEST_HEADER not set")
    def test_struct_mirrors_have_the_headers_fields_in_order(self):
        text = read_header()
        for cname, mirror in (("gpuopt_options", gpuopt._Options),
                              ("gpuopt_backend_info", gpuopt._BackendInfo),
                              ("gpuopt_device_info", gpuopt._DeviceInfo),
                              ("gpuopt_knob", gpuopt._Knob),
                              ("gpuopt_workload", gpuopt._Workload),
                              ("gpuopt_profiler_options", gpuopt._ProfilerOptions),
                              ("gpuopt_memory_info", gpuopt._MemoryInfo),
                              ("gpuopt_memory_stats", gpuopt._MemoryStats),
                              ("gpuopt_memory_advice", gpuopt._MemoryAdvice)):
            with self.subTest(struct=cname):
                want = header_struct_fields(text, cname)
                got = []
                for fname, ftype in mirror._fields_:
                    length = getattr(ftype, "_length_", None)
                    got.append((fname, length))
                self.assertEqual(want, got)

    def test_struct_mirrors_have_the_librarys_sizes(self):
        lib = gpuopt._lib
        self.assertEqual(ctypes.sizeof(gpuopt._Options), lib.gpuopt_options_size())
        self.assertEqual(ctypes.sizeof(gpuopt._BackendInfo), lib.gpuopt_backend_info_size())
        self.assertEqual(ctypes.sizeof(gpuopt._DeviceInfo), lib.gpuopt_device_info_size())
        self.assertEqual(ctypes.sizeof(gpuopt._Knob), lib.gpuopt_knob_size())
        self.assertEqual(ctypes.sizeof(gpuopt._Workload), lib.gpuopt_workload_size())
        self.assertEqual(ctypes.sizeof(gpuopt._ProfilerOptions),
                         lib.gpuopt_profiler_options_size())
        self.assertEqual(ctypes.sizeof(gpuopt._MemoryInfo), lib.gpuopt_memory_info_size())
        self.assertEqual(ctypes.sizeof(gpuopt._MemoryStats), lib.gpuopt_memory_stats_size())
        self.assertEqual(ctypes.sizeof(gpuopt._MemoryAdvice), lib.gpuopt_memory_advice_size())

    @unittest.skipUnless(HEADER, "GPUOPT_TEST_HEADER not set")
    def test_versions_match_the_header(self):
        text = read_header()
        want = re.search(r'#define GPUOPT_VERSION_STRING "([^"]+)"', text).group(1)
        self.assertEqual(gpuopt.version(), want)
        api = int(re.search(r"#define GPUOPT_API_VERSION (0x[0-9a-fA-F]+)u", text).group(1), 16)
        self.assertEqual(gpuopt.API_VERSION, api)
        self.assertGreaterEqual(gpuopt.api_version(), gpuopt.API_VERSION)

    def test_generated_constants_name_every_status_as_the_library_does(self):
        # gpuopt._constants comes from the header's GPUOPT_STATUS_MAP
        # (tools/python_constants.py); the library expands the same list.
        self.assertEqual(len(gpuopt.STATUS), len(gpuopt.STATUS_TEXT))
        for value, word in gpuopt.STATUS.items():
            with self.subTest(status=value):
                self.assertEqual(gpuopt.status_name(value), "GPUOPT_" + word.upper())
                self.assertEqual(gpuopt.strerror(value), gpuopt.STATUS_TEXT[value])
        # Pinned forever.
        self.assertEqual((gpuopt.OK, gpuopt.ERR_NOT_FOUND, gpuopt.ERR_LAUNCH), (0, 103, 401))

    def test_the_binding_copies_no_status_number(self):
        # Statuses reach the binding only through gpuopt._constants.
        with open(gpuopt.__file__, encoding="utf-8") as f:
            source = f.read()
        for value in gpuopt.STATUS:
            if value:
                with self.subTest(status=value):
                    self.assertIsNone(re.search(r"(?<![\w.])%d(?![\w.])" % value, source))

    def test_status_names_and_descriptions(self):
        self.assertEqual(gpuopt.status_name(0), "GPUOPT_OK")
        self.assertEqual(gpuopt.status_name(303), "GPUOPT_ERR_DRIVER")
        self.assertEqual(gpuopt.status_name(-5), "GPUOPT_UNKNOWN_STATUS")
        self.assertEqual(gpuopt.strerror(-5), "unknown status")
        self.assertNotEqual(gpuopt.strerror(100), "unknown status")


class Loading(unittest.TestCase):
    def run_python(self, code, **env):
        full = dict(os.environ)
        full.update(env)
        return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                              text=True, timeout=60)

    def test_gpuopt_library_names_the_library_loaded(self):
        self.assertEqual(gpuopt.library_path(), os.environ["GPUOPT_LIBRARY"])

    def test_missing_library_is_an_import_error_naming_gpuopt_library(self):
        r = self.run_python("import gpuopt", GPUOPT_LIBRARY="/nonexistent/libgpuopt.so.0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("GPUOPT_LIBRARY", r.stderr)
        self.assertIn("/nonexistent/libgpuopt.so.0", r.stderr)

    def test_a_library_without_the_api_is_refused(self):
        # libc loads fine but has none of the functions: the module says so
        # at import rather than failing later at a call.
        r = self.run_python("import gpuopt", GPUOPT_LIBRARY="libc.so.6")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has no gpuopt_", r.stderr)


class Devices(unittest.TestCase):
    def setUp(self):
        self.ctx = gpuopt.Context(backends="cpu", config_path="")

    def tearDown(self):
        self.ctx.close()

    def test_context_manager_closes_the_context(self):
        with gpuopt.Context(backends="cpu") as ctx:
            self.assertFalse(ctx.closed)
            ctx.devices()
        self.assertTrue(ctx.closed)
        with self.assertRaises(ValueError):
            ctx.devices()
        ctx.close()  # closing twice is harmless

    def test_cpu_backend_is_listed_and_available(self):
        by_name = {b.name: b for b in self.ctx.backends()}
        self.assertIn("cpu", by_name)
        self.assertEqual(by_name["cpu"].status, "available")
        self.assertGreaterEqual(by_name["cpu"].device_count, 1)
        for b in by_name.values():
            self.assertIn(b.status, {"not probed", "available", "unavailable", "error",
                                     "disabled"})

    def test_devices_include_the_cpu_with_its_facts(self):
        devs = self.ctx.devices()
        cpus = [d for d in devs if d.backend == "cpu"]
        self.assertEqual(len(cpus), 1, devs)
        cpu = cpus[0]
        self.assertEqual(cpu.id, "cpu:0")
        self.assertEqual(cpu.type, gpuopt.DEVICE_TYPE_CPU)
        self.assertFalse(cpu.is_gpu)
        self.assertTrue(cpu.name)
        self.assertGreaterEqual(cpu.compute_units, 1)
        self.assertGreater(cpu.memory_bytes, 0)
        self.assertEqual(cpu.routes[0], "cpu")
        self.assertIsNone(cpu.compute_capability)
        self.assertEqual(set(cpu.features), {"fp64", "fp16", "bf16", "tf32", "fp8", "int8",
                                             "matrix_units"})

    def test_select_cpu_gives_the_cpu_device(self):
        self.assertEqual(self.ctx.select("cpu").id, "cpu:0")
        self.assertEqual(self.ctx.select("cpu:0").id, "cpu:0")
        self.assertEqual(self.ctx.select().id, "cpu:0")

    def test_devices_json_has_the_documented_keys(self):
        doc = json.loads(self.ctx.devices_json())
        self.assertEqual(doc["gpuopt_version"], gpuopt.version())
        for b in doc["backends"]:
            self.assertLessEqual({"name", "status", "reason", "library", "driver_version",
                                  "init_ms"}, set(b))
        dev = [d for d in doc["devices"] if d["id"] == "cpu:0"][0]
        self.assertLessEqual({"id", "backend", "index", "vendor", "name", "arch",
                              "compute_units", "simd_width", "clock_mhz", "memory_bytes",
                              "pci_bus_id", "uuid", "features", "selected"}, set(dev))
        self.assertLessEqual({"family", "name", "compute_capability"}, set(dev["arch"]))
        self.assertLessEqual({"fp64", "fp16", "bf16", "tf32", "fp8", "int8", "matrix_units"},
                             set(dev["features"]))

    def test_doctor_json_has_findings_and_every_problem_a_fix(self):
        doc = json.loads(self.ctx.doctor_json())
        self.assertIsInstance(doc["accelerators_usable"], int)
        self.assertTrue(doc["findings"])
        for f in doc["findings"]:
            self.assertIn(f["status"], ("ok", "info", "warning", "problem"))
            if f["status"] == "problem":
                self.assertTrue(f["fix"], f)

    def test_malformed_policy_raises_invalid_argument_with_the_policy(self):
        with self.assertRaises(gpuopt.GpuoptError) as cm:
            self.ctx.select("warp:drive:9")
        e = cm.exception
        self.assertEqual(e.name, "GPUOPT_ERR_INVALID_ARGUMENT")
        self.assertEqual(e.status, 100)
        self.assertEqual(e.function, "gpuopt_device_select")
        self.assertIn("warp:drive:9", e.detail)
        self.assertIn("GPUOPT_ERR_INVALID_ARGUMENT", str(e))

    def test_policy_matching_nothing_raises_no_device(self):
        with self.assertRaises(gpuopt.GpuoptError) as cm:
            self.ctx.select("cpu:7")
        self.assertEqual(cm.exception.name, "GPUOPT_ERR_NO_DEVICE")
        self.assertTrue(cm.exception.detail)

    def test_bad_option_value_raises_config_error_naming_the_field(self):
        with self.assertRaises(gpuopt.GpuoptError) as cm:
            gpuopt.Context(level="7")
        self.assertEqual(cm.exception.name, "GPUOPT_ERR_CONFIG")
        self.assertIn("level", cm.exception.detail)
        self.assertIn("7", cm.exception.detail)

    def test_malformed_config_file_is_logged_through_the_callback(self):
        seen = []
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"level": 1,,}')
        try:
            with gpuopt.Context(config_path=f.name, log=lambda lvl, msg: seen.append((lvl, msg))):
                pass
        finally:
            os.unlink(f.name)
        self.assertTrue(any(f.name in msg and lvl <= gpuopt.LOG_WARN for lvl, msg in seen), seen)


class Plans(unittest.TestCase):
    def setUp(self):
        self.ctx = gpuopt.Context(backends="cpu", config_path="")

    def tearDown(self):
        self.ctx.close()

    def test_level_1_plan_of_the_cpu(self):
        plan = self.ctx.plan(self.ctx.select("cpu"), level=1)
        self.assertEqual(plan.level_requested, 1)
        self.assertEqual(plan.level_applied, 1)
        self.assertEqual(plan.device.id, "cpu:0")
        self.assertTrue(plan.knobs)
        for k in plan.knobs:
            self.assertIn(k.type, {"bool", "int", "bytes", "string"})
            self.assertIn(k.tier, (0, 1))
            self.assertIn(k.source, {"default", "detected"})
            self.assertTrue(k.reason, k)
            self.assertTrue(k.text, k)
            if k.type in ("int", "bytes"):
                self.assertEqual(str(k.value), k.text)
        self.assertTrue(any(k.tier == 1 for k in plan.knobs))
        self.assertEqual(plan.knob(plan.knobs[0].name), plan.knobs[0])
        self.assertIn(plan.knobs[0].name, plan)
        with self.assertRaises(KeyError):
            plan.knob("no.such.knob")

    def test_plan_json_and_env_agree_with_the_knobs(self):
        plan = self.ctx.plan(level=1)
        doc = json.loads(plan.json)
        self.assertEqual(doc["level_requested"], 1)
        self.assertEqual(doc["level_applied"], plan.level_applied)
        self.assertEqual([k["name"] for k in doc["knobs"]], [k.name for k in plan.knobs])
        self.assertEqual(len(doc["warnings"]), len(plan.warnings))
        exported = [k for k in plan.knobs if k.env]
        lines = [ln for ln in plan.env.splitlines() if ln]
        self.assertEqual(len(lines), len(exported))
        for k, line in zip(exported, lines):
            self.assertEqual(line, ': "${%s=%s}"; export %s' % (k.env, k.text, k.env))

    def test_level_0_plan_has_only_tier_0_knobs(self):
        plan = self.ctx.plan(level=0)
        self.assertEqual(plan.level_applied, 0)
        self.assertTrue(all(k.tier == 0 for k in plan.knobs))

    def test_level_out_of_range_raises(self):
        for level in (3, -2):
            with self.subTest(level=level), self.assertRaises(gpuopt.GpuoptError) as cm:
                self.ctx.plan(level=level)
            self.assertEqual(cm.exception.name, "GPUOPT_ERR_OUT_OF_RANGE")

    def test_knob_override_applies_to_later_plans_and_can_be_removed(self):
        first = self.ctx.plan(level=1)
        k = [k for k in first.knobs if k.type == "int"][0]
        self.ctx.set_knob(k.name, k.value + 1)
        over = self.ctx.plan(level=1).knob(k.name)
        self.assertEqual(over.value, k.value + 1)
        self.assertEqual(over.source, "api")
        self.ctx.set_knob(k.name, None)
        self.assertEqual(self.ctx.plan(level=1).knob(k.name), k)

    def test_workload_plan_is_made_and_checked(self):
        small = gpuopt.Workload(model_bytes=4096, item_bytes=64, reduced_precision=False)
        plan = self.ctx.plan(level=2, workload=small)
        self.assertEqual(plan.level_requested, 2)
        # Under 1 MiB of device footprint tier 2 is skipped, with a warning.
        self.assertLess(plan.level_applied, 2)
        self.assertTrue(any("workload" in w for w in plan.warnings), plan.warnings)
        with self.assertRaises(ValueError):
            self.ctx.plan(workload=gpuopt.Workload(objective="soon"))

    def test_apply_env_sets_unset_variables_and_keeps_the_users(self):
        plan = self.ctx.plan(level=1)
        envs = [k for k in plan.knobs if k.env]
        if len(envs) < 2:
            self.skipTest("the plan exports fewer than two variables")
        kept, fresh = envs[0], envs[1]
        saved = {k.env: os.environ.get(k.env) for k in envs}
        try:
            for k in envs:
                os.environ.pop(k.env, None)
            os.environ[kept.env] = "user-value"
            applied = self.ctx.plan(level=1, apply=gpuopt.APPLY_ENV)
            self.assertEqual(os.environ[kept.env], "user-value")
            self.assertEqual(os.environ[fresh.env], fresh.text)
            self.assertIn(kept.env, applied.apply_report)
            self.assertIn(fresh.env, applied.apply_report)
            out = subprocess.run([sys.executable, "-c",
                                  f"import os; print(os.environ['{fresh.env}'])"],
                                 capture_output=True, text=True, check=True).stdout
            self.assertEqual(out.strip(), fresh.text)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def test_apply_with_unknown_flags_raises(self):
        with self.assertRaises(gpuopt.GpuoptError) as cm:
            self.ctx.plan(apply=0x80)
        self.assertEqual(cm.exception.name, "GPUOPT_ERR_INVALID_ARGUMENT")

    def test_cpu_plan_has_no_opencl_build_options(self):
        self.assertEqual(self.ctx.plan(self.ctx.select("cpu")).build_options, "")

    def test_unknown_knob_override_raises_not_found(self):
        with self.assertRaises(gpuopt.GpuoptError) as cm:
            self.ctx.set_knob("no.such.knob", "1")
        self.assertEqual(cm.exception.name, "GPUOPT_ERR_NOT_FOUND")
        self.assertIn("no.such.knob", cm.exception.detail)

    def test_device_of_another_context_is_refused(self):
        with gpuopt.Context(backends="cpu") as other:
            dev = other.select("cpu")
            with self.assertRaises(ValueError):
                self.ctx.plan(dev)


class PythonFaces(unittest.TestCase):
    """What a Python user meets: plain dataclasses, enums, dicts, docstrings
    and type hints."""

    def setUp(self):
        self.ctx = gpuopt.Context(backends="cpu", config_path="")

    def tearDown(self):
        self.ctx.close()

    def test_asdict_works_on_every_dataclass_and_gives_json(self):
        plan = self.ctx.plan(level=1)
        for obj in [self.ctx.backends()[0], self.ctx.select(), plan, plan.knobs[0],
                    gpuopt.Workload(model_bytes=1 << 30)]:
            with self.subTest(type=type(obj).__name__):
                d = dataclasses.asdict(obj)
                json.dumps(d)
        self.assertEqual(dataclasses.asdict(plan)["device"]["id"], "cpu:0")

    def test_a_device_still_goes_back_to_its_context_after_asdict(self):
        dev = self.ctx.select("cpu")
        dataclasses.asdict(dev)
        self.assertEqual(self.ctx.plan(dev, level=0).device.id, "cpu:0")

    def test_c_enums_are_int_enums_and_the_constants_their_members(self):
        dev = self.ctx.select("cpu")
        self.assertIs(dev.type, gpuopt.DeviceType.CPU)
        self.assertEqual(dev.type, gpuopt.DEVICE_TYPE_CPU)
        self.assertIsInstance(gpuopt.DeviceType.GPU, enum.IntEnum)
        self.assertIs(gpuopt.ERR_NOT_FOUND, gpuopt.Status.ERR_NOT_FOUND)
        self.assertTrue(issubclass(gpuopt.Feature, enum.IntFlag))
        self.assertEqual(gpuopt.Feature.FP64 | gpuopt.Feature.TF32, 0x09)
        for status in gpuopt.Status:
            with self.subTest(status=status):
                self.assertEqual(gpuopt.status_name(status), "GPUOPT_" + status.name)
        for cls in (gpuopt.LogLevel, gpuopt.BackendStatus, gpuopt.KnobType, gpuopt.KnobSource,
                    gpuopt.Objective, gpuopt.Tristate, gpuopt.Strategy, gpuopt.CacheMode):
            self.assertTrue(issubclass(cls, enum.IntEnum), cls)

    def test_json_answers_are_dicts_and_their_text_a_separate_call(self):
        self.assertEqual(self.ctx.describe()["selection"]["device"], "cpu:0")
        self.assertEqual(json.loads(self.ctx.devices_json())["gpuopt_version"], gpuopt.version())
        self.assertIsInstance(self.ctx.doctor()["findings"], list)
        self.assertIsInstance(self.ctx.doctor_json(), str)
        with tempfile.TemporaryDirectory() as d:
            with gpuopt.Context(backends="cpu", cache_dir=d) as ctx:
                self.assertIsInstance(ctx.cache_list()["files"], list)
                self.assertIsInstance(ctx.cache_list_json(), str)
                self.assertIn("ok", ctx.cache_verify())
                self.assertIsInstance(ctx.cache_verify_json(), str)
        plan = self.ctx.plan(level=1)
        self.assertEqual(plan.to_dict()["device"], "cpu:0")
        self.assertEqual(plan.get("no.such.knob", 5), 5)

    def public(self, module):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield name, obj

    def test_every_public_name_has_a_docstring(self):
        import gpuopt.torch  # noqa: F401 - its names too
        for module in (gpuopt, gpuopt.torch):
            for name, obj in self.public(module):
                with self.subTest(name=f"{module.__name__}.{name}"):
                    self.assertTrue((obj.__doc__ or "").strip())
                    if inspect.isclass(obj) and not issubclass(obj, enum.Enum):
                        for mname, member in vars(obj).items():
                            if mname.startswith("_") or not (inspect.isfunction(member) or
                                                              isinstance(member, property)):
                                continue
                            self.assertTrue((member.__doc__ or "").strip(), f"{name}.{mname}")

    def test_the_package_is_typed(self):
        here = os.path.dirname(gpuopt.__file__)
        self.assertTrue(os.path.exists(os.path.join(here, "py.typed")))
        # Every public function and method outside the tuner (whose API is
        # experimental, gpuopt/tune.h) says its types.
        tuner = {"Space", "CallbackTuner", "Candidate", "TuneResult"}
        for name, obj in self.public(gpuopt):
            if name in tuner:
                continue
            members = [obj] if inspect.isfunction(obj) else [
                m for n, m in vars(obj).items()
                if inspect.isfunction(m) and (not n.startswith("_") or n == "__init__")]
            for fn in members:
                with self.subTest(fn=fn.__qualname__):
                    sig = inspect.signature(fn)
                    self.assertIsNot(sig.return_annotation, inspect.Signature.empty)
                    for p in list(sig.parameters.values())[1 if "." in fn.__qualname__ else 0:]:
                        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                            self.assertIsNot(p.annotation, inspect.Parameter.empty, p.name)


class Memory(unittest.TestCase):
    """Live memory and the memory manager (docs/memory.md) on the CPU."""

    def setUp(self):
        self.ctx = gpuopt.Context(backends="cpu", config_path="")

    def tearDown(self):
        self.ctx.close()

    def test_device_memory_says_its_source(self):
        m = self.ctx.device_memory()
        self.assertEqual(m.source, "host")
        self.assertIn("/proc/meminfo", m.source_text)
        self.assertGreater(m.free_bytes, 0)
        self.assertLessEqual(m.free_bytes, m.total_bytes)
        self.assertGreaterEqual(m.age_s, 0)

    def test_allocations_are_registered_for_a_with_block(self):
        with self.ctx.memory() as mem:
            with mem.allocation("weights", 1 << 20, place="device"):
                with mem.allocation("staging", 4096, place="pinned"):
                    stats = mem.stats()
                    self.assertEqual(stats["registered"], {"device": 1 << 20, "host": 0,
                                                           "pinned": 4096})
                    self.assertEqual(sorted(a["name"] for a in stats["allocations"]),
                                     ["staging", "weights"])
                    self.assertEqual(stats["live"]["source"], "host")
            stats = mem.stats()
            self.assertEqual(stats["registered"]["device"], 0)
            self.assertEqual(stats["high_water"]["device"], 1 << 20)
            self.assertEqual(stats["threshold_percent"], 90)
            self.assertIn("the plan's headroom rule", stats["budget_source"])

    def test_a_bad_place_or_a_second_name_is_refused(self):
        with self.ctx.memory() as mem:
            with self.assertRaises(ValueError):
                mem.register("x", 1, place="gpu")
            mem.register("x", 1)
            with self.assertRaises(gpuopt.GpuoptError) as cm:
                mem.register("x", 1)
            self.assertEqual(cm.exception.name, "GPUOPT_ERR_INVALID_ARGUMENT")
            with self.assertRaises(gpuopt.GpuoptError):
                mem.release("y")

    def test_check_and_recommend_use_the_plan_s_rules(self):
        with self.ctx.memory(workload=gpuopt.Workload(item_bytes=1 << 20)) as mem:
            self.assertIsNone(mem.check())
            budget = mem.stats()["budget_bytes"]
            mem.register("batch", budget, place="device")
            warning = mem.check()
            self.assertIn("at or above the 90% threshold", warning)
            self.assertIn("use batches of at most", warning)
            advice = mem.recommend(item_bytes=1 << 20)
            self.assertGreater(advice.max_batch, 0)
            self.assertEqual(advice.quantize_bits, 0)
            self.assertIn("usable", advice.reason)

    def test_memory_managers_close_with_their_context(self):
        ctx = gpuopt.Context(backends="cpu", config_path="")
        mem = ctx.memory()
        ctx.close()
        with self.assertRaises(ValueError):
            mem.stats()

    def test_a_step_describes_latency_work(self):
        w = gpuopt.Workload(objective="latency", item_bytes=48 << 20, items_per_step=10,
                            launches_per_step=40, step_time_s=0.1, h2d_bytes_per_step=1 << 16,
                            d2h_bytes_per_step=1 << 20)
        plan = self.ctx.plan(workload=w)
        self.assertEqual(plan.knob("warmup.runs").value, 1)
        self.assertIn("a step holds 10 items x 48 MiB", plan.knob("prealloc.bytes").reason)


if __name__ == "__main__":
    unittest.main(verbosity=2)
