"""Drawing graphs: DOT (pure Python), SVG (Graphviz) and self-contained HTML."""
