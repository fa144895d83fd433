// A trivial HTTP target for generator benchmarks: answers "ok" and records arrival times.
// Run as its own process (pinned to a core by the caller). GET /__stats returns the
// arrivals per 10 ms window and the raw arrival offsets; POST /__reset clears them.
import { createServer } from 'node:http';

const arrivals = new Float64Array(2_000_000);
// The planned iteration index when the generator sends ?i=<iterationInTest>, else -1.
const indices = new Float64Array(2_000_000);
let count = 0;
const server = createServer((req, res) => {
  if (req.url === '/__stats') {
    const times = Array.from(arrivals.subarray(0, count));
    const planned = Array.from(indices.subarray(0, count));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ count, times, planned }));
    return;
  }
  if (req.url === '/__reset') {
    count = 0;
    res.end('reset');
    return;
  }
  if (count < arrivals.length) {
    const at = req.url.indexOf('?i=');
    indices[count] = at < 0 ? -1 : Number(req.url.slice(at + 3));
    arrivals[count++] = performance.now();
  }
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
