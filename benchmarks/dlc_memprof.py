"""Memory per stage of the ``dlc`` preset (tracemalloc), in units of the input size X.

``python benchmarks/dlc_memprof.py N [--f32-rounding]``: the first N MNIST images (unit-length
float32 rows); prints the peak allocation of each solver step, the layer-2 landmark
selection and the k-means rounding. ``--f32-rounding`` patches the common ``kmeans``
rounding (for this process only) to keep a float32 embedding in float32 instead of
casting it to float64, to measure what that change would save.
Not importable as a benchmark module (it instruments the parts); a diagnostic script.
"""
import tracemalloc, time, warnings, numpy as np, sys
import graphclust
from graphclust.data import load_dataset
from sklearn.preprocessing import normalize
from graphclust_plugins.dlc import solver as S, _slc, _codes
n = int(sys.argv[1])
if "--f32-rounding" in sys.argv:
    import graphclust_plugins.common.rounding_kmeans as _RK

    def _prepare(self, E):
        E = np.asarray(E)
        return E if E.dtype == np.float32 else np.asarray(E, dtype=np.float64)

    _RK.KMeansRounding._prepare = _prepare
X, y = load_dataset("mnist", "/work/shared/data")
X = normalize(X[:n].astype(np.float32))
unit = X.nbytes / 2**20
print(f"X: {X.shape} {X.dtype} = {unit:.1f} MB")
tracemalloc.start()
def wrap(mod, name):
    f = getattr(mod, name)
    def g(*a, **k):
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        t = time.perf_counter()
        out = f(*a, **k)
        cur, peak = tracemalloc.get_traced_memory()
        print(f"  {mod.__name__.split('.')[-1]}.{name}: peak +{(peak-before)/2**20:.1f} MB ({(peak-before)/2**20/unit:.2f} X), kept +{(cur-before)/2**20:.1f} MB, alive before {before/2**20/unit:.2f} X after {cur/2**20/unit:.2f} X, {time.perf_counter()-t:.1f}s", flush=True)
        return out
    setattr(mod, name, g)
for nm in ("project", "gram", "sparse_cross"):
    wrap(_slc, nm)
wrap(S, "gaussian_codes")
import graphclust_plugins.dlc._anchors as A
orig = A.layer_selector
def ls(*a, **k):
    sel = orig(*a, **k)
    f = sel.select
    def sel2(Xl, ctx):
        before = tracemalloc.get_traced_memory()[0]; tracemalloc.reset_peak()
        out = f(Xl, ctx)
        cur, peak = tracemalloc.get_traced_memory()
        print(f"  layer select on {Xl.shape} {Xl.dtype}: peak +{(peak-before)/2**20:.1f} MB ({(peak-before)/2**20/unit:.2f} X) alive before {before/2**20/unit:.2f} X", flush=True)
        return out
    sel.select = sel2
    return sel
S.layer_selector = ls
import graphclust_plugins.common.rounding_kmeans as RK
fr = RK.KMeansRounding.round
def rr(self, sol, c, ctx):
    before = tracemalloc.get_traced_memory()[0]; tracemalloc.reset_peak()
    out = fr(self, sol, c, ctx)
    cur, peak = tracemalloc.get_traced_memory()
    print(f"  rounding: peak +{(peak-before)/2**20/unit:.2f} X alive before {before/2**20/unit:.2f} X", flush=True)
    return out
RK.KMeansRounding.round = rr
est = graphclust.GraphClustering("dlc", n_clusters=10, random_state=0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    tracemalloc.reset_peak()
    est.fit(X)
cur, peak = tracemalloc.get_traced_memory()
print(f"fit total peak {peak/2**20:.1f} MB = {peak/2**20/unit:.2f} X; timings {est.timings_}")
print("embedding", est.solution_.embedding.shape, est.solution_.embedding.dtype)
