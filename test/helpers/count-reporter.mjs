// A node:test reporter that writes one JSON object when the file's run ends: how many tests
// passed, failed, were skipped (with the reason each gave) or are todo. test/run-tests.mjs
// adds it beside the spec reporter of each file and sums the objects into the run's totals.
export default async function* countReporter(source) {
  const counts = { pass: 0, fail: 0, skip: 0, todo: 0, skipped: [], failed: [] };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.details?.type === 'suite') continue;
    if (data.skip !== undefined) {
      counts.skip++;
      counts.skipped.push(`${data.name}: ${typeof data.skip === 'string' ? data.skip : 'skipped'}`);
    } else if (data.todo !== undefined) counts.todo++;
    else if (event.type === 'test:pass') counts.pass++;
    else {
      counts.fail++;
      counts.failed.push(data.name);
    }
  }
  yield `${JSON.stringify(counts)}\n`;
}
