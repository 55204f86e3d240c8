"""One JSON line in, one JSON-ready dict out — the engine of ``offsetlake decode``.

Input: ``{"key": "<hex>", "value": "<hex>" | null}`` (the raw record bytes as hex, as
``kafka-console-consumer --property print.key=true`` style tooling or a dump can produce).
Output, one of:

* a known record: ``{"type", "key_version", "value_version", "key", "value"}`` —
  :meth:`decoders.records.DecodedRecord.to_json_dict`;
* an unknown record type: ``{"type": "unknown", "record_type": n, "key": hex, "value": hex|null}``;
* anything wrong with the line or the record: ``{"error": "<message>", ...}`` — with
  ``record_type``/``version``/``part``/``position``/``reason`` when it was a
  :class:`~decoders.errors.DecodeError`, and the input ``key``/``value`` hex when present.

:func:`decode_json_line` never raises: a CLI over a multi-gigabyte dump must report a bad
line and carry on.
"""

from __future__ import annotations

import json
from typing import Any

from decoders.errors import DecodeError
from decoders.records import decode_record


def _hex_field(obj: dict[str, Any], name: str, *, nullable: bool) -> bytes | None:
    if name not in obj:
        raise ValueError(f"missing {name!r}")
    text = obj[name]
    if text is None:
        if nullable:
            return None
        raise ValueError(f"{name!r} is null")
    if not isinstance(text, str):
        raise ValueError(f"{name!r} must be a hex string, got {type(text).__name__}")
    try:
        return bytes.fromhex(text)
    except ValueError as exc:
        raise ValueError(f"{name!r} is not valid hex: {exc}") from None


def decode_json_line(line: str) -> dict[str, Any]:
    """Decode one ``{"key": hex, "value": hex|null}`` line; never raises.

    >>> decode_json_line('{"key": "0002000567726f7570", "value": null}')["key"]
    {'group': 'group'}
    >>> decode_json_line('not json')["error"].startswith("invalid JSON")
    True
    """
    try:
        try:
            obj = json.loads(line)
        except (ValueError, TypeError) as exc:
            return {"error": f"invalid JSON: {exc}"}
        if not isinstance(obj, dict):
            return {"error": f"expected a JSON object, got {type(obj).__name__}"}
        try:
            key = _hex_field(obj, "key", nullable=False)
            value = _hex_field(obj, "value", nullable=True)
        except ValueError as exc:
            return {"error": str(exc)}
        assert key is not None
        try:
            record = decode_record(key, value)
        except DecodeError as exc:
            return {
                "error": str(exc),
                "record_type": exc.record_type,
                "version": exc.version,
                "part": exc.part,
                "position": exc.position,
                "reason": exc.reason,
                "key": obj["key"],
                "value": obj["value"],
            }
        return record.to_json_dict()
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"; report instead
        return {"error": f"internal error ({type(exc).__name__}): {exc}"}
