from kgservice.families.lexicon import FamilyInfo, Lexicon, RELATION_KINDS, SPREAD_KINDS

__all__ = ["FamilyInfo", "Lexicon", "RELATION_KINDS", "SPREAD_KINDS"]
