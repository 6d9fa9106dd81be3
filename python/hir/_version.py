"""The version of the hir Python package; the same as libhir's (CMakeLists.txt, project()).

tests/test_hir.py checks that the two agree."""
__version__ = "0.1.0"
