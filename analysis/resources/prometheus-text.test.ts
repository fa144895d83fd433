import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText } from './prometheus-text.ts';

// An excerpt of a Spring Boot 2 actuator/prometheus page (Micrometer with the simpleclient):
// label sets end with a comma, values are Java doubles.
const SPRING_BOOT_2 = `# HELP hikaricp_connections_active Active connections
# TYPE hikaricp_connections_active gauge
hikaricp_connections_active{pool="HikariPool-1",} 4.0
# HELP hikaricp_connections_acquire_seconds Connection acquire time
# TYPE hikaricp_connections_acquire_seconds summary
hikaricp_connections_acquire_seconds_count{pool="HikariPool-1",} 1523.0
hikaricp_connections_acquire_seconds_sum{pool="HikariPool-1",} 12.345
# HELP executor_pool_max_threads The maximum allowed number of threads in the pool
# TYPE executor_pool_max_threads gauge
executor_pool_max_threads{name="applicationTaskExecutor",} 2.147483647E9
# HELP jvm_memory_max_bytes The maximum amount of memory in bytes that can be used for memory management
# TYPE jvm_memory_max_bytes gauge
jvm_memory_max_bytes{area="nonheap",id="Metaspace",} -1.0
`;

// OpenMetrics as Micrometer 1.13+ and client_golang write it when asked for it.
const OPEN_METRICS = `# TYPE hikaricp_connections_timeout counter
# HELP hikaricp_connections_timeout Connection timeout total count
hikaricp_connections_timeout_total{pool="orders"} 3.0 # {trace_id="4bf92f3577b34da6"} 1.0 1700000000.123
hikaricp_connections_timeout_created{pool="orders"} 1.7e9
go_sql_in_use_connections{db_name="orders"} 7 1700000000.5
# EOF
this line is past the end and is not read
`;

test('samples of each form, with their labels and values', () => {
  const cases: { text: string; expected: [string, Record<string, string>, number][] }[] = [
    // Spring Boot 2: trailing commas in label sets, exponent notation, negative values kept
    {
      text: SPRING_BOOT_2,
      expected: [
        ['hikaricp_connections_active', { pool: 'HikariPool-1' }, 4],
        ['hikaricp_connections_acquire_seconds_count', { pool: 'HikariPool-1' }, 1523],
        ['hikaricp_connections_acquire_seconds_sum', { pool: 'HikariPool-1' }, 12.345],
        ['executor_pool_max_threads', { name: 'applicationTaskExecutor' }, 2147483647],
        ['jvm_memory_max_bytes', { area: 'nonheap', id: 'Metaspace' }, -1],
      ],
    },
    // OpenMetrics: exemplar and timestamp read past, nothing after # EOF
    {
      text: OPEN_METRICS,
      expected: [
        ['hikaricp_connections_timeout_total', { pool: 'orders' }, 3],
        ['hikaricp_connections_timeout_created', { pool: 'orders' }, 1.7e9],
        ['go_sql_in_use_connections', { db_name: 'orders' }, 7],
      ],
    },
    // 0.0.4 with an integer ms timestamp, no labels, CRLF line ends, blank lines and tabs
    {
      text: 'process_cpu_seconds_total 12.5 1700000000000\r\n\r\n\tup\t1\r\n',
      expected: [
        ['process_cpu_seconds_total', {}, 12.5],
        ['up', {}, 1],
      ],
    },
    // label values with the three escapes, and spaces around the parts of a label set
    {
      text: 'x{ a = "say \\"hi\\"" , b="C:\\\\tmp", c="two\\nlines", d="a\\tb" } 1\n',
      expected: [['x', { a: 'say "hi"', b: 'C:\\tmp', c: 'two\nlines', d: 'a\\tb' }, 1]],
    },
    // the UTF-8 names form of Prometheus 3: a quoted name inside the braces
    {
      text: '{"http.server.active", "le"="0.5", route="/a"} 2\n',
      expected: [['http.server.active', { le: '0.5', route: '/a' }, 2]],
    },
    // commas and braces inside a label value are part of it
    {
      text: 'q{sql="select a, b from t where c = \'}\'"} 5\n',
      expected: [['q', { sql: "select a, b from t where c = '}'" }, 5]],
    },
  ];
  for (const { text, expected } of cases) {
    const parsed = parsePrometheusText(text);
    assert.equal(parsed.error, null, text);
    assert.equal(parsed.dropped.invalidLines, 0, text);
    assert.deepEqual(
      parsed.samples.map((s) => [s.name, s.labels, s.value]),
      expected,
      text,
    );
  }
});

test('NaN and ±Inf are dropped and counted, never samples', () => {
  const parsed = parsePrometheusText(
    [
      'a NaN', // Go's NaN
      'b +Inf',
      'c -Inf',
      'd Inf', // ParseFloat reads these too
      'e nan',
      'f 1',
      'g{le="+Inf"} 3', // +Inf as a label value is just a string
    ].join('\n'),
  );
  assert.equal(parsed.error, null);
  assert.equal(parsed.dropped.nonFinite, 5);
  assert.deepEqual(
    parsed.samples.map((s) => s.name),
    ['f', 'g'],
  );
});

test('bodies that are not Prometheus text give an error that says what they looked like', () => {
  const cases: [string, string][] = [
    // an HTML error page from a proxy or a framework's 404
    [
      '<!DOCTYPE html>\n<html><body>Whitelabel Error Page</body></html>',
      'not Prometheus text: the body starts with "<!DOCTYPE html>"',
    ],
    // actuator's JSON index (the URL lacked /prometheus)
    [
      '{"names":["jvm.memory.used","hikaricp.connections.active"]}',
      'not Prometheus text: the body is JSON and starts with "{"names":["jvm.memory.used","hikaricp.co…"',
    ],
    // an empty 200
    ['', 'not Prometheus text: the body is empty'],
    // only whitespace
    ['  \n\n', 'not Prometheus text: the body is empty'],
    // prose: every line fails
    [
      'Service Unavailable\nplease retry later',
      'not Prometheus text: 2 of 2 lines did not parse, the first "Service Unavailable"',
    ],
    // most lines fail
    [
      'ok 1\nthis is not\na metric line\nat all',
      'not Prometheus text: 3 of 4 lines did not parse, the first "this is not"',
    ],
  ];
  for (const [body, error] of cases) {
    const parsed = parsePrometheusText(body);
    assert.equal(parsed.error, error);
    assert.deepEqual(parsed.samples, []);
  }
});

test('a few bad lines are counted and the rest kept', () => {
  const parsed = parsePrometheusText(
    [
      'a 1',
      'b{x="1"} 2',
      'c{x="unterminated} 3', // an unterminated label value
      'd 4',
      'e{x="1"} 5 6 7', // a token after the timestamp
      'f 6',
      'g 7',
    ].join('\n'),
  );
  assert.equal(parsed.error, null);
  assert.equal(parsed.dropped.invalidLines, 2);
  assert.equal(parsed.firstInvalidLine, 'c{x="unterminated} 3');
  assert.deepEqual(
    parsed.samples.map((s) => s.name),
    ['a', 'b', 'd', 'f', 'g'],
  );
});

test('a body of comments alone is Prometheus text with no samples', () => {
  const parsed = parsePrometheusText('# HELP x a meter not yet observed\n# TYPE x counter\n');
  assert.equal(parsed.error, null);
  assert.deepEqual(parsed.samples, []);
});

test('keep turns away samples by name before their labels are read, and names them', () => {
  const parsed = parsePrometheusText(SPRING_BOOT_2, { keep: (name) => name.startsWith('hikaricp_') });
  assert.deepEqual(
    parsed.samples.map((s) => s.name),
    [
      'hikaricp_connections_active',
      'hikaricp_connections_acquire_seconds_count',
      'hikaricp_connections_acquire_seconds_sum',
    ],
  );
  assert.deepEqual([...parsed.skippedNames].sort(), ['executor_pool_max_threads', 'jvm_memory_max_bytes']);
});
