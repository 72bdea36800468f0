"""Selection through the binding on the CUDA and HIP test doubles: select()
alone and devices() then select() choose the same device, and a plan for a
workload says why its device won.

Run by CTest with GPUOPT_CUDA_LIBRARY / GPUOPT_HIP_LIBRARY naming the
doubles and GPUOPT_FAKE_*_DEVICES an RTX 4090, an H100 and an MI300X
(tests/python/CMakeLists.txt). Standard library only.
"""

import json
import unittest

import gpuopt


def fresh(**kw):
    return gpuopt.Context(log_level="off", **kw)


class SelectionDoesNotDependOnWhatWasListedFirst(unittest.TestCase):
    def test_select_alone_and_after_devices_agree(self):
        with fresh() as alone, fresh() as listed:
            a = alone.select()
            all_devices = listed.devices()
            b = listed.select()
        self.assertGreaterEqual(len(all_devices), 3)
        self.assertEqual(a.id, b.id)
        # The MI300X has the highest fp32 peak of the three.
        self.assertEqual(a.id, "rocm:0")

    def test_the_same_holds_within_one_backend_and_for_gpu(self):
        for backends, policy, want in (("cuda", None, "cuda:0"), (None, "gpu", "rocm:0")):
            with fresh(backends=backends) as alone, fresh(backends=backends) as listed:
                a = alone.select(policy)
                listed.devices()
                b = listed.select(policy)
            self.assertEqual((a.id, b.id), (want, want))


class WorkloadAwarePlans(unittest.TestCase):
    def plan(self, workload, list_first=False):
        with fresh(backends="cuda") as ctx:
            if list_first:
                ctx.devices_json()
            p = ctx.plan(level=0, workload=workload)
        return p.device.id, json.loads(p.json)["selection"]["reason"]

    def test_reduced_precision_picks_the_h100_over_the_rtx_4090(self):
        for list_first in (False, True):
            dev, reason = self.plan(gpuopt.Workload(reduced_precision=True), list_first)
            self.assertEqual(dev, "cuda:1")
            self.assertIn("bf16 1070.5 TFLOP/s against bf16 165.2 TFLOP/s", reason)

    def test_memory_bound_ranks_by_bandwidth(self):
        dev, reason = self.plan(gpuopt.Workload(bound="memory"))
        self.assertEqual(dev, "cuda:1")
        self.assertIn("3352 GB/s against 1008 GB/s", reason)

    def test_without_a_workload_fp32_decides(self):
        dev, reason = self.plan(None)
        self.assertEqual(dev, "cuda:0")
        self.assertIn("(no workload was described)", reason)

    def test_a_bound_outside_its_words_is_refused(self):
        with self.assertRaises(ValueError):
            self.plan(gpuopt.Workload(bound="sideways"))


if __name__ == "__main__":
    unittest.main()
