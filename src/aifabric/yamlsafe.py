"""User YAML read within bounds (issue 32): nesting depth, keys per mapping and the number of
values after aliases are expanded are capped before anything is built, so a deeply nested file,
a "billion laughs" file (aliases of aliases) or a mapping with thousands of keys is one
:class:`~aifabric.errors.InputError` line naming the file instead of a RecursionError, a hang or
a message thousands of lines long.

The caps are far above any real scenario, catalog, study or switch config (the packaged catalog
nests 5 deep, has at most 60 keys in a mapping and about 6,000 values in all) and far below what
exhausts the interpreter's stack (about 300 levels for PyYAML's recursive composer) or memory.
ASSUMPTION (no public source): the exact values; they are limits on input size, not physics.
"""

from __future__ import annotations

from typing import Any

import yaml

from aifabric.errors import InputError

MAX_DEPTH = 64  #: nested mappings / sequences
MAX_KEYS = 10_000  #: keys in one mapping
MAX_VALUES = 2_000_000  #: values in the whole document, aliases expanded


def check_nesting(text: str, file: str | None, loader: type = yaml.SafeLoader) -> None:
    """Walk the event stream (iterative, no recursion): the depth cap, before composing."""
    depth = 0
    try:
        for ev in yaml.parse(text, Loader=loader):
            if isinstance(ev, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    line = ev.start_mark.line + 1 if ev.start_mark is not None else None
                    raise InputError(
                        f"nested more than {MAX_DEPTH} levels deep",
                        file=file,
                        field=f"line {line}" if line else None,
                        allowed=f"at most {MAX_DEPTH} levels of nested mappings and lists",
                    )
            elif isinstance(ev, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return  # the loader reports the syntax error with its own words


def check_size(node: yaml.Node | None, file: str | None) -> None:
    """Keys per mapping and values with aliases expanded (each distinct node sized once)."""
    if node is None:
        return
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in size:
            continue
        kids: list[yaml.Node] = []
        if isinstance(n, yaml.MappingNode):
            if len(n.value) > MAX_KEYS:
                keys = [getattr(k, "value", "?") for k, _ in n.value[:3]]
                raise InputError(
                    f"a mapping with {len(n.value):,} keys (first: {', '.join(map(str, keys))})",
                    file=file,
                    field=f"line {n.start_mark.line + 1}",
                    allowed=f"at most {MAX_KEYS:,} keys in one mapping",
                )
            kids = [x for kv in n.value for x in kv]
        elif isinstance(n, yaml.SequenceNode):
            kids = list(n.value)
        if not done and any(id(k) not in size for k in kids):
            stack.append((n, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        total = 1 + sum(size[id(k)] for k in kids)
        if total > MAX_VALUES:
            raise InputError(
                f"more than {MAX_VALUES:,} values once its aliases (*name) are expanded",
                file=file,
                field=f"line {n.start_mark.line + 1}",
                allowed="a file without aliases that multiply its size",
            )
        size[id(n)] = total


def load(text: str, file: str | None, loader: type = yaml.SafeLoader) -> Any:
    """``yaml.load(text, loader)`` within the caps; YAML syntax errors propagate as
    :class:`yaml.YAMLError` for the caller's own message."""
    check_nesting(text, file, loader)
    ld = loader(text)
    try:
        node = ld.get_single_node()
        check_size(node, file)
        return None if node is None else ld.construct_document(node)
    finally:
        ld.dispose()
