"""Probes: for an exercise whose answer takes or gives one of the course's objects, the call the instructor's
grader makes in the student's process, turning what comes back into plain numbers that it judges in its own.

- ``softplus_probe``: notebook 02's ``softplus`` on a fresh ``Value``: its output's value, whether it is one new
  node of the graph, and the gradient backpropagation leaves on its input.
"""

from __future__ import annotations

from course_utils.models.basics.autograd import Value


def softplus_probe(softplus, point: float) -> dict | None:
    """``softplus(Value(point))`` as plain data: ``{"type", "one_node", "data", "grad"}``; None for None."""
    x = Value(point, "x")
    out = softplus(x)
    if out is None:
        return None
    if not isinstance(out, Value):
        return {"type": type(out).__name__}
    one_node = out.parents == (x,)
    data = float(out.data)
    out.backward()
    return {"type": "Value", "one_node": one_node, "data": data, "grad": float(x.grad)}
