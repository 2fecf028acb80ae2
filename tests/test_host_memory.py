"""Host memory on the CPU backend: freed step temporaries are reused, not mapped afresh."""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from vizgrad.backends.host_memory import user_has_set_malloc

glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                           reason="glibc's malloc settings")

# A training step's pattern: eight 1 MiB temporaries (each too small for a huge page) filled,
# then all freed, round after round. Prints whether the settings were vizgrad's and the page
# faults per round after the first two.
FAULTS_PER_ROUND = textwrap.dedent("""
    import resource, sys
    import numpy as np
    tuned = False
    if sys.argv[1] == "import":
        import vizgrad
        from vizgrad.backends.host_memory import keep_freed_memory
        tuned = keep_freed_memory()
    def step():
        temporaries = [np.ones(1 << 18, dtype=np.float32) for _ in range(8)]
    for _ in range(2):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        step()
    print(tuned, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
""")


def _faults_per_round(import_vizgrad=True, **environ):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    out = subprocess.run([sys.executable, "-c", FAULTS_PER_ROUND, "import" if import_vizgrad else "numpy"],
                         env={**env, **environ}, capture_output=True, text=True, check=True).stdout.split()
    return out[0] == "True", float(out[1])


@glibc
def test_importing_vizgrad_keeps_freed_temporaries_for_reuse():
    _, untuned = _faults_per_round(import_vizgrad=False)
    assert untuned > 1000        # glibc hands the heap's top back each round: 2,048 fresh pages
    tuned, faults = _faults_per_round()
    assert tuned
    assert faults < 16           # the heap's pages again


@glibc
def test_malloc_settings_from_the_environment_are_kept():
    tuned, faults = _faults_per_round(MALLOC_MMAP_THRESHOLD_="131072")
    assert not tuned
    assert faults > 1000         # each temporary mapped afresh, as the environment asks


def test_what_counts_as_the_user_setting_malloc():
    assert not user_has_set_malloc({})
    assert not user_has_set_malloc({"GLIBC_TUNABLES": "glibc.rtld.nns=2"})
    assert user_has_set_malloc({"MALLOC_TRIM_THRESHOLD_": "0"})
    assert user_has_set_malloc({"MALLOC_TOP_PAD_": "1"})
    assert user_has_set_malloc({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"})
