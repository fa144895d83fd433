// HTTP/1.1 connections for k6/http, handed out the way Go's http.Transport (and so k6)
// hands them out.
//
// undici's own pool binds a request to a new connection the moment it has to open one,
// so the request waits for that connection even when another frees up a moment later.
// Go instead dials in the background and gives a waiting request whichever connection is
// ready first: the one it dialled, or one another request just released. At a cold start
// of a high rate the difference is large: with undici's pool every request of the first
// milliseconds opens a connection of its own (a connection costs far more CPU in Node than
// a start), VUs sit blocked behind connects, and starts are dropped; Go's way reuses the
// first few connections and opens only what the load needs (`npm run bench:engine-connections`).
import { isIP, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { buildConnector, Client, type Dispatcher } from 'undici';
import { Fifo } from '../../../lib/fifo.ts';
import type { DestinationRules, RefusedDestination } from './destinations.ts';

/** Connect timeout, as Go's default dialer in k6 (dial errors then carry code 1211). */
const DIAL_TIMEOUT_MS = 10_000;

/**
 * What a request may hear about its connection, the moments Go's httptrace gives k6:
 * a dial made for it starts (after DNS) and connects, its TLS handshake ends, and the
 * request has been written. The handler reads the clock itself when called.
 */
export interface ConnectionTrace {
  onConnectStart?(): void;
  /** Also called when the dial failed, as Go's ConnectDone carries the error. */
  onConnectDone?(): void;
  onTlsHandshakeDone?(): void;
  onRequestWritten?(): void;
  /** The https connection the request was given: TLS version in k6's form (`tls1.3`) and protocol. */
  onConnection?(info: ConnectionInfo): void;
}

/** What k6 tags a request with about its connection. */
export interface ConnectionInfo {
  /** `tls1.2`, `tls1.3`; '' over plain http. */
  tlsVersion: string;
  /** `HTTP/1.1`, or `HTTP/2.0` when ALPN chose h2. */
  proto: string;
  /** The connection's socket: its address is k6's `ip` tag (read only when that tag is on). */
  socket: Socket;
}

/** A request's handler: undici's, plus the connection moments it wants to hear. */
export type TracedHandler = Dispatcher.DispatchHandler & ConnectionTrace;

/**
 * Opens a socket: undici's connector, typed as returning nothing but returning the socket it
 * is opening (a test's connector may return nothing).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a plain undici connector (returning void) must fit.
type Connector = (options: buildConnector.Options, callback: buildConnector.Callback) => Socket | void;

interface Waiting {
  options: Dispatcher.DispatchOptions;
  handler: TracedHandler;
}

/** Settings every connection shares. */
export interface PoolSettings {
  keepAliveTimeoutMs: number;
  /** Opens sockets; undici's connector with a 10 s timeout unless given (tests slow it down). */
  connector?: Connector;
  /**
   * k6's insecureSkipTLSVerify, read when the first connection is opened (the script's
   * options are known by then, not when the module is made).
   */
  insecureSkipTLSVerify?: () => boolean;
  /**
   * k6's `hosts` option: `name` → `ip`, or `name:port` → `ip:port`, read at each dial.
   * The request keeps its Host header and TLS server name.
   */
  hosts?: () => Readonly<Record<string, string>>;
  /** k6's tlsVersion and tlsAuth, read when an https origin's first connection is opened. */
  tls?: () => TlsSettings;
  /** k6's blockHostnames and blacklistIPs, read at each dial. */
  destinations?: () => DestinationRules;
}

/** TLS settings from k6's options, in Node's terms. */
export interface TlsSettings {
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  /** Client certificates; one without domains applies to every host. */
  auth: readonly { domains: readonly string[]; cert: string; key: string; passphrase?: string }[];
}

type SecureVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

/*
 * Each VU has its own ConnectionPools (k6 gives every VU its own transport), so what a
 * ConnectionPools makes for its first request, every VU makes in the first milliseconds of
 * a test, all at once. What needs no VU of its own is made once per process instead: the
 * connector for plain TCP (undici's buildConnector also makes a TLS session cache with a
 * FinalizationRegistry, unused without TLS), the parsed origin (read, never changed) and
 * the weak maps keyed by connection.
 */
let plain: Connector | undefined;

function plainConnector(): Connector {
  plain ??= buildConnector({ timeout: DIAL_TIMEOUT_MS });
  return plain;
}

/** Each client's address, TLS version and protocol, for the ip, tls_version and proto tags. */
const connectionInfo = new WeakMap<Client, ConnectionInfo>();

/**
 * The request each client is carrying: when undici reconnects later (its socket closed just
 * before, as with Connection: close), the request waiting on it hears the dial. Forgotten
 * when the request ends. Kept, it held every VU's last request (handler, response,
 * buffers, iteration context) alive through young-generation collections, so each
 * collection copied every VU's last request and its pauses became start lag
 * (`npm run bench:engine`). (These two maps are keyed by clients, each of one pool, so one
 * map each serves every pool.)
 */
const lastSent = new WeakMap<Client, TracedHandler>();

const parsedOrigins = new Map<string, URL>();

function parsedOrigin(origin: string): URL {
  let url = parsedOrigins.get(origin);
  if (!url) {
    url = new URL(origin);
    if (parsedOrigins.size < 1000) parsedOrigins.set(origin, url);
  }
  return url;
}

/**
 * Every origin's connections. `dispatch` takes undici's dispatch options (with `origin`)
 * and a handler, like an undici Agent.
 */
export class ConnectionPools {
  readonly #pools = new Map<string, OriginPool>();
  readonly #settings: PoolSettings;
  #connector: Connector | undefined;

  constructor(settings: PoolSettings) {
    this.#settings = settings;
  }

  /** The connector for `url`: one for plain origins, one per client certificate over TLS. */
  #connectorFor(url: URL): Connector {
    if (this.#settings.connector) return this.#settings.connector;
    if (url.protocol === 'http:') return plainConnector();
    const base = {
      timeout: DIAL_TIMEOUT_MS,
      // Offer h2 over TLS, as Go's client does for k6; the server chooses.
      allowH2: true,
      ...(this.#settings.insecureSkipTLSVerify?.() ? { rejectUnauthorized: false } : {}),
    };
    const tls = url.protocol === 'https:' ? this.#settings.tls?.() : undefined;
    if (!tls) {
      this.#connector ??= buildConnector(base);
      return this.#connector;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const auth = tls.auth.find((a) => a.domains.length === 0 || a.domains.includes(host));
    return buildConnector({
      ...base,
      ...(tls.minVersion ? { minVersion: tls.minVersion } : {}),
      ...(tls.maxVersion ? { maxVersion: tls.maxVersion } : {}),
      ...(auth
        ? { cert: auth.cert, key: auth.key, ...(auth.passphrase ? { passphrase: auth.passphrase } : {}) }
        : {}),
    });
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: TracedHandler): void {
    const origin = String(options.origin);
    let pool = this.#pools.get(origin);
    if (!pool) {
      const url = parsedOrigin(origin);
      pool = new OriginPool(url, this.#connectorFor(url), this.#settings);
      this.#pools.set(origin, pool);
    }
    pool.dispatch(options, handler);
  }

  /** Open connections across origins (for tests and diagnostics). */
  get connections(): number {
    let count = 0;
    for (const pool of this.#pools.values()) count += pool.connections;
    return count;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
    this.#pools.clear();
  }
}

/** One origin's connections: idle ones, requests waiting for one, and dials in progress. */
class OriginPool {
  readonly #url: URL;
  readonly #connector: Connector;
  readonly #settings: PoolSettings;
  readonly #clients = new Set<Client>();
  /**
   * Dialled sockets whose client has not taken them yet: a dial that finishes after its
   * request got another connection leaves an idle client whose socket undici does not know
   * about until the client's first request. Unref'd meanwhile, destroyed on close(), so
   * they never keep the process alive.
   */
  readonly #unclaimed = new Set<Socket>();
  /** Connected clients with no request in flight; the most recently used last. */
  readonly #idle: Client[] = [];
  /** Requests waiting for a connection, oldest first. */
  readonly #waiting = new Fifo<Waiting>();
  #dialing = 0;
  #closed = false;
  readonly #tls: boolean;
  /**
   * When the server chose HTTP/2: the one multiplexed connection every request of this
   * origin goes to, as Go's HTTP/2 transport uses one connection per host.
   */
  #h2: Client | undefined;
  /** The request being handed to a client right now: a reconnect it sets off is traced to it. */
  #sending: TracedHandler | undefined;

  constructor(url: URL, connector: Connector, settings: PoolSettings) {
    this.#url = url;
    this.#connector = connector;
    this.#settings = settings;
    this.#tls = url.protocol === 'https:';
  }

  get connections(): number {
    return this.#clients.size;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: TracedHandler): void {
    const h2 = this.#h2;
    if (h2 && !h2.destroyed && !h2.closed) {
      this.#send(h2, options, handler);
      return;
    }
    const client = this.#idle.pop();
    if (client) {
      this.#send(client, options, handler);
      return;
    }
    this.#waiting.push({ options, handler });
    // Like Go: one dial per request left waiting, traced to it; whichever connection is
    // ready first wins.
    if (this.#dialing < this.#waiting.size) this.#dial(handler);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const socket of this.#unclaimed) socket.destroy();
    this.#unclaimed.clear();
    await Promise.all([...this.#clients].map((client) => client.close().catch(() => undefined)));
  }

  #send(client: Client, options: Dispatcher.DispatchOptions, handler: TracedHandler): void {
    const info = connectionInfo.get(client);
    if (info) handler.onConnection?.(info);
    const releasing = new ReleasingHandler(handler, () => this.#release(client));
    emptyIdleQueue(client);
    this.#sending = handler;
    lastSent.set(client, handler);
    try {
      client.dispatch(options, releasing);
    } finally {
      this.#sending = undefined;
    }
    releasing.dispatched();
  }

  /**
   * A connection is free again: the oldest waiting request takes it, else it idles. Called
   * from inside undici's callbacks, so a waiting request is handed over in a microtask
   * (dispatching from inside undici would re-enter it); an idle connection is only pushed,
   * and whoever pops it dispatches later, from their own code.
   */
  #release(client: Client): void {
    if (client === this.#h2) return; // multiplexed: never idle, never handed out
    lastSent.delete(client); // the request has ended (see lastSent)
    if (this.#closed || client.destroyed || client.closed) {
      this.#clients.delete(client);
      return;
    }
    const next = this.#waiting.shift();
    if (next) queueMicrotask(() => this.#send(client, next.options, next.handler));
    else this.#idle.push(client);
  }

  /**
   * Opens a socket for `trace`'s request and tells it when the TCP connection starts
   * (after any DNS lookup), is up, and (https) when its TLS handshake is done.
   */
  #open(
    target: buildConnector.Options,
    trace: ConnectionTrace | undefined,
    callback: buildConnector.Callback,
  ): void {
    const rules = this.#settings.destinations?.();
    if (rules && !rules.empty) {
      // As k6's dialer: the name before it is mapped or resolved, then the address.
      const refused =
        (isIP(unbracketed(target.hostname)) === 0 ? rules.checkHostname(target.hostname) : undefined) ??
        this.#refusedAddress(rules, this.#mapHost(target).hostname);
      if (refused) {
        process.nextTick(callback, refused, null);
        return;
      }
    }
    const options = this.#mapHost(target);
    const tls = options.protocol === 'https:';
    const resolved = isIP(options.hostname) !== 0;
    if (trace && resolved) trace.onConnectStart?.();
    let connected = false;
    const socket = this.#connector(options, (error, socket) => {
      if (trace && !connected) {
        connected = true;
        trace.onConnectDone?.();
      }
      if (trace && tls && !error) trace.onTlsHandshakeDone?.();
      if (error) callback(error, null);
      else callback(null, socket);
    });
    if (rules && !rules.empty && !resolved && socket) {
      socket.once('lookup', (error: Error | null, address: string) => {
        const refused = error ? undefined : this.#refusedAddress(rules, address);
        if (refused) socket.destroy(refused);
      });
    }
    if (!trace || !socket) return;
    if (!resolved) socket.once('lookup', () => trace.onConnectStart?.());
    if (tls) {
      socket.once('connect', () => {
        connected = true;
        trace.onConnectDone?.();
      });
    }
  }

  /** The refusal for dialling `host` when it is an address in a blacklisted range. */
  #refusedAddress(rules: DestinationRules, host: string): RefusedDestination | undefined {
    const address = unbracketed(host);
    const version = isIP(address);
    return version === 0 ? undefined : rules.checkAddress(address, version === 4 ? 'ipv4' : 'ipv6');
  }

  /** `target` with k6's `hosts` applied: the address to dial, the name kept for TLS. */
  #mapHost(target: buildConnector.Options): buildConnector.Options {
    const hosts = this.#settings.hosts?.();
    if (!hosts) return target;
    const mapped = hosts[`${target.hostname}:${target.port}`] ?? hosts[target.hostname];
    if (mapped === undefined) return target;
    const colon = mapped.lastIndexOf(':');
    const withPort = colon > 0 && !mapped.endsWith(']') && (isIP(mapped) === 0 || mapped.startsWith('['));
    const address = withPort ? mapped.slice(0, colon) : mapped;
    return {
      ...target,
      hostname: unbracketed(address),
      port: withPort ? mapped.slice(colon + 1) : target.port,
      servername: target.servername ?? (isIP(target.hostname) === 0 ? target.hostname : undefined),
    };
  }

  #noteConnection(client: Client, socket: Socket): void {
    if (!this.#tls) {
      connectionInfo.set(client, { tlsVersion: '', proto: 'HTTP/1.1', socket });
      return;
    }
    const tlsSocket = socket as TLSSocket;
    const protocol = tlsSocket.getProtocol?.() ?? '';
    connectionInfo.set(client, {
      // Node says TLSv1.3, k6 tls1.3 (and tls1.0 for TLSv1).
      tlsVersion: protocol === 'TLSv1' ? 'tls1.0' : protocol.replace('TLSv', 'tls'),
      proto: tlsSocket.alpnProtocol === 'h2' ? 'HTTP/2.0' : 'HTTP/1.1',
      socket,
    });
  }

  /**
   * A Client's connect function: the first connection is the one just dialled; later ones
   * (after the server closes an idle connection) are dialled when the client needs them,
   * for the request being handed to it. Returned from here rather than written inline in
   * the Client's options, where under tsx (esbuild's keepNames) it would be named by a
   * defineProperty on every connection.
   */
  #handingOver(handoff: Handoff): buildConnector.connector {
    return (options, callback) => {
      const ready = handoff.socket;
      handoff.socket = undefined;
      if (ready) this.#unclaimed.delete(ready);
      if (ready && !ready.destroyed) {
        ready.ref();
        // Asynchronously, as a real dial answers: undici does not expect a callback from
        // inside its own connect().
        process.nextTick(callback, null, ready);
        return;
      }
      const client = handoff.client!;
      this.#open(options, this.#sending ?? lastSent.get(client), (error, socket) => {
        if (socket) this.#noteConnection(client, socket);
        if (error) callback(error, null);
        else callback(null, socket);
      });
    };
  }

  #dial(trace: ConnectionTrace): void {
    this.#dialing++;
    const { hostname, host, protocol, port } = this.#url;
    const defaultPort = protocol === 'https:' ? '443' : '80';
    this.#open(
      { hostname: hostname.replace(/^\[|\]$/g, ''), host, protocol, port: port || defaultPort },
      trace,
      (error, socket) => {
        this.#dialing--;
        if (error || this.#closed) {
          socket?.destroy();
          // A failed dial fails the oldest waiting request, as a failed dial fails its
          // request in Go; after close() nothing is sent any more.
          const next = this.#waiting.shift();
          next?.handler.onResponseError?.(abortOnly(), error ?? new Error('the connection pool is closed'));
          return;
        }
        const h2 = (socket as TLSSocket).alpnProtocol === 'h2';
        if (h2 && this.#h2 && !this.#h2.destroyed && !this.#h2.closed) {
          // An HTTP/2 connection is already up and takes every request: this one is spare.
          socket?.destroy();
          return;
        }
        const dialled = socket as Socket;
        this.#unclaimed.add(dialled);
        dialled.unref();
        const handoff: Handoff = { socket: dialled, client: undefined };
        const client = new Client(this.#url.origin, {
          pipelining: 1,
          // HTTP/2 streams per connection; the server's SETTINGS can lower it.
          maxConcurrentStreams: 1000,
          keepAliveTimeout: this.#settings.keepAliveTimeoutMs,
          headersTimeout: 0,
          bodyTimeout: 0,
          connect: this.#handingOver(handoff),
        });
        handoff.client = client;
        this.#noteConnection(client, dialled);
        this.#clients.add(client);
        if (h2) {
          this.#h2 = client;
          // Everything waiting goes to it now; later requests go straight to it.
          for (let next = this.#waiting.shift(); next; next = this.#waiting.shift()) {
            this.#send(client, next.options, next.handler);
          }
          return;
        }
        this.#release(client);
      },
    );
  }
}

/**
 * undici's internal request queue of a Client, found by its symbols' names (undici exports
 * neither): the queue array and the indexes of the request running and of the next to send.
 */
interface UndiciQueueKeys {
  queue: symbol;
  running: symbol;
  pending: symbol;
}

let queueKeys: UndiciQueueKeys | null | undefined;

function undiciQueueKeys(client: Client): UndiciQueueKeys | null {
  if (queueKeys !== undefined) return queueKeys;
  const byName = new Map(Object.getOwnPropertySymbols(client).map((key) => [key.description, key]));
  const queue = byName.get('queue');
  const running = byName.get('running index');
  const pending = byName.get('pending index');
  queueKeys = queue && running && pending ? { queue, running, pending } : null;
  return queueKeys;
}

/**
 * Empties an idle Client's request queue before the next request joins it.
 *
 * Why: undici keeps each request's slot in the Client's queue array after it ends (set to
 * null) and cuts the array back only once 257 have ended. A connection of a VU serves one
 * request at a time for the whole test, so the array lives seconds while it grows slot by
 * slot: V8 copies it into a larger store several times on the way to 257, each store outlives
 * two young-generation collections and is promoted, and each cut leaves the stores in the
 * old generation as garbage, some 25 bytes of it per request: at 5,000 requests/s the old
 * generation grew ~140 KB/s until a full collection (`npm run bench:engine-memory`). Emptied
 * while nothing is queued or running, the array holds one request at a time and its store
 * dies young. A Client whose symbols are not found (another undici) is left as it is.
 */
export function emptyIdleQueue(client: Client): void {
  const keys = undiciQueueKeys(client);
  if (!keys) return;
  const fields = client as unknown as Record<symbol, unknown>;
  const queue = fields[keys.queue];
  if (!Array.isArray(queue) || queue.length === 0) return;
  if (fields[keys.running] !== queue.length || fields[keys.pending] !== queue.length) return;
  queue.length = 0;
  fields[keys.running] = 0;
  fields[keys.pending] = 0;
}

/** The socket a Client is to start with, until it takes it, and the Client. */
interface Handoff {
  socket: Socket | undefined;
  client: Client | undefined;
}

function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** A controller for a request that failed before it was handed to a connection. */
function abortOnly(): Dispatcher.DispatchController {
  return {
    abort: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
    aborted: true,
    paused: false,
    reason: null,
  };
}

/**
 * Forwards to the request's handler, tells it when the request has been written, and
 * frees the connection once the request is over.
 */
class ReleasingHandler implements Dispatcher.DispatchHandler {
  readonly #inner: TracedHandler;
  #release: (() => void) | undefined;
  /** undici writes a request inside dispatch() when its connection is up and idle. */
  #inDispatch = true;
  #startedInDispatch = false;

  constructor(inner: TracedHandler, release: () => void) {
    this.#inner = inner;
    this.#release = release;
  }

  /** dispatch() returned: a request undici started inside it has been written by now. */
  dispatched(): void {
    this.#inDispatch = false;
    if (this.#startedInDispatch) this.#inner.onRequestWritten?.();
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#inner.onRequestStart?.(controller, context);
    if (this.#inDispatch) this.#startedInDispatch = true;
    // Started later, once a new connection is up: written by the time microtasks run.
    else queueMicrotask(() => this.#inner.onRequestWritten?.());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    this.#inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#inner.onResponseData?.(controller, chunk);
  }

  // The connection is released before the request's own handler hears the end, as Go
  // returns a connection to its pool before the caller sees EOF: a VU that starts its next
  // request at once then finds the connection idle instead of dialling another.
  onResponseEnd(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    this.#done();
    this.#inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#done();
    this.#inner.onResponseError?.(controller, error);
  }

  #done(): void {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
}
