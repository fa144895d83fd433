// A node:test reporter that writes one JSON object when the file's run ends: how many tests
// passed, failed, were skipped (with the reason each gave) or are todo. test/run-tests.mjs
// adds it beside the spec reporter of each file and sums the objects into the run's totals.
// A failure carries its error's first lines: the run's last lines are often all a CI log
// keeps, and they should say why, not only which.
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
      counts.failed.push(`${data.name} (${why(data.details?.error)})`);
    }
  }
  yield `${JSON.stringify(counts)}\n`;
}

/** The first lines of a failed test's error (node:test wraps the thrown one as `cause`). */
function why(error) {
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? cause.message : String(cause ?? 'no error given');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const short = lines.slice(0, 6).join(' / ');
  return short.length > 400 ? `${short.slice(0, 400)}…` : short;
}
