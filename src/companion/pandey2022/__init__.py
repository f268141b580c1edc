"""Pandey, Vashisht & Ramaswamy (2022), "On the Interpretability of Attention Networks".

Modules: ``data`` (error-mode distributions, Dataset 1/2, 9-segment mosaics), ``normalisers``
(softmax, sparsemax, spherical softmax), ``models`` (focus/classification nets, batched ensembles),
``train`` (joint training of many runs as one program, cached), ``metrics`` (FTPT/FFPT/FTPF/FFPF and
sparsity diagnostics), ``tables`` (the paper's reference numbers, side-by-side tables), ``plots``.
"""
