// How wide the side panel opens: pure arithmetic over a Lumino SplitPanel's relative sizes.

/** The side panel opens at least this wide (CSS pixels); its edge then drags to resize it. */
export const PANEL_MIN_WIDTH = 420;

/**
 * The split's relative sizes with child ``index`` at least ``minPx`` of ``totalPx`` pixels,
 * the room taken from the largest other child (the notebooks' area); ``sizes`` as they are
 * when it is wide enough already or the split is too narrow to give it that much.
 */
export function widenedSizes(sizes, index, totalPx, minPx = PANEL_MIN_WIDTH) {
  const sum = sizes.reduce((a, b) => a + b, 0);
  if (!(totalPx > 0) || !(sum > 0) || index < 0 || index >= sizes.length) return sizes;
  const share = sizes.map((size) => size / sum);
  const wanted = minPx / totalPx;
  if (share[index] >= wanted) return sizes;
  let donor = -1;
  share.forEach((size, i) => {
    if (i !== index && (donor < 0 || size > share[donor])) donor = i;
  });
  const room = donor < 0 ? 0 : share[donor] - wanted / 2; // the donor keeps at least half the panel's width
  const take = Math.min(wanted - share[index], Math.max(0, room));
  if (take <= 0) return sizes;
  const next = [...share];
  next[index] += take;
  next[donor] -= take;
  return next;
}
