"""Pandey, Vashisht & Ramaswamy (2022), "On the Interpretability of Attention Networks".

Modules: ``data`` (error-mode distributions, Dataset 1/2, 9-segment mosaics), ``normalisers``
(softmax, sparsemax, spherical softmax), ``models`` (focus/classification nets, batched ensembles),
``train`` (joint training of many runs as one program, cached), ``metrics`` (FTPT/FFPT/FTPF/FFPF and
sparsity diagnostics), ``reference`` (every number of the paper the book compares against, as
tables), ``tables`` (our per-run frames and the authors' tables beside ours), ``studies`` (which runs
each synthetic table trains, and the per-run values its claims are decided from), ``plots``; the image
chapters: ``images``, ``cnn``, ``image_train``, ``image_report``, ``captioning``, ``overlap``;
the error modes: ``errormodes``.
"""
