"""The base of every scenario section: frozen, and unknown keys refused at every depth."""

from __future__ import annotations

from pydantic import ConfigDict

from ctxlab.inputs import InputModel


class Section(InputModel):
    """Base of the scenario's own sections: frozen, unknown keys refused, validators built at first
    use (`defer_build`, as every lab model: start-up builds none)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
