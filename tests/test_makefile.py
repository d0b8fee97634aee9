"""The llama.cpp build the Makefile asks for, read from a given /proc/cpuinfo: each instruction set the CPU reports,
never AMX (a VM may report it without enabling its tile state: SIGILL at the first batched matmul), and a CPU of
its own gets a wheel of its own."""
import shutil
from pathlib import Path

import pytest

from tests import hermetic

ROOT = Path(__file__).resolve().parent.parent
SAPPHIRE = ("fpu sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512bw avx512vbmi avx512_vnni avx512_bf16 "
            "amx_tile amx_int8")
AVX2_ONLY = "fpu sse4_2 avx avx2 fma f16c bmi2"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def build(flags: str, tmp_path: Path) -> tuple[str, list[str]]:
    cpuinfo = tmp_path / f"cpuinfo-{abs(hash(flags))}"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    out = hermetic.run(["make", "-s", "-C", str(ROOT), f"CPUINFO={cpuinfo}",
                          "--eval", "print-llama: ; @echo $(LLAMA_KEY) $(LLAMA_CMAKE_ARGS)", "print-llama"],
                         capture_output=True, text=True, check=True).stdout.split()
    return out[0], out[1:]


def test_every_reported_instruction_set_is_built_but_never_amx(tmp_path):
    _, args = build(SAPPHIRE, tmp_path)
    assert "-DGGML_NATIVE=OFF" in args
    assert {"-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON", "-DGGML_AVX512_BF16=ON", "-DGGML_AVX2=ON"} <= set(args)
    assert not [a for a in args if "AMX" in a or "NATIVE=ON" in a]


def test_a_cpu_without_avx512_gets_its_own_wheel_without_it(tmp_path):
    key_avx512, _ = build(SAPPHIRE, tmp_path)
    key_avx2, args = build(AVX2_ONLY, tmp_path)
    assert "-DGGML_AVX512=OFF" in args and "-DGGML_AVX2=ON" in args
    assert key_avx2 != key_avx512
