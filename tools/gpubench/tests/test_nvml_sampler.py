"""The NVML sampler with a stand-in for pynvml: failures become n/a, never a failed run."""

import unittest

import _support  # noqa: F401
from nvml_sampler import NvmlSampler, Sample, nvml_index


class FakeNvml:
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, fail_init=False, fail_power=False, uuids=("GPU-abc",)):
        self.fail_init = fail_init
        self.fail_power = fail_power
        self.uuids = uuids
        self.shut = False

    def nvmlInit(self):
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetHandleByUUID(self, uuid):
        if uuid not in self.uuids:
            raise RuntimeError("Not Found")
        return ("uuid", uuid)

    def nvmlDeviceGetHandleByIndex(self, index):
        if index != 0:
            raise RuntimeError("Invalid Argument")
        return ("index", index)

    def nvmlDeviceGetClockInfo(self, handle, which):
        return 1980 if which == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetPowerUsage(self, handle):
        if self.fail_power:
            raise RuntimeError("Not Supported")
        return 650_500  # milliwatts

    def nvmlDeviceGetTemperature(self, handle, sensor):
        return 61

    def nvmlSystemGetDriverVersion(self):
        return b"580.159.03"

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return 700_000

    def nvmlDeviceGetMaxClockInfo(self, handle, which):
        return 1980 if which == self.NVML_CLOCK_SM else 3201


class Sampler(unittest.TestCase):
    def test_no_nvml_means_n_a_everywhere(self):
        sampler = NvmlSampler(nvml=FakeNvml(fail_init=True))
        self.assertFalse(sampler.start(uuid="GPU-abc"))
        self.assertIn("NVML unavailable: RuntimeError: NVML Shared Library Not Found",
                      sampler.error)
        means = sampler.means(0, 1e12)
        self.assertEqual((means.sm_clock_mhz, means.power_w, means.temp_c, means.samples),
                         (None, None, None, 0))
        self.assertEqual(sampler.static_info()["power_limit_w"], "n/a")
        sampler.stop()

    def test_missing_pynvml_is_not_an_error_for_the_run(self):
        sampler = NvmlSampler()
        import builtins
        real_import = builtins.__import__

        def no_pynvml(name, *args, **kwargs):
            if name == "pynvml":
                raise ImportError("No module named 'pynvml'")
            return real_import(name, *args, **kwargs)

        builtins.__import__ = no_pynvml
        try:
            self.assertFalse(sampler.start())
        finally:
            builtins.__import__ = real_import
        self.assertIn("No module named 'pynvml'", sampler.error)

    def test_finds_by_uuid_then_falls_back_to_the_index(self):
        sampler = NvmlSampler(nvml=FakeNvml())
        self.assertTrue(sampler.start(uuid="GPU-abc"))
        self.assertEqual(sampler.device_via, "uuid GPU-abc")
        sampler.stop()
        sampler = NvmlSampler(nvml=FakeNvml())
        self.assertTrue(sampler.start(uuid="GPU-other", index=0))
        self.assertEqual(sampler.device_via, "index 0")
        sampler.stop()
        sampler = NvmlSampler(nvml=FakeNvml())
        self.assertFalse(sampler.start(uuid=None, index=3))
        self.assertIn("NVML found no device 3", sampler.error)

    def test_readings_and_units(self):
        nvml = FakeNvml()
        sampler = NvmlSampler(nvml=nvml, clock=lambda: 5.0)
        sampler._nvml, sampler._handle = nvml, ("index", 0)
        sample = sampler.sample_once()
        # power: 650,500 mW = 650.5 W
        self.assertEqual(sample, Sample(5.0, 1980, 3201, 650.5, 61))
        self.assertEqual(sampler.static_info(),
                         {"driver": "580.159.03", "power_limit_w": 700.0,
                          "max_sm_clock_mhz": 1980, "max_mem_clock_mhz": 3201})

    def test_a_refused_reading_is_left_out_alone(self):
        nvml = FakeNvml(fail_power=True)
        sampler = NvmlSampler(nvml=nvml, clock=lambda: 1.0)
        sampler._nvml, sampler._handle = nvml, ("index", 0)
        sample = sampler.sample_once()
        self.assertIsNone(sample.power_w)
        self.assertEqual(sample.sm_clock_mhz, 1980)

    def test_means_over_a_window(self):
        sampler = NvmlSampler(nvml=FakeNvml())
        for t, sm, power in ((1.0, 1000, 300.0), (2.0, 2000, None), (3.0, 1500, 500.0),
                             (9.0, 100, 100.0)):
            sampler.add(Sample(t, sm, 3201, power, 60))
        means = sampler.means(1.0, 3.0)
        # SM (1000 + 2000 + 1500) / 3 = 1500; power (300 + 500) / 2 = 400, the gap skipped
        self.assertEqual((means.sm_clock_mhz, means.power_w, means.samples), (1500, 400, 3))
        self.assertEqual(sampler.means(4.0, 5.0).samples, 0)

    def test_the_thread_samples_and_stops(self):
        nvml = FakeNvml()
        sampler = NvmlSampler(interval_s=0.01, nvml=nvml)
        self.assertTrue(sampler.start())
        import time
        deadline = time.monotonic() + 5
        while sampler.means(0, 1e12).samples < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        sampler.stop()
        self.assertGreaterEqual(sampler.means(0, 1e12).samples, 3)
        self.assertFalse(sampler.running)
        self.assertTrue(nvml.shut)


class Index(unittest.TestCase):
    def test_cuda_visible_devices(self):
        self.assertEqual(nvml_index(None), 0)
        self.assertEqual(nvml_index(""), 0)
        self.assertEqual(nvml_index("3,1"), 3)
        self.assertEqual(nvml_index("GPU-1234"), 0)


if __name__ == "__main__":
    unittest.main()
