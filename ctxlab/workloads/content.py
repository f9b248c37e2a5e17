"""Sized content of a scenario file: text, `{bytes: N}`, `{tokens: N}`, images and blocks of them.

Invariants:
- Every form forbids unknown keys and is recognised by its key (`text`, `bytes`, `tokens`,
  `blocks`, `image`); a value of no known form is reported once, with the forms allowed there.
- `{bytes: N}` becomes exactly N UTF-8 bytes of filler; `{tokens: N}` exactly 4·N bytes, which
  `AgentScopeEstimator` counts as N tokens (`lang: zh` too: Chinese padded with ASCII).
- Rendering is deterministic: each item draws from its own generator, derived from the seed and
  the item's field path, so editing one item never changes the text of another.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.inputs import InputModel
from ctxlab.problems import Loc, located_error, unknown_key
from ctxlab.workloads.filler import FillerKind, filler_at, image_block
from ctxlab.workloads.limits import Bytes, Tokens

AsciiKind = Literal["prose", "code", "json", "log", "shell"]
Lang = Literal["en", "zh"]
Seconds = Annotated[float, Field(allow_inf_nan=False)]


class Spec(InputModel):
    """Base of every workload model: frozen, unknown keys rejected with a 'did you mean'.

    Its validator is built at first use (`defer_build`), as are every lab model's: a process
    builds only the models its scenario reaches, not every generator's parameters.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = _field_names(cls)
        if fields.issuperset(data):
            return data
        unknown = [key for key in data if key not in fields]
        if unknown:
            problems: list[tuple[Loc, str, object]] = [
                ((str(key),), unknown_key(key, list(cls.model_fields)), data[key]) for key in unknown
            ]
            raise located_error(cls.__name__, problems)
        return data


@functools.cache
def _field_names(model: type[BaseModel]) -> frozenset[str]:
    """The model's field names, read once per class: `model_fields` is a computed class property,
    and a scenario validates thousands of items (the first reads of it per process are slow)."""
    return frozenset(model.model_fields)


class TextSpec(Spec):
    """Literal text: `{text: "..."}`."""

    text: str

    def render(self, seed: int, path: str) -> str:
        """The text itself."""
        return self.text


class _SizedSpec(Spec):
    kind: AsciiKind = Field(default="prose", description="What the filler looks like.")
    lang: Lang = Field(default="en", description="`zh`: Chinese prose (3 bytes per character).")

    @model_validator(mode="after")
    def _zh_is_prose(self) -> _SizedSpec:
        if self.lang == "zh" and self.kind != "prose":
            raise located_error(
                type(self).__name__,
                [(("kind",), f"lang: zh comes only as prose, not {self.kind!r}; drop `kind`", self.kind)],
            )
        return self

    def _filler_kind(self) -> FillerKind:
        return "zh" if self.lang == "zh" else self.kind


class BytesSpec(_SizedSpec):
    """Exactly `bytes` UTF-8 bytes of deterministic filler: `{bytes: N}`."""

    bytes: Bytes = Field(ge=0, description="Exact size in UTF-8 bytes.")

    def render(self, seed: int, path: str) -> str:
        """The filler for the item at `path`."""
        return filler_at(seed, path, self._filler_kind(), self.bytes)


class TokensSpec(_SizedSpec):
    """Filler counted as exactly `tokens` by the AgentScope estimator (4·N bytes): `{tokens: N}`."""

    tokens: Tokens = Field(ge=0, description="Exact size in estimator tokens (4 bytes each).")

    def render(self, seed: int, path: str) -> str:
        """The filler for the item at `path`."""
        return filler_at(seed, path, self._filler_kind(), 4 * self.tokens)


class ImageSpec(Spec):
    """An image (or other data) part: `{image: image/png}`."""

    image: str = Field(description="Media type, e.g. image/png.")
    source: Literal["url", "base64"] = Field(default="url", description="A URL or an inline payload.")
    name: str | None = None

    @field_validator("image")
    @classmethod
    def _media_type(cls, value: str) -> str:
        return check_media_type(value)

    def part(self, seed: int, path: str) -> Part:
        """A deterministic data block for the item at `path`."""
        return image_block(self.image, seed=seed, path=path, source=self.source, name=self.name)


def check_media_type(value: str) -> str:
    """`value` if it reads as `type/subtype`; else a ValueError saying how to write one.

    >>> check_media_type("image/png")
    'image/png'
    """
    kind, _, sub = value.partition("/")
    if not kind or not sub or " " in value:
        raise ValueError(f"{value!r} is not a media type; write type/subtype, e.g. image/png or image/jpeg")
    return value


def _tagger(allowed: tuple[str, ...]) -> Callable[[Any], str | None]:
    def tag(value: Any) -> str | None:
        if isinstance(value, str):
            found = "string"
        elif isinstance(value, dict):
            found = next((f"{{{key}}}" for key in _FORM_KEYS if key in value), "")
        else:
            found = _FORM_CLASSES.get(type(value).__name__, "")
        return found if found in allowed else None

    return tag


_FORM_KEYS = ("text", "bytes", "tokens", "blocks", "image")
_FORM_CLASSES = {
    "TextSpec": "{text}",
    "BytesSpec": "{bytes}",
    "TokensSpec": "{tokens}",
    "BlocksSpec": "{blocks}",
    "ImageSpec": "{image}",
}
_TEXT_FORMS = "a string, {text: ...}, {bytes: N} or {tokens: N} (optionally with lang: zh)"

PartForm = Annotated[
    Annotated[str, Tag("string")]
    | Annotated[TextSpec, Tag("{text}")]
    | Annotated[BytesSpec, Tag("{bytes}")]
    | Annotated[TokensSpec, Tag("{tokens}")]
    | Annotated[ImageSpec, Tag("{image}")],
    Discriminator(
        _tagger(("string", "{text}", "{bytes}", "{tokens}", "{image}")),
        custom_error_type="ctxlab_form",
        custom_error_message=f"a block must be {_TEXT_FORMS}, or {{image: media/type}}",
    ),
]


class BlocksSpec(Spec):
    """Several parts in order: `{blocks: [{bytes: 10}, {image: image/png}]}`."""

    blocks: list[PartForm] = Field(min_length=1)

    def parts(self, seed: int, path: str) -> tuple[Part, ...]:
        """The parts, each generated at its own path `path.blocks[i]`."""
        return tuple(_part(block, seed, f"{path}.blocks[{i}]") for i, block in enumerate(self.blocks))


TextForm = Annotated[
    Annotated[str, Tag("string")]
    | Annotated[TextSpec, Tag("{text}")]
    | Annotated[BytesSpec, Tag("{bytes}")]
    | Annotated[TokensSpec, Tag("{tokens}")],
    Discriminator(
        _tagger(("string", "{text}", "{bytes}", "{tokens}")),
        custom_error_type="ctxlab_form",
        custom_error_message=f"expected {_TEXT_FORMS}",
    ),
]
ContentForm = Annotated[
    Annotated[str, Tag("string")]
    | Annotated[TextSpec, Tag("{text}")]
    | Annotated[BytesSpec, Tag("{bytes}")]
    | Annotated[TokensSpec, Tag("{tokens}")]
    | Annotated[BlocksSpec, Tag("{blocks}")],
    Discriminator(
        _tagger(("string", "{text}", "{bytes}", "{tokens}", "{blocks}")),
        custom_error_type="ctxlab_form",
        custom_error_message=f"expected {_TEXT_FORMS}, or {{blocks: [...]}} "
        "(text parts and {image: media/type})",
    ),
]


def render_text(form: str | TextSpec | BytesSpec | TokensSpec, seed: int, path: str) -> str:
    """The text of a text form for the item at `path`."""
    return form if isinstance(form, str) else form.render(seed, path)


def _part(form: str | TextSpec | BytesSpec | TokensSpec | ImageSpec, seed: int, path: str) -> Part:
    if isinstance(form, ImageSpec):
        return form.part(seed, path)
    return TextBlock(text=render_text(form, seed, path))


def render_parts(
    form: str | TextSpec | BytesSpec | TokensSpec | BlocksSpec, seed: int, path: str
) -> tuple[Part, ...]:
    """The parts of a content form for the item at `path`."""
    if isinstance(form, BlocksSpec):
        return form.parts(seed, path)
    return (TextBlock(text=render_text(form, seed, path)),)
