"""The Hugging Face layout of a release: one self-contained dataset folder (data/test.jsonl and
data/test.parquet, the dataset card, croissant.json, an lm-evaluation-harness task, manifest.json).

records.py writes and reads its records; folder_write.py writes the folder, folder_read.py reads
what a folder says about its data file; card.py, croissant.py and lm_eval_task.py beside them.
"""

from pathlib import Path

from testsets.job_params import ImportHFTestsetParams
from testsets.models import TestSet

from ..base import Download, TestsetFormat
from .folder_write import hf_folder_write, hf_folder_zip


class HFFormat(TestsetFormat):
    name = "hf"
    default = False  # written only when asked: the Parquet needs pyarrow and every record in memory
    import_params = ImportHFTestsetParams

    def downloads(self, testset: TestSet) -> list[Download]:
        """The folder as a zip, built in memory: the Parquet and the manifest of sha256 need every
        record first."""
        return [
            Download(self.name, f"{testset.name}.{self.name}.zip", "application/zip", lambda: hf_folder_zip(testset))
        ]

    def folder_write(self, testset: TestSet, out_dir: Path) -> list[Path]:
        return hf_folder_write(testset=testset, out_dir=out_dir)
