"""The ``uspec`` bundle: Huang, Wang, Wu, Lai, Kwoh — Ultra-Scalable Spectral Clustering
(U-SPEC), IEEE TKDE 2020.

Private maths: :mod:`graphclust_plugins.uspec._tcut` (transfer cut on any bipartite graph).
"""
