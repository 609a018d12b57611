"""The enforced JSON-Schema subset (spec Appendix B, §8 items 7-8).

Contract: `check_supported` accepts a schema inside the subset and otherwise raises
`JsonSchemaError` listing every violation with its `schema...` path. `validate` never raises and
returns the violations of a value in walk order, each with the exact Appendix B message: objects
check required names, then declared properties, then undeclared keys under
`additionalProperties: false`, then (only if clean) losslessness; arrays check items in order,
then losslessness. Type checks are exact and bool-strict and run before `enum`/`const`; integral
floats are integers; NaN, infinities and -0.0 are not finite JSON numbers. The argument root
(`""`) is shown as `arguments` with undotted member paths; the output root is `value`.
`compile_json_schema` checks once and returns a canonicalizer that raises `ToolOutputError` or
returns a deep-frozen snapshot.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from enum import IntEnum, StrEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.core.json import FrozenDict, FrozenList
from tether.tools.errors import JsonSchemaError, ToolOutputError
from tether.tools.json_schema import check_supported, compile_json_schema, validate

SUBSET = (
    "is not a supported keyword "
    "(subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"
)


def violations_of(schema: dict[str, Any]) -> list[str]:
    with pytest.raises(JsonSchemaError) as caught:
        check_supported(schema)
    assert caught.value.code == "UNSUPPORTED_SCHEMA"
    return list(caught.value.violations)


def nested(depth: int, leaf: object, wrap: str) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = {"type": "array", "items": value} if wrap == "schema" else [value]
    return value


# --- check_supported: what is accepted ----------------------------------------------------------


def test_a_schema_using_every_supported_keyword_is_accepted() -> None:
    check_supported(
        {
            "title": "Forecast",
            "description": "a forecast",
            "type": "object",
            "properties": {
                "city": {"type": "string", "enum": ["Oslo", "Lima"], "const": "Oslo"},
                "days": {"type": "array", "items": {"type": "integer", "enum": [1, 2.0]}},
                "unit": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                "raw": {"default": {"a": [1, None]}, "examples": [1, "x"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        }
    )


def test_an_empty_schema_is_accepted() -> None:
    check_supported({})


def test_a_schema_of_annotations_only_is_accepted() -> None:
    check_supported({"description": "anything", "title": "Any", "default": None})


def test_frozen_containers_are_accepted_as_schema_nodes_and_arrays() -> None:
    check_supported(FrozenDict({"type": "string", "enum": FrozenList(["a"])}))


# --- check_supported: each violation ------------------------------------------------------------


def test_an_unknown_keyword_is_rejected_with_the_subset_listed() -> None:
    assert violations_of({"type": "string", "minLength": 1}) == [f"schema.minLength {SUBSET}"]


def test_a_type_array_is_rejected() -> None:
    assert violations_of({"type": ["string", "null"]}) == [
        "schema.type must be a single type string (type arrays are not supported)"
    ]


def test_an_unknown_type_name_is_rejected() -> None:
    assert violations_of({"type": "float"}) == [
        "schema.type must be one of object/array/string/number/integer/boolean/null"
    ]


def test_an_enum_that_is_empty_is_rejected() -> None:
    assert violations_of({"type": "number", "enum": []}) == [
        "schema.enum must be a non-empty array of number values"
    ]


def test_an_enum_holding_a_value_of_another_type_is_rejected() -> None:
    assert violations_of({"type": "string", "enum": ["a", 1]}) == [
        "schema.enum must be a non-empty array of string values"
    ]


def test_a_boolean_in_a_number_enum_is_rejected() -> None:
    assert violations_of({"type": "number", "enum": [1, True]}) == [
        "schema.enum must be a non-empty array of number values"
    ]


def test_a_fractional_number_in_an_integer_enum_is_rejected() -> None:
    assert violations_of({"type": "integer", "enum": [1, 1.5]}) == [
        "schema.enum must be a non-empty array of integer values"
    ]


def test_a_tuple_enum_is_not_an_array() -> None:
    assert violations_of({"type": "string", "enum": ("a",)}) == [
        "schema.enum must be a non-empty array of string values"
    ]


def test_a_const_of_another_type_is_rejected() -> None:
    assert violations_of({"type": "integer", "const": "1"}) == [
        "schema.const must be an integer value"
    ]


def test_a_const_outside_its_enum_is_rejected() -> None:
    assert violations_of({"type": "string", "enum": ["a", "b"], "const": "c"}) == [
        "schema.const must be a member of schema.enum"
    ]


def test_enum_and_const_are_rejected_on_structured_types() -> None:
    assert violations_of({"type": "object", "enum": [1], "const": 1}) == [
        'schema.enum is not supported on type "object"',
        'schema.const is not supported on type "object"',
    ]


def test_object_keywords_are_rejected_on_other_types() -> None:
    assert violations_of({"type": "string", "properties": {}, "items": {}}) == [
        'schema.properties is not supported on type "string"',
        'schema.items is not supported on type "string"',
    ]


def test_properties_must_be_a_dict_of_schemas() -> None:
    assert violations_of({"type": "object", "properties": [{"type": "string"}]}) == [
        "schema.properties must be an object of schemas"
    ]


def test_a_property_schema_must_be_a_dict() -> None:
    assert violations_of({"type": "object", "properties": {"x": "string"}}) == [
        "schema.properties.x must be a schema object"
    ]


def test_a_required_name_must_be_declared_in_properties() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}
    assert violations_of(schema) == ['schema.required names "b" which is not in properties']


def test_required_must_be_an_array_of_strings() -> None:
    assert violations_of({"type": "object", "properties": {}, "required": "a"}) == [
        "schema.required must be an array of strings"
    ]


def test_additional_properties_must_be_a_boolean() -> None:
    assert violations_of({"type": "object", "additionalProperties": {"type": "string"}}) == [
        "schema.additionalProperties must be a boolean"
    ]


def test_one_of_needs_at_least_two_branches() -> None:
    assert violations_of({"oneOf": [{"type": "string"}]}) == [
        "schema.oneOf must be an array of at least two schemas"
    ]


def test_one_of_rejects_structural_keywords_beside_it() -> None:
    schema = {"oneOf": [{}, {}], "properties": {}, "enum": ["a"]}
    assert violations_of(schema) == [
        "schema.properties is not supported beside oneOf",
        "schema.enum is not supported beside oneOf",
    ]


def test_one_of_rejects_a_type_beside_it() -> None:
    assert violations_of({"type": "string", "oneOf": [{}, {}]}) == [
        "schema cannot declare both type and oneOf"
    ]


def test_a_constraint_without_type_or_one_of_is_rejected() -> None:
    assert violations_of({"items": {}, "required": []}) == [
        "schema.required requires type or oneOf",
        "schema.items requires type or oneOf",
    ]


def test_description_and_title_must_be_strings() -> None:
    assert violations_of({"description": 1, "title": None}) == [
        "schema.description must be a string",
        "schema.title must be a string",
    ]


def test_default_and_examples_must_be_lossless_json() -> None:
    assert violations_of({"default": math.nan, "examples": [{1, 2}]}) == [
        "schema.default must be lossless JSON",
        "schema.examples must be lossless JSON",
    ]


def test_the_root_must_be_a_dict() -> None:
    assert violations_of(OrderedDict(type="string")) == ["schema must be a schema object"]


def test_a_schema_that_contains_itself_is_circular() -> None:
    schema: dict[str, Any] = {"type": "array"}
    schema["items"] = schema
    assert violations_of(schema) == ["schema.items is circular"]


def test_a_schema_shared_by_two_properties_is_not_circular() -> None:
    shared = {"type": "string"}
    check_supported({"type": "object", "properties": {"a": shared, "b": shared}})


def test_every_violation_is_listed_at_once_with_nested_paths_in_walk_order() -> None:
    schema = {
        "type": "object",
        "format": "x",
        "properties": {
            "x": {"type": ["string"]},
            "list": {"type": "array", "items": {"type": "number", "enum": []}},
            "choice": {"oneOf": [{"type": "string"}, {"pattern": "a"}]},
        },
        "required": ["missing"],
    }
    violations = violations_of(schema)
    assert violations == [
        f"schema.format {SUBSET}",
        'schema.required names "missing" which is not in properties',
        "schema.properties.x.type must be a single type string (type arrays are not supported)",
        "schema.properties.list.items.enum must be a non-empty array of number values",
        f"schema.properties.choice.oneOf[1].pattern {SUBSET}",
    ]
    with pytest.raises(JsonSchemaError, match=r"^unsupported JSON schema: schema\.format is"):
        check_supported(schema)


def test_a_schema_nested_five_thousand_deep_is_checked() -> None:
    check_supported(nested(5000, {"type": "string"}, "schema"))
    assert violations_of(nested(5000, {"type": "text"}, "schema")) == [
        "schema" + ".items" * 5000 + ".type must be one of "
        "object/array/string/number/integer/boolean/null"
    ]


# --- validate: the message table ----------------------------------------------------------------


def test_a_non_object_for_an_object_node_must_be_an_object() -> None:
    assert validate({"type": "object"}, [1], "value") == ['"value" must be an object']


def test_a_dict_subclass_is_not_an_object() -> None:
    assert validate({"type": "object"}, OrderedDict(a=1), "value") == ['"value" must be an object']


def test_a_frozen_dict_is_an_object() -> None:
    assert validate({"type": "object"}, FrozenDict(a=1), "value") == []


def test_the_argument_root_is_shown_as_arguments() -> None:
    assert validate({"type": "object"}, "x", "") == ['"arguments" must be an object']


def test_an_absent_required_property_is_missing() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "required": ["a"]}
    assert validate(schema, {}, "value") == ['missing required property "value.a"']


def test_an_absent_required_argument_is_missing_without_a_root_prefix() -> None:
    schema = {"type": "object", "properties": {"path": {}}, "required": ["path"]}
    assert validate(schema, {}, "") == ['missing required property "path"']


def test_a_none_property_is_present_and_validated_as_null() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert validate(schema, {"a": None}, "value") == ['"value.a" must be a string']


def test_an_undeclared_key_is_rejected_when_additional_properties_is_false() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    assert validate(schema, {"x": 1}, "value") == [
        '"value.x" is not a declared property (additionalProperties: false)'
    ]


def test_an_undeclared_key_is_allowed_when_additional_properties_is_absent_or_true() -> None:
    assert validate({"type": "object", "properties": {}}, {"x": 1}, "value") == []
    schema = {"type": "object", "additionalProperties": True}
    assert validate(schema, {"x": 1}, "value") == []


def test_an_object_with_a_non_json_undeclared_member_must_be_a_lossless_json_object() -> None:
    assert validate({"type": "object"}, {"x": {1, 2}}, "value") == [
        '"value" must be a lossless JSON object'
    ]


def test_an_object_with_a_non_string_key_must_be_a_lossless_json_object() -> None:
    assert validate({"type": "object"}, {1: "a"}, "value") == [
        '"value" must be a lossless JSON object'
    ]


def test_an_object_containing_itself_must_be_a_lossless_json_object() -> None:
    value: dict[str, Any] = {}
    value["self"] = value
    assert validate({"type": "object"}, value, "value") == [
        '"value" must be a lossless JSON object'
    ]


def test_a_non_array_for_an_array_node_must_be_an_array() -> None:
    assert validate({"type": "array"}, {"0": 1}, "value") == ['"value" must be an array']


def test_a_tuple_is_not_an_array() -> None:
    assert validate({"type": "array"}, (1, 2), "value") == ['"value" must be an array']


def test_an_array_with_a_non_json_item_and_no_items_schema_must_be_dense_lossless() -> None:
    assert validate({"type": "array"}, [1, b"x"], "value") == [
        '"value" must be a dense lossless JSON array'
    ]


def test_a_non_string_must_be_a_string() -> None:
    assert validate({"type": "string"}, 1, "value") == ['"value" must be a string']


def test_a_str_subclass_is_not_a_string() -> None:
    class Color(StrEnum):
        RED = "red"

    assert validate({"type": "string"}, Color.RED, "value") == ['"value" must be a string']


def test_a_non_boolean_must_be_a_boolean() -> None:
    assert validate({"type": "boolean"}, 1, "value") == ['"value" must be a boolean']


def test_a_non_none_must_be_null() -> None:
    assert validate({"type": "null"}, 0, "value") == ['"value" must be null']


def test_a_non_number_must_be_a_number() -> None:
    assert validate({"type": "number"}, "1", "value") == ['"value" must be a number']


def test_a_boolean_is_not_a_number() -> None:
    assert validate({"type": "number"}, True, "value") == ['"value" must be a number']


def test_an_int_subclass_is_not_a_number() -> None:
    class Level(IntEnum):
        HIGH = 2

    assert validate({"type": "number"}, Level.HIGH, "value") == ['"value" must be a number']


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf, -0.0])
def test_a_non_finite_or_negative_zero_float_must_be_a_finite_json_number(number: float) -> None:
    assert validate({"type": "number"}, number, "value") == ['"value" must be a finite JSON number']


@pytest.mark.parametrize("number", [math.nan, math.inf, -0.0])
def test_an_integer_node_reports_non_finite_floats_as_not_finite(number: float) -> None:
    assert validate({"type": "integer"}, number, "value") == [
        '"value" must be a finite JSON number'
    ]


@pytest.mark.parametrize("value", [1.5, "1", None, True])
def test_a_non_integer_must_be_an_integer(value: object) -> None:
    assert validate({"type": "integer"}, value, "value") == ['"value" must be an integer']


def test_an_integral_float_is_an_integer() -> None:
    assert validate({"type": "integer"}, 1.0, "value") == []
    assert validate({"type": "integer"}, 1e300, "value") == []


def test_a_value_outside_the_enum_must_be_one_of_its_compact_json() -> None:
    assert validate({"type": "string", "enum": ["红", "green"]}, "blue", "value") == [
        '"value" must be one of ["红","green"]'
    ]


def test_a_value_other_than_the_const_must_be_its_compact_json() -> None:
    assert validate({"type": "string", "const": "ü"}, "u", "value") == ['"value" must be "ü"']


def test_a_boolean_is_rejected_by_type_before_a_number_enum_is_consulted() -> None:
    assert validate({"type": "integer", "enum": [1, 2]}, True, "value") == [
        '"value" must be an integer'
    ]


def test_a_number_is_not_a_member_of_a_boolean_enum() -> None:
    assert validate({"type": "boolean", "enum": [True]}, 1, "value") == [
        '"value" must be a boolean'
    ]


def test_an_integral_float_matches_an_integer_enum_and_const() -> None:
    assert validate({"type": "integer", "enum": [1, 2]}, 2.0, "value") == []
    assert validate({"type": "number", "const": 1}, 1.0, "value") == []


def test_a_value_matching_no_one_of_branch_reports_zero_matches() -> None:
    schema = {"oneOf": [{"type": "string"}, {"type": "null"}]}
    assert validate(schema, 1, "value") == [
        '"value" must match exactly one oneOf branch (matched 0)'
    ]


def test_a_value_matching_two_one_of_branches_reports_two_matches() -> None:
    schema = {"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "string"}]}
    assert validate(schema, 3, "value") == [
        '"value" must match exactly one oneOf branch (matched 2)'
    ]


def test_a_value_matching_exactly_one_one_of_branch_conforms() -> None:
    schema = {"oneOf": [{"type": "number"}, {"type": "string"}]}
    assert validate(schema, "x", "value") == []


INTEGER_OR_NUMBER = {"oneOf": [{"type": "integer"}, {"type": "number"}]}  # 1 matches both


def test_a_nested_one_of_matching_twice_counts_as_a_failed_branch_of_the_outer_one() -> None:
    schema = {"oneOf": [INTEGER_OR_NUMBER, {"type": "integer"}]}
    assert validate(schema, 1, "value") == []


def test_a_nested_one_of_matching_once_counts_as_a_matched_branch_of_the_outer_one() -> None:
    schema = {"oneOf": [INTEGER_OR_NUMBER, {"type": "number"}]}
    assert validate(schema, 1.5, "value") == [
        '"value" must match exactly one oneOf branch (matched 2)'
    ]


def test_a_one_of_nested_in_a_property_reports_at_the_property_path() -> None:
    schema = {"type": "object", "properties": {"n": INTEGER_OR_NUMBER}}
    assert validate(schema, {"n": 2}, "") == ['"n" must match exactly one oneOf branch (matched 2)']


def test_a_non_json_value_at_an_annotation_only_node_must_be_a_lossless_json_value() -> None:
    assert validate({"description": "anything"}, {"a": (1,)}, "value") == [
        '"value" must be a lossless JSON value'
    ]


def test_a_schema_node_that_cannot_be_read_is_reported_instead_of_raised() -> None:
    schema = {"type": "object", "properties": {"a": "not a schema"}}
    assert validate(schema, {"a": 1}, "value") == ['"value.a" must be a lossless JSON value']


# --- validate: rule order and paths -------------------------------------------------------------


def test_object_rules_run_required_then_properties_then_undeclared_keys() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}, "c": {}},
        "required": ["c", "a", "b"],
        "additionalProperties": False,
    }
    value = {"y": 0, "a": 1, "x": 0, "b": 2}
    assert validate(schema, value, "value") == [
        'missing required property "value.c"',
        '"value.b" must be a string',
        '"value.a" must be a string',
        '"value.y" is not a declared property (additionalProperties: false)',
        '"value.x" is not a declared property (additionalProperties: false)',
    ]


def test_the_lossless_object_check_is_skipped_when_other_violations_exist() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert validate(schema, {"a": 1, "b": {1}}, "value") == ['"value.a" must be a string']


def test_array_items_are_checked_in_index_order_before_losslessness() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    assert validate(schema, [1, "ok", None], "value") == [
        '"value[0]" must be a string',
        '"value[2]" must be a string',
    ]


def test_a_conforming_declared_member_is_not_rechecked_for_losslessness() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {}}}}
    assert validate(schema, {"a": [1, {"x": [2.5]}]}, "value") == []


def test_argument_paths_have_no_leading_dot() -> None:
    schema = {
        "type": "object",
        "properties": {
            "config": {"type": "object", "properties": {"host": {"type": "string"}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "servers": {
                "type": "array",
                "items": {"type": "object", "properties": {"host": {"type": "string"}}},
            },
        },
    }
    value = {"config": {"host": 1}, "tags": ["a", 2], "servers": [{"host": "a"}, {"host": 3}]}
    assert validate(schema, value, "") == [
        '"config.host" must be a string',
        '"tags[1]" must be a string',
        '"servers[1].host" must be a string',
    ]


def test_output_paths_start_at_value() -> None:
    object_schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    assert validate(object_schema, {"text": 1}, "value") == ['"value.text" must be a string']
    array_schema = {"type": "array", "items": {"type": "string"}}
    assert validate(array_schema, [1], "value") == ['"value[0]" must be a string']


def test_violations_inside_a_one_of_branch_are_not_reported_themselves() -> None:
    schema = {
        "oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "string"},
        ]
    }
    assert validate(schema, {"a": 1}, "") == [
        '"arguments" must match exactly one oneOf branch (matched 0)'
    ]


# --- validate: depth and totality ---------------------------------------------------------------


def test_a_value_nested_five_thousand_deep_validates_against_the_empty_schema() -> None:
    assert validate({}, nested(5000, None, "value"), "value") == []


def test_a_value_nested_five_thousand_deep_validates_against_an_equally_deep_schema() -> None:
    schema = nested(5000, {"type": "string"}, "schema")
    assert validate(schema, nested(5000, "x", "value"), "value") == []
    assert validate(schema, nested(5000, 1, "value"), "value") == [
        '"value' + "[0]" * 5000 + '" must be a string'
    ]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: math.copysign(1, f) > 0)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@given(json_values)
def test_any_json_value_conforms_to_the_empty_schema(value: object) -> None:
    assert validate({}, value, "value") == []


# --- compile_json_schema ------------------------------------------------------------------------


def test_compiling_an_unsupported_schema_raises_at_once() -> None:
    with pytest.raises(JsonSchemaError) as caught:
        compile_json_schema({"type": "string", "format": "uri"})
    assert caught.value.violations == (f"schema.format {SUBSET}",)


def test_a_conforming_value_is_returned_as_a_frozen_copy() -> None:
    canonical = compile_json_schema({"type": "object", "properties": {"a": {"type": "array"}}})
    value = {"a": [1, 2]}
    result = canonical("weather", value)
    assert result == {"a": [1, 2]}
    assert type(result) is FrozenDict
    value["a"].append(3)
    assert result == {"a": [1, 2]}


def test_a_nonconforming_value_raises_a_tool_output_error_with_its_violations() -> None:
    canonical = compile_json_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    with pytest.raises(ToolOutputError) as caught:
        canonical("weather", {"n": 1.5})
    assert caught.value.violations == ('"value.n" must be an integer',)
    assert caught.value.code == "INVALID_TOOL_OUTPUT"
    assert (
        str(caught.value) == 'tool "weather" returned invalid output: "value.n" must be an integer'
    )


def test_a_compiled_schema_is_detached_from_later_changes() -> None:
    schema: dict[str, Any] = {"type": "string"}
    canonical = compile_json_schema(schema)
    schema["type"] = "integer"
    assert canonical("echo", "still a string") == "still a string"
