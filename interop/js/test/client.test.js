// Interop tests: the @a2a-js/sdk client against Caddy with the a2a handler.
// Started by interop/js_test.go, which runs Caddy and the scripted agent and
// passes their addresses in the environment:
//   A2A_DUAL_URL     base URL of a mount serving A2A 0.3 and 1.0
//   A2A_LEGACY_URL   base URL of a mount serving A2A 0.3 only
//   AGENT_CONTROL_URL the scripted agent's /control endpoints (gates, calls)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mustEnv } from './env.js';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';

const DUAL = mustEnv('A2A_DUAL_URL');
const LEGACY = mustEnv('A2A_LEGACY_URL');
const REST = mustEnv('A2A_REST_URL');
const REST_PATH = '/a2a/rest/';
const CONTROL = mustEnv('AGENT_CONTROL_URL');
const TIMEOUT = { timeout: 20_000 };

const V10 = {
  version: '1.0',
  method: { send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', cancel: 'CancelTask', subscribe: 'SubscribeToTask' },
};
const V03 = {
  version: '0.3',
  method: { send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel', subscribe: 'tasks/resubscribe' },
};

// The HTTP+JSON wire: an operation is its verb and route, ids as {id}.
const V10_REST = {
  version: '1.0',
  method: {
    send: 'POST message:send', stream: 'POST message:stream', get: 'GET tasks/{id}',
    cancel: 'POST tasks/{id}:cancel', subscribe: 'POST tasks/{id}:subscribe',
  },
};

const V03_REST = {
  version: '0.3',
  method: {
    send: 'POST v1/message:send', stream: 'POST v1/message:stream', get: 'GET v1/tasks/{id}',
    cancel: 'POST v1/tasks/{id}:cancel', subscribe: 'GET v1/tasks/{id}:subscribe',
  },
};

// restOp names an HTTP+JSON request as V10_REST does; undefined for any other.
function restOp(method, url) {
  const path = new URL(url).pathname;
  const i = path.indexOf(REST_PATH);
  if (i < 0) return undefined;
  const segs = path.slice(i + REST_PATH.length).split('/');
  const t = segs[0] === 'v1' ? 1 : 0; // 0.3's routes
  if (segs[t] === 'tasks' && segs.length >= t + 2) {
    const colon = segs[t + 1].lastIndexOf(':');
    segs[t + 1] = '{id}' + (colon >= 0 ? segs[t + 1].slice(colon) : '');
  }
  return `${method} ${segs.join('/')}`;
}

// Each setup is one way a JS user connects; `dialect` is what it must speak.
const setups = [
  { name: '1.0 (legacyCompat off), dual mount', base: DUAL, legacy: false, dialect: V10 },
  // A legacy-capable client offered both versions must still choose 1.0.
  { name: 'legacyCompat on, dual mount', base: DUAL, legacy: true, dialect: V10 },
  // Offered 0.3 only, the same client must fall back to the 0.3 transport.
  { name: 'legacyCompat on, 0.3-only mount', base: LEGACY, legacy: true, dialect: V03 },
  // The REST transport alone: it must find the card's HTTP+JSON interface.
  { name: 'HTTP+JSON 1.0 (RestTransportFactory), rest mount', base: REST, legacy: false, dialect: V10_REST, rest: true },
  // Offered 0.3 only, the legacy REST transport: 0.3's /v1 routes.
  // @a2a-js/sdk 1.3.0's legacy REST transport drops an artifact update's
  // `append` (its FromProto.taskArtifactUpdateEvent copies every field but
  // that one): the stream checks read `append` off the wire instead.
  { name: 'HTTP+JSON 0.3 (RestTransportFactory, legacyCompat on), 0.3-only mount', base: LEGACY, legacy: true, dialect: V03_REST, rest: true, dropsAppend: true },
];

// recorder wraps fetch so every exchange is kept: the dialect checks read it and
// a failing test prints it as wire evidence.
function recorder() {
  const log = [];
  const fetchImpl = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url ?? String(input);
    const headers = new Headers(init.headers ?? {});
    const entry = {
      url,
      httpMethod: init.method ?? 'GET',
      version: headers.get('A2A-Version'),
      accept: headers.get('Accept'),
      body: typeof init.body === 'string' ? init.body : undefined,
    };
    entry.rpc = restOp(entry.httpMethod, url);
    if (entry.rpc === undefined) {
      try {
        entry.rpc = entry.body ? JSON.parse(entry.body).method : undefined;
      } catch {
        entry.rpc = undefined;
      }
    }
    log.push(entry);
    const res = await fetch(input, init);
    entry.status = res.status;
    entry.contentType = res.headers.get('content-type');
    // A tee of the body, read lazily, so the dump shows what the client got.
    entry.text = res.clone().text().catch((e) => `(body read failed: ${e})`);
    return res;
  };
  return { log, fetchImpl };
}

async function dump(log) {
  const lines = [`---- wire log: ${log.length} exchange(s) ----`];
  for (const [i, e] of log.entries()) {
    lines.push(`#${i + 1} ${e.httpMethod} ${e.url} A2A-Version=${e.version ?? '(none)'} Accept=${e.accept ?? ''}`);
    if (e.body) lines.push(`   > ${e.body}`);
    const text = await Promise.race([e.text, new Promise((r) => setTimeout(() => r('(body still streaming)'), 500))]);
    lines.push(`   < ${e.status} ${e.contentType ?? ''}`);
    for (const l of String(text ?? '').split('\n')) lines.push(`   < ${l}`);
  }
  return lines.join('\n');
}

async function connect(setup, { polling = false } = {}) {
  const rec = recorder();
  const legacyCompat = { enabled: setup.legacy };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ legacyCompat, fetchImpl: rec.fetchImpl }),
      transports: [
        setup.rest
          ? new RestTransportFactory({ legacyCompat, fetchImpl: rec.fetchImpl })
          : new JsonRpcTransportFactory({ legacyCompat, fetchImpl: rec.fetchImpl }),
      ],
      clientConfig: { polling },
      // The defaults hold both transports: the REST setup must pick HTTP+JSON
      // over the card's first interface (JSON-RPC).
      ...(setup.rest ? { preferredTransports: ['HTTP+JSON'] } : {}),
    }),
  );
  try {
    return { client: await factory.createFromUrl(setup.base), rec };
  } catch (err) {
    console.log(await dump(rec.log));
    throw err;
  }
}

// withWire runs a scenario and, if it throws, prints every recorded exchange.
async function withWire(recs, fn) {
  try {
    await fn();
  } catch (err) {
    for (const rec of recs) console.log(await dump(rec.log));
    throw err;
  }
}

function userMessage(text, extra = {}) {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    ...extra,
  };
}

const partsText = (parts = []) => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const artifactsText = (task) => (task.artifacts ?? []).map((a) => partsText(a.parts)).join('');
const stateName = (s) => TaskState[s] ?? String(s);

function assertTask(res) {
  assert.ok(res && !('messageId' in res), `send returned a Message, want a Task: ${JSON.stringify(res)}`);
  assert.ok(res.id && res.contextId, `task has id ${res.id} contextId ${res.contextId}, want both`);
  return res;
}

function assertState(task, want, what = 'task') {
  assert.equal(stateName(task.status?.state), stateName(want), `${what} ${task.id} state`);
}

// assertDialect proves which wire a client spoke: every RPC's method name and
// A2A-Version header must belong to the expected dialect.
function assertDialect(rec, dialect, ops) {
  const allowed = new Set(ops.map((op) => dialect.method[op]));
  const rpcs = rec.log.filter((e) => e.httpMethod === 'POST' || restOp(e.httpMethod, e.url) !== undefined);
  assert.ok(rpcs.length > 0, 'no JSON-RPC request recorded');
  for (const e of rpcs) {
    assert.ok(allowed.has(e.rpc), `RPC ${e.rpc} is not one of ${[...allowed]}`);
    if (dialect.version === '1.0') {
      assert.equal(e.version, '1.0', `${e.rpc} A2A-Version`);
    } else {
      assert.ok(e.version === null || e.version.startsWith('0.3'), `${e.rpc} sent A2A-Version ${e.version} on the 0.3 wire`);
    }
  }
}

// assertWireAppends checks what a client that drops `append` cannot: the
// stream of method carried every chunk after the first with append:true.
async function assertWireAppends(rec, method, chunks) {
  const e = rec.log.find((x) => x.rpc === method);
  const text = await e.text;
  const updates = text.split('\n').filter((l) => l.startsWith('data: {"artifactUpdate"'));
  assert.ok(updates.length >= chunks, `${updates.length} artifact updates on the wire: ${text}`);
  assert.ok(!updates[0].includes('"append":true'), `the first chunk appends: ${updates[0]}`);
  for (const u of updates.slice(1)) assert.ok(u.includes('"append":true'), `a later chunk does not append: ${u}`);
}

function assertStreamed(rec, method) {
  const e = rec.log.find((x) => x.rpc === method);
  assert.ok(e, `no ${method} request: the client fell back to a non-streaming call`);
  assert.match(e.contentType ?? '', /^text\/event-stream/, `${method} response Content-Type`);
}

async function control(path) {
  const res = await fetch(`${CONTROL}/control/${path}`);
  const body = await res.text();
  assert.equal(res.status, 200, `agent control ${path}: ${body}`);
  return body;
}

const agentCalls = async (taskId, n = 1) => JSON.parse(await control(`calls?taskId=${encodeURIComponent(taskId)}&n=${n}`));
const awaitGate = (g) => control(`await-gate?gate=${encodeURIComponent(g)}&timeout=10s`);
const releaseGate = (g) => control(`release-gate?gate=${encodeURIComponent(g)}`);

async function waitState(client, id, want) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await client.getTask({ id });
    if (task.status?.state === want) return task;
    const terminal = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED];
    if (terminal.includes(task.status?.state) || Date.now() > deadline) {
      assert.fail(`task ${id} is ${stateName(task.status?.state)}, want ${stateName(want)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

// checkStream mirrors the Go checker: Task first, updates of that task only,
// chunks appended to one artifact, the final status last (a trailing Task
// snapshot in the same state is allowed).
function checkStream(events, want) {
  const kinds = events.map((e) => e.payload?.$case);
  const desc = JSON.stringify(events.map((e) => [e.payload?.$case, stateName(e.payload?.value?.status?.state)]));
  const summary = events.map((e) => {
    const v = e.payload?.value ?? {};
    if (e.payload?.$case === 'artifactUpdate') return `artifact(append=${Boolean(v.append)} ${JSON.stringify(partsText(v.artifact?.parts))})`;
    if (e.payload?.$case === 'task') return `task(${stateName(v.status?.state)} artifacts=${JSON.stringify(artifactsText(v))})`;
    return `${e.payload?.$case}(${stateName(v.status?.state)})`;
  });
  console.log(`stream: ${summary.join(' ')}`);
  assert.ok(events.length >= 2, `stream had ${events.length} events: ${desc}`);
  assert.equal(kinds[0], 'task', `first event: ${desc}`);
  const first = events[0].payload.value;
  assert.ok(want.firstStates.includes(first.status?.state), `first Task state ${stateName(first.status?.state)}: ${desc}`);
  let body = events.slice(1);
  const tail = body[body.length - 1];
  if (tail.payload.$case === 'task' && body.length >= 2) {
    assertState(tail.payload.value, want.final, 'trailing Task snapshot');
    body = body.slice(0, -1);
  }
  const last = body[body.length - 1].payload;
  assert.equal(last.$case, 'statusUpdate', `last event: ${desc}`);
  assertState({ id: first.id, status: last.value.status }, want.final, 'last status update');
  // A subscribe may start from a snapshot holding some chunks, or from an
  // older one followed by the events after it: both must add up to want.text.
  let text = artifactsText(first);
  const firstAppend = text !== '';
  let updates = '';
  let artifactId;
  let sawWorking = false;
  for (const [i, ev] of body.entries()) {
    const { $case, value } = ev.payload;
    assert.equal(value.taskId, first.id, `event ${i + 1} taskId`);
    assert.equal(value.contextId, first.contextId, `event ${i + 1} contextId`);
    if ($case === 'statusUpdate') {
      if (i < body.length - 1) {
        assert.ok(
          [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_SUBMITTED].includes(value.status?.state),
          `event ${i + 1} is status ${stateName(value.status?.state)} before the end: ${desc}`,
        );
      }
      if (value.status?.state === TaskState.TASK_STATE_WORKING && artifactId === undefined) sawWorking = true;
    } else if ($case === 'artifactUpdate') {
      if (artifactId === undefined) {
        if (!want.dropsAppend) assert.equal(Boolean(value.append), firstAppend, `first artifact update append (leading Task has ${JSON.stringify(text)})`);
        artifactId = value.artifact.artifactId;
      } else {
        if (!want.dropsAppend) assert.equal(value.append, true, `artifact update ${i + 1} append`);
        assert.equal(value.artifact.artifactId, artifactId, `artifact update ${i + 1} artifactId`);
      }
      text += partsText(value.artifact.parts);
      updates += partsText(value.artifact.parts);
    } else {
      assert.fail(`event ${i + 1} is ${$case}: only updates may follow the Task: ${desc}`);
    }
  }
  if (want.workingFirst) assert.ok(sawWorking, `no working status before the first artifact: ${desc}`);
  assert.equal(text, want.text, 'leading Task artifacts + artifact update texts');
  if (want.liveTail) assert.ok(updates.endsWith(want.liveTail), `updates ${JSON.stringify(updates)} do not end with the live chunk ${want.liveTail}`);
  return first;
}

const uniq = (name) => `${name.replace(/[^A-Za-z0-9]+/g, '-')}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

for (const setup of setups) {
  describe(`@a2a-js/sdk ${setup.name}`, () => {
    test('send (blocking)', TIMEOUT, async () => {
      const { client, rec } = await connect(setup);
      await withWire([rec], async () => {
        const word = uniq('send');
        const task = assertTask(await client.sendMessage({ message: userMessage(`echo ${word}`) }));
        assertState(task, TaskState.TASK_STATE_COMPLETED);
        assert.equal(artifactsText(task), `echo: ${word}`);
        const calls = await agentCalls(task.id);
        assert.equal(calls.length, 1, 'agent calls for the task');
        assert.equal(calls[0].request.input, `echo ${word}`);
        // The agent is told the owner's own id for the context, not the caller's.
        assert.match(calls[0].request.contextId, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.notEqual(calls[0].request.contextId, task.contextId);
        assertDialect(rec, setup.dialect, ['send']);
      });
    });

    test('get (non-blocking send, then getTask until completed)', TIMEOUT, async () => {
      const { client, rec } = await connect(setup, { polling: true });
      const gate = uniq('get');
      await withWire([rec], async () => {
        try {
          const task = assertTask(await client.sendMessage({ message: userMessage(`gated ${gate}`) }));
          assert.ok(
            [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status?.state),
            `non-blocking send returned ${stateName(task.status?.state)} while the agent is held`,
          );
          await awaitGate(gate);
          assertState(await client.getTask({ id: task.id }), TaskState.TASK_STATE_WORKING, 'getTask while held:');
          await releaseGate(gate);
          const done = await waitState(client, task.id, TaskState.TASK_STATE_COMPLETED);
          assert.equal(artifactsText(done), 'part-1;part-2;');
          assert.equal(done.contextId, task.contextId);
          assertDialect(rec, setup.dialect, ['send', 'get']);
        } finally {
          await releaseGate(gate);
        }
      });
    });

    test('stream', TIMEOUT, async () => {
      const { client, rec } = await connect(setup);
      await withWire([rec], async () => {
        const events = [];
        for await (const ev of client.sendMessageStream({ message: userMessage('stream 3') })) events.push(ev);
        const first = checkStream(events, {
          dropsAppend: setup.dropsAppend,
          firstStates: [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING],
          text: 'chunk-1;chunk-2;chunk-3;',
          workingFirst: true,
          final: TaskState.TASK_STATE_COMPLETED,
        });
        const task = await client.getTask({ id: first.id });
        assertState(task, TaskState.TASK_STATE_COMPLETED);
        assert.equal(artifactsText(task), 'chunk-1;chunk-2;chunk-3;');
        assertStreamed(rec, setup.dialect.method.stream);
        if (setup.dropsAppend) await assertWireAppends(rec, setup.dialect.method.stream, 3);
        assertDialect(rec, setup.dialect, ['stream', 'get']);
      });
    });

    test('cancel', TIMEOUT, async () => {
      const { client, rec } = await connect(setup, { polling: true });
      await withWire([rec], async () => {
        const task = assertTask(await client.sendMessage({ message: userMessage('slow') }));
        await agentCalls(task.id, 1);
        const canceled = await client.cancelTask({ id: task.id });
        assert.equal(canceled.id, task.id);
        assertState(canceled, TaskState.TASK_STATE_CANCELED, 'cancelTask result');
        await control(`await-cancel?taskId=${encodeURIComponent(task.id)}&timeout=5s`);
        assertState(await client.getTask({ id: task.id }), TaskState.TASK_STATE_CANCELED, 'getTask after cancel:');
        assertDialect(rec, setup.dialect, ['send', 'cancel', 'get']);
      });
    });

    test('resubscribe to a running task', TIMEOUT, async () => {
      const { client, rec } = await connect(setup, { polling: true });
      const gate = uniq('resub');
      await withWire([rec], async () => {
        try {
          const task = assertTask(await client.sendMessage({ message: userMessage(`gated ${gate}`) }));
          await awaitGate(gate);
          const events = [];
          for await (const ev of client.resubscribeTask({ id: task.id })) {
            if (events.length === 0) await releaseGate(gate);
            events.push(ev);
          }
          const first = checkStream(events, {
            dropsAppend: setup.dropsAppend,
            firstStates: [TaskState.TASK_STATE_WORKING],
            text: 'part-1;part-2;',
            liveTail: 'part-2;',
            workingFirst: false,
            final: TaskState.TASK_STATE_COMPLETED,
          });
          assert.equal(first.id, task.id);
          assertStreamed(rec, setup.dialect.method.subscribe);
          assertDialect(rec, setup.dialect, ['send', 'subscribe']);
        } finally {
          await releaseGate(gate);
        }
      });
    });

    test('errors: unknown task, cancel a completed task, resubscribe to an unknown task', TIMEOUT, async () => {
      const { client, rec } = await connect(setup);
      await withWire([rec], async () => {
        const missing = '00000000-0000-4000-8000-000000000000';
        await assert.rejects(client.getTask({ id: missing }), TaskNotFoundError, 'getTask(unknown)');
        const done = assertTask(await client.sendMessage({ message: userMessage('echo done') }));
        await assert.rejects(client.cancelTask({ id: done.id }), TaskNotCancelableError, 'cancelTask(completed)');
        await assert.rejects(
          (async () => {
            for await (const ev of client.resubscribeTask({ id: missing })) {
              throw new Error(`resubscribe(unknown) yielded ${ev.payload?.$case}`);
            }
          })(),
          // The SDK wraps an error that arrives in the event stream; the typed
          // error is its cause.
          (err) => err instanceof TaskNotFoundError || err?.cause instanceof TaskNotFoundError,
          'resubscribe(unknown)',
        );
        assertDialect(rec, setup.dialect, ['get', 'send', 'cancel', 'subscribe']);
      });
    });

    test('input-required, then continue the task', TIMEOUT, async () => {
      const { client, rec } = await connect(setup);
      await withWire([rec], async () => {
        const task = assertTask(await client.sendMessage({ message: userMessage('ask') }));
        assertState(task, TaskState.TASK_STATE_INPUT_REQUIRED);
        assert.equal(partsText(task.status?.message?.parts), 'What is your name?');
        assert.equal(task.status?.message?.role, Role.ROLE_AGENT);
        const final = assertTask(
          await client.sendMessage({ message: userMessage('Ada', { taskId: task.id, contextId: task.contextId }) }),
        );
        assert.equal(final.id, task.id);
        assertState(final, TaskState.TASK_STATE_COMPLETED);
        assert.equal(artifactsText(final), 'Hello, Ada!');
        const calls = await agentCalls(task.id, 2);
        assert.equal(calls.length, 2);
        const history = calls[1].request.history.map((m) => `${m.role}: ${m.parts.map((p) => p.text ?? '').join('')}`);
        assert.deepEqual(history, ['user: ask', 'agent: What is your name?']);
        assertDialect(rec, setup.dialect, ['send']);
      });
    });
  });
}
