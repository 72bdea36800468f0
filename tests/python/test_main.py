"""python3 -m gpuopt devices|plan|doctor mirrors the gpuopt command: the
same output for the same options (timings aside), the same exit status and
the same key words for every usage error.

Run by CTest like test_gpuopt.py, with GPUOPT_TEST_CLI naming the built
gpuopt command. Standard library only.
"""

import os
import re
import subprocess
import sys
import unittest

CLI = os.environ.get("GPUOPT_TEST_CLI", "")


def run(argv, **env):
    full = dict(os.environ, GPUOPT_BACKEND="cpu")
    full.update(env)
    return subprocess.run(argv, env=full, capture_output=True, text=True, timeout=120)


def both(args, **env):
    return run([CLI] + args, **env), run([sys.executable, "-m", "gpuopt"] + args, **env)


def untimed(text):
    """The devices table without the probe times, which differ run to run."""
    return re.sub(r" \([0-9.]+ ms\)", "", text)


@unittest.skipUnless(CLI, "GPUOPT_TEST_CLI not set")
class SameAsTheCommand(unittest.TestCase):
    def test_the_same_output_for_the_same_options(self):
        for args in (["plan"], ["plan", "--json"], ["plan", "-e"], ["plan", "-l", "0"],
                     ["plan", "--precision-sensitive", "--latency"],
                     ["plan", "--reduced-precision", "--fixed-shapes", "--quantized"],
                     ["plan", "--memory-bound", "-j"],
                     ["devices", "-l"], ["devices"], ["devices", "-b", "cpu"], ["doctor"],
                     ["doctor", "-jv"]):
            with self.subTest(args=args):
                c, p = both(args)
                self.assertEqual(p.returncode, c.returncode, p.stderr)
                self.assertEqual(untimed(p.stdout), untimed(c.stdout))

    def test_a_workload_reaches_the_plan_either_way(self):
        # The batch size follows free memory, which moves between two runs:
        # the same knobs, not the same numbers.
        import json
        c, p = both(["plan", "--model-bytes=1GiB", "--item-bytes", "1MiB", "--json"])
        names = [[k["name"] for k in json.loads(r.stdout)["knobs"]] for r in (c, p)]
        self.assertEqual(names[0], names[1])
        self.assertIn("batch.max_size", names[1])

    def test_a_step_of_latency_work_reaches_the_plan_either_way(self):
        import json
        args = ["plan", "--latency", "--item-bytes=48MiB", "--items-per-step", "10",
                "--launches-per-step=40", "--step-time", "100ms", "--h2d-bytes", "64KiB",
                "--d2h-bytes=1MiB", "--json"]
        c, p = both(args)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [[k["name"] for k in json.loads(r.stdout)["knobs"]] for r in (c, p)]
        self.assertEqual(names[0], names[1])
        self.assertIn("warmup.runs", names[1])

    def test_devices_json_is_the_librarys_either_way(self):
        import json
        c, p = both(["devices", "--json"])
        cd, pd = json.loads(c.stdout), json.loads(p.stdout)
        for d in (cd, pd):
            for b in d["backends"]:
                b.pop("init_ms")
            for dev in d["devices"]:
                dev.pop("memory_free_bytes", None)
        self.assertEqual(pd, cd)

    def test_the_same_status_and_words_for_every_usage_error(self):
        cases = [
            (["plan", "--level", "7"], {}, "--level 7: accepted 0"),
            (["plan", "--levl", "1"], {}, "did you mean '--level'?"),
            (["plan", "--device", "nowhere"], {}, "--device nowhere: "),
            (["plan", "--device", "cpu:3"], {}, "no device matches 'cpu:3'"),
            (["plan"], {"GPUOPT_DEVICE": "nowhere"}, "GPUOPT_DEVICE=nowhere: "),
            (["plan", "--json", "--env"], {}, "exclusive"),
            (["plan", "--model-bytes", "lots"], {}, "--model-bytes lots: accepted a size"),
            (["plan", "--precision-sensitive", "--reduced-precision"], {}, "contradict"),
            (["plan", "--memory-bound", "--compute-bound"], {}, "contradict"),
            (["plan", "--step-time", "2h"], {}, "--step-time 2h: accepted a time up to an hour"),
            (["plan", "--step-time=0"], {}, "--step-time 0: accepted a time up to an hour"),
            (["plan", "--launches-per-step", "-4"], {}, "--launches-per-step -4: accepted a whole"),
            (["plan", "--items-per-step", "many"], {}, "--items-per-step many: accepted a whole"),
            (["plan", "--d2h-bytes", "lots"], {}, "--d2h-bytes lots: accepted a size"),
            (["plan", "true"], {}, "'true' is a command to run"),
            (["devices", "--backend", "metal"], {}, "--backend metal: not understood"),
            (["devices", "--json", "--list"], {}, "exclusive"),
            (["doctor", "--vrebose"], {}, "did you mean '--verbose'?"),
            (["devcies"], {}, "did you mean 'devices'?"),
        ]
        for args, env, words in cases:
            with self.subTest(args=args, env=env):
                c, p = both(args, **env)
                self.assertIn(c.returncode, (1, 2), c.stderr)
                self.assertEqual(p.returncode, c.returncode, (c.stderr, p.stderr))
                self.assertIn(words, c.stderr)
                self.assertIn(words, p.stderr)
                self.assertNotIn("gpuopt_options", p.stderr)
                self.assertNotIn("Traceback", p.stderr)

    def test_doctor_leaves_a_bad_gpuopt_device_unread_either_way(self):
        c, p = both(["doctor", "-j"], GPUOPT_DEVICE="nowhere")
        self.assertEqual(p.returncode, c.returncode, p.stderr)
        for r in (c, p):
            self.assertNotIn("GPUOPT_DEVICE", r.stderr)

    def test_apply_env_runs_the_command_keeping_the_users_variables(self):
        script = 'echo "$OMP_NUM_THREADS $OMP_PLACES $*"'
        c, p = both(["plan", "--apply-env", "--", "sh", "-c", script, "sh", "--json"],
                    OMP_PLACES="sockets")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, c.stdout)
        self.assertIn("sockets --json", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
