"""The real runs every report document test reads (see shared.py), made once per session."""

from __future__ import annotations

import pytest

from report.documents.shared import Measured, make_measured


@pytest.fixture(scope="session")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    return make_measured(tmp_path_factory.mktemp("measured"))
