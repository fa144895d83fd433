// Joins the resources recognised in the meters onto the saturation table, by each step's window.
import type { ResourceSeries, SaturationRow } from '../../contract/index.ts';
import { resourceStepFigures } from './resource-steps.ts';

/**
 * Sets `row.resources` on every row with a window: each resource's figures over the
 * seconds of that window (the meters are read on plateau's clock, the same host's as the
 * client's). A resource with no reading inside a window is left out of that row rather
 * than shown as idle. Rows without a window (too few samples to place them) get none.
 */
export function attachResources(rows: SaturationRow[], resources: ResourceSeries[]): void {
  if (resources.length === 0) return;
  for (const row of rows) {
    const window = row.window;
    if (!window) continue;
    row.resources = resources
      .map((series) => resourceStepFigures(series, window))
      .filter((figures) => figures.seconds > 0);
  }
}
