"""An MLflow experiment, one MLflow run per crmatrix run (the extra: pip install -e .[mlflow]).

A directory as tracking URI is MLflow's file store (`mlflow ui --backend-store-uri DIR`
shows it); MLflow 3 keeps that store in maintenance and refuses it unless
MLFLOW_ALLOW_FILE_STORE is set, which this tracker does for a directory it is given.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.trackers import register

DEFAULT_URI = "results/mlruns"
# MLflow's keys allow letters, digits and _-. :/ only
_KEY = re.compile(r"[^\w\-. :/]")


def _key(name: str) -> str:
    return _KEY.sub("_", name.replace("@", "_at_"))


@register("mlflow")
class MlflowTracker:
    def __init__(self, tracking_uri: str = DEFAULT_URI, experiment: str = "crmatrix"):
        try:
            import mlflow
            from mlflow.entities import Metric, Param
        except ImportError:
            raise CrmatrixError("trackers.mlflow: mlflow is not installed; pip install -e '.[mlflow]' "
                                "(or remove the tracker from the config)") from None
        if "://" not in tracking_uri:  # a directory: the file store
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            tracking_uri = Path(tracking_uri).resolve().as_uri()
        self.Metric, self.Param = Metric, Param
        self.client = mlflow.MlflowClient(tracking_uri=tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        self.experiment_id = found.experiment_id if found else self.client.create_experiment(experiment)
        self.run_id = None

    def start_run(self, name: str, params: dict[str, str], tags: dict[str, str]) -> bool:
        tags = {f"crmatrix.{_key(k)}": v for k, v in tags.items()}
        same = f"tags.`crmatrix.run_sha256` = '{tags['crmatrix.run_sha256']}' and tags.`mlflow.runName` = '{name}'"
        if self.client.search_runs([self.experiment_id], same, max_results=1):
            return False
        self.run_id = self.client.create_run(self.experiment_id, run_name=name, tags=tags).info.run_id
        self.client.log_batch(self.run_id, params=[self.Param(_key(k), v) for k, v in params.items()])
        return True

    def log_metrics(self, metrics: dict[str, float]) -> None:
        self.client.log_batch(self.run_id, metrics=[self.Metric(_key(k), v, 0, 0) for k, v in metrics.items()])

    def log_artifact(self, path: Path) -> None:
        path = Path(path)
        if path.is_dir():
            self.client.log_artifacts(self.run_id, str(path), path.name)
        else:
            self.client.log_artifact(self.run_id, str(path))

    def end_run(self, status: str) -> None:
        self.client.set_terminated(self.run_id, status)
