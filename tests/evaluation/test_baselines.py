import pytest

from evaluation.baselines import TfidfBaseline
from evaluation.scoring import select
from evaluation.scoring.plugin import PluginScorer


def test_tfidf_baseline_prefers_the_candidate_sharing_rare_context_words():
    # given a context about a museum and candidates that share common or rare words with it
    contexts = [["What time does the museum open?", "I want to see the dinosaur exhibition."]]
    candidates = [["It is a good time to go.", "The dinosaur exhibition opens at the museum at ten.", "No idea."]]
    # when the TF-IDF baseline scores them
    losses = TfidfBaseline().losses(contexts, candidates)[0]
    # then the candidate with the rare shared words has the lowest loss, a candidate sharing none the highest
    assert losses.index(min(losses)) == 1
    assert losses[2] == pytest.approx(1.0)
    assert all(0.0 <= loss <= 1.0 for loss in losses)


def test_tfidf_baseline_runs_as_a_plugin_system():
    scorer = PluginScorer.from_path("evaluation.baselines.TfidfBaseline")
    scores = scorer.score([["Do you like jazz?"]], [["I love rock.", "Jazz, yes, I like jazz a lot."]])
    assert select(scores[0]) == 1
