// k6's blocking calls (http.get, sleep, …) on one event loop: a load-time rewrite of the
// bundled script that makes every function which (through the functions it calls) makes a
// blocking call `async`, and each such call `await`ed. A VU's calls then happen in order,
// as in k6, while other VUs run; nothing blocks the loop. Where the rewrite cannot keep k6's
// meaning (a blocking call in a callback that something else calls, a blocking function
// used as a value), loading fails naming the line and the way out: it never changes what
// a script means silently. docs/engine.md "Blocking calls" says why this design.
import type { parse as babelParse } from '@babel/parser';
import type _traverse from '@babel/traverse';
import type { Binding, NodePath } from '@babel/traverse';
import type * as t from '@babel/types';
import { commonJsExports } from '../../lib/commonjs-exports.ts';

type Traverse = (typeof _traverse)['default'];

/** Babel's parser and traverser, once {@link loadBlockingCallRewrite} has imported them. */
let babel: { parse: typeof babelParse; traverse: Traverse } | undefined;

/**
 * Imports Babel and gives {@link rewriteBlockingCalls}. Babel is imported here, when a script
 * is first loaded, not with the CLI: it is a tenth of a second of every start, and most
 * processes plateau starts never load a script (a study's own process, the reference
 * service, analysis, reports).
 */
export async function loadBlockingCallRewrite(): Promise<typeof rewriteBlockingCalls> {
  if (!babel) {
    const [parser, traverser] = await Promise.all([import('@babel/parser'), import('@babel/traverse')]);
    // @babel/traverse is CommonJS: under ESM its function arrives as the default's `default`.
    const loaded = traverser.default as unknown as Traverse & { default?: Traverse };
    babel = { parse: commonJsExports(parser).parse, traverse: loaded.default ?? loaded };
  }
  return rewriteBlockingCalls;
}

/** The calls that block a VU in k6, by module: they return a promise in the engine. */
export const BLOCKING_CALLS: Readonly<Record<string, readonly string[]>> = {
  'k6/http': ['get', 'head', 'post', 'put', 'patch', 'del', 'options', 'request', 'batch'],
  k6: ['sleep'],
};

/** Where an original position is: `file:line:column` of the script's own source. */
export type PositionOf = (line: number, column: number) => string;

/** A place the rewrite cannot keep k6's meaning. */
export interface BlockingCallProblem {
  where: string;
  message: string;
}

type FunctionPath = NodePath<t.Function>;

interface Insertion {
  at: number;
  text: string;
  /** Ties at one position: lower first (closing parens before opening ones). */
  order: number;
}

/**
 * Rewrites `code` (a CommonJS bundle from esbuild whose k6 imports read
 * `globalThis.__plateau.modules[path]`) so that its blocking calls are awaited. Returns the
 * new code, or the problems that stop the script from loading. `positionOf` maps a
 * position in `code` to the script's own source for the messages.
 */
function rewriteBlockingCalls(
  code: string,
  positionOf: PositionOf,
): { code: string; rewritten: boolean } | { problems: BlockingCallProblem[] } {
  if (!babel) throw new Error('rewriteBlockingCalls before loadBlockingCallRewrite()');
  const { parse, traverse } = babel;
  const ast = parse(code, { sourceType: 'script', errorRecovery: false });
  const k6 = new K6Bindings();
  const calls: NodePath<t.CallExpression | t.OptionalCallExpression>[] = [];
  const functions: FunctionPath[] = [];
  traverse(ast, {
    VariableDeclarator(path: NodePath<t.VariableDeclarator>) {
      k6.learn(path);
    },
    CallExpression(path: NodePath<t.CallExpression>) {
      calls.push(path);
    },
    OptionalCallExpression(path: NodePath<t.OptionalCallExpression>) {
      calls.push(path);
    },
    Function(path: FunctionPath) {
      functions.push(path);
    },
  });

  const problems: BlockingCallProblem[] = [];
  const where = (node: t.Node) => positionOf(node.loc?.start.line ?? 0, node.loc?.start.column ?? 0);
  for (const problem of k6.unfollowedUses(code))
    problems.push({ where: where(problem.node), message: problem.message });
  const blocking = new Set<t.Node>();
  /** Blocking calls by the function whose own body makes them (undefined: top level). */
  const callsIn = new Map<t.Node | undefined, NodePath<t.CallExpression | t.OptionalCallExpression>[]>();
  for (const call of calls) {
    const owner = call.getFunctionParent()?.node;
    const list = callsIn.get(owner) ?? [];
    list.push(call);
    callsIn.set(owner, list);
  }
  const resolve = (call: NodePath<t.CallExpression | t.OptionalCallExpression>) => resolveCallee(call, k6);
  const groupCallback = (call: NodePath<t.CallExpression | t.OptionalCallExpression>) => {
    const arg = call.get('arguments')[1];
    if (!arg) return undefined;
    if (arg.isFunction()) return arg.node;
    if (arg.isIdentifier()) return functionOfBinding(arg.scope.getBinding(arg.node.name));
    return undefined;
  };
  const isBlockingCall = (call: NodePath<t.CallExpression | t.OptionalCallExpression>): boolean => {
    const callee = resolve(call);
    if (callee.kind === 'k6') return isBlockingK6(callee.module, callee.name);
    if (callee.kind === 'group') {
      const callback = groupCallback(call);
      return callback !== undefined && blocking.has(callback);
    }
    return callee.kind === 'function' && blocking.has(callee.node);
  };
  // The fixed point: a function is blocking when its own body makes a blocking call.
  for (let changed = true; changed; ) {
    changed = false;
    for (const fn of functions) {
      if (blocking.has(fn.node)) continue;
      if ((callsIn.get(fn.node) ?? []).some(isBlockingCall)) {
        blocking.add(fn.node);
        changed = true;
      }
    }
  }
  if (problems.length === 0 && blocking.size === 0 && !(callsIn.get(undefined) ?? []).some(isBlockingCall)) {
    return { code, rewritten: false };
  }

  const insertions: Insertion[] = [];
  for (const call of calls) {
    if (!isBlockingCall(call)) continue;
    const owner = call.getFunctionParent();
    const callee = resolve(call);
    const name = calleeText(call.node, code);
    if (!owner) {
      problems.push({
        where: where(call.node),
        message: `${name}() in the init context: k6 makes no requests and takes no sleeps there; move it into a function (setup(), or the default function)`,
      });
      continue;
    }
    if (callee.kind === 'group') {
      const arg = call.node.arguments[1]!;
      insertions.push({ at: arg.start!, text: 'globalThis.__plateau.blocking(', order: 1 });
      insertions.push({ at: arg.end!, text: ')', order: 0 });
    }
    if (!call.parentPath.isAwaitExpression()) {
      insertions.push({ at: call.node.start!, text: '(await ', order: 1 });
      insertions.push({ at: call.node.end!, text: ')', order: 0 });
    }
  }
  for (const fn of functions) {
    if (!blocking.has(fn.node)) continue;
    const problem = unsupportedBlockingFunction(fn, k6, code);
    if (problem) {
      problems.push({ where: where(problem.node ?? fn.node), message: problem.message });
      continue;
    }
    if (!fn.node.async) insertions.push({ at: asyncPosition(fn), text: 'async ', order: 1 });
  }
  if (problems.length > 0) return { problems };
  insertions.sort((a, b) => a.at - b.at || a.order - b.order);
  let out = '';
  let from = 0;
  for (const insertion of insertions) {
    out += code.slice(from, insertion.at) + insertion.text;
    from = insertion.at;
  }
  return { code: out + code.slice(from), rewritten: true };
}

function isBlockingK6(module: string, name: string): boolean {
  return BLOCKING_CALLS[module]?.includes(name) ?? false;
}

type Callee =
  | { kind: 'k6'; module: string; name: string }
  | { kind: 'group' }
  | { kind: 'function'; node: t.Function }
  | { kind: 'unknown' };

/** The bundle's bindings of k6's modules and their members. */
class K6Bindings {
  /** Binding → module path, for `var m = globalThis.__plateau.modules["k6/http"]`. */
  readonly tables = new Map<Binding, string>();
  /** Binding → module path, for `var http_default = m.default`. */
  readonly defaults = new Map<Binding, string>();
  /** Binding → [module, member], for `var get = m.get`. */
  readonly members = new Map<Binding, [string, string]>();

  /**
   * Uses of a blocking call, or of a module holding some, that the rewrite cannot follow:
   * `const g = http.get`, `urls.map(get)`, `http[name](…)`, `helpers(http)`.
   */
  unfollowedUses(code: string): { node: t.Node; message: string }[] {
    const found: { node: t.Node; message: string }[] = [];
    const isCallee = (path: NodePath | null, node: t.Node) =>
      path !== null &&
      (path.isCallExpression() || path.isOptionalCallExpression()) &&
      (path.node as t.CallExpression).callee === node;
    for (const [binding, [module, name]] of this.members) {
      if (!isBlockingK6(module, name)) continue;
      for (const reference of binding.referencePaths) {
        if (isCallee(reference.parentPath, reference.node)) continue;
        found.push({
          node: reference.node,
          message: `${name} (${module}) is used as a value here (${describeUse(reference, code)}): the engine can wait only for a direct call, ${name}(…)`,
        });
      }
    }
    for (const [binding, module] of this.defaults) {
      if (!BLOCKING_CALLS[module]) continue;
      for (const reference of binding.referencePaths) {
        const member = reference.parentPath;
        const isMember =
          member !== null &&
          (member.isMemberExpression() || member.isOptionalMemberExpression()) &&
          (member.node as t.MemberExpression).object === reference.node;
        const name = isMember ? propertyName(member.node as t.MemberExpression) : undefined;
        if (
          member &&
          name !== undefined &&
          (!isBlockingK6(module, name) || isCallee(member.parentPath, member.node))
        ) {
          continue;
        }
        found.push({
          node: reference.node,
          message: `the ${module} module is used here in a way the engine cannot follow (${describeUse(reference, code)}): call its blocking functions directly, e.g. http.get(…)`,
        });
      }
    }
    return found;
  }

  learn(path: NodePath<t.VariableDeclarator>): void {
    const { id, init } = path.node;
    if (id.type !== 'Identifier' || !init) return;
    const binding = path.scope.getBinding(id.name);
    if (!binding) return;
    const table = moduleTablePath(init);
    if (table !== undefined) {
      this.tables.set(binding, table);
      return;
    }
    if (init.type === 'MemberExpression' && init.object.type === 'Identifier') {
      const owner = path.scope.getBinding(init.object.name);
      const module = owner && this.tables.get(owner);
      const member = propertyName(init);
      if (module === undefined || member === undefined) return;
      if (member === 'default') this.defaults.set(binding, module);
      else this.members.set(binding, [module, member]);
    }
  }
}

/** `globalThis.__plateau.modules["k6/http"]` → `k6/http`. */
function moduleTablePath(node: t.Node): string | undefined {
  if (node.type !== 'MemberExpression' || !node.computed || node.property.type !== 'StringLiteral')
    return undefined;
  const modules = node.object;
  if (modules.type !== 'MemberExpression' || propertyName(modules) !== 'modules') return undefined;
  const plateau = modules.object;
  if (plateau.type !== 'MemberExpression' || propertyName(plateau) !== '__plateau') return undefined;
  return plateau.object.type === 'Identifier' && plateau.object.name === 'globalThis'
    ? node.property.value
    : undefined;
}

function propertyName(node: t.MemberExpression | t.OptionalMemberExpression): string | undefined {
  if (!node.computed && node.property.type === 'Identifier') return node.property.name;
  if (node.computed && node.property.type === 'StringLiteral') return node.property.value;
  return undefined;
}

function resolveCallee(call: NodePath<t.CallExpression | t.OptionalCallExpression>, k6: K6Bindings): Callee {
  const callee = call.node.callee;
  const k6Member = (module: string, name: string): Callee =>
    module === 'k6' && name === 'group' ? { kind: 'group' } : { kind: 'k6', module, name };
  if (callee.type === 'Identifier') {
    const binding = call.scope.getBinding(callee.name);
    if (!binding) return { kind: 'unknown' };
    const member = k6.members.get(binding);
    if (member) return k6Member(member[0], member[1]);
    const fn = functionOfBinding(binding);
    return fn ? { kind: 'function', node: fn } : { kind: 'unknown' };
  }
  if (
    (callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') &&
    callee.object.type === 'Identifier'
  ) {
    const name = propertyName(callee);
    const binding = call.scope.getBinding(callee.object.name);
    if (!binding || name === undefined) return { kind: 'unknown' };
    const module = k6.defaults.get(binding) ?? k6.tables.get(binding);
    if (module !== undefined) return k6Member(module, name);
    const fn = methodOfObjectBinding(binding, name);
    return fn ? { kind: 'function', node: fn } : { kind: 'unknown' };
  }
  return { kind: 'unknown' };
}

/** The function a binding always holds: a declaration, or a never-reassigned variable set to one. */
function functionOfBinding(binding: Binding | undefined): t.Function | undefined {
  if (!binding || binding.constantViolations.length > 0) return undefined;
  const node = binding.path.node;
  if (node.type === 'FunctionDeclaration') return node;
  if (node.type === 'VariableDeclarator' && node.init) {
    if (node.init.type === 'FunctionExpression' || node.init.type === 'ArrowFunctionExpression')
      return node.init;
  }
  return undefined;
}

/** A property's key as written: `login` or `'login'`; undefined for other keys. */
function keyName(key: t.Node): string | undefined {
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'StringLiteral') return key.value;
  return undefined;
}

/** `const api = { login() {…} }` → the function of `api.login`. */
function methodOfObjectBinding(binding: Binding, name: string): t.Function | undefined {
  if (binding.constantViolations.length > 0) return undefined;
  const node = binding.path.node;
  if (node.type !== 'VariableDeclarator' || node.init?.type !== 'ObjectExpression') return undefined;
  for (const property of node.init.properties) {
    if (property.type === 'SpreadElement' || property.computed) continue;
    if (keyName(property.key) !== name) continue;
    if (property.type === 'ObjectMethod') return property.kind === 'method' ? property : undefined;
    const value = property.value;
    if (value.type === 'FunctionExpression' || value.type === 'ArrowFunctionExpression') return value;
  }
  return undefined;
}

/**
 * Why a blocking function cannot be made to wait, or undefined when it can: every way it is
 * reached must be a call the rewrite awaits (or the engine's own: an export, a group body).
 */
function unsupportedBlockingFunction(
  fn: FunctionPath,
  k6: K6Bindings,
  code: string,
): Unsupported | undefined {
  const node = fn.node;
  if (node.generator) {
    return {
      message:
        'a generator function makes blocking k6 calls (http.*, sleep): the engine cannot make it wait; use a plain function',
    };
  }
  const parent = fn.parentPath;
  // An inline callback: only group()'s body can be waited for.
  if (parent?.isCallExpression() || parent?.isOptionalCallExpression()) {
    const call = parent as NodePath<t.CallExpression | t.OptionalCallExpression>;
    const callee = resolveCallee(call, k6);
    if (callee.kind === 'group' && call.node.arguments[1] === node) return undefined;
    if (call.node.callee === node) {
      return {
        message:
          'an immediately called function makes blocking k6 calls: the engine cannot make it wait; give it a name and call it',
      };
    }
    const name = calleeText(call.node, code);
    return {
      message: `a callback passed to ${name}() makes blocking k6 calls (http.*, sleep): ${name}() would not wait for it. Call the function yourself, e.g. in a for...of loop`,
    };
  }
  const binding = bindingOfFunction(fn);
  if (binding) {
    for (const reference of binding.referencePaths) {
      const message = unsupportedReference(reference, k6, code, binding.identifier.name);
      if (message) return { node: reference.node, message };
    }
    return undefined;
  }
  const object = objectOfMethod(fn);
  if (object) {
    const owner = object.binding.identifier.name;
    for (const reference of object.binding.referencePaths) {
      const member = reference.parentPath;
      if (member?.isMemberExpression() && member.node.object === reference.node) {
        if (propertyName(member.node) !== object.name) continue;
        const call = member.parentPath;
        if (
          (call?.isCallExpression() || call?.isOptionalCallExpression()) &&
          call.node.callee === member.node
        )
          continue;
      }
      if (isExportGetter(reference)) continue;
      return {
        node: reference.node,
        message: `${owner}.${object.name}() makes blocking k6 calls, and ${owner} is used here in a way the engine cannot follow (${describeUse(reference, code)}): call ${owner}.${object.name}(…) itself`,
      };
    }
    return undefined;
  }
  return {
    message:
      'this function makes blocking k6 calls (http.*, sleep), and the engine cannot tell who calls it (a class method, a method of an object passed around, a function stored elsewhere): call such helpers as plain functions or as methods of a const object literal',
  };
}

/** Why a blocking function cannot be waited for, and where (the use that escapes; else the function). */
interface Unsupported {
  node?: t.Node;
  message: string;
}

/** How a blocking function is referred to: a call, an export, a group body; else a problem. */
function unsupportedReference(
  reference: NodePath,
  k6: K6Bindings,
  code: string,
  name: string,
): string | undefined {
  const parent = reference.parentPath;
  if (
    (parent?.isCallExpression() || parent?.isOptionalCallExpression()) &&
    parent.node.callee === reference.node
  )
    return undefined;
  if (parent?.isCallExpression() && parent.node.arguments[1] === reference.node) {
    const callee = resolveCallee(parent as NodePath<t.CallExpression>, k6);
    if (callee.kind === 'group') return undefined;
  }
  if (isExportGetter(reference)) return undefined;
  return `${name}() makes blocking k6 calls (http.*, sleep), and is used here as a value (${describeUse(reference, code)}), where nothing would wait for it: call ${name}(…) itself`;
}

/** esbuild's export getters: `__export(x_exports, { default: () => fn })`. */
function isExportGetter(reference: NodePath): boolean {
  const arrow = reference.parentPath;
  if (!arrow?.isArrowFunctionExpression() || arrow.node.body !== reference.node) return false;
  const property = arrow.parentPath;
  const object = property?.parentPath;
  const call = object?.parentPath;
  return (
    property?.isObjectProperty() === true &&
    object?.isObjectExpression() === true &&
    call?.isCallExpression() === true &&
    call.node.callee.type === 'Identifier' &&
    call.node.callee.name === '__export'
  );
}

function bindingOfFunction(fn: FunctionPath): Binding | undefined {
  const node = fn.node;
  if (node.type === 'FunctionDeclaration' && node.id) return fn.parentPath.scope.getBinding(node.id.name);
  const parent = fn.parentPath;
  if (parent?.isVariableDeclarator() && parent.node.init === node && parent.node.id.type === 'Identifier') {
    const binding = parent.scope.getBinding(parent.node.id.name);
    return binding && binding.constantViolations.length === 0 ? binding : undefined;
  }
  return undefined;
}

function objectOfMethod(fn: FunctionPath): { binding: Binding; name: string } | undefined {
  const node = fn.node;
  const property =
    node.type === 'ObjectMethod' ? fn : fn.parentPath?.isObjectProperty() ? fn.parentPath : undefined;
  if (!property) return undefined;
  const propertyNode = property.node as t.ObjectMethod | t.ObjectProperty;
  if (propertyNode.computed) return undefined;
  const name = keyName(propertyNode.key);
  const declarator = property.parentPath?.parentPath;
  if (name === undefined || !declarator?.isVariableDeclarator() || declarator.node.id.type !== 'Identifier')
    return undefined;
  const binding = declarator.scope.getBinding(declarator.node.id.name);
  if (!binding || binding.constantViolations.length > 0) return undefined;
  return { binding, name };
}

/** Where `async` goes: before `function`, an arrow's parameters, or a method's name. */
function asyncPosition(fn: FunctionPath): number {
  const node = fn.node;
  if (node.type === 'ObjectMethod' || node.type === 'ClassMethod') return node.key.start!;
  return node.start!;
}

function calleeText(call: t.CallExpression | t.OptionalCallExpression, code: string): string {
  const callee = call.callee;
  return code.slice(callee.start!, callee.end!).replace(/\s+/g, ' ').slice(0, 60);
}

function describeUse(reference: NodePath, code: string): string {
  const statement = reference.getStatementParent()?.node ?? reference.node;
  return code.slice(statement.start!, statement.end!).replace(/\s+/g, ' ').slice(0, 80);
}
