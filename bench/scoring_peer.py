"""The peer of bench/scoring.py: lm-evaluation-harness's HFLM on the same model and questions, run
alternately with ours so that both see the same machine load."""

import time

from evaluation.scoring.lm import LMScorer


class LmEvalPeer:
    """lm-eval's HFLM around the same model object; ``run`` scores (context, candidate) requests."""

    def __init__(self, model, tokenizer, scorer: LMScorer, batch_size: int) -> None:
        from lm_eval.models.huggingface import HFLM

        self.lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size, max_length=1024)
        self.scorer = scorer

    def run(self, questions) -> tuple[list[list[float]], float, float]:
        from lm_eval.api.instance import Instance

        requests = [
            Instance(request_type="loglikelihood", doc={}, arguments=(self.scorer.render(q[0]), cand), idx=k)
            for q in questions
            for k, cand in enumerate(q[1])
        ]
        wall, cpu = time.perf_counter(), time.process_time()
        out = self.lm.loglikelihood(requests, disable_tqdm=True)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        lls, i = [], 0
        for q in questions:
            lls.append([float(ll) for ll, _ in out[i : i + len(q[1])]])
            i += len(q[1])
        return lls, wall, cpu


def side_by_side(scorer: LMScorer, peer: LmEvalPeer, questions, rounds: int) -> tuple[list, dict]:
    """Ours and lm-eval alternately on interleaved slices, so that both see the same machine load."""
    encoded = scorer.encode([scorer.render(q[0]) for q in questions], [q[1] for q in questions])
    peer.run(questions[:4])  # warm-up
    lls: list = [None] * len(questions)
    totals = {"ours_wall": 0.0, "ours_cpu": 0.0, "peer_wall": 0.0, "peer_cpu": 0.0}
    for r in range(rounds):
        index = list(range(r, len(questions), rounds))
        wall, cpu = time.perf_counter(), time.process_time()
        scorer.score_encoded([encoded[i] for i in index])
        totals["ours_wall"] += time.perf_counter() - wall
        totals["ours_cpu"] += time.process_time() - cpu
        part, wall, cpu = peer.run([questions[i] for i in index])
        totals["peer_wall"] += wall
        totals["peer_cpu"] += cpu
        for i, ll in zip(index, part, strict=True):
            lls[i] = ll
    return lls, totals
