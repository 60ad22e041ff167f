from kgservice.expansion.directed import DirectedResult, expand_directed
from kgservice.expansion.spread import SpreadParams, SpreadResult, spread_activation

__all__ = ["DirectedResult", "expand_directed", "SpreadParams", "SpreadResult", "spread_activation"]
