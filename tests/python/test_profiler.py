"""gpuopt.Profiler: `with prof.section(...)`, the decorator, the summary as a
dict, and the exports a person opens: the Chrome trace (JSON that Perfetto
reads) and the SVG picture, parsed here with the standard library's
xml.etree to prove it is well-formed SVG with every section drawn and
named. Debian's python3 and the standard library only."""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

import gpuopt

SVG = "{http://www.w3.org/2000/svg}"


def context():
    return gpuopt.Context(backends="cpu", ignore_config_file=True)


class Sections(unittest.TestCase):
    def setUp(self):
        self.ctx = context()
        self.prof = self.ctx.profiler(trace_path="")

    def tearDown(self):
        self.prof.close()
        self.ctx.close()

    def rows(self):
        return {"/".join(r["path"]): r for r in self.prof.summary()["sections"]}

    def test_with_section_nests_counts_and_shows_in_the_summary(self):
        with self.prof.section("load_model"):
            pass
        for batch in range(3):
            with self.prof.section("inference", items=8, bytes=1024):
                with self.prof.section("matmul"):
                    pass
        rows = self.rows()
        self.assertEqual(rows["load_model"]["count"], 1)
        self.assertEqual(rows["inference"]["count"], 3)
        self.assertEqual(rows["inference"]["items"], 24)
        self.assertEqual(rows["inference"]["bytes"], 3 * 1024)
        self.assertEqual(rows["inference/matmul"]["depth"], 1)
        self.assertEqual(rows["inference"]["clock"], "host")
        for key in ("count", "total_ns", "mean_ns", "p50_ns", "p95_ns", "max_ns",
                    "share_of_parent", "items_per_s", "bytes_per_s"):
            self.assertIn(key, rows["inference"])
        self.assertIn("inference", self.prof.table())

    def test_the_decorator_times_every_call(self):
        @self.prof.profile("preprocess", items=lambda xs: len(xs))
        def preprocess(xs):
            return [x * 2 for x in xs]

        @self.prof.profile
        def postprocess(x):
            return x

        self.assertEqual(preprocess([1, 2, 3]), [2, 4, 6])
        preprocess([1])
        postprocess(1)
        rows = self.rows()
        self.assertEqual(rows["preprocess"]["count"], 2)
        self.assertEqual(rows["preprocess"]["items"], 4)
        name = [k for k in rows if k.endswith("postprocess")]
        self.assertEqual(len(name), 1)
        self.assertEqual(postprocess.__name__, "postprocess")

    def test_a_section_ends_when_its_block_raises(self):
        with self.assertRaises(KeyError):
            with self.prof.section("failing"):
                raise KeyError("inside")
        # Nothing is left open: the next end has nothing to end.
        with self.assertRaises(gpuopt.GpuoptError) as e:
            self.prof.end()
        self.assertEqual(e.exception.status, gpuopt.ERR_NESTING)
        self.assertEqual(self.rows()["failing"]["count"], 1)

    def test_ending_the_wrong_section_raises_nesting_and_changes_nothing(self):
        self.prof.begin("outer")
        self.prof.begin("inner")
        with self.assertRaises(gpuopt.GpuoptError) as e:
            self.prof.end("outer")
        self.assertEqual(e.exception.status, gpuopt.ERR_NESTING)
        self.assertIn('end "inner" first', e.exception.detail)
        self.prof.end("inner")
        self.prof.end("outer")
        self.assertEqual(self.prof.summary()["nesting_errors"], 1)

    def test_malformed_names_and_a_closed_profiler_are_refused(self):
        with self.assertRaises(gpuopt.GpuoptError) as e:
            self.prof.begin("")
        self.assertEqual(e.exception.status, gpuopt.ERR_INVALID_ARGUMENT)
        with self.assertRaises(gpuopt.GpuoptError) as e:
            self.prof.begin("x" * 256)
        self.assertEqual(e.exception.status, gpuopt.ERR_OUT_OF_RANGE)
        with self.assertRaises(gpuopt.GpuoptError):
            self.prof.report(99)
        self.prof.close()
        with self.assertRaises(ValueError):
            self.prof.begin("late")

    def test_threads_record_on_their_own_stacks(self):
        def work():
            for _ in range(20):
                with self.prof.section("step"):
                    with self.prof.section("inner"):
                        pass
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        summary = self.prof.summary()
        self.assertEqual(summary["threads"], 4)
        rows = self.rows()
        self.assertEqual(rows["step"]["count"], 80)
        self.assertEqual(rows["step/inner"]["count"], 80)

    def test_a_disabled_profiler_records_nothing(self):
        with self.ctx.profiler(trace_path="", enabled=False) as off:
            with off.section("ignored"):
                pass
            self.assertEqual(off.summary()["sections"], [])
            off.set_enabled(True)
            with off.section("kept"):
                pass
            self.assertEqual([r["name"] for r in off.summary()["sections"]], ["kept"])

    def test_a_stream_object_is_read_through_cuda_stream(self):
        class FakeTorchStream:
            cuda_stream = 0x1234

        dev = self.ctx.select("cpu")
        with self.ctx.profiler(dev, stream=FakeTorchStream(), trace_path="") as p:
            clock = p.summary()["clock"]
        self.assertIsNone(clock["device"])
        self.assertIn("cannot time work on a caller's stream", clock["device_note"])
        with self.assertRaises(TypeError):
            self.ctx.profiler(dev, stream="not a handle")


class Exports(unittest.TestCase):
    NAMES = ["load_model", "preprocess", "inference", "matmul <&> \"quoted\"", "postprocess",
             "caf\u00e9"]

    # The picture leaves out boxes narrower than half a pixel of the whole
    # run. Empty sections (a microsecond) beside a thread's start on a busy
    # machine (milliseconds) fell under it now and then; 5 ms of work each
    # stays drawn unless one gap between them passes 8 seconds.
    @staticmethod
    def work():
        time.sleep(0.005)

    def setUp(self):
        self.ctx = context()
        self.prof = self.ctx.profiler(trace_path="")
        with self.prof.section(self.NAMES[0]):
            self.work()
        for _ in range(3):
            with self.prof.section(self.NAMES[1]):
                self.work()
            with self.prof.section(self.NAMES[2], items=4):
                with self.prof.section(self.NAMES[3]):
                    self.work()
            with self.prof.section(self.NAMES[4], bytes=4096):
                self.work()
        worker = threading.Thread(target=self.on_a_thread)
        worker.start()
        worker.join()
        self.tmp = tempfile.TemporaryDirectory()

    def on_a_thread(self):
        with self.prof.section(self.NAMES[5]):
            self.work()

    def tearDown(self):
        self.prof.close()
        self.ctx.close()
        self.tmp.cleanup()

    def test_the_trace_is_chrome_trace_json_with_nested_slices_per_thread(self):
        path = os.path.join(self.tmp.name, "trace.json")
        self.prof.write_trace(path)
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
        events = trace["traceEvents"]
        slices = [e for e in events if e["ph"] == "X"]
        self.assertEqual(sorted({e["name"] for e in slices}), sorted(self.NAMES))
        tids = {e["tid"] for e in slices}
        self.assertEqual(len(tids), 2)
        named = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertEqual(named, tids)
        # On each track, slices nest: each starts after and ends before the
        # open slice it starts in (Perfetto's rule for complete events).
        for tid in tids:
            stack = []
            for e in [e for e in slices if e["tid"] == tid]:
                while stack and e["ts"] >= stack[-1]:
                    stack.pop()
                if stack:
                    self.assertLessEqual(e["ts"] + e["dur"], stack[-1] + 1e-3)
                stack.append(e["ts"] + e["dur"])
        counters = [e for e in events if e["ph"] == "C"]
        self.assertTrue(any("items/s" in c["args"] for c in counters))
        self.assertTrue(any("bytes/s" in c["args"] for c in counters))
        self.assertEqual(trace["otherData"]["host_clock"], "CLOCK_MONOTONIC")

    def test_the_svg_is_valid_and_draws_every_section_with_its_name(self):
        path = os.path.join(self.tmp.name, "profile.svg")
        self.prof.write_svg(path)
        root = ET.parse(path).getroot()  # raises on malformed XML
        self.assertEqual(root.tag, SVG + "svg")
        self.assertEqual(root.get("version"), "1.1")
        width, height = float(root.get("width")), float(root.get("height"))
        self.assertGreater(width, 0)
        self.assertGreater(height, 0)
        texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
        titles = ["".join(t.itertext()) for t in root.iter(SVG + "title")]
        for name in self.NAMES:
            self.assertIn(name, texts, f"{name!r} is not written in the picture")
            self.assertTrue(any(t.startswith(name + ":") for t in titles),
                            f"{name!r} has no box")
        rects = list(root.iter(SVG + "rect"))
        self.assertGreater(len(rects), len(self.NAMES))
        for r in rects:
            if r.get("x") is not None:
                self.assertGreaterEqual(float(r.get("x")), 0)
                self.assertLessEqual(float(r.get("x")), width)
        # Self-contained: no script, no reference to anything outside.
        for el in root.iter():
            self.assertNotIn(el.tag, (SVG + "script", SVG + "image", SVG + "use"))
            for attr in el.attrib:
                self.assertFalse(attr.endswith("href"), el.tag)
        with open(path, encoding="utf-8") as f:
            self.assertEqual(self.prof.svg(), f.read())

    def test_the_trace_path_is_written_when_the_profiler_closes(self):
        path = os.path.join(self.tmp.name, "on-close.json")
        with self.ctx.profiler(trace_path=path) as p:
            with p.section("phase"):
                pass
            self.assertFalse(os.path.exists(path))
        with open(path, encoding="utf-8") as f:
            self.assertIn("phase", {e["name"] for e in json.load(f)["traceEvents"]})

    def test_a_profiler_closes_with_its_context_and_writes_its_trace_first(self):
        ctx = context()
        path = os.path.join(self.tmp.name, "with-context.json")
        prof = ctx.profiler(trace_path=path)
        with prof.section("phase"):
            pass
        ctx.close()
        self.assertTrue(prof.closed)
        with self.assertRaises(ValueError):
            prof.begin("late")
        prof.close()  # closing again is harmless
        with open(path, encoding="utf-8") as f:
            self.assertIn("phase", {e["name"] for e in json.load(f)["traceEvents"]})


CHILD = r"""
import gpuopt
ctx = gpuopt.Context(backends="cpu", ignore_config_file=True)
prof = ctx.profiler()            # takes GPUOPT_PROFILE
with prof.section("child-phase"):
    pass
KEEP = (ctx, prof)               # never closed: written when Python exits
"""


class Environment(unittest.TestCase):
    def test_gpuopt_profile_makes_a_program_write_its_trace_without_code_for_it(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, GPUOPT_PROFILE=os.path.join(d, "run-%p.json"))
            done = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=d,
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            files = [f for f in os.listdir(d) if f.startswith("run-") and f.endswith(".json")]
            self.assertEqual(len(files), 1, os.listdir(d))
            self.assertRegex(files[0], r"^run-\d+\.json$")
            with open(os.path.join(d, files[0]), encoding="utf-8") as f:
                names = {e["name"] for e in json.load(f)["traceEvents"]}
            self.assertIn("child-phase", names)


if __name__ == "__main__":
    unittest.main()
