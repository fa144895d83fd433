// A request's moments and the timings k6 derives from them (`res.timings`, http_req_*).

import type { Timings } from './http-response.ts';

/**
 * The moments of one request, in ms from one clock, 0 until they happen. They follow k6's
 * tracer on Go's httptrace: created (Go's GetConn), a dial for it starting and connecting,
 * its TLS handshake done, handed to a connection (GotConn), written, first response byte.
 */
export class RequestMoments {
  readonly created: number;
  assigned = 0;
  connectStart = 0;
  connectDone = 0;
  tlsDone = 0;
  written = 0;
  firstByte = 0;

  constructor(created: number) {
    this.created = created;
  }

  /**
   * The timings at `ended`: blocked = handed − created (a new connection's dial included),
   * connecting = the dial, tls_handshaking = the handshake after it, sending = written −
   * (TLS done, dial done, or handed when the connection was reused), waiting = first byte −
   * written, receiving = end − first byte, duration = sending + waiting + receiving. As on
   * k6 v0.49, a request written that failed before its first byte (a timeout) waited until it
   * failed: waiting = end − written, so a timeout's duration is about its deadline.
   */
  timings(ended: number): Timings {
    const connected = this.tlsDone || this.connectDone || this.assigned;
    const sending = span(connected, this.written);
    const waiting = span(this.written, this.firstByte || (this.written > 0 ? ended : 0));
    const receiving = span(this.firstByte, ended);
    return {
      blocked: span(this.created, this.assigned),
      connecting: span(this.connectStart, this.connectDone),
      tls_handshaking: span(this.connectDone, this.tlsDone),
      sending,
      waiting,
      receiving,
      duration: sending + waiting + receiving,
    };
  }
}

/** `to − from` when both moments happened, else 0. */
function span(from: number, to: number): number {
  return from === 0 || to === 0 || to < from ? 0 : to - from;
}
