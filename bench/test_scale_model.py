#!/usr/bin/env python3
"""Invariants of bench/scale_model.py and cases computed by hand. Runs with `python3
bench/test_scale_model.py` (unittest) or under pytest; lit runs it (test/lit/run/scale-model.test).
"""
import io
import json
import os
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_model as sm  # noqa: E402

# round figures for the hand-computed cases
HAND = dict(tflops=694.0, gemm_fixed_us=20.0, nvlink_gbs=450.0, ib_gbs=50.0, hbm_gbs=4800.0,
            nvlink_latency_us=20.0, ib_latency_us=30.0)


def model(**kw):
    p = dict(HAND)
    p.update(kw)
    return sm.Model(**p)


class HandComputed(unittest.TestCase):
    # GEMM of 16384 rows: 2*16384*8192*16384 = 4.398046511104e12 FLOP / 694e12 = 6.337243 ms
    # (compute-bound: 2*(16384*16384 + 8192*16384 + 16384*8192) = 1.074e9 B / 4.8e12 = 0.224 ms),
    # + 0.020 ms fixed = 6.357243 ms. GEMM alone (32768 rows): 12.674486 + 0.020 = 12.694486 ms.
    # A peer's shard: 16384*16384*2 = 536870912 B / 450e9 = 1.193046 ms, + 0.020 = 1.213046 ms.
    def test_gemm(self):
        m = model()
        self.assertAlmostEqual(m.gemm(16384) * 1e3, 6.357243, places=5)
        self.assertAlmostEqual(m.gemm_alone() * 1e3, 12.694486, places=5)

    def test_two_gpus_two_streams(self):
        # step 0: own shard, GEMM 0..6.357243; step 1: the shard arrives at 1.213046, its GEMM
        # waits for GEMM 0 and ends at 12.714486 ms; efficiency 12.694486 / 12.714486
        m = model()
        self.assertAlmostEqual(m.pipeline(2, 2, 2) * 1e3, 12.714486, places=5)
        self.assertAlmostEqual(m.efficiency(2, 2, 2), 12.694486 / 12.714486, places=6)

    def test_two_gpus_one_stream(self):
        # one stream: the transfer of step 1 waits for GEMM 0 (6.357243), arrives at 7.570289,
        # GEMM 1 ends at 13.927532 ms
        m = model()
        self.assertAlmostEqual(m.pipeline(2, 2, 1) * 1e3, 13.927532, places=5)

    def test_transport_stream_one_worker_stream(self):
        # the exchange on its transport's stream (backend{kind=auto}): with one worker stream the
        # transfer of step 1 no longer waits for GEMM 0: it arrives at 1.213046, GEMM 1 runs
        # after GEMM 0 and ends at 12.714486 ms (as with two worker streams)
        m = model()
        self.assertAlmostEqual(m.pipeline(2, 2, 1, transport=True) * 1e3, 12.714486, places=5)
        self.assertAlmostEqual(m.pipeline(2, 2, 1, transport=False) * 1e3, 13.927532, places=5)

    def test_which_schedules_get_transport_streams(self):
        # what backend{kind=auto} emits: local-first across nodes in blocks smaller than a node
        m = model()
        self.assertTrue(m.transport_streams(16, 16, "local-first"))
        self.assertTrue(m.transport_streams(16, 32, "local-first"))
        self.assertTrue(m.transport_streams(32, 16, "local-first"))
        self.assertFalse(m.transport_streams(16, 16, "ring"))
        self.assertFalse(m.transport_streams(8, 8, "local-first"))       # one node: the ring
        self.assertFalse(m.transport_streams(128, 16, "local-first"))    # whole-node blocks
        # the default (None) is that form: local-first at d=16 with one worker stream is as
        # fast as with eight
        self.assertAlmostEqual(m.pipeline(16, 16, 1, "local-first"),
                               m.pipeline(16, 16, 8, "local-first"), places=12)
        self.assertGreater(m.pipeline(16, 16, 1, "local-first", transport=False),
                           m.pipeline(16, 16, 1, "local-first"))

    def test_gather_then_gemm_across_nodes(self):
        # d=16 on two 8-GPU nodes, one chunk: rank 0 receives 7 shards over NVLink (7*2048 rows
        # * 32768 B = 469762048 B / 450e9 = 1.043916 ms + 0.020) and 8 over InfiniBand
        # (536870912 B / 50e9 = 10.737418 ms + 0.030 = 10.767418 ms) at once, then the GEMM
        # alone (12.694486): 23.461904 ms
        m = model()
        self.assertAlmostEqual(m.pipeline(16, 1, 1) * 1e3, 23.461904, places=5)

    def test_memory_bound_chunk(self):
        # 32 rows: 2*32*8192*16384 = 8.59e9 FLOP / 694e12 = 0.012378 ms, but the GEMM reads
        # all of W: 2*(32*16384 + 8192*16384 + 32*8192) = 270008320 B / 4.8e12 = 0.056252 ms,
        # + 0.020 = 0.076252 ms (memory-bound)
        m = model()
        self.assertAlmostEqual(m.gemm(32) * 1e3, 0.076252, places=5)


class Invariants(unittest.TestCase):
    DS = (1, 2, 8, 16, 64, 256)

    def configs(self, d):
        for c in (1, 2, 4, 8, 16, 32, 64, 256):
            for s in (1, 2, 4, 8):
                for o in sm.ORDERS:
                    yield c, s, o

    def test_efficiency_at_most_one(self):
        m = model()
        seen = 0
        for d in self.DS:
            for c, s, o in self.configs(d):
                e = m.efficiency(d, c, s, o)
                if e is None:
                    continue
                seen += 1
                self.assertGreater(e, 0.0)
                self.assertLessEqual(e, 1.0 + 1e-12, (d, c, s, o))
        self.assertGreater(seen, 100)

    def test_one_gpu_one_chunk_is_the_gemm_alone(self):
        self.assertAlmostEqual(model().efficiency(1, 1, 1), 1.0, places=12)

    def test_more_streams_never_slower(self):
        m = model()
        for d in self.DS:
            for c in (2, 8, 16, 64):
                for o in sm.ORDERS:
                    prev = None
                    for s in (1, 2, 3, 4, 8):
                        t = m.pipeline(d, c, s, o)
                        if t is None:
                            break
                        if prev is not None:
                            self.assertLessEqual(t, prev + 1e-12, (d, c, s, o))
                        prev = t

    def test_faster_links_never_slower(self):
        for d, c in ((8, 8), (16, 16), (64, 32)):
            for key, lo, hi in (("ib_gbs", 25.0, 100.0), ("nvlink_gbs", 200.0, 900.0)):
                slow = model(**{key: lo}).pipeline(d, c, 4)
                fast = model(**{key: hi}).pipeline(d, c, 4)
                self.assertLessEqual(fast, slow + 1e-12, (d, c, key))
            for key in ("ib_latency_us", "nvlink_latency_us"):
                self.assertLessEqual(model(**{key: 0.0}).pipeline(d, c, 4),
                                     model(**{key: 100.0}).pipeline(d, c, 4) + 1e-12)

    def test_best_not_better_with_more_gpus(self):
        # the global shape is fixed: more GPUs only add communication per GPU (and more of it
        # across nodes), the GEMM work per GPU stays the same
        m = model()
        for order in sm.ORDERS:
            prev = None
            for d in (8, 16, 32, 64, 128, 256, 512, 1024):
                e = sm.best(m, d, order=order)[0]
                if prev is not None:
                    self.assertLessEqual(e, prev + 1e-9, (order, d))
                prev = e

    def test_best_at_least_every_listed_choice(self):
        m = model()
        for d in (8, 16, 64):
            e, c, s = sm.best(m, d)
            self.assertAlmostEqual(m.efficiency(d, c, s), e)
            self.assertGreaterEqual(e, m.efficiency(d, 1, 1) - 1e-12)   # gather-then-GEMM
            self.assertGreaterEqual(e, m.efficiency(d, d, 4) - 1e-12)   # today's lowering

    def test_one_node_orders_agree(self):
        m = model()
        for d in (2, 4, 8):
            self.assertAlmostEqual(m.pipeline(d, d, 4, "ring"), m.pipeline(d, d, 4, "local-first"))

    def test_split_rows_add_up(self):
        m = model()
        for d in (8, 16, 64):
            for pos in range(8):
                for o in sm.ORDERS:
                    tot = [0.0, 0.0, 0.0]
                    for i in range(d):
                        for j, v in enumerate(m._split(d, pos, i, i + 1, o)):
                            tot[j] += v
                    rows = m.m / d
                    self.assertAlmostEqual(tot[0], rows)                # own shard
                    self.assertAlmostEqual(tot[1], rows * (min(d, 8) - 1))   # node's others
                    self.assertAlmostEqual(tot[2], rows * (d - min(d, 8)))   # other nodes


class CommandLine(unittest.TestCase):
    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = sm.main(list(argv))
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def test_json(self):
        rc, out, _ = self.run_main("--json", "--ds", "8,16")
        self.assertEqual(rc, 0)
        j = json.loads(out)
        self.assertEqual(j["kind"], "prediction")
        self.assertEqual([r["d"] for r in j["predictions"]], [8, 16])
        self.assertEqual(j["inputs"]["measured_gemm"]["date"], "2026-12-02 16:24 UTC")
        for r in j["predictions"]:
            for o in sm.ORDERS:
                self.assertLessEqual(r[o]["efficiency"], 1.0)
        self.assertEqual([r["d"] for r in j["shared_gpu_comparison"]], [2, 4, 8])

    def test_bad_values(self):
        for argv in (("--ds", "8,x"), ("--ds", "0"), ("--ds", "12"), ("--ib-gbs", "0"),
                     ("--nvlink-latency-us", "-1"), ("--tflops", "-5")):
            rc, _, err = self.run_main(*argv)
            self.assertEqual(rc, 2, argv)
            self.assertIn("error", err)

    def test_missing_results(self):
        rc, _, err = self.run_main("--results", "/nonexistent-dir")
        self.assertEqual(rc, 1)
        self.assertIn("cannot read the measured inputs", err)


if __name__ == "__main__":
    unittest.main()
