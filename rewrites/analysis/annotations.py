"""Where the types of an annotation are: the names MS210 converts there (and MS201 leaves
to it), and the names its string forward references use (the imports pass keeps them)."""
from __future__ import annotations

import libcst as cst

# The subscripted types whose elements are not all types: Literal's are values, and
# Annotated's metadata (after the first element) is.
_VALUE_SUBSCRIPTS = frozenset({"Literal"})
_METADATA_SUBSCRIPTS = frozenset({"Annotated"})


def type_positions(annotation: cst.Annotation) -> frozenset[int]:
    """ids of the nodes of ``annotation`` that name a type."""
    return frozenset(id(node) for node in _type_nodes(annotation.annotation))


def _type_nodes(expr: cst.BaseExpression):
    """The names, dotted names and string forward references of a type expression that
    name types: inside subscripts, ``|`` unions and lists of types (``Callable[[A], B]``)."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.Name, cst.Attribute, cst.SimpleString)):
            yield node
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            todo += (node.left, node.right)
        elif isinstance(node, (cst.List, cst.Tuple)):
            todo += (e.value for e in node.elements)
        elif isinstance(node, cst.Subscript):
            todo.append(node.value)
            todo += _type_elements(node)


def _type_elements(node: cst.Subscript) -> list[cst.BaseExpression]:
    """The elements of a subscripted type that are types themselves."""
    head = node.value.attr if isinstance(node.value, cst.Attribute) else node.value
    name = head.value if isinstance(head, cst.Name) else ""
    if name in _VALUE_SUBSCRIPTS:
        return []
    elements = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
    return elements[:1] if name in _METADATA_SUBSCRIPTS else elements


def forward_reference(string: cst.SimpleString) -> cst.BaseExpression | None:
    """The expression a string annotation holds (None: not an expression, or bytes)."""
    if "b" in string.prefix.lower():
        return None
    try:
        return cst.parse_expression(string.evaluated_value)
    except (cst.ParserSyntaxError, ValueError, TypeError):
        return None


def forward_reference_names(annotation: cst.Annotation) -> set[str]:
    """The names the forward references of ``annotation`` use (``ms`` of ``"ms.Tensor"``):
    uses of those names, which typing.get_type_hints looks up in the module."""
    names: set[str] = set()
    todo = [node for node in _type_nodes(annotation.annotation) if isinstance(node, cst.SimpleString)]
    while todo:
        expr = forward_reference(todo.pop())
        for node in _type_nodes(expr) if expr is not None else ():
            head = node
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                names.add(head.value)
            elif isinstance(head, cst.SimpleString):
                todo.append(head)
    return names
