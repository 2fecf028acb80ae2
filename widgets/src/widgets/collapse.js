// Which modules are drawn collapsed: pure state changes the graph widget sends to
// Python (which redraws the DOT with vizgrad.render.dot's collapse option).

/** Whether ``name`` is ``ancestor`` or lies inside it ("a.b" is inside "a", not inside "a.bc"). */
export function isWithin(name, ancestor) {
  return name === ancestor || name.startsWith(`${ancestor}.`);
}

/** Whether ``name`` is drawn collapsed (itself or a module around it is). */
export function isCollapsed(collapsed, name) {
  return collapsed.some((module) => isWithin(name, module));
}

/**
 * The collapsed list after toggling ``name``: a collapsed module expands; any other one
 * collapses, which subsumes its collapsed descendants. A module hidden inside a collapsed
 * parent expands by expanding that parent. The result is sorted.
 */
export function toggleModule(collapsed, name) {
  const current = new Set(collapsed);
  if (current.has(name)) {
    current.delete(name);
  } else {
    const outer = collapsed.find((module) => module !== name && isWithin(name, module));
    if (outer !== undefined) {
      current.delete(outer);
    } else {
      for (const module of collapsed) if (isWithin(module, name)) current.delete(module);
      current.add(name);
    }
  }
  return [...current].sort();
}

/**
 * The module a clicked DOT id stands for: vizgrad.render.dot names a group's cluster
 * "cluster_" + its id and its collapsed box "m_" + its id (``key`` without the prefix); the
 * graph's ``groups`` give its name. Null when no group has that id.
 */
export function moduleForGroupId(graph, groupId) {
  return (graph.groups ?? []).find((group) => group.id === groupId)?.name ?? null;
}
