"""The addresses and words of a job's form and YAML pages, or of a new job's: one object the
routes and templates share, so a link or a button label is spelled in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class JobPages:
    """The addresses and words of the form and YAML pages of one job, or of a new one."""

    name: str | None = None

    @property
    def is_new(self) -> bool:
        return self.name is None

    @property
    def _base(self) -> str:
        return "/jobs/new" if self.name is None else f"/jobs/{quote(self.name, safe='')}"

    @property
    def form_url(self) -> str:
        return self._base if self.is_new else f"{self._base}/configure"

    @property
    def yaml_url(self) -> str:
        return f"{self._base}/yaml"

    @property
    def cancel_url(self) -> str:
        return "/jobs" if self.is_new else self._base

    @property
    def title(self) -> str:
        return "New streaming job" if self.name is None else f"Configure {self.name}"

    @property
    def submit_label(self) -> str:
        return "Create" if self.is_new else "Save"
