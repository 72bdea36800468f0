"""The binding's tuning wrapper (gpuopt.Space, gpuopt.CallbackTuner) on the
CPU backend: a Python callable tuned, validated, cached, stepped online.
Run like test_gpuopt.py (GPUOPT_LIBRARY, PYTHONPATH, GPUOPT_TEST_HEADER).
"""

import ctypes
import json
import os
import re
import tempfile
import unittest

import gpuopt

HEADER = os.environ.get("GPUOPT_TEST_HEADER", "")


class Mirror(unittest.TestCase):
    MIRRORS = (("gpuopt_candidate", "_Candidate", "gpuopt_candidate_size"),
               ("gpuopt_kernel_desc", "_KernelDesc", "gpuopt_kernel_desc_size"),
               ("gpuopt_buffer_desc", "_BufferDesc", "gpuopt_buffer_desc_size"),
               ("gpuopt_scalar_desc", "_ScalarDesc", "gpuopt_scalar_desc_size"),
               ("gpuopt_reference_desc", "_ReferenceDesc", "gpuopt_reference_desc_size"),
               ("gpuopt_callback_desc", "_CallbackDesc", "gpuopt_callback_desc_size"),
               ("gpuopt_tuner_settings", "_TunerSettings", "gpuopt_tuner_settings_size"))

    @unittest.skipUnless(HEADER, "GPUOPT_TEST_HEADER not set")
    def test_tuner_struct_mirrors_have_the_headers_fields(self):
        text = ""
        for path in HEADER.split(os.pathsep):
            with open(path, encoding="utf-8") as f:
                text += re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
        for cname, mirror, _ in self.MIRRORS:
            with self.subTest(struct=cname):
                body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (cname, cname), text,
                                 re.S).group(1)
                want = [re.search(r"(\w+)\s*(?:\[\d+\])?\s*$", " ".join(d.split())).group(1)
                        for d in body.split(";") if d.strip()]
                self.assertEqual(want, [name for name, _ in getattr(gpuopt, mirror)._fields_])

    def test_tuner_struct_mirrors_have_the_librarys_sizes(self):
        for cname, mirror, size_fn in self.MIRRORS:
            with self.subTest(struct=cname):
                self.assertEqual(ctypes.sizeof(getattr(gpuopt, mirror)),
                                 getattr(gpuopt._lib, size_fn)())


class Tuning(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ctx = gpuopt.Context(backends="cpu", cache_dir=self.dir.name, config_path="")
        self.space = (gpuopt.Space().add_int("X", [1, 2, 3, 4]).add_enum("MODE", ["a", "b"])
                      .add_constraint("X != 3"))

    def tearDown(self):
        self.space.close()
        self.ctx.close()
        self.dir.cleanup()

    @staticmethod
    def cost(c):
        return 1000.0 * c["X"] + (500.0 if c["MODE"] == "b" else 0.0)

    def test_space_counts_legal_configurations(self):
        self.assertEqual(self.space.count(), (8, 6))

    def test_a_callable_is_tuned_checked_and_cached(self):
        seen = []

        def run(c):
            seen.append(c)
            return self.cost(c)

        with gpuopt.CallbackTuner(self.ctx, self.space, run,
                                  validate=lambda c: c["X"] != 1) as t:
            t.configure(timing=(0.01, 0.05, 3, 5), workload_key="python-test")
            r = t.run()
            self.assertEqual(r.origin, "tuned")
            self.assertEqual(r.best.point, {"X": 2, "MODE": "a"})
            self.assertEqual(r.best.median_ns, 2000.0)
            self.assertEqual(len(r.candidates), 6)
            self.assertEqual({c.status for c in r.candidates if c.point["X"] == 1},
                             {"wrong_result"})
            self.assertNotIn(3, {c["X"] for c in seen})
            self.assertEqual(json.loads(r.json)["seed"], "0")
            self.assertTrue(r.csv.startswith("index,X,MODE,status,"))
            before = len(seen)
            again = t.run()
            self.assertEqual(again.origin, "cache_hit")
            self.assertEqual(again.best.point, {"X": 2, "MODE": "a"})
            self.assertEqual(len(seen), before)  # a hit runs nothing

    def test_an_exception_in_run_is_a_launch_failure(self):
        def run(c):
            if c["MODE"] == "b":
                raise RuntimeError("mode b is broken")
            return self.cost(c)

        with gpuopt.CallbackTuner(self.ctx, self.space, run) as t:
            r = t.configure(timing=(0, 0.01, 1, 2), cache="off").run()
            self.assertEqual({c.status for c in r.candidates if c.point["MODE"] == "b"},
                             {"launch_failed"})
            self.assertEqual(r.best.point["MODE"], "a")

    def test_no_valid_candidate_gives_a_result_without_best(self):
        with gpuopt.CallbackTuner(self.ctx, self.space, self.cost, validate=lambda c: False) as t:
            r = t.configure(timing=(0, 0.01, 1, 2), cache="off").run()
            self.assertIsNone(r.best)
            self.assertEqual(len(r.candidates), 6)
            self.assertEqual({c.status for c in r.candidates}, {"wrong_result"})
            self.assertEqual(json.loads(r.json)["best"], -1)

    def test_step_runs_candidates_then_the_best(self):
        with gpuopt.CallbackTuner(self.ctx, self.space, self.cost) as t:
            t.configure(cache="off")
            steps = [t.step() for _ in range(8)]
            self.assertEqual([done for _, done in steps[:6]], [False] * 6)
            self.assertEqual(steps[6], ({"X": 1, "MODE": "a"}, True))
            self.assertEqual(steps[7], ({"X": 1, "MODE": "a"}, True))

    def test_bad_settings_raise_with_the_librarys_words(self):
        with gpuopt.CallbackTuner(self.ctx, self.space, self.cost) as t:
            with self.assertRaises(gpuopt.GpuoptError) as e:
                t.configure(timing=(-1, 1, 1, 1))
            self.assertEqual(e.exception.name, "GPUOPT_ERR_OUT_OF_RANGE")
            self.assertIn("warmup_ms", e.exception.detail)
            with self.assertRaises(gpuopt.GpuoptError) as e:
                t.configure(timing=(0, 1, 5, 4))
            self.assertIn("max_runs", e.exception.detail)
            with self.assertRaises(KeyError):
                t.configure(strategy="sideways")


if __name__ == "__main__":
    unittest.main()
