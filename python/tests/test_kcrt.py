"""The kcrt package against libkcrt on whatever device there is (lavapipe in
CI): every API call, every error path, and a launch loop that must not
leak. References are numpy's, on fresh random inputs; outputs are poisoned
before a kernel writes them.

KCRT_TEST_BUNDLE is the runtime tests' bundle (tests/runtime/kernels, every
variant), KCRT_TEST_DEFAULT_BUNDLE the same with default variants only.
"""
import gc
import os
import tracemalloc

import numpy as np
import pytest

import kcrt

BUNDLE = os.environ.get("KCRT_TEST_BUNDLE")
DEFAULT_BUNDLE = os.environ.get("KCRT_TEST_DEFAULT_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_BUNDLE is not set")

POISON = np.float32(np.nan)


@pytest.fixture(scope="module")
def ctx():
    try:
        c = kcrt.open()
    except kcrt.Error as e:
        if e.status == "KCRT_ERROR_NO_DEVICE":
            pytest.skip("no device: %s" % e)
        raise
    yield c
    c.close()


@pytest.fixture(scope="module")
def bundle(ctx):
    return ctx.load(BUNDLE)


@pytest.fixture
def rng():
    return np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


# ---- context ------------------------------------------------------------------------------------------


def test_open_says_what_it_opened(ctx):
    assert isinstance(ctx.device_name, str) and ctx.device_name
    assert ctx.backend in ("vulkan", "hip", "cuda")
    assert ctx.backend in repr(ctx)


def test_open_refuses_what_cannot_be(monkeypatch):
    monkeypatch.delenv("KCRT_BACKEND", raising=False)
    with pytest.raises(kcrt.Error) as e:
        kcrt.open(backend="opencl")
    assert e.value.status == "KCRT_ERROR_NO_BACKEND"
    assert "opencl" in str(e.value)
    with pytest.raises(kcrt.Error) as e:
        kcrt.open(backend="vulkan", device=999)
    assert e.value.status == "KCRT_ERROR_NO_DEVICE"
    for bad in (-1, "0", 1.5, True):
        with pytest.raises(kcrt.Error, match="device must be"):
            kcrt.open(device=bad)
    with pytest.raises(kcrt.Error, match="backend must be"):
        kcrt.open(backend=3)
    assert issubclass(kcrt.Error, RuntimeError)


def test_closed_context_is_an_error_not_a_crash(bundle):
    c = kcrt.open()
    b = c.load(BUNDLE)
    k = b.kernel("saxpy")
    buf = c.buffer(64)
    with c:
        pass  # the with block closes it
    with pytest.raises(kcrt.Error, match="closed"):
        c.buffer(16)
    with pytest.raises(kcrt.Error, match="closed"):
        c.finish()
    with pytest.raises(kcrt.Error, match="closed"):
        buf.read(np.float32, 4)
    with pytest.raises(kcrt.Error):
        k.launch(16, 1.0, buf, buf)
    buf.free()  # after the context: nothing to do, no crash
    c.close()   # twice: nothing


# ---- bundles and kernels ----------------------------------------------------------------------------------


def test_bundle_lists_its_kernels(bundle):
    assert "saxpy" in bundle.kernels and "scalars" in bundle.kernels
    assert bundle.path == BUNDLE


def test_load_refuses_what_is_not_a_bundle(ctx, tmp_path):
    with pytest.raises(kcrt.Error) as e:
        ctx.load(tmp_path / "none.kcb")
    assert e.value.status == "KCRT_ERROR_IO"
    junk = tmp_path / "junk.kcb"
    junk.write_bytes(os.urandom(100))
    with pytest.raises(kcrt.Error, match="not a kc bundle") as e:
        ctx.load(junk)
    assert e.value.status == "KCRT_ERROR_BAD_BUNDLE"


def test_kernel_params(bundle):
    k = bundle.kernel("scalars")
    assert k.params == [("gx", "scalar", "int"), ("gy", "scalar", "int"), ("i", "scalar", "int"),
                        ("u", "scalar", "uint"), ("f", "scalar", "float"), ("b", "scalar", "bool"),
                        ("out", "buffer", "float"), ("ids", "buffer", "int")]
    assert "scalars(int gx" in repr(k)


def test_kernel_and_variant_errors(bundle):
    with pytest.raises(kcrt.Error, match="no kernel 'nope'") as e:
        bundle.kernel("nope")
    assert e.value.status == "KCRT_ERROR_NO_KERNEL"
    with pytest.raises(kcrt.Error) as e:
        bundle.kernel("saxpy", variant="SX_WG=7")
    assert e.value.status == "KCRT_ERROR_NO_VARIANT"
    assert bundle.kernel("saxpy", variant="SX_WG=32,SX_TM=1").choice(
        100, 1.0, np.zeros(100, np.float32), np.zeros(100, np.float32))[0] == "SX_WG=32,SX_TM=1"


# ---- calls --------------------------------------------------------------------------------------------


def test_call_with_arrays_fills_back_what_the_kernel_writes(bundle, rng):
    n = int(rng.integers(1000, 200000))
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    y = y0.copy()
    x_before = x.copy()
    a = float(rng.standard_normal())
    bundle.kernel("saxpy")(n, a, x, y)
    np.testing.assert_allclose(y, np.float32(a) * x + y0, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(x, x_before)  # const: not written back


def test_every_variant_of_a_kernel(bundle, rng):
    n = 5000
    x = rng.standard_normal(n).astype(np.float32)
    for wg in (32, 64, 128):
        for tm in (1, 2, 4):
            y = np.full(n, POISON)
            y[:] = 1.0
            bundle.kernel("saxpy", variant="SX_WG=%d,SX_TM=%d" % (wg, tm))(n, 3.0, x, y)
            # a fused multiply-add (a GPU's) rounds once, numpy's 3x + 1
            # twice: near 3x = -1 the two differ by far more than 1e-6
            # relative; either is within 2 ulp of the exact value
            exact = 3.0 * x.astype(np.float64) + 1.0
            ulp = np.spacing(np.maximum(np.abs(3.0 * x), 1.0).astype(np.float32)).astype(np.float64)
            assert np.all(np.abs(y - exact) <= 2 * ulp), (wg, tm, np.max(np.abs(y - exact) / ulp))


def test_every_scalar_type(bundle, rng):
    k = bundle.kernel("scalars")
    gx, gy = 2, 3
    i, u, f = int(rng.integers(-2**31, 2**31 - 1)), int(rng.integers(0, 2**32 - 1)), float(rng.standard_normal())
    out = np.full(8, POISON)
    ids = np.full(gx * gy * 64, -7, np.int32)
    k(gx, gy, np.int32(i), np.uint32(u), np.float32(f), True, out, ids)
    assert out[0] == np.float32(i) and out[1] == np.float32(u) and out[2] == np.float32(f)
    assert out[4] == 1.0 and out[5] == gx and out[6] == gy and out[7] == 42
    k(gx, gy, i, u, f, False, out, ids)
    assert out[4] == -1.0


def test_half_scalars_and_buffers(bundle, rng):
    n = 777
    x = rng.standard_normal(n).astype(np.float16)
    y = np.full(n, np.float16(np.nan))
    f = np.full(n, POISON)
    s = 1.5
    bundle.kernel("half_scale")(n, s, x, y, f)
    np.testing.assert_allclose(f, x.astype(np.float32) * np.float32(s), rtol=1e-6)
    np.testing.assert_array_equal(y, (x.astype(np.float32) * np.float32(s)).astype(np.float16))


def test_vector_and_bool_buffers(bundle, rng):
    n = 300
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y0 = rng.standard_normal((n, 4)).astype(np.float32)
    y = y0.copy()
    bundle.kernel("axpy4")(n, 2.0, x, y)
    want = 2.0 * x + y0
    want[:, 3] = want[:, 0] - want[:, 1]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    xi = rng.integers(-5, 5, n).astype(np.int32)
    pos = np.zeros(n, np.bool_)
    count = np.full(n, -9, np.int32)
    bundle.kernel("bools")(n, False, xi, pos, count)
    np.testing.assert_array_equal(pos, xi > 0)


def test_non_contiguous_arrays(bundle, rng):
    n = 1000
    x = rng.standard_normal(2 * n).astype(np.float32)[::2]
    y_full = rng.standard_normal(2 * n).astype(np.float32)
    y = y_full[::2]
    y0 = y.copy()
    bundle.kernel("saxpy")(n, 2.0, x, y)
    np.testing.assert_allclose(y, 2.0 * x + y0, rtol=1e-6)


# ---- wrong calls: a kcrt.Error naming the parameter, never a crash ------------------------------------------


def test_wrong_argument_count(bundle):
    k = bundle.kernel("saxpy")
    with pytest.raises(kcrt.Error, match=r"takes 4 arguments \(n, a, x, y\), not 3"):
        k(10, 1.0, np.zeros(10, np.float32))
    with pytest.raises(kcrt.Error, match="takes 4 arguments"):
        k.launch()
    with pytest.raises(kcrt.Error, match="takes 4 arguments"):
        k.choice(1, 2, 3, 4, 5)


def test_wrong_kinds_and_types(ctx, bundle):
    k = bundle.kernel("saxpy")
    x = np.zeros(10, np.float32)
    with pytest.raises(kcrt.Error, match="'x' is a buffer of float .numpy float32., not float64"):
        k(10, 1.0, x.astype(np.float64), x)
    with pytest.raises(kcrt.Error, match="'n' is a int scalar, not a buffer"):
        k(x, 1.0, x, x)
    with pytest.raises(kcrt.Error, match="scalar 'n' is int; float is not one"):
        k(10.0, 1.0, x, x)
    with pytest.raises(kcrt.Error, match="scalar 'n' is int; bool is not one"):
        k(True, 1.0, x, x)
    with pytest.raises(kcrt.Error, match="scalar 'a' is float; str is not one"):
        k(10, "2", x, x)
    with pytest.raises(kcrt.Error, match="'y' is a buffer of float; list is not one"):
        k(10, 1.0, x, [0.0] * 10)
    with pytest.raises(kcrt.Error, match="cannot hold"):
        k(2**31, 1.0, x, x)
    with pytest.raises(kcrt.Error, match="launch takes kcrt.Buffer for 'x'"):
        k.launch(10, 1.0, x, x)
    s = bundle.kernel("scalars")
    out, ids = np.zeros(8, np.float32), np.zeros(64 * 8, np.int32)
    with pytest.raises(kcrt.Error, match="'u' .uint. cannot hold -1"):
        s(1, 1, 0, -1, 0.0, True, out, ids)
    with pytest.raises(kcrt.Error, match="scalar 'b' is bool; float is not one"):
        s(1, 1, 0, 0, 0.0, 0.5, out, ids)
    with pytest.raises(kcrt.Error, match="'x' holds float4, 4 values each; 6 values"):
        bundle.kernel("axpy4")(1, 1.0, np.zeros(6, np.float32), np.zeros(8, np.float32))


def test_too_small_arrays_and_buffers(ctx, bundle):
    k = bundle.kernel("saxpy")
    x = np.zeros(100, np.float32)
    with pytest.raises(kcrt.Error, match="x.n. needs 101 elements") as e:
        k(101, 1.0, x, np.zeros(101, np.float32))
    assert e.value.status == "KCRT_ERROR_BAD_ARGUMENT"
    small, big = ctx.buffer(16), ctx.buffer(4096)
    with pytest.raises(kcrt.Error, match="y.n. needs 100 elements"):
        k.launch(100, 1.0, big, small)
    assert ctx.stats()["buffers_live"] >= 2
    small.free(), big.free()


def test_buffers_of_another_context(bundle):
    other = kcrt.open()
    buf = other.buffer(4096)
    with pytest.raises(kcrt.Error, match="another context"):
        bundle.kernel("saxpy").launch(10, 1.0, buf, buf)
    other.close()


# ---- buffers, launch, choice, finish ---------------------------------------------------------------------


def test_buffer_write_read(ctx, rng):
    data = rng.standard_normal(1000).astype(np.float32)
    buf = ctx.buffer(data.nbytes)
    assert buf.nbytes == 4000
    np.testing.assert_array_equal(buf.read(np.float32, 1000), np.zeros(1000, np.float32))  # new: zeros
    buf.write(data)
    np.testing.assert_array_equal(buf.read(np.float32, 1000), data)
    np.testing.assert_array_equal(buf.read(np.float32), data)
    buf.write(data[:10], offset=400)
    np.testing.assert_array_equal(buf.read(np.float32, 10, offset=400), data[:10])
    with pytest.raises(kcrt.Error, match="do not fit"):
        buf.write(data, offset=4)
    with pytest.raises(kcrt.Error, match="do not fit"):
        buf.read(np.float32, 1001)
    for bad in (0, -4, 2.5, True, "8"):
        with pytest.raises(kcrt.Error, match="nbytes"):
            ctx.buffer(bad)
    buf.free()
    with pytest.raises(kcrt.Error, match="freed"):
        buf.read(np.float32, 1)
    buf.free()  # twice: nothing


def test_buffer_copy_from(ctx, bundle, rng):
    # on the device, in order with the launches: the copy sees saxpy's y, a launch after it sees the copy
    x, y = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    bx, by, bz = ctx.buffer(1200), ctx.buffer(1200), ctx.buffer(1216)
    bx.write(x), by.write(y)
    k = bundle.kernel("saxpy")
    k.launch(300, 2.0, bx, by)
    bz.copy_from(by, 1200, offset=16)
    k.launch(300, 2.0, bx, by)
    np.testing.assert_array_equal(bz.read(np.float32, 300, offset=16), np.float32(2) * x + y)
    np.testing.assert_array_equal(bz.read(np.float32, 4), np.zeros(4, np.float32))
    bz.copy_from(bz, 400, offset=0, src_offset=416)  # one buffer, apart
    np.testing.assert_array_equal(bz.read(np.float32, 100), bz.read(np.float32, 100, offset=416))
    with pytest.raises(kcrt.Error, match="overlap"):
        bz.copy_from(bz, 400, offset=0, src_offset=200)
    with pytest.raises(kcrt.Error, match="do not fit"):
        bx.copy_from(bz)
    with pytest.raises(kcrt.Error, match="src_offset"):
        bx.copy_from(by, 4, src_offset=-4)
    with pytest.raises(kcrt.Error, match="kcrt.Buffer"):
        bx.copy_from(y)
    other = kcrt.open()
    with pytest.raises(kcrt.Error, match="two contexts"):
        bx.copy_from(other.buffer(64), 64)
    other.close()


def test_launch_is_asynchronous_until_finish(ctx, bundle, rng):
    n = 65536
    x = rng.standard_normal(n).astype(np.float32)
    xb, yb = ctx.buffer(x.nbytes), ctx.buffer(x.nbytes)
    xb.write(x)
    yb.write(np.full(n, POISON))
    yb.write(np.zeros(n, np.float32))
    k = bundle.kernel("saxpy")
    for _ in range(3):
        k.launch(n, 1.0, xb, yb)  # y += x, three times, in order
    ctx.finish()
    np.testing.assert_allclose(yb.read(np.float32, n), 3 * x, rtol=1e-5)
    # a Buffer passes as it is to a synchronous call too
    k(n, -3.0, xb, yb)
    np.testing.assert_allclose(yb.read(np.float32, n), 0, atol=1e-5)


def test_choice_says_which_variant_and_why(ctx, bundle):
    n = 1000
    xb, yb = ctx.buffer(4 * n), ctx.buffer(4 * n)
    variant, why = bundle.kernel("saxpy").choice(n, 1.0, xb, yb)
    assert "SX_WG=" in variant and why
    assert bundle.kernel("saxpy", variant="SX_WG=128,SX_TM=4").choice(n, 1.0, xb, yb)[0] == "SX_WG=128,SX_TM=4"
    a = np.zeros(n, np.float32)
    assert bundle.kernel("saxpy").choice(n, 1.0, a, a)[0] == variant  # arrays too


@pytest.mark.skipif(not DEFAULT_BUNDLE, reason="KCRT_TEST_DEFAULT_BUNDLE is not set")
def test_default_bundle(ctx):
    b = ctx.load(DEFAULT_BUNDLE)
    n = 100
    y = np.ones(n, np.float32)
    b.kernel("saxpy")(n, 1.0, np.ones(n, np.float32), y)
    np.testing.assert_array_equal(y, 2.0)


# ---- no leak -------------------------------------------------------------------------------------------


def test_thousand_launches_do_not_leak(ctx, bundle, rng):
    n = 4096
    k = bundle.kernel("saxpy")
    x = rng.standard_normal(n).astype(np.float32)
    xb, yb = ctx.buffer(x.nbytes), ctx.buffer(x.nbytes)
    xb.write(x)
    y = np.zeros(n, np.float32)

    def round_trip(count):
        for i in range(count):
            k.launch(n, 1.0, xb, yb)
            if i % 100 == 99:
                ctx.finish()
            k(n, 0.5, x, y)  # temporary buffers each time

    round_trip(100)  # warm: pipelines, caches
    gc.collect()
    buffers = ctx.stats()["buffers_live"]
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    round_trip(1000)
    ctx.finish()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert ctx.stats()["buffers_live"] == buffers
    assert grown < 64 * 1024, "Python memory grew by %d bytes over 1000 calls" % grown
    np.testing.assert_allclose(y, 0.5 * 1100 * x, rtol=1e-4)
    np.testing.assert_allclose(yb.read(np.float32, n), 1100 * x, rtol=1e-4)


# ---- where the library is looked for ---------------------------------------------------------------

def test_library_candidates_on_windows():
    """kcrt.dll: beside the package (an app ships it there), the prefix's bin/ (cmake --install) and
    Library/bin/ (conda), the DLL search path, the build tree; KCRT_LIBRARY alone when set."""
    from kcrt import _lib
    prefix = os.path.join("C:", os.sep, "Python311")
    got = _lib._candidates("win32", {}, prefix)
    package = os.path.dirname(os.path.abspath(_lib.__file__))
    assert got[:4] == [os.path.join(package, "kcrt.dll"), os.path.join(prefix, "bin", "kcrt.dll"),
                       os.path.join(prefix, "Library", "bin", "kcrt.dll"), "kcrt.dll"]
    assert got[4].endswith(os.path.join("runtime", "kcrt.dll"))
    assert not any("libkcrt.so" in c for c in got)
    assert _lib._candidates("win32", {"KCRT_LIBRARY": r"D:\app\kcrt.dll"}, prefix) == [r"D:\app\kcrt.dll"]


def test_library_candidates_on_linux():
    from kcrt import _lib
    got = _lib._candidates("linux", {}, "/opt/py")
    assert got[:3] == ["libkcrt.so.0", "/opt/py/lib/libkcrt.so.0", "/opt/py/lib64/libkcrt.so.0"]
    assert got[3].endswith("runtime/libkcrt.so.0")
    assert not any(c.endswith(".dll") for c in got)
