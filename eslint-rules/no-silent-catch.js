/**
 * no-silent-catch: an error that is caught must leave a trace. A `catch` clause, a `.catch(handler)` and the rejection
 * handler of `.then(onValue, onError)` must do at least one of:
 *
 *   - throw (rethrow the error, or throw another one);
 *   - log or count it: a call on something named log/logger/console (`log.warn(...)`, `this.o.log.error(...)`,
 *     `console.error(...)`), a call of a warn/error/info/debug/trace/fatal method, a write to stderr, a counter's
 *     `.inc()`, or a call of a function whose name contains "log", "report", "count" or "record";
 *   - pass the error on: the caught error (or a value derived from it: `e.message`, `String(e)`, `{ error: e }`) is
 *     an argument of a call (`reject(e)`, `callback(e)`, `resolve({ error: e })`, `fails.push(e.message)`), is
 *     returned, or is assigned somewhere (`this.lastError = e`);
 *   - be marked expected: a comment `// expected: <reason>` inside the handler, which counts only when the handler
 *     names its error and looks at it (the catch tests for the specific error it expects, e.g. `e.code === 'ENOENT'`
 *     for "absent"). Keep these rare; the reason says why nobody needs to hear about the error.
 *
 * So `catch {}`, `catch { /* comment *\/ }`, `catch { return undefined; }`, `.catch(() => undefined)` and
 * `.catch(() => {})` are reported. A handler passed by name (`.catch(reject)`, `.then(reply, fail)`) is accepted when
 * the name says it logs or passes the error on.
 */

const LOG_OBJECT = /^(log|logger|console)$|Log(ger)?$/;
const LOG_METHOD = new Set(['warn', 'error', 'info', 'debug', 'trace', 'fatal']);
const LOG_NAME = /log|report|count|record/i;
const HANDLER_NAME = /log|report|count|record|reject|fail|callback|^cb$|^done$|^next$|^reply$|^settle|^onError$/i;
const EXPECTED = /^\s*expected:\s*\S/;

/** The name of an identifier or a (non-computed) member property, or undefined. */
function nameOf(node) {
  if (!node) return undefined;
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'PrivateIdentifier') return node.name;
  if (node.type === 'MemberExpression' && !node.computed) return nameOf(node.property);
  if (node.type === 'ThisExpression') return 'this';
  return undefined;
}

/** Does the chain `a.b.c` mention `name` (matched by `re`) anywhere, e.g. process.stderr in process.stderr.write? */
function chainMentions(node, re) {
  for (let n = node; n; n = n.type === 'MemberExpression' ? n.object : undefined) {
    const name = nameOf(n.type === 'MemberExpression' ? n.property : n);
    if (name && re.test(name)) return true;
    if (n.type !== 'MemberExpression') break;
  }
  return false;
}

function isLoggingCall(call) {
  let callee = call.callee;
  if (callee.type === 'ChainExpression') callee = callee.expression;
  if (callee.type === 'Identifier') return LOG_NAME.test(callee.name);
  if (callee.type !== 'MemberExpression') return false;
  const method = nameOf(callee);
  if (method && (LOG_METHOD.has(method) || LOG_NAME.test(method) || method === 'inc')) return true;
  if (chainMentions(callee.object, LOG_OBJECT)) return true;
  if (method === 'write' && chainMentions(callee.object, /^stderr$/)) return true;
  return false;
}

/** Child nodes of an ESTree node (skipping the parent link and token/comment arrays). */
function children(node) {
  const out = [];
  for (const key of Object.keys(node)) {
    if (key === 'parent' || key === 'range' || key === 'loc' || key === 'tokens' || key === 'comments') continue;
    const v = node[key];
    if (Array.isArray(v)) {
      for (const c of v) if (c && typeof c.type === 'string') out.push(c);
    } else if (v && typeof v.type === 'string') out.push(v);
  }
  return out;
}

function walk(node, visit) {
  visit(node);
  for (const c of children(node)) walk(c, visit);
}

/** Names bound by a parameter pattern (`e`, `{ message }`, `[a, b]`, `e = x`). */
function boundNames(pattern, out = []) {
  if (!pattern) return out;
  switch (pattern.type) {
    case 'Identifier':
      out.push(pattern.name);
      break;
    case 'ObjectPattern':
      for (const p of pattern.properties) boundNames(p.type === 'RestElement' ? p.argument : p.value, out);
      break;
    case 'ArrayPattern':
      for (const p of pattern.elements) boundNames(p, out);
      break;
    case 'AssignmentPattern':
      boundNames(pattern.left, out);
      break;
    case 'RestElement':
      boundNames(pattern.argument, out);
      break;
  }
  return out;
}

/** Expressions that carry their operand's value on (`e.message`, `e as Error`, `{ error: e }`, `'x' + e`). */
function carries(parent, child) {
  switch (parent.type) {
    case 'MemberExpression':
      return parent.object === child;
    case 'ChainExpression':
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
    case 'TSTypeAssertion':
    case 'TSNonNullExpression':
    case 'AwaitExpression':
    case 'ArrayExpression':
    case 'ObjectExpression':
    case 'SpreadElement':
    case 'TemplateLiteral':
    case 'LogicalExpression':
      return true;
    case 'Property':
      return parent.value === child;
    case 'ConditionalExpression':
      return parent.test !== child;
    case 'BinaryExpression':
      return parent.operator === '+';
    default:
      return false;
  }
}

/** Is a call's result only looked at (`if (isMissing(e))`, `!known(e)`, `code(e) === 'X'`), not kept? */
function isTest(call) {
  const p = call.parent;
  if (!p) return false;
  switch (p.type) {
    case 'IfStatement':
    case 'WhileStatement':
    case 'DoWhileStatement':
    case 'ConditionalExpression':
      return p.test === call;
    case 'UnaryExpression':
      return p.operator === '!';
    case 'BinaryExpression':
      return p.operator !== '+';
    case 'LogicalExpression':
      return p.left === call;
    default:
      return false;
  }
}

/** Is this use of the error (or a value derived from it) a place where it is passed on? */
function passesOn(ref, body, tracked) {
  let child = ref;
  for (let p = ref.parent; p; child = p, p = p.parent) {
    if ((p.type === 'CallExpression' || p.type === 'NewExpression') && p.arguments.includes(child)) return !isTest(p);
    if (p.type === 'ReturnStatement' || p.type === 'ThrowStatement' || p.type === 'YieldExpression') return true;
    if (p.type === 'AssignmentExpression' && p.right === child) return true;
    if (p.type === 'ArrowFunctionExpression' && p.body === child) return true;
    if (p.type === 'VariableDeclarator' && p.init === child) {
      // A value derived from the error is followed by its name: `const msg = e.message; fails.push(msg)`.
      for (const n of boundNames(p.id)) tracked.add(n);
      return false;
    }
    if (child === body || !carries(p, child)) return false;
  }
  return false;
}

/** The verdict on one handler: its parameter pattern (or null) and its body (block or expression). */
function handles(param, body, sourceCode) {
  let throws = false;
  let logs = false;
  walk(body, (n) => {
    if (n.type === 'ThrowStatement') throws = true;
    else if (n.type === 'CallExpression') logs ||= isLoggingCall(n);
  });
  if (throws || logs) return { ok: true };

  const tracked = new Set(boundNames(param));
  let referenced = false;
  // Iterate: a variable derived from the error is tracked in turn, until nothing new is learnt.
  for (let size = -1; size !== tracked.size;) {
    size = tracked.size;
    let passed = false;
    walk(body, (n) => {
      if (n.type !== 'Identifier' || !tracked.has(n.name)) return;
      const p = n.parent;
      // A property key or a member's property is not a use of the variable.
      if (p && p.type === 'MemberExpression' && p.property === n && !p.computed) return;
      if (p && p.type === 'Property' && p.key === n && !p.computed && !p.shorthand) return;
      if (p && p.type === 'VariableDeclarator' && p.id === n) return;
      referenced = true;
      if (passesOn(n, body, tracked)) passed = true;
    });
    if (passed) return { ok: true };
  }

  const range = body.range;
  const comments = sourceCode.getAllComments().filter((c) => c.range[0] >= range[0] && c.range[1] <= range[1]);
  const expected = comments.some((c) => EXPECTED.test(c.value));
  if (expected && referenced) return { ok: true };
  return { ok: false, expectedWithoutTest: expected };
}

/** The function given as a rejection handler, or a verdict on a handler passed by name. */
function checkHandler(context, node, handler) {
  if (!handler) return;
  if (handler.type === 'ArrowFunctionExpression' || handler.type === 'FunctionExpression') {
    const verdict = handles(handler.params[0] ?? null, handler.body, context.sourceCode);
    if (!verdict.ok)
      context.report({ node: handler, messageId: verdict.expectedWithoutTest ? 'expectedWithoutTest' : 'silent' });
    return;
  }
  const name = nameOf(handler.type === 'ChainExpression' ? handler.expression : handler);
  if (name && HANDLER_NAME.test(name)) return;
  if (handler.type === 'CallExpression' && isLoggingCall(handler)) return; // .catch(logFailure('x'))
  context.report({ node: handler, messageId: 'silentRef' });
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid catching an error without throwing, logging, counting or passing it on.' },
    schema: [],
    messages: {
      silent:
        'This handler swallows the error: rethrow it, log it (and count it where it repeats), or pass it on. ' +
        'If the error is one specific expected error, test for it and mark it with `// expected: <reason>`.',
      expectedWithoutTest:
        'An `// expected: <reason>` mark needs the handler to test for the specific error it expects ' +
        '(name the error and check it, e.g. its code), and rethrow or log anything else.',
      silentRef:
        'This rejection handler is passed by a name that neither logs nor passes the error on; ' +
        'use a function that logs, counts or rethrows it.',
    },
  },
  create(context) {
    return {
      CatchClause(node) {
        const verdict = handles(node.param, node.body, context.sourceCode);
        if (!verdict.ok)
          context.report({ node, messageId: verdict.expectedWithoutTest ? 'expectedWithoutTest' : 'silent' });
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.computed) return;
        const method = nameOf(callee);
        if (method === 'catch') checkHandler(context, node, node.arguments[0]);
        else if (method === 'then' && node.arguments.length >= 2) checkHandler(context, node, node.arguments[1]);
      },
    };
  },
};
