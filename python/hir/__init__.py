"""hir — nvFuser Host IR (%HostIrContainer text) from Python, over libhir through ctypes.

    p = hir.parse(text)                 # or hir.parse_file(path); raises hir.ParseError
    str(p)                              # the program as nvFuser prints it
    q = hir.opt(p, "stream-parallel")   # a new program; p is unchanged
    (c,) = p.run(a, b)                  # one rank, CPU backend: NumPy arrays (or torch tensors)

Errors are exceptions (HirError and its subclasses) carrying the diagnostics, each with file,
line, column, severity, message and the rendered text hir-opt would print; the first error's
file/line/column are also attributes of the exception. See docs/api.md.

NumPy is needed only by Program.run (parsing, printing, verifying and passes work without it).
bfloat16 tensors are ml_dtypes.bfloat16 arrays when ml_dtypes is installed, else their raw
bits in uint16 arrays (torch tensors use torch.bfloat16).
"""
from __future__ import annotations

import ctypes
import os
import operator
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _capi
from ._capi import Libraries
from ._version import __version__

__all__ = ["parse", "parse_file", "opt", "Program", "Diagnostic", "ValueInfo", "HirError",
           "ParseError", "VerifyError", "PipelineError", "RunError", "MismatchError",
           "FileError", "version", "__version__"]

PathLike = Union[str, "os.PathLike[str]"]

_libs = Libraries()
_lib = _libs.core


def version() -> str:
    """The version of the loaded libhir ("0.1.0"); __version__ is the package's own."""
    return _str(_lib.hirc_version())


class Diagnostic:
    """One diagnostic: severity ("error", "warning", "note"), file, line, column (1-based; 0 when
    it has no location), message, and rendered (the text hir-opt prints for it)."""

    __slots__ = ("severity", "file", "line", "column", "message", "rendered")
    severity: str
    file: Optional[str]
    line: int
    column: int
    message: str
    rendered: str

    def __init__(self, severity: str, file: Optional[str], line: int, column: int,
                 message: str, rendered: str) -> None:
        self.severity, self.file, self.line, self.column = severity, file, line, column
        self.message, self.rendered = message, rendered

    def __repr__(self) -> str:
        return "Diagnostic(%s, %s:%d:%d, %r)" % (self.severity, self.file, self.line,
                                                 self.column, self.message)


class HirError(Exception):
    """A failed hir call. status is the hirc_status name; diagnostics the list reported; file,
    line, column and message those of the first error (line and column 0 when unknown)."""

    status: str
    diagnostics: List[Diagnostic]
    file: Optional[str]
    line: int
    column: int
    message: str

    def __init__(self, status: str, diagnostics: List[Diagnostic]) -> None:
        self.status = status
        self.diagnostics = list(diagnostics)
        first = next((d for d in self.diagnostics if d.severity == "error"), None)
        self.file = first.file if first else None
        self.line = first.line if first else 0
        self.column = first.column if first else 0
        self.message = first.message if first else status
        text = "".join(d.rendered for d in self.diagnostics if d.severity != "note"
                       and (d.severity == "error" or first is None))
        super().__init__(text.rstrip("\n") or status)


class ParseError(HirError):
    """The text is not a valid program."""


class VerifyError(HirError):
    """The program does not verify."""


class PipelineError(HirError):
    """The pipeline text is wrong or a pass failed."""


class RunError(HirError):
    """The program could not run on one rank, or failed while running."""


class MismatchError(HirError, ValueError):
    """An input or output does not have the dtype or shape the program needs."""


class FileError(HirError, OSError):
    """A file could not be read."""


_ERRORS = {
    _capi.ERR_PARSE: ParseError, _capi.ERR_VERIFY: VerifyError,
    _capi.ERR_PIPELINE: PipelineError, _capi.ERR_RUN: RunError,
    _capi.ERR_MISMATCH: MismatchError, _capi.ERR_IO: FileError,
}
_SEVERITY = {_capi.NOTE: "note", _capi.WARNING: "warning", _capi.ERROR: "error"}


def _s(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "replace") if b is not None else None


def _str(b: Optional[bytes]) -> str:
    """A C string that is never NULL (a name, a message) as str ("" if it were)."""
    return b.decode("utf-8", "replace") if b is not None else ""


_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT_MAX = (1 << 31) - 1


def _int_arg(what: str, value: Any, lo: int, hi: int) -> int:
    """value as a Python int in lo..hi, for a C integer: TypeError when it is no integer (3.5
    would be cut to 3), OverflowError when it does not fit (2**64 + 3 would become 3). what
    names the argument as the caller wrote it."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None
    if not lo <= v <= hi:
        raise OverflowError("%s=%d is out of range: it must be in %d..%d" % (what, v, lo, hi))
    return v


class _Diags:
    """A hirc_diagnostics list for the length of one call."""

    def __init__(self) -> None:
        self.h: Optional[ctypes.c_void_p] = ctypes.c_void_p()
        if _lib.hirc_diagnostics_create(ctypes.byref(self.h)) != _capi.OK:
            raise MemoryError("hir: out of memory")

    def __enter__(self) -> "_Diags":
        return self

    def __exit__(self, *exc: Any) -> None:
        _lib.hirc_diagnostics_destroy(self.h)
        self.h = None

    def items(self) -> List[Diagnostic]:
        out = []
        d = _capi.Diagnostic()
        for i in range(_lib.hirc_diagnostics_count(self.h)):
            if _lib.hirc_diagnostics_get(self.h, i, ctypes.byref(d)) == _capi.OK:
                out.append(Diagnostic(_SEVERITY.get(d.severity, "error"), _s(d.file), d.line,
                                      d.column, _str(d.message), _str(d.rendered)))
        return out

    def check(self, status: int) -> List[Diagnostic]:
        """Raise for a failed status; otherwise return the warnings reported."""
        if status == _capi.OK:
            return self.items()
        if status == _capi.ERR_NO_MEMORY:
            raise MemoryError("hir: out of memory")
        name = _str(_lib.hirc_status_string(status))
        if status == _capi.ERR_INVALID_ARGUMENT:
            raise ValueError("hir: " + name + "".join("\n" + d.rendered for d in self.items()))
        raise _ERRORS.get(status, HirError)(name, self.items())


class ValueInfo:
    """An input or output of a program: name as printed ("T0", "i3"), is_scalar, dtype (a
    string: "float32", "bfloat16", ..., "other") and ndim (its logical axes: the axes its buffer has)."""

    __slots__ = ("name", "is_scalar", "dtype", "ndim")
    name: str
    is_scalar: bool
    dtype: str
    ndim: int

    def __init__(self, name: str, is_scalar: bool, dtype: str, ndim: int) -> None:
        self.name, self.is_scalar, self.dtype, self.ndim = name, is_scalar, dtype, ndim

    def __repr__(self) -> str:
        return "ValueInfo(%s, %s%s)" % (self.name, self.dtype,
                                        "" if self.is_scalar else ", ndim=%d" % self.ndim)


class _NumPy:
    """hirc_dtype <-> NumPy, made on first use (Program.run), so that `import hir` needs no
    NumPy. bfloat16 is ml_dtypes.bfloat16 when ml_dtypes is installed, else raw bits in uint16."""

    def __init__(self) -> None:
        try:
            import numpy as np
        except ImportError:
            raise ImportError("hir: Program.run needs NumPy, which this Python does not have "
                              "(pip install numpy)") from None
        self.np = np
        try:
            import ml_dtypes  # type: ignore[import-not-found,unused-ignore]
            self.bfloat16 = np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            self.bfloat16 = None
        self.to_np = {
            _capi.FLOAT32: np.float32, _capi.FLOAT64: np.float64, _capi.FLOAT16: np.float16,
            _capi.BFLOAT16: self.bfloat16 if self.bfloat16 is not None else np.uint16,
            _capi.BOOL: np.bool_, _capi.INT8: np.int8,
            _capi.INT16: np.int16, _capi.INT32: np.int32, _capi.INT64: np.int64,
            _capi.UINT8: np.uint8, _capi.UINT16: np.uint16, _capi.UINT32: np.uint32,
            _capi.UINT64: np.uint64, _capi.INDEX: np.int64,
        }
        self.from_np = {np.dtype(t): d for d, t in self.to_np.items()
                        if d not in (_capi.BFLOAT16, _capi.INDEX)}
        if self.bfloat16 is not None:
            self.from_np[self.bfloat16] = _capi.BFLOAT16


_numpy_cache: List[_NumPy] = []


def _numpy() -> _NumPy:
    if not _numpy_cache:
        _numpy_cache.append(_NumPy())
    return _numpy_cache[0]


def _torch() -> Any:
    return sys.modules.get("torch")


def _torch_map(torch: Any) -> Dict[Any, int]:
    return {torch.float32: _capi.FLOAT32, torch.float64: _capi.FLOAT64,
            torch.float16: _capi.FLOAT16, torch.bfloat16: _capi.BFLOAT16,
            torch.bool: _capi.BOOL, torch.int8: _capi.INT8, torch.int16: _capi.INT16,
            torch.int32: _capi.INT32, torch.int64: _capi.INT64, torch.uint8: _capi.UINT8}


def _is_torch(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


class Program:
    """A parsed program. Make one with hir.parse or hir.parse_file. release() frees it at once
    (garbage collection does otherwise); any use after that raises ValueError."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._h: Optional[ctypes.c_void_p] = handle

    def release(self, _destroy: Any = _lib.hirc_program_destroy) -> None:
        """Free the program now. Later calls on it raise ValueError; releasing again does
        nothing."""
        # the default argument keeps the function reachable during interpreter shutdown
        h, self._h = getattr(self, "_h", None), None
        if h:
            _destroy(h)

    def __del__(self) -> None:
        self.release()

    @property
    def _handle(self) -> ctypes.c_void_p:
        """The C handle; ValueError once the program has been released."""
        h: Optional[ctypes.c_void_p] = getattr(self, "_h", None)
        if not h:
            raise ValueError("hir: this Program has been released")
        return h

    def __str__(self) -> str:
        text = ctypes.c_void_p()
        n = ctypes.c_size_t()
        st = _lib.hirc_print(self._handle, ctypes.byref(text), ctypes.byref(n))
        if st != _capi.OK:
            raise MemoryError("hir: printing failed: " + _str(_lib.hirc_status_string(st)))
        try:
            return ctypes.string_at(text, n.value).decode("utf-8", "replace")
        finally:
            _lib.hirc_free(text)

    def __repr__(self) -> str:
        if not getattr(self, "_h", None):
            return "<hir.Program (released)>"
        return "<hir.Program %d input(s) -> %d output(s)>" % (len(self.inputs),
                                                             len(self.outputs))

    def copy(self) -> "Program":
        """An independent copy; its diagnostics point into the same file until a pipeline has
        rewritten the original."""
        h = ctypes.c_void_p()
        with _Diags() as d:
            d.check(_lib.hirc_program_copy(self._handle, d.h, ctypes.byref(h)))
        return Program(h)

    def verify(self) -> List[Diagnostic]:
        """Run the verifier; raise VerifyError on errors, return the warnings (a list)."""
        with _Diags() as d:
            return d.check(_lib.hirc_verify(self._handle, d.h))

    def set_logical(self, reading: str) -> List[Diagnostic]:
        """Read a tensor whose shape the program leaves ambiguous as `reading` says:
        "T1=2,11*12" lists T1's logical axes as the IterDomain numbers of each, '*' between
        the parts of a split (hir-opt --logical). Call it before verify; raises VerifyError
        when the reading does not fit the tensor."""
        with _Diags() as d:
            return d.check(_lib.hirc_set_logical(self._handle, reading.encode(), d.h))

    def run_pipeline(self, pipeline: str) -> List[Diagnostic]:
        """Run a pass pipeline on this program in place (see hir.opt)."""
        with _Diags() as d:
            return d.check(_lib.hirc_run_pipeline(self._handle, pipeline.encode(), d.h))

    def _info(self, fn: Any, n: int) -> List[ValueInfo]:
        out = []
        v = _capi.ValueInfo()
        for i in range(n):
            if fn(self._handle, i, ctypes.byref(v)) != _capi.OK:
                raise MemoryError("hir: out of memory")
            out.append(ValueInfo(_str(v.name), bool(v.is_scalar),
                                 _str(_lib.hirc_dtype_name(v.dtype)), v.ndim))
        return out

    @property
    def inputs(self) -> List[ValueInfo]:
        return self._info(_lib.hirc_input_info, _lib.hirc_num_inputs(self._handle))

    @property
    def outputs(self) -> List[ValueInfo]:
        return self._info(_lib.hirc_output_info, _lib.hirc_num_outputs(self._handle))

    def run(self, *inputs: Any, bindings: Optional[Mapping[str, int]] = None,
            num_streams: int = 0, gemm_tune: Optional[PathLike] = None,
            comm_priority: str = "default") -> Tuple[Any, ...]:
        """Run the program once on one rank (CPU reference backend) and return its outputs as a
        tuple: NumPy arrays (bfloat16 ones as ml_dtypes.bfloat16 when it is installed, else raw
        bits in uint16), or torch tensors when any input is a torch tensor. inputs are
        container inputs in order: arrays (or anything np.asarray takes) of the program's dtype
        and shape, and Python ints for scalar inputs. bindings maps free scalars to values
        ({"i0": 1024}); extents spelled as a bare symbol are taken from the inputs' shapes.
        gemm_tune is hir-run's --gemm-tune: None or "off", "on", or a cache file path (the CPU
        backend accepts it and ignores it; anything else raises ValueError). comm_priority is
        hir-run's --comm-priority: "default" or "high" (ignored by the CPU backend too)."""
        h = self._handle
        npx = _numpy()
        np = npx.np
        rt = _libs.runtime
        infos = self.inputs
        num_streams = _int_arg("num_streams", num_streams, 0, _INT_MAX)
        if gemm_tune is not None and not isinstance(gemm_tune, (str, os.PathLike)):
            raise TypeError("gemm_tune must be None, 'off', 'on' or a path, not %s"
                            % type(gemm_tune).__name__)
        if comm_priority not in ("default", "high"):
            raise ValueError("comm_priority is 'default' or 'high', not %r" % (comm_priority,))
        binds = list((bindings or {}).items())
        for name, value in binds:
            if not isinstance(name, str):
                raise TypeError("bindings: a name must be a str, not %s" % type(name).__name__)
            _int_arg("bindings[%r]" % name, value, *_INT64)
        if len(inputs) != len(infos):
            raise TypeError("the program has %d input(s), %d given" % (len(infos), len(inputs)))
        use_torch = any(_is_torch(x) for x in inputs)
        keep = []
        cin = (_capi.Tensor * max(1, len(inputs)))()
        for i, (x, info) in enumerate(zip(inputs, infos)):
            if info.is_scalar:
                a = np.array([_int_arg("input %s" % info.name, x, *_INT64)],
                             dtype=np.int64).reshape(())
                keep.append(a)
                cin[i].data = a.ctypes.data
                cin[i].dtype = _capi.INT64
                cin[i].ndim = 0
                continue
            if _is_torch(x):
                t = x.detach().to("cpu").contiguous()
                keep.append(t)
                tmap = _torch_map(_torch())
                if t.dtype not in tmap:
                    msg = ("Program.run: input %s: torch dtype %s is not supported"
                           % (info.name, t.dtype))
                    raise MismatchError("buffer does not match the program", [Diagnostic(
                        "error", None, 0, 0, msg, "error: " + msg + "\n")])
                cin[i].data = t.data_ptr()
                cin[i].dtype = tmap[t.dtype]
                shape = tuple(t.shape)
            else:
                a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=_np_of(info.dtype))
                a = np.ascontiguousarray(a)
                keep.append(a)
                dt = npx.from_np.get(a.dtype, _capi.DTYPE_OTHER)
                if dt == _capi.UINT16 and info.dtype == "bfloat16":
                    dt = _capi.BFLOAT16          # raw bfloat16 bits
                cin[i].data = a.ctypes.data
                cin[i].dtype = dt
                shape = a.shape
            if len(shape) > _capi.MAX_DIMS:
                raise ValueError("Program.run: input %s has %d dimensions; at most %d"
                                 % (info.name, len(shape), _capi.MAX_DIMS))
            cin[i].ndim = len(shape)
            for k, e in enumerate(shape):
                cin[i].shape[k] = e
        opts = _capi.RunOptions()
        opts.num_streams = num_streams
        opts.gemm_tune = None if gemm_tune is None else os.fsencode(gemm_tune)
        opts.comm_priority = 1 if comm_priority == "high" else 0
        cb = (_capi.Binding * max(1, len(binds)))()
        for k, (name, value) in enumerate(binds):
            cb[k].name = name.encode()
            cb[k].value = operator.index(value)
        opts.bindings = cb
        opts.nbindings = len(binds)
        nout = _lib.hirc_num_outputs(h)
        cout = (_capi.Tensor * max(1, nout))()
        with _Diags() as d:
            d.check(rt.hirc_output_shapes(h, cin, len(inputs), cout, nout,
                                          ctypes.byref(opts), d.h))
        results = []
        for i in range(nout):
            shape = tuple(cout[i].shape[k] for k in range(cout[i].ndim))
            if use_torch:
                torch = _torch()
                inv = {v: k for k, v in _torch_map(torch).items()}
                dt = cout[i].dtype if cout[i].dtype != _capi.INDEX else _capi.INT64
                if dt not in inv:
                    msg = ("Program.run: output %d has dtype %s, which torch cannot hold"
                           % (i, _str(_lib.hirc_dtype_name(dt))))
                    raise RunError("run error", [Diagnostic("error", None, 0, 0, msg,
                                                            "error: " + msg + "\n")])
                r = torch.empty(shape, dtype=inv[dt])
                cout[i].data = r.data_ptr()
            else:
                if cout[i].dtype not in npx.to_np:
                    msg = ("Program.run: output %d has dtype %s, which NumPy cannot hold"
                           % (i, _str(_lib.hirc_dtype_name(cout[i].dtype))))
                    raise RunError("run error", [Diagnostic("error", None, 0, 0, msg,
                                                            "error: " + msg + "\n")])
                r = np.empty(shape, dtype=npx.to_np[cout[i].dtype])
                cout[i].data = r.ctypes.data
            results.append(r)
        with _Diags() as d:
            d.check(rt.hirc_run(h, cin, len(inputs), cout, nout, ctypes.byref(opts), d.h))
        return tuple(results)


def _np_of(name: str) -> Any:
    for k, v in _numpy().to_np.items():
        if _str(_lib.hirc_dtype_name(k)) == name:
            return v
    return None


def parse(text: Union[str, bytes], filename: str = "<string>") -> Program:
    """Parse program text (str or bytes). Raises ParseError with the located diagnostics."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    h = ctypes.c_void_p()
    with _Diags() as d:
        d.check(_lib.hirc_parse_string(data, len(data), filename.encode(), d.h, ctypes.byref(h)))
    return Program(h)


def parse_file(path: PathLike) -> Program:
    """Read and parse a file. Raises FileError (an OSError) or ParseError."""
    h = ctypes.c_void_p()
    with _Diags() as d:
        d.check(_lib.hirc_parse_file(os.fsencode(path), d.h, ctypes.byref(h)))
    return Program(h)


def opt(program: Program, pipeline: str, verify: bool = True) -> Program:
    """Run a pass pipeline ("stream-parallel,backend=cuda" or "stream-parallel{backend=cuda}":
    the grammar of hir-opt --pass-pipeline) on a copy of program (Program.copy) and return the copy; program is
    unchanged. The
    program is verified first (VerifyError) unless verify is False; a bad pipeline or a failing
    pass raises PipelineError."""
    q = program.copy()
    if verify:
        q.verify()
    q.run_pipeline(pipeline)
    return q
