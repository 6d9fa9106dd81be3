"""Tests of the hir Python package (run by scripts/ci-install against an installed hir and by
the ctest entry python.pytest against the build tree; docs/api.md)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import hir

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "test", "corpus")
INPUTS = os.path.join(ROOT, "test", "lit", "Inputs")

MATMUL = """%HostIrContainer { (T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}), T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0})) -> (T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})) :
  T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})
     = matmul(T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}),
              T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0}))
} // %HostIrContainer
"""

# an extent spelled as a bare symbol: its value comes from the input's shape
COPY_SYMBOLIC = """%HostIrContainer { (T0_g_float[iS0{i0}, iS1{4}]) -> (T1_g_float[iS2{i0}, iS3{4}]) :
  T1_g_float[iS2{i0}, iS3{4}] = ALLOCATE(buffer=T1_g_float[iS2{i0}, iS3{4}], mem_type=global, size=( i0 * 4 ), zero_init=false, resets_to_zero=false)
  T1_g_float[iS2{i0}, iS3{4}]
     = Set( T0_g_float[iS0{i0}, iS1{4}], cache_op=Streaming )
} // %HostIrContainer
"""


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_version():
    assert hir.version() == "0.1.0"
    # the package's version is libhir's (python/hir/_version.py; CMakeLists.txt project())
    assert hir.__version__ == hir.version()
    with open(os.path.join(ROOT, "include", "hir", "hir.h"), encoding="utf-8") as f:
        h = f.read()
    parts = [re.search(r"#define HIRC_VERSION_%s (\d+)" % k, h).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    assert hir.__version__ == ".".join(parts)


def test_py_typed_is_shipped():
    # PEP 561: type checkers read the package's annotations
    assert os.path.exists(os.path.join(os.path.dirname(hir.__file__), "py.typed"))


def _c_enum(text, name):
    """{C name: value} of `typedef enum NAME { ... }` in hir.h (values count up from the last
    explicit one, as C does)."""
    body = re.search(r"typedef enum %s \{(.*?)\}" % name, text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out, nxt = {}, 0
    for item in (x.strip() for x in body.split(",")):
        if not item:
            continue
        key, _, val = item.partition("=")
        nxt = int(val) if val.strip() else nxt
        out[key.strip()] = nxt
        nxt += 1
    return out


def test_enum_values_match_hir_h():
    from hir import _capi
    with open(os.path.join(ROOT, "include", "hir", "hir.h"), encoding="utf-8") as f:
        h = f.read()
    for enum, prefix in (("hirc_status", "HIRC_"), ("hirc_severity", "HIRC_"),
                         ("hirc_dtype", "HIRC_")):
        values = _c_enum(h, enum)
        assert values, enum
        for cname, v in values.items():
            py = cname[len(prefix):]
            assert getattr(_capi, py) == v, (enum, cname, v, getattr(_capi, py, None))
    assert _capi.MAX_DIMS == int(re.search(r"#define HIRC_MAX_DIMS (\d+)", h).group(1))
    assert _capi.SONAME_VERSION == "%s.%s" % tuple(
        re.search(r"#define HIRC_VERSION_%s (\d+)" % k, h).group(1) for k in ("MAJOR", "MINOR"))


@pytest.mark.parametrize("name", ["ag-linear-input.hir", "ag-linear-cuda.hir",
                                  "ag-linear-nccl.hir", "seed-pr5259.hir"])
def test_corpus_prints_back_byte_for_byte(name):
    path = os.path.join(CORPUS, name)
    assert str(hir.parse_file(path)) == read(path)
    assert str(hir.parse(read(path))) == read(path)


def test_parse_error_carries_location():
    lines = MATMUL.split("\n")
    text = "\n".join(lines[:1] + ["  junk"] + lines[1:])
    with pytest.raises(hir.ParseError) as ei:
        hir.parse(text, "prog.hir")
    e = ei.value
    assert (e.file, e.line, e.column) == ("prog.hir", 2, 3)
    assert e.message == "unknown statement 'junk'"
    assert e.status == "parse error"
    first = e.diagnostics[0]
    assert first.severity == "error" and first.line == 2
    assert first.rendered == "prog.hir:2:3: error: unknown statement 'junk'\n  junk\n  ^~~~\n"
    assert str(e) == first.rendered.rstrip("\n")
    assert isinstance(e, hir.HirError)


def test_parse_file_missing():
    with pytest.raises(hir.FileError) as ei:
        hir.parse_file(os.path.join(CORPUS, "no-such-file.hir"))
    assert isinstance(ei.value, OSError)
    assert "no-such-file.hir" in str(ei.value)


def test_verify_warning_and_error():
    p = hir.parse_file(os.path.join(INPUTS, "run-bind-symbolic.hir"))
    warnings = p.verify()                            # hir-opt's rule: undefined i0 is a warning
    assert [(w.severity, w.line, w.column) for w in warnings] == [("warning", 3, 20)]
    assert "use of undefined value 'i0'" in warnings[0].message


AMBIGUOUS = """%HostIrContainer { (T0_g_float[ideviceIdx.x2{2}, iS3{4}] (DeviceMesh{0 1})) -> () :
} // %HostIrContainer
"""


def test_ambiguous_shape_and_set_logical():
    with pytest.raises(hir.VerifyError) as ei:
        hir.parse(AMBIGUOUS).verify()
    assert "reads as [8] (T0=2*3) or as [2, 4] (T0=2,3)" in str(ei.value)
    p = hir.parse(AMBIGUOUS)
    with pytest.raises(hir.VerifyError):
        p.set_logical("T0=3")
    p.set_logical("T0=2,3")
    assert p.verify() == []


def test_inputs_outputs():
    p = hir.parse(MATMUL)
    assert [(v.name, v.dtype, v.ndim, v.is_scalar) for v in p.inputs] == \
        [("T0", "float32", 2, False), ("T1", "float32", 2, False)]
    # the reduction axis rS6 is not stored
    assert [(v.name, v.dtype, v.ndim) for v in p.outputs] == [("T2", "float32", 2)]


def test_opt_returns_a_transformed_copy():
    path = os.path.join(CORPUS, "ag-linear-input.hir")
    p = hir.parse_file(path)
    q = hir.opt(p, "stream-parallel")
    assert str(p) == read(path)                      # the original is unchanged
    assert "GetCurrentStream" in str(q) and "GetCurrentStream" not in str(p)
    # the result is a program hir reads back the same
    assert str(hir.parse(str(q))) == str(q)


def test_opt_pipeline_with_options():
    p = hir.parse_file(os.path.join(CORPUS, "ag-linear-input.hir"))
    q = hir.opt(p, "stream-parallel,backend{kind=cuda}")
    assert "cuda" in str(q).lower()


def test_opt_short_option_form():
    # "stream-parallel,backend=cuda": the key=value item is an option of the pass before it
    p = hir.parse_file(os.path.join(CORPUS, "ag-linear-input.hir"))
    short = str(hir.opt(p, "stream-parallel,backend=cuda"))
    braces = str(hir.opt(p, "stream-parallel{backend=cuda}"))
    assert short == braces
    assert "backend=CUDA" in short and "backend=NCCL" not in short


def test_opt_bad_pipeline():
    p = hir.parse(MATMUL)
    with pytest.raises(hir.PipelineError) as ei:
        hir.opt(p, "no-such-pass")
    assert "unknown pass 'no-such-pass'" in str(ei.value)


def test_run_matmul_numpy():
    p = hir.parse(MATMUL)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    (c,) = p.run(a, b)
    assert c.dtype == np.float32 and c.shape == (2, 2)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    # inputs are not modified; lists are taken in the program's dtype
    (c2,) = p.run(a.tolist(), b.tolist())
    np.testing.assert_allclose(c2, a @ b, rtol=1e-5, atol=1e-6)


def test_run_shape_and_dtype_mismatch():
    p = hir.parse(MATMUL, "mm.hir")
    a = np.ones((2, 3), np.float32)
    with pytest.raises(hir.MismatchError) as ei:
        p.run(a, np.ones((2, 3), np.float32))
    assert "input T1: the program needs shape [3, 2], the buffer is [2, 3]" in str(ei.value)
    assert isinstance(ei.value, ValueError)
    with pytest.raises(hir.MismatchError) as ei:
        p.run(a, np.ones((3, 2), np.float64))
    assert "input T1: the program needs dtype float32" in str(ei.value)
    with pytest.raises(TypeError):
        p.run(a)


def test_run_bare_symbolic_extent_from_shape():
    p = hir.parse(COPY_SYMBOLIC)
    for rows in (1, 3, 7):
        a = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        (out,) = p.run(a)
        np.testing.assert_array_equal(out, a)


def test_run_bindings():
    p = hir.parse_file(os.path.join(INPUTS, "run-bind-symbolic.hir"))
    a = np.arange(24, dtype=np.float32).reshape(6, 4)
    with pytest.raises(hir.VerifyError) as ei:
        p.run(a)                                     # i0 is needed and not bound
    assert (ei.value.line, ei.value.column) == (3, 20)
    (out,) = p.run(a, bindings={"i0": 3})
    np.testing.assert_array_equal(out, a)


def test_run_refuses_other_devices():
    p = hir.parse_file(os.path.join(CORPUS, "ag-linear-input.hir"))
    x = [np.zeros((1, 128, 1024), np.uint16), np.zeros((1024, 1024), np.uint16),
         np.zeros((1024,), np.uint16)]
    with pytest.raises(hir.RunError) as ei:
        p.run(*x)
    assert "device 7" in str(ei.value)


def test_run_torch():
    torch = pytest.importorskip("torch")
    p = hir.parse(MATMUL)
    a = torch.randn(2, 3)
    b = torch.randn(3, 2)
    (c,) = p.run(a, b)
    assert isinstance(c, torch.Tensor)
    assert torch.allclose(c, a @ b, rtol=1e-5, atol=1e-6)


# a copy of one tensor, for round trips of each dtype
COPY_OF = """%HostIrContainer {{ (T0_g_{t}[iS0{{3}}, iS1{{4}}]) -> (T1_g_{t}[iS2{{3}}, iS3{{4}}]) :
  T1_g_{t}[iS2{{3}}, iS3{{4}}] = ALLOCATE(buffer=T1_g_{t}[iS2{{3}}, iS3{{4}}], mem_type=global, size=12, zero_init=false, resets_to_zero=false)
  T1_g_{t}[iS2{{3}}, iS3{{4}}]
     = Set( T0_g_{t}[iS0{{3}}, iS1{{4}}], cache_op=Streaming )
}} // %HostIrContainer
"""


def test_torch_round_trip_cpu_tensors():
    # CPU tensors of every dtype hir and torch share go in and come back out unchanged, a
    # non-contiguous input included (it is copied to a contiguous one first)
    torch = pytest.importorskip("torch")
    for text, dt in (("float", torch.float32), ("double", torch.float64),
                     ("__half", torch.float16), ("__bfloat", torch.bfloat16),
                     ("int64_t", torch.int64), ("int", torch.int32), ("bool", torch.bool)):
        p = hir.parse(COPY_OF.format(t=text))
        x = (torch.arange(12) % 5 - 2).reshape(3, 4).to(dt)
        (y,) = p.run(x)
        assert isinstance(y, torch.Tensor) and y.dtype == dt and y.device.type == "cpu", text
        assert torch.equal(y, x), text
        (z,) = p.run(x.t().contiguous().t())               # strides (1, 3)
        assert torch.equal(z, x), text
    p = hir.parse(COPY_OF.format(t="float"))
    with pytest.raises(hir.MismatchError, match="Program.run: input T0: torch dtype"):
        p.run(torch.zeros(3, 4, dtype=torch.complex64))


def test_bfloat16_uint16_fallback(monkeypatch):
    # without ml_dtypes, bfloat16 is exchanged as its raw bits in uint16 arrays
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)        # import ml_dtypes fails
    monkeypatch.setattr(hir, "_numpy_cache", [])
    p = hir.parse(COPY_OF.format(t="__bfloat"))
    bits = np.array([0x3F80, 0x4000, 0xBF80, 0x0000] * 3, np.uint16).reshape(3, 4)  # 1 2 -1 0
    (y,) = p.run(bits)
    assert y.dtype == np.uint16
    np.testing.assert_array_equal(y, bits)


def test_bfloat16_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    p = hir.parse(COPY_OF.format(t="__bfloat"))
    x = np.array([[1.0, 2.0, -1.5, 0.25]] * 3, dtype=ml_dtypes.bfloat16)
    (y,) = p.run(x)
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))
    # raw bits are still taken as input; a list is read in the program's dtype
    (z,) = p.run(x.view(np.uint16))
    np.testing.assert_array_equal(z.astype(np.float32), x.astype(np.float32))
    (w,) = p.run(x.astype(np.float32).tolist())
    np.testing.assert_array_equal(w.astype(np.float32), x.astype(np.float32))


def test_import_needs_no_numpy():
    # parse, print, verify and passes work without NumPy; Program.run says what it needs
    code = """
import sys
sys.modules["numpy"] = None
import hir
p = hir.parse_file(sys.argv[1])
q = hir.opt(p, "stream-parallel")
assert "Stream" in str(q), str(q)
try:
    hir.parse(sys.argv[2]).run([1.0])
except ImportError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", code, os.path.join(CORPUS, "ag-linear-input.hir"),
                          COPY_OF.format(t="float")], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ("hir: Program.run needs NumPy, which this Python does not "
                                  "have (pip install numpy)")


def test_run_error_is_located():
    # the CPU backend has no user kernels: the LaunchKernel statement (line 4) fails
    p = hir.parse_file(os.path.join(INPUTS, "run-launch-kernel.hir"))
    with pytest.raises(hir.RunError) as ei:
        p.run(np.zeros((4,), np.float32))
    e = ei.value
    assert (os.path.basename(e.file), e.line, e.column) == ("run-launch-kernel.hir", 4, 3)
    assert e.message.startswith("LaunchKernel: needs a kernel: group 3 has none")


def test_run_dimension_mismatch():
    p = hir.parse(COPY_SYMBOLIC, "copy.hir")
    with pytest.raises(hir.MismatchError) as ei:
        p.run(np.zeros((2, 4, 1), np.float32))
    assert str(ei.value) == ("copy.hir: error: input T0: the program needs 2 dimension(s), "
                             "the buffer has 3")


BAD_SET = """%HostIrContainer { (T0_g_float[iS0{4}, iS2{8}]) -> () :
  T1_g_double[iS1{4}, iS3{8}]
     = Set( T0_g_float[iS0{4}, iS2{8}], cache_op=Streaming )
} // %HostIrContainer
"""


def test_opt_verify_error_points_into_the_original():
    p = hir.parse(BAD_SET, "bad.hir")
    with pytest.raises(hir.VerifyError) as ei:
        hir.opt(p, "canonicalize")
    e = ei.value
    assert (e.file, e.line, e.column) == ("bad.hir", 3, 13)
    assert e.message == "Set: T0 has dtype float but the output T1 has dtype double"
    notes = [d for d in e.diagnostics if d.severity == "note"]
    assert [(n.file, n.line, n.message) for n in notes] == [("bad.hir", 2, "output T1 is here")]


def test_copy_after_a_pipeline_is_named_so():
    p = hir.parse(MATMUL, "mm.hir")
    with pytest.raises(hir.MismatchError) as ei:
        p.copy().run(np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32))
    assert str(ei.value).startswith("mm.hir: error: input T1")
    p.run_pipeline("canonicalize")
    q = p.copy()
    assert str(q) == str(p)
    with pytest.raises(hir.MismatchError) as ei:
        q.run(np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32))
    assert str(ei.value).startswith("mm.hir (after passes): error: input T1")


# Issue 31, items 9 and 10: integers are range-checked before ctypes cuts them, a released
# program raises ValueError everywhere, and errors speak of bindings=, not of hir-run's --bind.

def test_run_integers_are_range_checked():
    p = hir.parse(COPY_SYMBOLIC)
    a = np.ones((3, 4), dtype=np.float32)
    with pytest.raises(OverflowError, match=r"bindings\['i0'\]=18446744073709551619"):
        p.run(a, bindings={"i0": 2**64 + 3})          # before: taken as 3
    with pytest.raises(OverflowError, match=r"bindings\['i0'\]=-9223372036854775809"):
        p.run(a, bindings={"i0": -(2**63) - 1})
    with pytest.raises(OverflowError, match=r"num_streams=18446744073709551619"):
        p.run(a, num_streams=2**64 + 3)                # before: 3 streams
    with pytest.raises(OverflowError, match=r"num_streams=2147483648"):
        p.run(a, num_streams=2**31)
    with pytest.raises(OverflowError, match=r"num_streams=-1"):
        p.run(a, num_streams=-1)
    with pytest.raises(TypeError, match=r"bindings\['i0'\] must be an integer, not float"):
        p.run(a, bindings={"i0": 3.5})                 # before: cut to 3
    with pytest.raises(TypeError, match=r"bindings: a name must be a str, not int"):
        p.run(a, bindings={0: 3})
    # the largest values still go through (the run ends in the runner, not in Python)
    (c,) = p.run(a, num_streams=2**31 - 1)
    np.testing.assert_array_equal(c, a)


def test_binding_against_shape_is_refused():
    # a binding and the array's shape disagree on i0 (before: the array's 3 was used silently)
    p = hir.parse(COPY_SYMBOLIC)
    a = np.ones((3, 4), dtype=np.float32)
    with pytest.raises(hir.MismatchError, match=r"input T0: binding 'i0' is 5, but the "
                       r"buffer's shape gives 3 \(axis 0\)"):
        p.run(a, bindings={"i0": 5})
    (c,) = p.run(a, bindings={"i0": 3})
    np.testing.assert_array_equal(c, a)


def test_released_program_raises_value_error():
    p = hir.parse(MATMUL)
    p.release()
    assert repr(p) == "<hir.Program (released)>"      # before: "0 input(s) -> 0 output(s)"
    for use in (lambda: str(p), lambda: p.inputs, lambda: p.outputs, lambda: p.copy(),
                lambda: p.verify(), lambda: p.run_pipeline("stream-parallel"),
                lambda: hir.opt(p, "stream-parallel"),
                lambda: p.run(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))):
        with pytest.raises(ValueError, match="this Program has been released"):
            use()                                      # before: MemoryError, TypeError, ...
    p.release()                                        # a second release does nothing


def test_errors_name_keyword_arguments_not_flags():
    p = hir.parse(COPY_SYMBOLIC)
    a = np.ones((3, 4), dtype=np.float32)
    with pytest.raises(hir.RunError) as ei:
        p.run(a, bindings={"zz": 1})
    assert "binding 'zz': the program has no scalar of that name" in str(ei.value)
    assert "--bind" not in str(ei.value) and "--bind" not in ei.value.message
    with pytest.raises(hir.RunError) as ei:
        p.run(a, bindings={"numberOfStreams": 2})
    assert "binding 'numberOfStreams': the runner sets it (give num_streams=N)" in str(ei.value)
    assert "--" not in str(ei.value)


# Issue 28: gemm_tune= is hir-run's --gemm-tune; the CPU backend accepts every valid value and
# ignores it (the result is the same, no cache file is written), a misspelt word is refused.

def test_run_gemm_tune(tmp_path):
    p = hir.parse(MATMUL)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = p.run(a, b)[0]
    np.testing.assert_array_equal(want, a @ b)
    cache = tmp_path / "tune.txt"
    for v in (None, "off", "on", str(cache), cache):
        np.testing.assert_array_equal(p.run(a, b, gemm_tune=v)[0], want)
    assert not cache.exists()
    with pytest.raises(ValueError, match=r"gemm_tune is off, on or a cache file .*'bogus'"):
        p.run(a, b, gemm_tune="bogus")
    with pytest.raises(TypeError, match=r"gemm_tune must be"):
        p.run(a, b, gemm_tune=3)


# comm_priority= is hir-run's --comm-priority: "default" or "high", ignored by the CPU backend.

def test_run_comm_priority():
    p = hir.parse(MATMUL)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    for v in ("default", "high"):
        np.testing.assert_array_equal(p.run(a, b, comm_priority=v)[0], a @ b)
    with pytest.raises(ValueError, match=r"comm_priority is 'default' or 'high', not 'max'"):
        p.run(a, b, comm_priority="max")
