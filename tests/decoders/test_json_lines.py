"""decode_json_line: the CLI's line decoder never raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.json_lines import decode_json_line

OFFSET_KEY = "0001" "0001" "67" "0001" "74" "00000000"


def test_a_record_line_decodes_to_the_cli_json_shape() -> None:
    value = "0003" "0000000000000005" "00000007" "0000" "00000000000003e8"
    out = decode_json_line(json.dumps({"key": OFFSET_KEY, "value": value}))
    assert out == {"type": "offset_commit", "key_version": 1, "value_version": 3,
                   "key": {"group": "g", "topic": "t", "partition": 0},
                   "value": {"offset": 5, "leader_epoch": 7, "metadata": "", "commit_timestamp": 1000}}
    json.dumps(out)  # JSON-serialisable as is


def test_a_tombstone_line_has_a_null_value() -> None:
    out = decode_json_line(json.dumps({"key": OFFSET_KEY, "value": None}))
    assert out["value"] is None and out["value_version"] is None


def test_an_unknown_type_is_reported_as_unknown() -> None:
    assert decode_json_line('{"key": "0063", "value": "00"}') == {"type": "unknown", "record_type": 99,
                                                                  "key": "0063", "value": "00"}


def test_a_decode_error_is_an_error_object_with_its_details() -> None:
    out = decode_json_line(json.dumps({"key": OFFSET_KEY, "value": "0009"}))
    assert out["reason"] == "unknown version" and out["record_type"] == 1 and out["version"] == 9
    assert out["position"] == 0 and out["part"] == "value" and out["key"] == OFFSET_KEY
    assert out["error"].startswith("[record type 1, version 9] unknown version")


def test_bad_lines_are_error_objects() -> None:
    for line in ["", "not json", "[1]", '{"value": null}', '{"key": "zz", "value": null}', '{"key": 12, "value": null}',
                 '{"key": "0001"}', '{"key": null, "value": null}']:
        out = decode_json_line(line)
        assert set(out) >= {"error"} and isinstance(out["error"], str), line
    assert "error" in decode_json_line(None)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=80),
                 st.builds(lambda k, v: json.dumps({"key": k.hex(), "value": None if v is None else v.hex()}),
                           st.binary(max_size=40), st.none() | st.binary(max_size=80))))
def test_decode_json_line_never_raises(line: str) -> None:
    out = decode_json_line(line)
    assert isinstance(out, dict)
    json.dumps(out)
