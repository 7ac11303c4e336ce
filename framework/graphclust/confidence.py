"""The confidence protocol's public helpers (:doc:`/confidence`): what a third-party
rounding or adapter uses to give a confidence as the built-in parts do."""

from graphclust._confidence import (agree, clean_confidence, graph_agreement, label_profile,
                                    member_agreement, profile_agreement)

__all__ = ["agree", "clean_confidence", "graph_agreement", "label_profile",
           "member_agreement", "profile_agreement"]
