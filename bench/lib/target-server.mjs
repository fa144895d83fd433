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
// Connections accepted since the last reset, and when each was accepted.
let connections = 0;

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

const CRLFCRLF = Buffer.from('\r\n\r\n');
const QUERY_I = Buffer.from('?i=');
const QUERY_S = Buffer.from('&s=');

/** The decimal number in `bytes` from `from` up to the first non-digit, or -1 when none. */
function digitsAt(bytes, from, end) {
  let value = 0;
  let i = from;
  for (; i < end && bytes[i] >= 48 && bytes[i] <= 57; i++) value = value * 10 + (bytes[i] - 48);
  return i === from ? -1 : value;
}

/** Answers the request head `bytes[start, end)`; returns the bytes to write. */
function answer(bytes, start, end, at) {
  // Control paths are rare: only they are turned into strings.
  if (bytes[start + 5] === 95 && bytes[start + 6] === 95) {
    const line = bytes.toString('latin1', start, Math.min(end, start + 64));
    if (line.startsWith('GET /__stats')) {
      return json({
        count,
        times: Array.from(arrivals.subarray(0, count)),
        planned: Array.from(indices.subarray(0, count)),
        sources: Array.from(sources.subarray(0, count)),
        connections,
      });
    }
    if (line.startsWith('GET /__reset')) {
      count = 0;
      connections = 0;
      return OK;
    }
  }
  if (count < arrivals.length) {
    const lineEnd = bytes.indexOf(13, start);
    const query = bytes.indexOf(QUERY_I, start);
    const inLine = query >= 0 && query < lineEnd;
    indices[count] = inLine ? digitsAt(bytes, query + 3, lineEnd) : -1;
    const source = inLine ? bytes.indexOf(QUERY_S, query) : -1;
    sources[count] = source >= 0 && source < lineEnd ? digitsAt(bytes, source + 3, lineEnd) : 0;
    arrivals[count++] = at;
  }
  return OK;
}

const server = createServer({ noDelay: true }, (socket) => {
  connections++;
  // Bytes of a request head split across reads; usually empty.
  let carry;
  socket.on('data', (chunk) => {
    const at = performance.now();
    const bytes = carry ? Buffer.concat([carry, chunk]) : chunk;
    carry = undefined;
    let start = 0;
    let end = bytes.indexOf(CRLFCRLF, start);
    let replies;
    while (end >= 0) {
      const reply = answer(bytes, start, end, at);
      replies = replies === undefined ? reply : Buffer.concat([replies, reply]);
      start = end + 4;
      end = bytes.indexOf(CRLFCRLF, start);
    }
    if (start < bytes.length) carry = bytes.subarray(start);
    if (replies !== undefined) socket.write(replies);
  });
  socket.on('error', () => undefined);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
