# SPDX-License-Identifier: MIT
"""supports(), the KernelPreference mapping, and the package's install."""

import os
import shutil
import subprocess
import sys

import torch
from torchao.quantization.quantize_.common import KernelPreference

import mxaccel
from mxaccel import Preference, Support
from mxaccel import torch as mxt
from mxaccel import torchao as bridge


def test_kernel_preference_mapping():
    assert bridge.from_kernel_preference(KernelPreference.AUTO) == \
        Preference.AUTO
    assert bridge.from_kernel_preference(KernelPreference.TORCH) == \
        Preference.NATIVE
    assert bridge.from_kernel_preference(KernelPreference.MSLK) == \
        Preference.NATIVE
    assert bridge.from_kernel_preference(KernelPreference.EMULATED) == \
        Preference.EMULATED
    for p in Preference:
        assert bridge.from_kernel_preference(
            bridge.to_kernel_preference(p)) == p
    # torchao's enum is accepted wherever a preference is
    assert mxt.supports("cpu", "mxfp8", KernelPreference.EMULATED)[0] == \
        Support.EMULATED


def test_supports_answers_each_preference():
    for recipe in mxaccel.recipes():
        for pref in Preference:
            sup, reason = mxt.supports(torch.device("cpu"), recipe, pref)
            assert isinstance(sup, Support) and reason
            q = mxaccel.query("cpu", "gemm", recipe, pref=pref)
            assert q[0] == sup
            if pref == Preference.EMULATED and sup != Support.NONE:
                assert sup == Support.EMULATED
            if pref == Preference.NATIVE:
                assert sup in (Support.NATIVE, Support.NONE)
    # quantize runs for every recipe on cpu
    for recipe in mxaccel.recipes():
        assert mxt.supports("cpu", recipe, "auto", op="quantize")[0] != \
            Support.NONE


def test_pip_install(tmp_path):
    """`pip install` of the package directory works (no compiler needed)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # from a copy: setuptools writes build/ and *.egg-info beside the sources
    src = tmp_path / "src"
    shutil.copytree(here, src, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "--no-deps", "--no-build-isolation", "--target",
                    str(target), str(src)], check=True)
    env = dict(os.environ, PYTHONPATH=str(target),
               MXACCEL_LIBRARY=mxaccel.library_path)
    out = subprocess.run([sys.executable, "-c",
                          "import mxaccel; print(mxaccel.__file__, "
                          "mxaccel.library_version())"],
                         env=env, cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    assert str(target) in out and "0.2" in out


def test_import_without_torch():
    """import mxaccel needs no torch (capability queries from any tool)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.modules['torch'] = None; import mxaccel; "
            "print(mxaccel.query('cpu', 'gemm', 'mxfp8', pref='emulated')[0].name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=here, check=True,
                         capture_output=True, text=True).stdout
    assert "EMULATED" in out


def _example(*args):
    here = os.path.dirname(os.path.abspath(__file__))
    ex = os.path.join(here, "..", "..", "examples", "torchtitan_mx_gate.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(here, ".."),
               MXACCEL_LIBRARY=mxaccel.library_path)
    return subprocess.run([sys.executable, ex, *args], env=env,
                          capture_output=True, text=True)


def test_torchtitan_gate_example_runs_emulated_on_cpu():
    r = _example("--device", "cpu", "--recipe", "mxfp8", "--pref", "emulated")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gate: cpu runs mxfp8 under emulated: emulated" in r.stdout
    assert "relative error vs bf16" in r.stdout


def test_torchtitan_gate_example_refuses_with_reason():
    sup, reason = mxt.supports("cpu", "nvfp4", "native")
    r = _example("--device", "cpu", "--recipe", "nvfp4", "--pref", "native")
    if sup == Support.NONE:
        assert r.returncode == 1 and reason in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode == 0, r.stdout + r.stderr
