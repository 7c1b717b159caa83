"""A CPU scoring process keeps freed memory, so batches do not page-fault their buffers in again."""

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the setting acts on glibc's malloc only")

ROOT = Path(__file__).resolve().parents[2]

# Forward passes of a GPT-2 (512 wide, so that its activations are MBs) on batches of changing
# widths, as a scoring worker runs them; the minor page faults of three rounds after the first
# (which fills the heap) are counted. One thread, so that the count varies less (it still
# varies: 0.2-0.7 M faults with glibc's defaults, 1-13 k with the setting, in 4 runs each).
# Transparent huge pages are turned off for the process: where they are on for every mapping
# (/sys/kernel/mm/transparent_hugepage/enabled = always) one fault maps 2 MB, and the defaults'
# count fell to 54 k while the setting's stayed at 15 k. Measured with glibc's huge-page tunable
# on a machine set to "madvise": 392 and 18 faults with huge pages, 664 k and 6.7 k without.
SCRIPT = """
import ctypes, json, resource, sys
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE
import torch, transformers
torch.set_num_threads(1)
from evaluation.scoring.allocator import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "keep" else None
torch.manual_seed(0)
config = transformers.GPT2Config(vocab_size=1000, n_positions=256, n_embd=512, n_layer=2, n_head=8,
                                 bos_token_id=0, eos_token_id=0)
model = transformers.GPT2LMHeadModel(config).eval()
def forward_passes():
    with torch.inference_mode():
        for width in (128, 120, 112, 104, 96, 88):
            model(input_ids=torch.randint(0, 1000, (16, width)))
forward_passes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
forward_passes()
forward_passes()
forward_passes()
print(json.dumps({"applied": applied, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}))
"""


def run(script: str, *args: str, **env) -> str:
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **env},
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard: the forward passes take seconds, longer on a busy machine
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.heavy  # memory of forward passes: no database in it
def test_keeping_freed_memory_removes_the_page_faults_of_repeated_forward_passes():
    # given two processes running the same forward passes, one with glibc's defaults
    default = json.loads(run(SCRIPT, "default"))
    # when the other keeps freed memory first
    kept = json.loads(run(SCRIPT, "keep"))
    # then the setting took effect, and the repeated passes fault in (almost) no fresh pages
    assert kept["applied"] is True
    assert default["faults"] > 50_000, default
    assert kept["faults"] < default["faults"] / 10, (kept, default)


def test_the_setting_can_be_turned_off_by_the_environment():
    # given a process told not to tune malloc
    script = "from evaluation.scoring.allocator import keep_freed_memory; print(keep_freed_memory())"
    # when it asks to keep freed memory
    result = run(script, WELLCHOSEN_CPU_KEEP_FREED_MEMORY="0")
    # then nothing is applied
    assert result == "False"
