"""ctypes declarations of include/hir/hir.h and the search for libhir (docs/api.md).

libhir is looked for, in this order:
  1. the folder named by the environment variable HIR_LIBRARY_DIR (only there, when it is set);
  2. a copy bundled in this package (hir/_libs/, when present);
  3. PREFIX/lib and PREFIX/lib64 of the environment variable HIR_PREFIX (an install prefix);
  4. sys.prefix/lib (hir installed into this Python environment's prefix);
  5. the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.conf) by soname.
libhir_runtime (needed only to run programs) is loaded from the folder libhir came from.
"""
from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

SONAME_VERSION = "0.1"
MAX_DIMS = 8

# hirc_status
OK, ERR_INVALID_ARGUMENT, ERR_IO, ERR_PARSE, ERR_VERIFY, ERR_PIPELINE, ERR_RUN, ERR_MISMATCH, \
    ERR_NO_MEMORY = range(9)
# hirc_severity
NOTE, WARNING, ERROR = range(3)
# hirc_dtype
(FLOAT32, FLOAT64, FLOAT16, BFLOAT16, BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32,
 UINT64, INDEX, DTYPE_OTHER) = range(15)


class Diagnostic(ctypes.Structure):
    _fields_ = [("severity", ctypes.c_int), ("file", ctypes.c_char_p), ("line", ctypes.c_int),
                ("column", ctypes.c_int), ("message", ctypes.c_char_p),
                ("rendered", ctypes.c_char_p)]


class ValueInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_scalar", ctypes.c_int), ("dtype", ctypes.c_int),
                ("ndim", ctypes.c_int)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_DIMS)]


class Binding(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class RunOptions(ctypes.Structure):
    _fields_ = [("num_streams", ctypes.c_int), ("bindings", ctypes.POINTER(Binding)),
                ("nbindings", ctypes.c_size_t), ("gemm_tune", ctypes.c_char_p),
                ("comm_priority", ctypes.c_int)]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_S = ctypes.c_int
_Z = ctypes.c_size_t

_Table = Dict[str, Tuple[Any, List[Any]]]

_CORE: _Table = {
    "hirc_status_string": (ctypes.c_char_p, [_S]),
    "hirc_version": (ctypes.c_char_p, []),
    "hirc_diagnostics_create": (_S, [_PP]),
    "hirc_diagnostics_destroy": (None, [_P]),
    "hirc_diagnostics_clear": (None, [_P]),
    "hirc_diagnostics_count": (_Z, [_P]),
    "hirc_diagnostics_error_count": (_Z, [_P]),
    "hirc_diagnostics_get": (_S, [_P, _Z, ctypes.POINTER(Diagnostic)]),
    "hirc_parse_string": (_S, [ctypes.c_char_p, _Z, ctypes.c_char_p, _P, _PP]),
    "hirc_parse_file": (_S, [ctypes.c_char_p, _P, _PP]),
    "hirc_program_destroy": (None, [_P]),
    "hirc_program_copy": (_S, [_P, _P, _PP]),
    "hirc_verify": (_S, [_P, _P]),
    "hirc_set_logical": (_S, [_P, ctypes.c_char_p, _P]),
    "hirc_print": (_S, [_P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Z)]),
    "hirc_free": (None, [_P]),
    "hirc_run_pipeline": (_S, [_P, ctypes.c_char_p, _P]),
    "hirc_dtype_name": (ctypes.c_char_p, [_S]),
    "hirc_dtype_size": (_Z, [_S]),
    "hirc_num_inputs": (_Z, [_P]),
    "hirc_num_outputs": (_Z, [_P]),
    "hirc_input_info": (_S, [_P, _Z, ctypes.POINTER(ValueInfo)]),
    "hirc_output_info": (_S, [_P, _Z, ctypes.POINTER(ValueInfo)]),
}
_RUNTIME: _Table = {
    "hirc_output_shapes": (_S, [_P, ctypes.POINTER(Tensor), _Z, ctypes.POINTER(Tensor), _Z,
                                ctypes.POINTER(RunOptions), _P]),
    "hirc_run": (_S, [_P, ctypes.POINTER(Tensor), _Z, ctypes.POINTER(Tensor), _Z,
                      ctypes.POINTER(RunOptions), _P]),
}


def _declare(lib: ctypes.CDLL, table: _Table) -> ctypes.CDLL:
    for name, (res, args) in table.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def _search_dirs() -> Tuple[List[str], bool]:
    env = os.environ.get("HIR_LIBRARY_DIR")
    if env:
        return [env], True
    dirs = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "_libs")]
    prefix = os.environ.get("HIR_PREFIX")
    if prefix:
        dirs += [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    dirs.append(os.path.join(sys.prefix, "lib"))
    return dirs, False


class Libraries:
    """libhir, and libhir_runtime once a program is run."""

    def __init__(self) -> None:
        dirs, only = _search_dirs()
        tried = []
        core: Optional[ctypes.CDLL] = None
        self.folder: Optional[str] = None
        for d in dirs:
            path = os.path.join(d, "libhir.so")
            tried.append(path)
            if os.path.exists(path):
                core = ctypes.CDLL(path)
                self.folder = d
                break
        if core is None and not only:
            name = "libhir.so." + SONAME_VERSION
            tried.append(name + " (dynamic loader)")
            try:
                core = ctypes.CDLL(name)
            except OSError:
                core = None
        if core is None:
            raise ImportError("hir: libhir was not found (tried %s); set HIR_LIBRARY_DIR to the "
                              "folder that holds libhir.so or HIR_PREFIX to hir's install "
                              "prefix" % ", ".join(tried))
        self.core: ctypes.CDLL = _declare(core, _CORE)
        self._runtime: Optional[ctypes.CDLL] = None

    @property
    def runtime(self) -> ctypes.CDLL:
        if self._runtime is None:
            if self.folder is not None:
                path = os.path.join(self.folder, "libhir_runtime.so")
            else:
                path = "libhir_runtime.so." + SONAME_VERSION
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise RuntimeError("hir: Program.run needs libhir_runtime (%s), which hir "
                                   "builds with its runner (HIR_BUILD_RUNNER=ON): %s"
                                   % (path, e)) from None
            self._runtime = _declare(lib, _RUNTIME)
        return self._runtime
