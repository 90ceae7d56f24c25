"""What the suite's modules share: `ops`, kcrt.nn.Ops over a context of
its own and KCRT_TEST_RVC_BUNDLE (kernels/), one a module, skipped where
there is no device; `rng`, a fresh seed each test, printed so that a
failure can be run again. And the suite's last line, which says what a CI
log reader looks for: how many tests passed and failed, on which device
and backend, and whether the Vulkan validation layer was on
(KCRT_VALIDATION)."""
import os

import numpy as np
import pytest


@pytest.fixture(scope="module")
def ops():
    import kcrt
    import kcrt.nn
    try:
        ctx = kcrt.open()
    except kcrt.Error as e:
        pytest.skip("no device: %s" % e)
    yield kcrt.nn.Ops(ctx.load(os.environ["KCRT_TEST_RVC_BUNDLE"]))
    ctx.close()


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return np.random.default_rng(seed)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = terminalreporter.stats
    count = lambda key: len(stats.get(key, []))  # noqa: E731
    device = "no device"
    try:
        import kcrt
        ctx = kcrt.open()
        device = "%s through %s" % (ctx.device_name, ctx.backend)
        ctx.close()
    except Exception as e:  # a summary line must not fail the run
        device = "no device (%s)" % e
    terminalreporter.write_line("kcrt suite: %d passed, %d failed, %d skipped, %d errors on %s; validation layer %s"
                                % (count("passed"), count("failed"), count("skipped"), count("error"), device,
                                   "on" if os.environ.get("KCRT_VALIDATION") == "1" else "off"))
