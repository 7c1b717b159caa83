"""Benchmark: are candidate pools reproducible? Builds the pools of DailyDialog test questions against
a repository of DailyDialog train utterances, throws the pools and both indexes away, builds
everything again and counts the questions whose pools differ (texts, sources, ranks, scores).
With ``--batch-size`` a second pair of runs uses another batch of questions per step.

    .venv/bin/python bench/pools_repeat.py [--dialogues 100] [--train-lines 2000] [--batch-size 128 64]

Runs on a SQLite database in a temporary data folder (WELLCHOSEN_DATA_DIR); needs ../shared/data.
"""

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "dailydialog"


def head(source: Path, target: Path, lines: int) -> Path:
    with source.open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as out:
        for n, line in enumerate(src):
            if n >= lines:
                break
            out.write(line)
    return target


def pools() -> dict[int, list[tuple]]:
    from annotation.models import Candidate

    by_question = defaultdict(list)
    rows = (
        Candidate.objects.filter(question__dataset__name="dd-test", is_ground_truth=False)
        .order_by("question_id", "source", "rank")
        .values_list("question_id", "text", "source", "rank", "retrieval_score")
    )
    for question_id, *rest in rows:
        by_question[question_id].append(tuple(rest))
    return by_question


def build(batch_size: int) -> tuple[dict, float]:
    from annotation.models import Candidate
    from retrieval.models import IndexStatus, QuestionRetrieval, RetrievalIndex
    from retrieval.services.pools import pools_build

    Candidate.objects.filter(question__dataset__name="dd-test", is_ground_truth=False).delete()
    QuestionRetrieval.objects.all().delete()
    RetrievalIndex.objects.update(status=IndexStatus.FAILED)  # both indexes are built anew
    start = time.perf_counter()
    pools_build(dataset_name="dd-test", repository_name="dd-train", exclude_datasets=["dd-test"], batch_size=batch_size)
    return pools(), time.perf_counter() - start


def differing(a: dict, b: dict, *, scores: bool = True) -> int:
    def pool(p: dict, q: int) -> list:
        return [row if scores else row[:3] for row in p.get(q, [])]

    return sum(pool(a, q) != pool(b, q) for q in set(a) | set(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=100, help="DailyDialog test dialogues (questions)")
    parser.add_argument("--train-lines", type=int, default=2000, help="DailyDialog train dialogues as the repository")
    parser.add_argument("--batch-size", type=int, nargs="+", default=[128], help="questions per step, one per pair")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"needs DailyDialog in {DATA} (see ../shared/data/README.md)")
    folder = Path(tempfile.mkdtemp(prefix="wellchosen-pools-repeat-"))
    os.environ.update({"DJANGO_SETTINGS_MODULE": "config.settings.local", "WELLCHOSEN_DATA_DIR": str(folder)})
    os.environ.pop("DATABASE_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    from annotation.models import Question, Utterance
    from annotation.services.dialogue_import import dialogues_import
    from retrieval.services.repository_import import repository_import

    call_command("migrate", verbosity=0)
    test = head(DATA / "test" / "dialogues_test.txt", folder / "test.txt", args.dialogues)
    train = head(DATA / "train" / "dialogues_train.txt", folder / "train.txt", args.train_lines)
    dialogues_import(path=test, fmt="dailydialog", dataset_name="dd-test")
    repository_import(path=train, name="dd-train", fmt="dailydialog", exclude_datasets=["dd-test"])
    print(
        f"{Question.objects.filter(dataset__name='dd-test').count()} questions (DailyDialog test, "
        f"{args.dialogues} dialogues), repository of {Utterance.objects.count():,} utterances "
        f"(DailyDialog train, {args.train_lines} dialogues)"
    )
    runs = []
    for batch_size in args.batch_size:
        for attempt in (1, 2):
            result, seconds = build(batch_size)
            runs.append((batch_size, attempt, result))
            print(f"batch {batch_size}, build {attempt}: {len(result)} pools in {seconds:.1f} s")
    first = runs[0][2]
    for batch_size, attempt, result in runs[1:]:
        print(
            f"batch {batch_size}, build {attempt} vs the first: {differing(first, result)} questions differ "
            f"({differing(first, result, scores=False)} in their texts, sources or ranks)"
        )


if __name__ == "__main__":
    main()
