"""The protocol buffers of the Google datasets, declared here instead of compiled with protoc.

- ``tf.train.Example`` (TensorFlow's ``core/example/example.proto`` and ``feature.proto``):
  every TFRecord of AndroidControl and Android in the Wild is one;
- android_env's accessibility forest (``android_env/proto/a11y/*.proto``): AndroidControl's
  ``accessibility_trees`` are serialized ``AndroidAccessibilityForest`` messages.

The messages are declared field by field (names, numbers, types as the ``.proto`` files give
them) in a descriptor pool of Waypoint's own, so a TensorFlow or android_env installed beside
Waypoint (which register the same names in protobuf's default pool) never clashes with them,
and no generated ``_pb2`` module, tied to one protoc and one protobuf runtime, is kept.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

__all__ = [
    "DecodeError",
    "Example",
    "Forest",
    "WINDOW_TYPES",
]

F = descriptor_pb2.FieldDescriptorProto
OPTIONAL, REPEATED = F.LABEL_OPTIONAL, F.LABEL_REPEATED
SCALARS = {
    "bytes": F.TYPE_BYTES,
    "string": F.TYPE_STRING,
    "float": F.TYPE_FLOAT,
    "int64": F.TYPE_INT64,
    "int32": F.TYPE_INT32,
    "bool": F.TYPE_BOOL,
}

# (name, number, type, repeated): a type that is not a scalar names a message or an enum.
Field = tuple[str, int, str, bool]


def _message(
    name: str,
    fields: list[Field],
    package: str,
    *,
    enums: dict[str, list[str]] | None = None,
    nested: list[descriptor_pb2.DescriptorProto] | None = None,
    oneof: str | None = None,
) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name)
    for enum_name, values in (enums or {}).items():
        enum = message.enum_type.add(name=enum_name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)
    message.nested_type.extend(nested or [])
    if oneof:
        message.oneof_decl.add(name=oneof)
    for field_name, number, kind, repeated in fields:
        field = message.field.add(
            name=field_name, number=number, label=REPEATED if repeated else OPTIONAL
        )
        if kind in SCALARS:
            field.type = SCALARS[kind]
        elif enums and kind in enums:
            field.type = F.TYPE_ENUM
            field.type_name = f".{package}.{name}.{kind}"
        else:
            field.type = F.TYPE_MESSAGE
            field.type_name = kind if kind.startswith(".") else f".{package}.{kind}"
        if oneof:
            field.oneof_index = 0
    return message


def _example_file() -> descriptor_pb2.FileDescriptorProto:
    """TensorFlow's feature.proto and example.proto, package ``tensorflow``."""
    package = "tensorflow"
    feature_entry = _message(
        "FeatureEntry", [("key", 1, "string", False), ("value", 2, "Feature", False)], package
    )
    feature_entry.options.map_entry = True
    messages = [
        _message("BytesList", [("value", 1, "bytes", True)], package),
        _message("FloatList", [("value", 1, "float", True)], package),
        _message("Int64List", [("value", 1, "int64", True)], package),
        _message(
            "Feature",
            [
                ("bytes_list", 1, "BytesList", False),
                ("float_list", 2, "FloatList", False),
                ("int64_list", 3, "Int64List", False),
            ],
            package,
            oneof="kind",
        ),
        _message(
            "Features",
            [("feature", 1, ".tensorflow.Features.FeatureEntry", True)],
            package,
            nested=[feature_entry],
        ),
        _message("Example", [("features", 1, "Features", False)], package),
    ]
    return descriptor_pb2.FileDescriptorProto(
        name="waypoint/tensorflow/example.proto",
        package=package,
        syntax="proto3",
        message_type=messages,
    )


WINDOW_TYPES = [
    "UNKNOWN_TYPE",
    "TYPE_APPLICATION",
    "TYPE_INPUT_METHOD",
    "TYPE_SYSTEM",
    "TYPE_ACCESSIBILITY_OVERLAY",
    "TYPE_SPLIT_SCREEN_DIVIDER",
]


def _a11y_file() -> descriptor_pb2.FileDescriptorProto:
    """android_env's a11y protos (rect, action, clickable span, node info, tree, window
    info, forest), package ``android_env``."""
    package = "android_env"
    node_fields: list[Field] = [
        ("unique_id", 1, "int32", False),
        ("bounds_in_screen", 2, "ProtoRect", False),
        ("class_name", 3, "string", False),
        ("content_description", 4, "string", False),
        ("hint_text", 5, "string", False),
        ("package_name", 6, "string", False),
        ("text", 7, "string", False),
        ("text_selection_start", 8, "int64", False),
        ("text_selection_end", 9, "int64", False),
        ("view_id_resource_name", 10, "string", False),
        ("window_id", 11, "int32", False),
        ("is_checkable", 12, "bool", False),
        ("is_checked", 13, "bool", False),
        ("is_clickable", 14, "bool", False),
        ("is_editable", 15, "bool", False),
        ("is_enabled", 16, "bool", False),
        ("is_focusable", 17, "bool", False),
        ("is_focused", 18, "bool", False),
        ("is_long_clickable", 19, "bool", False),
        ("is_password", 20, "bool", False),
        ("is_scrollable", 21, "bool", False),
        ("is_selected", 22, "bool", False),
        ("is_visible_to_user", 23, "bool", False),
        ("actions", 24, "AndroidAccessibilityAction", True),
        ("child_ids", 25, "int32", True),
        ("clickable_spans", 26, "AndroidAccessibilityNodeInfoClickableSpan", True),
        ("depth", 27, "int32", False),
        ("labeled_by_id", 28, "int32", False),
        ("label_for_id", 29, "int32", False),
        ("drawing_order", 30, "int32", False),
        ("tooltip_text", 31, "string", False),
    ]
    window_fields: list[Field] = [
        ("bounds_in_screen", 1, "ProtoRect", False),
        ("display_id", 2, "int32", False),
        ("id", 3, "int32", False),
        ("layer", 4, "int32", False),
        ("title", 5, "string", False),
        ("window_type", 6, "WindowType", False),
        ("is_accessibility_focused", 7, "bool", False),
        ("is_active", 8, "bool", False),
        ("is_focused", 9, "bool", False),
        ("is_in_picture_in_picture_mode", 10, "bool", False),
        ("tree", 11, "AndroidAccessibilityTree", False),
    ]
    rect = [("left", 1, "int32", False), ("top", 2, "int32", False)]
    rect += [("right", 3, "int32", False), ("bottom", 4, "int32", False)]
    span_fields: list[Field] = [
        ("text", 1, "string", False),
        ("url", 2, "string", False),
        ("source", 3, "SpanSource", False),
        ("start", 4, "int32", False),
        ("node_id", 5, "int32", False),
    ]
    messages = [
        _message("ProtoRect", rect, package),
        _message(
            "AndroidAccessibilityAction",
            [("id", 1, "int32", False), ("label", 2, "string", False)],
            package,
        ),
        _message(
            "AndroidAccessibilityNodeInfoClickableSpan",
            span_fields,
            package,
            enums={"SpanSource": ["UNKNOWN_TYPE", "TEXT", "CONTENT_DESCRIPTION"]},
        ),
        _message("AndroidAccessibilityNodeInfo", node_fields, package),
        _message(
            "AndroidAccessibilityTree",
            [("nodes", 1, "AndroidAccessibilityNodeInfo", True)],
            package,
        ),
        _message(
            "AndroidAccessibilityWindowInfo",
            window_fields,
            package,
            enums={"WindowType": WINDOW_TYPES},
        ),
        _message(
            "AndroidAccessibilityForest",
            [("windows", 1, "AndroidAccessibilityWindowInfo", True)],
            package,
        ),
    ]
    return descriptor_pb2.FileDescriptorProto(
        name="waypoint/android_env/a11y.proto",
        package=package,
        syntax="proto3",
        message_type=messages,
    )


def _classes() -> dict[str, type[Message]]:
    pool = descriptor_pool.DescriptorPool()
    for file in (_example_file(), _a11y_file()):
        pool.Add(file)
    names = {
        "Example": "tensorflow.Example",
        "Forest": "android_env.AndroidAccessibilityForest",
    }
    return {
        short: message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
        for short, full in names.items()
    }


_CLASSES = _classes()
Example: type[Message] = _CLASSES["Example"]
Forest: type[Message] = _CLASSES["Forest"]
