"""The Aitken et al. (2021) panels, one module per thing they show; each function returns a Figure.

- :mod:`.attention`: attention matrices, the average attention matrix, source finding, learned attention
- :mod:`.components`: temporal and input components, the readout, the nine alignment terms
- :mod:`.variance`: variance, participation ratio, norms, word variance
- :mod:`.offsets`: where attention sits relative to the diagonal
- :mod:`.networks`: the architecture diagram, accuracy, loss, translation scores
- :mod:`.style`: the colours they share
"""

from . import attention, components, networks, offsets, style, variance

__all__ = ["attention", "components", "networks", "offsets", "style", "variance"]
