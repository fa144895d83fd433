// A trivial HTTP target for generator benchmarks: answers "ok" and records arrival times.
// Run as its own process (pinned to a core by the caller). GET /__stats returns the arrival
// offsets, the planned iteration and the sending process of each; GET /__reset clears them.
//
// It speaks just enough HTTP/1.1 over raw sockets (GET requests without bodies, keep-alive)
// instead of using node:http: the target must be far cheaper and steadier than any
// generator it measures, and node:http's per-request objects bring garbage-collection
// pauses that would show up as generator start lag.
import { createServer } from 'node:net';

const arrivals = new Float64Array(4_000_000);
// The planned iteration index when the generator sends ?i=<iterationInTest>, else -1.
const indices = new Float64Array(4_000_000);
// Which generator process sent it, when it adds &s=<number> (several processes, one test).
const sources = new Float64Array(4_000_000);
let count = 0;

const OK = Buffer.from(
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok',
  'latin1',
);

function json(body) {
  const payload = Buffer.from(JSON.stringify(body));
  return Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`,
      'latin1',
    ),
    payload,
  ]);
}

/** Answers one request head; returns the bytes to write. */
function answer(head, at) {
  const lineEnd = head.indexOf('\r\n');
  const line = head.slice(0, lineEnd < 0 ? head.length : lineEnd);
  const path = line.slice(line.indexOf(' ') + 1, line.lastIndexOf(' '));
  if (path === '/__stats') {
    return json({
      count,
      times: Array.from(arrivals.subarray(0, count)),
      planned: Array.from(indices.subarray(0, count)),
      sources: Array.from(sources.subarray(0, count)),
    });
  }
  if (path === '/__reset') {
    count = 0;
    return OK;
  }
  if (count < arrivals.length) {
    const query = path.indexOf('?i=');
    const source = path.indexOf('&s=');
    indices[count] = query < 0 ? -1 : Number.parseInt(path.slice(query + 3), 10);
    sources[count] = source < 0 ? 0 : Number.parseInt(path.slice(source + 3), 10);
    arrivals[count++] = at;
  }
  return OK;
}

const server = createServer({ noDelay: true }, (socket) => {
  let pending = '';
  socket.on('data', (chunk) => {
    const at = performance.now();
    pending += chunk.toString('latin1');
    let replies;
    let end = pending.indexOf('\r\n\r\n');
    while (end >= 0) {
      const reply = answer(pending.slice(0, end), at);
      if (replies === undefined) replies = reply;
      else replies = Buffer.concat([replies, reply]);
      pending = pending.slice(end + 4);
      end = pending.indexOf('\r\n\r\n');
    }
    if (replies !== undefined) socket.write(replies);
  });
  socket.on('error', () => undefined);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
