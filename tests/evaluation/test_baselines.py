import math

import numpy as np
import pytest
from django.utils.module_loading import import_string

from evaluation.baselines import Question, TfidfSelector, random_trial, random_trials

REPOSITORY = ["the cat sat", "the dog ran", "the dog sat", "a train left"]


def test_idf_is_log_of_utterances_over_document_frequency():
    selector = TfidfSelector.fit(REPOSITORY)
    idf = {w: selector.idf[i] for w, i in selector.vocabulary.items()}
    assert idf["train"] == pytest.approx(math.log(4 / 1))
    assert idf["dog"] == pytest.approx(math.log(4 / 2))
    assert idf["the"] == pytest.approx(math.log(4 / 3))


def test_fit_reads_the_repository_as_a_stream():
    # given a generator, which can be read only once
    selector = TfidfSelector.fit(u for u in REPOSITORY)
    assert selector.documents == 4


def test_an_empty_repository_is_refused():
    with pytest.raises(ValueError, match="no utterances"):
        TfidfSelector.fit([])


def test_cosine_equals_a_hand_computed_tfidf_cosine():
    selector = TfidfSelector.fit(REPOSITORY)
    idf = {w: selector.idf[i] for w, i in selector.vocabulary.items()}
    # context "the dog sat" vs candidate "the cat sat": shared words "the" and "sat"
    context = {"the": idf["the"], "dog": idf["dog"], "sat": idf["sat"]}
    candidate = {"the": idf["the"], "cat": idf["cat"], "sat": idf["sat"]}
    dot = sum(context[w] * candidate.get(w, 0) for w in context)
    expected = dot / (np.linalg.norm(list(context.values())) * np.linalg.norm(list(candidate.values())))
    assert selector.scores(["the dog", "sat"], ["the cat sat"])[0] == pytest.approx(expected)


def test_select_picks_the_candidate_sharing_the_rarest_word():
    selector = TfidfSelector.fit(REPOSITORY)
    assert selector.select("did the train leave", ["the dog", "the train", "the cat"]) == 1


def test_ties_and_unknown_words_go_to_the_first_candidate():
    selector = TfidfSelector.fit(REPOSITORY)
    scores = selector.scores("zebra", ["quokka", "okapi"])
    assert list(scores) == [0.0, 0.0]
    assert selector.select("zebra", ["quokka", "okapi"]) == 0


def test_accuracy_over_trial_questions():
    selector = TfidfSelector.fit(REPOSITORY)
    questions = [Question("q1", ("the train",), "a train left"), Question("q2", ("the cat",), "the cat sat")]
    trial = random_trial(questions, ["the dog ran", "zzz", "yyy", "xxx", "www"], k=2, seed=0)
    assert selector.accuracy(trial) == 1.0


QUESTIONS = [Question(f"q{i}", (f"hello {i}", f"context {i}"), f"answer {i}") for i in range(5)]
POOL = [f"utterance {i}" for i in range(50)] + ["answer 0", "hello 1"]


def test_random_trial_has_k_false_candidates_and_the_ground_truth_where_it_says():
    trial = random_trial(QUESTIONS, POOL, k=3, seed=1)
    for question, tq in zip(QUESTIONS, trial, strict=True):
        assert len(tq.candidates) == 4
        assert tq.ground_truth == question.ground_truth
        assert len(set(tq.false_candidates)) == 3


def test_random_false_candidates_never_repeat_the_ground_truth_or_the_context():
    for trial in random_trials(QUESTIONS, POOL, k=3, trials=30, seed=2):
        for question, tq in zip(QUESTIONS, trial, strict=True):
            assert question.ground_truth not in tq.false_candidates
            assert not set(question.context) & set(tq.false_candidates)


def test_random_trials_are_deterministic_per_seed():
    assert random_trials(QUESTIONS, POOL, trials=5, seed=3) == random_trials(QUESTIONS, POOL, trials=5, seed=3)
    assert random_trials(QUESTIONS, POOL, trials=5, seed=3) != random_trials(QUESTIONS, POOL, trials=5, seed=4)


def test_a_trial_does_not_depend_on_the_number_of_trials():
    assert random_trials(QUESTIONS, POOL, trials=4, seed=0)[3] == random_trials(QUESTIONS, POOL, trials=10, seed=0)[3]


def test_trials_differ_from_each_other():
    trials = random_trials(QUESTIONS, POOL, trials=3, seed=0)
    assert trials[0] != trials[1] != trials[2]


def test_ground_truth_positions_vary():
    positions = {tq.answer_index for trial in random_trials(QUESTIONS, POOL, trials=10) for tq in trial}
    assert positions == {0, 1, 2, 3}


def test_a_repository_too_small_for_k_is_refused():
    with pytest.raises(ValueError, match="fewer than 3"):
        random_trial(QUESTIONS[:1], ["answer 0", "other"], k=3)


def test_select_all_agrees_with_select_one_by_one():
    selector = TfidfSelector.fit(REPOSITORY + POOL)
    trial = random_trial(QUESTIONS + [Question("qt", ("the dog",), "the dog ran")], POOL + REPOSITORY, k=3, seed=4)
    assert selector.select_all(trial) == [selector.select(q.context, q.candidates) for q in trial]


def dailydialog_utterances(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield from (u.strip() for u in line.split("__eou__") if u.strip())


@pytest.mark.shared_data
def test_tfidf_on_dailydialog_random_test_sets_beats_chance(shared_data):
    # given IDF from the DailyDialog train utterances, questions from the test dialogues (3 turns,
    # the 4th as ground truth) and 3 RANDOM false candidates from the test utterances
    selector = TfidfSelector.fit(dailydialog_utterances(shared_data / "dailydialog/train/dialogues_train.txt"))
    test = shared_data / "dailydialog/test/dialogues_test.txt"
    questions = []
    for i, line in enumerate(test.read_text(encoding="utf-8").splitlines()):
        turns = [u.strip() for u in line.split("__eou__") if u.strip()]
        if len(turns) >= 4:
            questions.append(Question(f"test-{i}", tuple(turns[:3]), turns[3]))
    trials = random_trials(questions, list(dailydialog_utterances(test)), k=3, trials=3, seed=0)
    accuracies = [selector.accuracy(trial) for trial in trials]
    # then it is well above chance (1 in 4); measured 0.60, 0.58, 0.58 on 918 questions
    assert len(questions) == 918
    assert all(0.45 < a < 0.75 for a in accuracies)


def test_tfidf_baseline_plugin_prefers_the_candidate_sharing_rare_context_words():
    from evaluation.baselines import TfidfBaseline

    # given a context about a museum and candidates that share common or rare words with it
    contexts = [["What time does the museum open?", "I want to see the dinosaur exhibition."]]
    candidates = [["It is a good time to go.", "The dinosaur exhibition opens at the museum at ten.", "No idea."]]
    # when the TF-IDF plugin scores them (IDF from the texts of the call)
    losses = TfidfBaseline().losses(contexts, candidates)[0]
    # then the candidate with the rare shared words has the lowest loss, one sharing nothing the highest
    assert losses.index(min(losses)) == 1
    assert losses[2] == pytest.approx(1.0)


def test_tfidf_baseline_plugin_fits_idf_on_the_systems_repository_file(tmp_path):
    from types import SimpleNamespace

    from evaluation.scoring import select
    from evaluation.scoring.plugin import PluginScorer

    # given a repository where "jazz" is in every utterance (idf 0) and "rock" in one
    repository = tmp_path / "utterances.txt"
    repository.write_text("jazz rock\njazz is fine\njazz again\n", encoding="utf-8")
    system = SimpleNamespace(checkpoint=str(repository))
    scorer = PluginScorer.from_class(import_string("evaluation.baselines.TfidfBaseline"), system=system)
    # when it scores a context that shares "jazz" with one candidate and "rock" with the other
    scores = scorer.score([["jazz and rock tonight"]], [["jazz jazz jazz", "rock it"]])
    # then only the repository-rare word counts
    assert select(scores[0]) == 1
