"""The suite's last line says what a CI log reader looks for: how many
tests passed and failed, on which device and backend, and whether the
Vulkan validation layer was on (KCRT_VALIDATION)."""
import os


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
