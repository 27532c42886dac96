"""SM clock, memory clock, power and temperature read through NVML every 100 ms in a background
thread. No torch.

pynvml (the nvidia-ml-py package) is imported when the sampler starts. Nothing here may break a
run: a failure to load, to initialise or to find the device leaves the sampler off with the reason
in `error`, and a reading that fails is left out, so the CSV says n/a for it.
"""

import threading
import time
from dataclasses import dataclass
from typing import Optional

FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c")


@dataclass(frozen=True)
class Sample:
    t: float  # time.monotonic() seconds
    sm_clock_mhz: Optional[float]
    mem_clock_mhz: Optional[float]
    power_w: Optional[float]
    temp_c: Optional[float]


@dataclass(frozen=True)
class Means:
    sm_clock_mhz: Optional[float] = None
    mem_clock_mhz: Optional[float] = None
    power_w: Optional[float] = None
    temp_c: Optional[float] = None
    samples: int = 0


def nvml_index(cuda_visible_devices):
    """The NVML index of CUDA device 0 when its UUID cannot be matched: the first entry of
    CUDA_VISIBLE_DEVICES when that is a number, else 0."""
    if not cuda_visible_devices:
        return 0
    first = cuda_visible_devices.split(",")[0].strip()
    return int(first) if first.isdigit() else 0


class NvmlSampler:
    """Samples one GPU. `nvml` may be given (a module with pynvml's functions) for tests."""

    def __init__(self, interval_s=0.1, clock=time.monotonic, nvml=None):
        self._interval = interval_s
        self._clock = clock
        self._nvml = nvml
        self._handle = None
        self._samples = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.error = None
        self.device_via = None

    def start(self, uuid=None, index=0):
        """Finds the device by UUID (as torch reports it) or else by index, and starts sampling.
        Returns True when sampling runs; otherwise `error` says why."""
        try:
            if self._nvml is None:
                import pynvml  # nvidia-ml-py
                self._nvml = pynvml
            self._nvml.nvmlInit()
        except Exception as e:  # noqa: BLE001 - any failure means no NVML, never a failed run
            self.error = "NVML unavailable: %s" % _describe(e)
            return False
        self._handle = self._find(uuid, index)
        if self._handle is None:
            return False
        self._thread = threading.Thread(target=self._loop, name="gpubench-nvml", daemon=True)
        self._thread.start()
        return True

    def _find(self, uuid, index):
        if uuid:
            try:
                handle = self._nvml.nvmlDeviceGetHandleByUUID(uuid)
                self.device_via = "uuid %s" % uuid
                return handle
            except Exception:  # noqa: BLE001 - fall back to the index
                pass
        try:
            handle = self._nvml.nvmlDeviceGetHandleByIndex(index)
            self.device_via = "index %d" % index
            return handle
        except Exception as e:  # noqa: BLE001
            self.error = "NVML found no device %s: %s" % (index, _describe(e))
            return None

    @property
    def running(self):
        return self._thread is not None and self._thread.is_alive()

    def sample_once(self):
        """One reading now (each field None when NVML refuses it)."""
        n, h = self._nvml, self._handle
        return Sample(self._clock(),
                      _read(lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
                      _read(lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
                      _read(lambda: n.nvmlDeviceGetPowerUsage(h) / 1000.0),
                      _read(lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)))

    def _loop(self):
        failures = 0
        while not self._stop.is_set():
            try:
                sample = self.sample_once()
            except Exception as e:  # noqa: BLE001 - a broken sampler only loses its columns
                self.error = "NVML sampling stopped: %s" % _describe(e)
                return
            if all(getattr(sample, f) is None for f in FIELDS):
                failures += 1
                if failures >= 20:
                    self.error = "NVML readings failed 20 times in a row; sampling stopped"
                    return
            else:
                failures = 0
                with self._lock:
                    self._samples.append(sample)
            self._stop.wait(self._interval)

    def add(self, sample):
        """Records a sample taken elsewhere (tests)."""
        with self._lock:
            self._samples.append(sample)

    def means(self, t0, t1):
        """Mean of each field over the samples taken from t0 to t1 (monotonic seconds)."""
        with self._lock:
            window = [s for s in self._samples if t0 <= s.t <= t1]
        values = {}
        for field in FIELDS:
            readings = [getattr(s, field) for s in window if getattr(s, field) is not None]
            values[field] = sum(readings) / len(readings) if readings else None
        return Means(samples=len(window), **values)

    def static_info(self):
        """Driver, power limit and maximum clocks, each 'n/a' when NVML cannot say."""
        if self._handle is None:
            return {"driver": "n/a", "power_limit_w": "n/a", "max_sm_clock_mhz": "n/a",
                    "max_mem_clock_mhz": "n/a"}
        n, h = self._nvml, self._handle
        info = {
            "driver": _read(lambda: _text(n.nvmlSystemGetDriverVersion())),
            "power_limit_w": _read(lambda: n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            "max_sm_clock_mhz": _read(lambda: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)),
            "max_mem_clock_mhz": _read(lambda: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_MEM)),
        }
        return {key: "n/a" if value is None else value for key, value in info.items()}

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._nvml is not None and self._handle is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass


def _read(fn):
    try:
        value = fn()
    except Exception:  # noqa: BLE001 - one refused reading is n/a, not a failure
        return None
    return value


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _describe(e):
    text = " ".join(str(e).split())
    return "%s: %s" % (type(e).__name__, text) if text else type(e).__name__
