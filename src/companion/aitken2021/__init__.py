"""Aitken, Ramasesh, Cao, Maheswaranathan (NeurIPS 2021): how encoder-decoder networks attend.

Modules (one concept each):

- :mod:`.tasks`     tasks with a common :class:`~.tasks.Seq2SeqData` structure (one-to-one + variants)
- :mod:`.models`    VED / AED / AO networks stacked over an ensemble axis; forward returns a
                    :class:`~.models.Trace`
- :mod:`.train`     the paper's optimiser recipe, ensembles as one batched program, cached
- :mod:`.nongated`  a non-gated AO (tanh layers instead of gated cells), trained with the same recipe
- :mod:`.decompose` temporal (mu), input-delta (chi) and residual (delta) components; the nine alignment terms
- :mod:`.metrics`   numbers from a trace and its decomposition (term shares, average attention, word
                    variance, readout alignment, variance over time, norms), accuracies
- :mod:`.analysis`  one call that runs a trained ensemble on an analysis set and computes everything
- :mod:`.ensembles` the eSCAN and English->French ensembles, their analysis sets, their accuracy-table rows
- :mod:`.offdiagonal` how attention leaves the diagonal (offsets, source finding)
- :mod:`.comparison` one-to-one, eSCAN and English->French side by side
- :mod:`.translation` English->French scores and the readout on word pairs
- :mod:`.plots`     one function per panel, by what it shows: attention, components, variance, offsets,
                    networks
- :mod:`.tables`    the accuracy table (T1) and the hyperparameter table (T2)
"""
