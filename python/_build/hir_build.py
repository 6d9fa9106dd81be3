"""The build backend of the hir Python package (PEP 517, in-tree: pyproject.toml names it with
backend-path). It needs nothing but the standard library of Python >= 3.9, so
`pip install ./python` works offline, with or without build isolation, with any interpreter:
no setuptools and no `wheel` package are needed (the setuptools backend needs `wheel` for
bdist_wheel before setuptools 70.1, which a pyenv or conda Python often lacks).

The wheel holds the hir package and, when it can find them, copies of libhir and
libhir_runtime in hir/_libs/ (then `import hir` needs no environment variable). It looks for
them, first match wins:
  1. the folder named by HIR_LIBRARY_DIR (only there, when set; an error if libhir is absent);
  2. the install prefix this source was installed into: `cmake --install` puts the package
     source in PREFIX/share/hir/python with a file `libdir` naming PREFIX's library folder;
  3. the build tree of the checkout this source is in: ../$HIR_BUILD_DIR (default ../build),
     its api/ folder.
Without a library the wheel is pure Python and `import hir` searches as hir/_capi.py says.
A wheel with libraries is tagged for this platform (py3-none-linux_x86_64 and so on).
"""
import base64
import hashlib
import os
import re
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # python/
NAME = "hir"
LIBS = ("libhir.so", "libhir_runtime.so")


def _version():
    with open(os.path.join(HERE, "hir", "_version.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("hir build: no __version__ line in hir/_version.py")
    return m.group(1)


def _lib_folder():
    """(folder holding libhir.so, how it was found) or (None, why none)."""
    env = os.environ.get("HIR_LIBRARY_DIR")
    if env:
        if not os.path.exists(os.path.join(env, "libhir.so")):
            raise RuntimeError("hir build: HIR_LIBRARY_DIR=%s holds no libhir.so" % env)
        return env, "HIR_LIBRARY_DIR"
    tried = []
    marker = os.path.join(HERE, "libdir")
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as f:
            d = os.path.normpath(os.path.join(HERE, f.read().strip()))
        tried.append(d)
        if os.path.exists(os.path.join(d, "libhir.so")):
            return d, "the install prefix"
    build = os.environ.get("HIR_BUILD_DIR", "build")
    d = os.path.join(os.path.dirname(HERE), build, "api")
    tried.append(d)
    if os.path.exists(os.path.join(d, "libhir.so")):
        return d, "the build tree"
    return None, "no libhir.so in " + ", ".join(tried)


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: Python bindings (ctypes) for hir, the nvFuser Host IR toolchain: parse, "
            "print, transform and run %%HostIrContainer programs\n"
            "Requires-Python: >=3.9\n"
            "Requires-Dist: numpy\n"
            "Provides-Extra: test\n"
            "Requires-Dist: pytest; extra == \"test\"\n"
            "Provides-Extra: bfloat16\n"
            "Requires-Dist: ml_dtypes; extra == \"bfloat16\"\n"
            "Description-Content-Type: text/markdown\n"
            "\n%s" % (NAME, _version(), readme))


def _tag(platform_specific):
    if not platform_specific:
        return "py3-none-any"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + plat


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _files():
    """(archive name, bytes) of the package, libraries included when found."""
    out = []
    pkg = os.path.join(HERE, NAME)
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py") or fn == "py.typed":
            with open(os.path.join(pkg, fn), "rb") as f:
                out.append(("%s/%s" % (NAME, fn), f.read()))
    folder, how = _lib_folder()
    if folder is None:
        print("hir build: %s: building a pure-Python wheel (set HIR_PREFIX or HIR_LIBRARY_DIR "
              "when importing hir)" % how, file=sys.stderr)
        return out, False
    for lib in LIBS:
        path = os.path.join(folder, lib)
        if os.path.exists(path):
            with open(os.path.realpath(path), "rb") as f:
                out.append(("%s/_libs/%s" % (NAME, lib), f.read()))
            print("hir build: bundling %s (from %s)" % (path, how), file=sys.stderr)
    return out, True


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files, platform_specific = _files()
    tag = _tag(platform_specific)
    di = _dist_info()
    files.append(("%s/METADATA" % di, _metadata().encode()))
    files.append(("%s/WHEEL" % di, ("Wheel-Version: 1.0\nGenerator: hir_build\n"
                                    "Root-Is-Purelib: %s\nTag: %s\n"
                                    % ("false" if platform_specific else "true", tag)).encode()))
    record = [_record_line(n, b) for n, b in files] + ["%s/RECORD,," % di]
    files.append(("%s/RECORD" % di, ("\n".join(record) + "\n").encode()))
    name = "%s-%s-%s.whl" % (NAME, _version(), tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name
