"""Errors the user can fix: one clear line naming the file, the field and what is allowed.

The CLI turns :class:`InputError` into a single line on stderr and exit code 2; nothing else in
the package prints or exits.
"""

from __future__ import annotations


def did_you_mean(value: object, allowed: str | None) -> str | None:
    """The allowed word closest to a mistyped ``value`` (``"h10"`` → ``"h100"``), or None: the
    ``allowed`` text split at commas, bars and "or"; only a near match (difflib ratio ≥ 0.6)."""
    import difflib
    import re

    if not isinstance(value, str) or not allowed or not value.strip():
        return None
    words = [w.strip(" .'\"`") for w in re.split(r",|\||\bor\b|;", allowed)]
    words = [w for w in words if w and " " not in w]
    if value in words:
        return None
    best = difflib.get_close_matches(value, words, n=1, cutoff=0.6)
    return best[0] if best else None


class InputError(ValueError):
    """Bad user input: a scenario, flag, catalog, topology or switch-config problem.

    ``str(err)`` is the one-line message: ``FILE: FIELD: PROBLEM (allowed: ...)``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: object = None,
        allowed: str | None = None,
    ) -> None:
        self.file = file
        self.field = field
        self.value = value
        self.allowed = allowed
        self.problem = message
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.field:
            parts.append(str(self.field))
        text = self.problem
        if self.value is not None:
            text += f" (got {self.value!r})"
        if self.allowed:
            text += f"; allowed: {self.allowed}"
        guess = did_you_mean(self.value, self.allowed)
        if guess:
            text += f"; did you mean {guess!r}?"
        parts.append(text)
        return ": ".join(parts)

    def with_file(self, file: str) -> InputError:
        """Return a copy of this error that names ``file``."""
        return InputError(self.problem, file=file, field=self.field, value=self.value, allowed=self.allowed)


class InputErrors(InputError):
    """Several input problems at once (``aifabric validate`` prints one line each)."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = list(errors)
        first = self.errors[0] if self.errors else InputError("invalid input")
        super().__init__(
            first.problem, file=first.file, field=first.field, value=first.value, allowed=first.allowed
        )

    def lines(self) -> list[str]:
        return [str(e) for e in self.errors]
