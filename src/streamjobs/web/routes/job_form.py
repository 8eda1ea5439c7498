"""Web pages: job_form (being built)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
