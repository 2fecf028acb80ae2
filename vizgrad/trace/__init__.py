"""The graph model and how it is recorded: ``vizgrad.trace()``, ``vizgrad.graph(tensor)``,
``Graph`` and its JSON form."""

from .graph import SCHEMA_VERSION, Graph, GraphEdge, GraphGroup, GraphNode, json_bytes, schema
from .recorder import Recorder, graph, stats_dict, summary_dict, trace

__all__ = ["Graph", "GraphEdge", "GraphGroup", "GraphNode", "Recorder", "SCHEMA_VERSION", "graph", "json_bytes",
           "schema", "stats_dict", "summary_dict", "trace"]
