// Request timeouts without a timer per request.
//
// Every request has a timeout (k6's default: 60 s), and a Node timer per request (a
// Timeout object, its async-hook init, insertion and removal) is a measurable share of the
// engine's CPU per request at high rates, for timeouts that almost never fire. Requests that share a timeout length
// expire in the order they started, so each length keeps a FIFO list threaded through the
// requests themselves, with one timer for its oldest entry. A request that ends leaves its
// list in O(1); the timer skips past entries that left.

/** What a list holds: a request that can expire, with the links the list threads through it. */
export interface Expiring {
  /** When it expires (the clock of `now`). */
  expiresAt: number;
  timeoutPrev: Expiring | undefined;
  timeoutNext: Expiring | undefined;
  timeoutList: TimeoutList | undefined;
  expire(): void;
}

/** The requests sharing one timeout length, oldest first. */
class TimeoutList {
  head: Expiring | undefined;
  tail: Expiring | undefined;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly lengthMs: number,
    readonly now: () => number,
  ) {}

  append(entry: Expiring): void {
    entry.timeoutList = this;
    entry.timeoutPrev = this.tail;
    entry.timeoutNext = undefined;
    if (this.tail) this.tail.timeoutNext = entry;
    else this.head = entry;
    this.tail = entry;
    if (!this.timer) this.#arm(entry.expiresAt);
  }

  remove(entry: Expiring): void {
    const { timeoutPrev: prev, timeoutNext: next } = entry;
    if (prev) prev.timeoutNext = next;
    else this.head = next;
    if (next) next.timeoutPrev = prev;
    else this.tail = prev;
    entry.timeoutPrev = undefined;
    entry.timeoutNext = undefined;
    entry.timeoutList = undefined;
    // The timer stays armed for the old head's time; when it fires it moves on to the new head.
  }

  #arm(at: number): void {
    this.timer = setTimeout(fire, Math.max(1, at - this.now()), this);
    this.timer.unref();
  }

  fire(): void {
    this.timer = undefined;
    const now = this.now();
    // Half a millisecond early is on time: timers fire on whole milliseconds.
    while (this.head && this.head.expiresAt <= now + 0.5) {
      const entry = this.head;
      this.remove(entry);
      entry.expire();
    }
    if (this.head && !this.timer) this.#arm(this.head.expiresAt);
  }
}

function fire(list: TimeoutList): void {
  list.fire();
}

/** All timeout lists of one HTTP module. */
export class RequestTimeouts {
  readonly #lists = new Map<number, TimeoutList>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Starts `entry`'s timeout of `lengthMs` from now. */
  start(entry: Expiring, lengthMs: number): void {
    let list = this.#lists.get(lengthMs);
    if (!list) {
      list = new TimeoutList(lengthMs, this.#now);
      this.#lists.set(lengthMs, list);
    }
    entry.expiresAt = this.#now() + lengthMs;
    list.append(entry);
  }

  /** Cancels `entry`'s timeout (nothing when it has none or it already fired). */
  cancel(entry: Expiring): void {
    entry.timeoutList?.remove(entry);
  }

  /** Cancels every pending timeout (the module is closing). */
  clear(): void {
    for (const list of this.#lists.values()) {
      clearTimeout(list.timer);
      list.timer = undefined;
      while (list.head) list.remove(list.head);
    }
  }
}
