"""What `make test` compiles runs on any x86-64 machine: the llama.cpp CPU backend holds no
instruction the build machine's kernel does not enable, and never AVX-512 or AMX (a native build on
a CPU that advertises AMX died with SIGILL, `tileloadd`, on its first completion)."""

import platform
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llama_server import describe_exit


def _cpu_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[1].split()) if ":" in line else set()


def test_the_llama_cpp_cpu_backend_uses_no_instruction_beyond_avx2():
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python[server] is installed by `make test`")
    if platform.machine() != "x86_64" or shutil.which("objdump") is None:
        pytest.skip("an x86-64 check that reads the library with objdump (binutils)")
    libs = sorted(Path(llama_cpp.__file__).parent.glob("lib/libggml-cpu*.so*"))
    assert libs, "llama_cpp ships no libggml-cpu library"
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(libs[0])], capture_output=True,
                          text=True, check=True).stdout
    # AVX-512 writes zmm or mask registers; AMX loads tiles. Neither may appear, whatever this CPU has.
    assert not re.search(r"%zmm\d|\btile(loadd|stored|zero)|\btdpb", code)
    flags = _cpu_flags()
    if "avx2" not in flags:          # built here without AVX2: no 256-bit registers either
        assert "%ymm" not in code


def test_a_server_killed_by_an_illegal_instruction_says_so():
    proc = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"])
    assert proc.returncode == -signal.SIGILL
    text = describe_exit(proc.returncode)
    assert "SIGILL" in text and "illegal instruction" in text and "rebuild it portably" in text
    assert describe_exit(-signal.SIGKILL) == "it died with SIGKILL"
    assert describe_exit(3) == "it exited with status 3"
