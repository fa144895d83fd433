// The meter families as a Markdown table, for docs/meters.md (`npm run docs:meters`).
import { METER_FAMILIES, type MeterFamily, type Reading, recognisingNames } from './meter-families.ts';

/** The header of the family reference table. */
export const FAMILY_REFERENCE_HEADER =
  '| family | resource | kind, role, position | in use | capacity | waiting | wait, hold | refused |';

/** One row per meter family, in the registry's order. */
export function familyReferenceRows(): string[] {
  return METER_FAMILIES.map((family) => {
    const cell = (field: 'inUse' | 'capacity' | 'waiting' | 'refused') => meters(family, field);
    const times = [meters(family, 'waitMs'), meters(family, 'holdMs')].filter((m) => m !== '–').join('; ');
    return `| \`${family.family}\` | ${exampleName(family)} | ${family.kind}, ${family.role}, ${family.position} | ${cell('inUse')} | ${cell('capacity')} | ${cell('waiting')} | ${times || '–'} | ${cell('refused')} |`;
  });
}

/** The whole table. */
export function familyReferenceTable(): string {
  return [FAMILY_REFERENCE_HEADER, '|---|---|---|---|---|---|---|---|', ...familyReferenceRows()].join('\n');
}

function meters(
  family: MeterFamily,
  field: 'inUse' | 'capacity' | 'waiting' | 'waitMs' | 'holdMs' | 'refused',
): string {
  const reading = family[field];
  return reading ? readingWords(reading) : '–';
}

/** How a figure is read, in a cell: `a × b`, `rate of a`, `Δa ÷ Δb`, alternatives joined by `or`. */
function readingWords(reading: Reading): string {
  const code = (name: string) => `\`${name}\``;
  switch (reading.read) {
    case 'gauge':
      return reading.meters.map((m) => code(m.name)).join(reading.combine === 'product' ? ' × ' : ' + ');
    case 'rate':
      return `rate of ${code(reading.meter.name)}`;
    case 'ratio':
      return `Δ${code(reading.numerator.name)} ÷ Δ${code(reading.denominator.name)}`;
    case 'first':
      return reading.of.map(readingWords).join(' or ');
  }
}

/** The resource's name with its identity labels shown as `<label>`. */
function exampleName(family: MeterFamily): string {
  const labels = Object.fromEntries(family.identity.map((label) => [label, `<${label}>`]));
  const name = family.name(labels);
  const by = recognisingNames(family);
  return `${name.replace(/</g, '&lt;').replace(/>/g, '&gt;')}${by.length > 0 ? ` (seen by \`${by[0]}\`)` : ''}`;
}
