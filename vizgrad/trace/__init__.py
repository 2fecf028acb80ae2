"""The graph model and how it is recorded: ``vizgrad.trace()``, ``vizgrad.graph(tensor)``,
``Graph`` and its JSON form."""

from .graph import SCHEMA_VERSION, Graph, GraphEdge, GraphGroup, GraphNode, json_bytes, schema
from .history import graph
from .recorder import Recorder, trace
from .statistics import stats_dict, summary_dict

__all__ = ["Graph", "GraphEdge", "GraphGroup", "GraphNode", "Recorder", "SCHEMA_VERSION", "graph", "json_bytes",
           "schema", "stats_dict", "summary_dict", "trace"]
