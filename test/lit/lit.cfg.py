# lit configuration for hir: tests are .hir (and .test) files with RUN lines; tools come from
# the build tree, FileCheck and not from LLVM.
import os
import lit.formats

config.name = "hir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)

site = lit_config.params.get("hir_site")
if site and not hasattr(config, "hir_tools_dir"):
    lit_config.load_config(config, site)
# Temporaries (%t, Output/) go to the build tree that runs the tests: several builds (normal,
# ASan, fuzz) run the same sources, and a shared Output/ in the source tree lets concurrent runs
# overwrite each other's files.
if hasattr(config, "hir_binary_dir"):
    config.test_exec_root = os.path.join(config.hir_binary_dir, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.hir_tools_dir, config.hir_filecheck_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# MPI as root in containers/CI
for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
    config.environment[k] = "1"
config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
config.environment["NCCL_NVLS_ENABLE"] = "0"
if "HOME" in os.environ:
    config.environment["HOME"] = os.environ["HOME"]
# Open MPI creates its session directory <TMPDIR>/ompi.<host>.<uid> on first use; mpiruns that
# start at the same moment race to create it ("mkdir ... File exists"). Tests get a TMPDIR in
# the build tree with that directory made in advance.
import socket
_tmp = os.path.join(config.hir_binary_dir, "test", "lit", "tmp")
os.makedirs(os.path.join(_tmp, "ompi.%s.%d" % (socket.gethostname().split(".")[0], os.getuid())), exist_ok=True)
config.environment["TMPDIR"] = _tmp

config.substitutions.append(("%corpus", config.hir_corpus_dir))
config.substitutions.append(("%hir_bin", config.hir_tools_dir))
config.substitutions.append(("%builddir", config.hir_binary_dir))
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "Inputs")))
config.substitutions.append(("%mpirun", config.hir_mpiexec + " --oversubscribe"))
if config.hir_not:
    config.substitutions.append(("%not", config.hir_not))
# script(1) (util-linux) runs a tool on a pseudo-terminal: --color=auto tests
import shutil
if shutil.which("script"):
    config.available_features.add("script")
# editors/ (TextMate grammar, vim syntax) and the headless vim that checks the latter
config.substitutions.append(("%editors", os.path.join(os.path.dirname(__file__), "..", "..", "editors")))
# matplotlib draws hir-run --bench-plot (bench/plot_bench.py); scripts/setup installs it
import importlib.util
if importlib.util.find_spec("matplotlib"):
    config.available_features.add("matplotlib")
if shutil.which("vim"):
    config.available_features.add("vim")
# the tools' zsh completion is exercised in zsh itself where it is installed (tools/completion-zsh.test)
if shutil.which("zsh"):
    config.available_features.add("zsh")
if config.hir_have_cuda:
    config.available_features.add("cuda-build")
# ASan/UBSan builds (scripts/ci-asan, ci-fuzz): tests that limit the address space cannot run
# there (ASan reserves terabytes of shadow memory at start-up)
if getattr(config, "hir_sanitizers", False):
    config.available_features.add("sanitizers")
