"""deploy/kubernetes.yaml is a valid set of Kubernetes objects.

No cluster runs here (docs/operations.md, "Deployment files"), so what an API server
would check first is checked offline: every document is validated, strictly (an
unknown or misspelt field is an error, as `kubectl apply --validate=strict` makes it),
against the published OpenAPI schemas of the oldest and the newest Kubernetes release
that `kubernetes-validate` ships. An operator who edits the manifest and runs this test
learns about a typo before a cluster does.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes.yaml"
# The oldest release the validator ships schemas for, and its newest.
VERSIONS = ["1.25.0", kubernetes_validate.latest_version()]


def documents() -> list[dict[str, Any]]:
    docs = [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc is not None]
    assert docs, "deploy/kubernetes.yaml holds no objects"
    return docs


@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_is_valid_for_the_kubernetes_api_strictly(version: str) -> None:
    kinds = []
    for doc in documents():
        kubernetes_validate.validate(doc, version, strict=True)  # raises ValidationError
        kinds.append(f"{doc['kind']}/{doc['metadata']['name']}")
    # What docs/operations.md describes: Redis in a StatefulSet with its Service, the
    # nodes in a Deployment behind theirs.
    assert sorted(kinds) == sorted(
        ["StatefulSet/giants-redis", "Service/giants-redis", "Deployment/giants", "Service/giants"]
    )


def test_a_misspelt_field_is_refused() -> None:
    """The check above can fail: the same manifest with one field misspelt (a typo an
    editor makes) is refused, and with a port given as text too."""
    [deployment] = [doc for doc in documents() if doc["kind"] == "Deployment"]
    typo = copy.deepcopy(deployment)
    container = typo["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(typo, VERSIONS[-1], strict=True)
    bad_port = copy.deepcopy(deployment)
    bad_port["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "eighty"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad_port, VERSIONS[-1], strict=True)
