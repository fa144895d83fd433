// The `k6/html` module: parseHTML and k6's jQuery-like Selection and DOM-like Element, on
// cheerio (parse5, the HTML5 parsing algorithm, as Go's x/net/html under k6's goquery).

import { createRequire } from 'node:module';
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode, Element as DomElement } from 'domhandler';

// cheerio takes ~80 ms to load: it is loaded on the first parse, not at every engine start
// (most scripts never parse HTML).
const require = createRequire(import.meta.url);
let cheerioLoad: typeof import('cheerio')['load'] | undefined;

/** What a script may pass where k6 takes a selector: a string, a Selection or an Element. */
type SelectorArg = string | Selection | Element;

/** A node type as k6 numbers them (the DOM's): 1 element, 3 text, 8 comment, 9 document, 10 doctype. */
const NODE_TYPES: Record<string, number> = {
  tag: 1,
  script: 1,
  style: 1,
  text: 3,
  cdata: 3,
  comment: 8,
  root: 9,
  directive: 10,
};

/**
 * k6's `parseHTML(src)`: the document as a Selection (its root). Never throws on malformed
 * HTML: the HTML5 algorithm makes a document of anything, as k6's parser does.
 */
export function parseHTML(src: unknown, url = ''): Selection {
  cheerioLoad ??= (require('cheerio') as typeof import('cheerio')).load;
  const $ = cheerioLoad(String(src ?? ''));
  return new Selection($, $.root() as Cheerio<AnyNode>, url);
}

/**
 * k6's Selection: methods named and shaped as k6 v0.49 has them (`attr` of a missing
 * attribute is undefined, `get(i)` an Element, `each(fn(index, element))`, `map(fn(index,
 * selection))`). A Selection is immutable: every traversal returns a new one.
 */
export class Selection {
  readonly #$: CheerioAPI;
  readonly #sel: Cheerio<AnyNode>;
  /** The response's URL for `res.html()`, '' for `parseHTML`. */
  readonly url: string;

  constructor($: CheerioAPI, sel: Cheerio<AnyNode>, url: string) {
    this.#$ = $;
    this.#sel = sel;
    this.url = url;
  }

  #wrap(sel: Cheerio<AnyNode>): Selection {
    return new Selection(this.#$, sel, this.url);
  }

  /** The cheerio selection or nodes a selector argument stands for. */
  #selector(arg: SelectorArg): string | Cheerio<AnyNode> | AnyNode {
    if (typeof arg === 'string') return arg;
    if (arg instanceof Selection) return arg.#sel;
    if (arg instanceof Element) return arg.node;
    throw new Error(`invalid argument, cannot use a '${describeType(arg)}' as a selector`);
  }

  /** Where a *Until traversal stops: a selector, a Selection's nodes, or nowhere. */
  #until(until: string | Selection | null | undefined): string | Cheerio<DomElement> | undefined {
    if (until === null || until === undefined) return undefined;
    // Cheerio stops at any node of the selection; only elements can be siblings or parents.
    return until instanceof Selection ? (until.#sel as Cheerio<DomElement>) : String(until);
  }

  /** A predicate callback as cheerio calls it, given k6's (index, Selection) arguments. */
  #matcher(fn: (index: number, sel: Selection) => unknown) {
    return (index: number, node: AnyNode) => Boolean(fn(index, this.#wrap(this.#$(node))));
  }

  find(selector: SelectorArg): Selection {
    const arg = this.#selector(selector);
    return this.#wrap(this.#sel.find(arg as string) as Cheerio<AnyNode>);
  }
  add(selector: SelectorArg): Selection {
    const arg = this.#selector(selector);
    return this.#wrap(typeof arg === 'string' ? this.#sel.add(this.#$(arg)) : this.#sel.add(arg));
  }
  closest(selector: SelectorArg): Selection {
    return this.#wrap(this.#sel.closest(this.#selector(selector) as string) as Cheerio<AnyNode>);
  }
  /** The matches with a descendant that the selector, Selection or Element matches. */
  has(selector: SelectorArg): Selection {
    const arg = this.#selector(selector);
    if (typeof arg === 'string') return this.#wrap(this.#sel.has(arg));
    const inner = 'type' in arg ? [arg as AnyNode] : (arg as Cheerio<AnyNode>).toArray();
    return this.#wrap(
      this.#sel.filter((_, node) => inner.some((n) => n !== node && this.#$.contains(node, n))),
    );
  }
  not(selector: SelectorArg | ((index: number, sel: Selection) => unknown)): Selection {
    if (typeof selector === 'function') return this.#wrap(this.#sel.not(this.#matcher(selector)));
    return this.#wrap(this.#sel.not(this.#selector(selector) as string));
  }
  next(selector?: string): Selection {
    return this.#wrap(this.#sel.next(selector) as Cheerio<AnyNode>);
  }
  nextAll(selector?: string): Selection {
    return this.#wrap(this.#sel.nextAll(selector) as Cheerio<AnyNode>);
  }
  prev(selector?: string): Selection {
    return this.#wrap(this.#sel.prev(selector) as Cheerio<AnyNode>);
  }
  prevAll(selector?: string): Selection {
    return this.#wrap(this.#sel.prevAll(selector) as Cheerio<AnyNode>);
  }
  parent(selector?: string): Selection {
    return this.#wrap(this.#sel.parent(selector) as Cheerio<AnyNode>);
  }
  parents(selector?: string): Selection {
    return this.#wrap(this.#sel.parents(selector) as Cheerio<AnyNode>);
  }
  siblings(selector?: string): Selection {
    return this.#wrap(this.#sel.siblings(selector) as Cheerio<AnyNode>);
  }
  nextUntil(until?: string | Selection | null, filter?: string): Selection {
    return this.#wrap(this.#sel.nextUntil(this.#until(until), filter) as Cheerio<AnyNode>);
  }
  prevUntil(until?: string | Selection | null, filter?: string): Selection {
    return this.#wrap(this.#sel.prevUntil(this.#until(until), filter) as Cheerio<AnyNode>);
  }
  parentsUntil(until?: string | Selection | null, filter?: string): Selection {
    return this.#wrap(this.#sel.parentsUntil(this.#until(until), filter) as Cheerio<AnyNode>);
  }
  children(selector?: string): Selection {
    return this.#wrap(this.#sel.children(selector) as Cheerio<AnyNode>);
  }
  contents(): Selection {
    return this.#wrap(this.#sel.contents());
  }
  end(): Selection {
    return this.#wrap(this.#sel.end());
  }
  /** The element at `index` (negative counts from the end); an empty Selection past either end. */
  eq(index: number): Selection {
    return this.#wrap(this.#sel.eq(Math.trunc(Number(index))));
  }
  first(): Selection {
    return this.#wrap(this.#sel.first());
  }
  last(): Selection {
    return this.#wrap(this.#sel.last());
  }
  slice(start: number, end?: number): Selection {
    return this.#wrap(this.#sel.slice(start, end));
  }
  size(): number {
    return this.#sel.length;
  }

  /** The text of every matched node and its descendants, joined. */
  text(): string {
    return this.#sel.text();
  }
  /** The first element's attribute; `fallback` (or undefined) when it has none. */
  attr(name: string, fallback?: unknown): unknown {
    const value = this.#sel.attr(String(name));
    return value === undefined ? fallback : value;
  }
  /** The first element's inner HTML ('' for an empty selection). */
  html(): string {
    return this.#sel.html() ?? '';
  }
  /**
   * A form control's value as k6 reads it: an input's `value` (`on` for a radio or checkbox
   * without one), a textarea's content, a select's selected option (an array when `multiple`).
   * Undefined for anything else.
   */
  val(): unknown {
    const node = this.#sel.get(0);
    const name = node && isElement(node) ? node.name : '';
    switch (name) {
      case 'input': {
        const value = this.#sel.attr('value');
        if (value !== undefined) return value;
        const type = this.#sel.attr('type');
        return type === 'radio' || type === 'checkbox' ? 'on' : '';
      }
      case 'button':
        return this.#sel.attr('value') ?? '';
      case 'textarea':
        return this.html();
      case 'option':
        return valueOrHtml(this.#sel);
      case 'select': {
        const selected = this.#sel.first().find('option[selected]');
        if (this.#sel.attr('multiple') !== undefined) {
          return selected.toArray().map((option) => valueOrHtml(this.#$(option)));
        }
        return valueOrHtml(selected);
      }
      default:
        return undefined;
    }
  }

  /** Calls `fn(index, element)` for each match and returns this selection; a throw ends it. */
  each(fn: (index: number, element: Element) => unknown): Selection {
    if (typeof fn !== 'function') throw new Error('the argument to each() must be a function');
    this.#sel.toArray().forEach((node, index) => {
      try {
        fn.call(fn, index, new Element(this.#$, node, this.url));
      } catch (error) {
        throw new Error(`the function passed to each() failed: ${messageOf(error)}`, { cause: error });
      }
    });
    return this;
  }
  /**
   * `fn(index, selection)`'s results for each match, as an array. As in k6 v0.49, a match for
   * which `fn` throws is left out of the array rather than ending the call.
   */
  map(fn: (index: number, sel: Selection) => unknown): unknown[] {
    if (typeof fn !== 'function') throw new Error('the argument to map() must be a function');
    const values: unknown[] = [];
    this.#sel.toArray().forEach((node, index) => {
      try {
        values.push(fn.call(fn, index, this.#wrap(this.#$(node))));
      } catch {
        // Left out, as k6 does.
      }
    });
    return values;
  }
  filter(selector: string | Selection | ((index: number, sel: Selection) => unknown)): Selection {
    if (typeof selector === 'function') return this.#wrap(this.#sel.filter(this.#matcher(selector)));
    if (typeof selector === 'string' || selector instanceof Selection) {
      return this.#wrap(this.#sel.filter(this.#selector(selector) as string));
    }
    throw new Error('the argument to filter() must be a function, a selector or a selection');
  }
  is(selector: string | Selection | ((index: number, sel: Selection) => unknown)): boolean {
    if (typeof selector === 'function') return this.#sel.is(this.#matcher(selector));
    if (typeof selector === 'string' || selector instanceof Selection) {
      return this.#sel.is(this.#selector(selector) as string);
    }
    throw new Error('the argument to is() must be a function, a selector or a selection');
  }
  /** Every match as an Element, or the one at `index` (negative from the end), undefined past the ends. */
  get(index?: number): Element | Element[] | undefined {
    const nodes = this.#sel.toArray();
    if (index === undefined) return nodes.map((node) => new Element(this.#$, node, this.url));
    const i = Math.trunc(Number(index));
    if (!(i < nodes.length && i > -nodes.length)) return undefined;
    return new Element(this.#$, nodes[i < 0 ? nodes.length + i : i]!, this.url);
  }
  /** Each match as a Selection of its own. */
  toArray(): Selection[] {
    return this.#sel.toArray().map((node) => this.#wrap(this.#$(node)));
  }
  /**
   * Without an argument, the first match's position among its element siblings; with one, the
   * position of that selector's, Selection's or Element's first node in this selection (-1 if none).
   */
  index(selector?: SelectorArg): number {
    if (selector === undefined) return this.#sel.index();
    if (typeof selector === 'string' || selector instanceof Selection || selector instanceof Element) {
      return this.#sel.index(this.#selector(selector) as string);
    }
    return -1;
  }
  /**
   * The first element's `data-*` attributes: `data('user-id')` or `data('userId')` one of
   * them, `data()` all of them by camelCase name. Numbers and JSON read as values.
   */
  data(key?: string): unknown {
    const node = this.#sel.get(0);
    if (!node || !isElement(node) || Object.keys(node.attribs).length === 0) return undefined;
    if (key !== undefined) {
      const value = node.attribs[`data-${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`];
      return value === undefined ? undefined : dataValue(value);
    }
    const data: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(node.attribs)) {
      if (name.startsWith('data-') && name.length > 5) {
        data[name.slice(5).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = dataValue(value);
      }
    }
    return data;
  }
}

/**
 * k6's Element: one node with a subset of the DOM's read-only API. As in k6 (whose Go
 * methods reach scripts as functions), each is a method: `el.textContent()`, `el.nodeName()`.
 */
export class Element {
  readonly #$: CheerioAPI;
  /** The node; for the engine's own use (a selector argument). */
  readonly node: AnyNode;
  readonly #url: string;

  constructor($: CheerioAPI, node: AnyNode, url: string) {
    this.#$ = $;
    this.node = node;
    this.#url = url;
  }

  #element(node: AnyNode | null | undefined): Element | undefined {
    return node ? new Element(this.#$, node, this.#url) : undefined;
  }
  #elements(nodes: ArrayLike<AnyNode>): Element[] {
    return Array.from(nodes, (node) => new Element(this.#$, node, this.#url));
  }
  #attribs(): Record<string, string> {
    return isElement(this.node) ? this.node.attribs : {};
  }

  /** This element as a one-element Selection. */
  selection(): Selection {
    return new Selection(this.#$, this.#$(this.node), this.#url);
  }
  /** The lower-case tag name; `#text`, `#comment`, `#document` for other nodes. */
  nodeName(): string {
    const node = this.node;
    if (isElement(node)) return node.name.toLowerCase();
    if (node.type === 'text') return '#text';
    if (node.type === 'comment') return '#comment';
    if (node.type === 'root') return '#document';
    return '';
  }
  nodeType(): number | undefined {
    return NODE_TYPES[this.node.type];
  }
  /** A text or comment node's text; undefined for an element. */
  nodeValue(): string | undefined {
    const node = this.node;
    return node.type === 'text' || node.type === 'comment' ? node.data : undefined;
  }
  /** The `id` attribute, '' without one. */
  id(): string {
    return this.#attribs().id ?? '';
  }
  innerHTML(): string {
    return this.#$(this.node).html() ?? '';
  }
  textContent(): string {
    return this.#$(this.node).text();
  }
  getAttribute(name: string): string | undefined {
    return this.#attribs()[String(name)];
  }
  hasAttribute(name: string): boolean {
    return String(name) in this.#attribs();
  }
  hasAttributes(): boolean {
    return Object.keys(this.#attribs()).length > 0;
  }
  /** The attributes by name, each `{ name, value }`. */
  attributes(): Record<string, { name: string; value: string }> {
    return Object.fromEntries(
      Object.entries(this.#attribs()).map(([name, value]) => [name, { name, value }]),
    );
  }
  hasChildNodes(): boolean {
    return 'children' in this.node && this.node.children.length > 0;
  }
  /** The class names, undefined when there is no class attribute (k6's nil array). */
  classList(): string[] | undefined {
    const value = this.#attribs().class;
    return value === undefined ? undefined : value.split(/\s+/).filter(Boolean);
  }
  className(): string | undefined {
    return this.#attribs().class;
  }
  lang(): string | undefined {
    return this.#attribs().lang;
  }
  childNodes(): Element[] {
    return this.#elements(this.#$(this.node).contents());
  }
  children(): Element[] {
    return this.#elements(this.#$(this.node).children());
  }
  childElementCount(): number {
    return this.#$(this.node).children().length;
  }
  firstChild(): Element | undefined {
    return this.#element('children' in this.node ? this.node.children[0] : undefined);
  }
  lastChild(): Element | undefined {
    return this.#element('children' in this.node ? this.node.children.at(-1) : undefined);
  }
  firstElementChild(): Element | undefined {
    return this.#element(this.#$(this.node).children().get(0));
  }
  lastElementChild(): Element | undefined {
    return this.#element(this.#$(this.node).children().last().get(0));
  }
  previousSibling(): Element | undefined {
    return this.#element(this.node.prev);
  }
  nextSibling(): Element | undefined {
    return this.#element(this.node.next);
  }
  previousElementSibling(): Element | undefined {
    return this.#element(this.#$(this.node).prev().get(0));
  }
  nextElementSibling(): Element | undefined {
    return this.#element(this.#$(this.node).next().get(0));
  }
  parentNode(): Element | undefined {
    return this.#element(this.node.parent);
  }
  parentElement(): Element | undefined {
    return this.#element(this.#$(this.node).parent().get(0));
  }
  ownerDocument(): Element | undefined {
    let node: AnyNode | null = this.node;
    while (node && node.type !== 'root') node = node.parent;
    return this.#element(node);
  }
  /** The first descendant matching `selector`, undefined when none does. */
  querySelector(selector: string): Element | undefined {
    return this.#element(this.#$(this.node).find(String(selector)).get(0));
  }
  querySelectorAll(selector: string): Element[] {
    return this.#elements(this.#$(this.node).find(String(selector)));
  }
  getElementsByClassName(name: string): Element[] {
    return this.querySelectorAll(`.${name}`);
  }
  getElementsByTagName(name: string): Element[] {
    return this.querySelectorAll(name);
  }
  matches(selector: string): boolean {
    return this.#$(this.node).is(String(selector));
  }
  /** Whether `other` is a descendant of this element (not the element itself, as in the DOM). */
  contains(other: unknown): boolean {
    if (!(other instanceof Element) || other.node === this.node) return false;
    for (let node = other.node.parent; node; node = node.parent) if (node === this.node) return true;
    return false;
  }
  isSameNode(other: unknown): boolean {
    return other instanceof Element && other.node === this.node;
  }
  isEqualNode(other: unknown): boolean {
    return other instanceof Element && other.innerHTML() === this.innerHTML();
  }
  toString(): string {
    return isElement(this.node) ? '[object html.Node]' : `[object ${this.nodeName()}]`;
  }
}

/** The `k6/html` module. */
export function createHtmlModule() {
  const exports = { parseHTML: (src: unknown) => parseHTML(src) };
  return { default: exports, ...exports };
}

function isElement(node: AnyNode): node is DomElement {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

function valueOrHtml(sel: Cheerio<AnyNode>): string {
  return sel.attr('value') ?? sel.html() ?? '';
}

/**
 * A `data-*` value as k6 reads it: JSON objects and arrays, booleans, numbers whose text
 * survives the round trip (`101.00` stays a string), undefined for '', `null`, `undefined`.
 */
function dataValue(value: string): unknown {
  if (value === '') return undefined;
  if (value[0] === '{' || value[0] === '[') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null' || value === 'undefined') return undefined;
  const number = Number(value);
  return Number.isFinite(number) && String(number) === value ? number : value;
}

function describeType(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
