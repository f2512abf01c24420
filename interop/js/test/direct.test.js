// @a2a-js/sdk against the `reply auto` mounts: the scripted agent marks the
// answer to `direct TEXT` and `directstream N NAME` with A2A-Reply: message,
// which the module answers as one Message (no task); `echo` is a task.
// Started by interop/direct_test.go (TestJSDirect):
//   A2A_DIRECT_URL         reply auto, 0.3 and 1.0, JSON-RPC and HTTP+JSON
//   A2A_DIRECT_LEGACY_URL  reply auto, 0.3 only
//   AGENT_CONTROL_URL      the scripted agent's /control endpoints
// Both mounts take the owner from X-Caller.
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
import { TaskNotFoundError } from '@a2a-js/sdk/errors';

const DIRECT = mustEnv('A2A_DIRECT_URL');
const LEGACY = mustEnv('A2A_DIRECT_LEGACY_URL');
const CONTROL = mustEnv('AGENT_CONTROL_URL');
const REST_PATH = '/a2a/rest/';
const TIMEOUT = { timeout: 20_000 };

const setups = [
  {
    name: '1.0 JSON-RPC (legacyCompat off)', base: DIRECT, legacy: false, version: '1.0',
    method: { send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', list: 'ListTasks' },
  },
  {
    name: '1.0 HTTP+JSON (RestTransportFactory)', base: DIRECT, legacy: false, version: '1.0', rest: true,
    method: { send: 'POST message:send', stream: 'POST message:stream', get: 'GET tasks/{id}', list: 'GET tasks' },
  },
  // Offered 0.3 only, legacyCompat must take the 0.3 transport.
  {
    name: 'legacyCompat on, 0.3-only mount', base: LEGACY, legacy: true, version: '0.3',
    method: { send: 'message/send', stream: 'message/stream', get: 'tasks/get' },
  },
];

// rpcOf names a request as the setups' method maps do.
function rpcOf(httpMethod, url, body) {
  const path = new URL(url).pathname;
  const i = path.indexOf(REST_PATH);
  if (i >= 0) {
    const segs = path.slice(i + REST_PATH.length).split('/');
    if (segs[0] === 'tasks' && segs.length >= 2) segs[1] = '{id}';
    return `${httpMethod} ${segs.join('/')}`;
  }
  try {
    return body ? JSON.parse(body).method : undefined;
  } catch {
    return undefined;
  }
}

// connect builds a client whose every request carries X-Caller (the
// mounts' owner) and is recorded, for the dialect check and as evidence.
async function connect(setup, caller) {
  const log = [];
  const fetchImpl = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url ?? String(input);
    const headers = new Headers(init.headers ?? {});
    headers.set('X-Caller', caller);
    const body = typeof init.body === 'string' ? init.body : undefined;
    const entry = { url, httpMethod: init.method ?? 'GET', version: headers.get('A2A-Version'), body };
    entry.rpc = rpcOf(entry.httpMethod, url, body);
    log.push(entry);
    const res = await fetch(input, { ...init, headers });
    entry.status = res.status;
    entry.contentType = res.headers.get('content-type');
    entry.text = res.clone().text().catch((e) => `(body read failed: ${e})`);
    return res;
  };
  const legacyCompat = { enabled: setup.legacy };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ legacyCompat, fetchImpl }),
      transports: [
        setup.rest ? new RestTransportFactory({ legacyCompat, fetchImpl }) : new JsonRpcTransportFactory({ legacyCompat, fetchImpl }),
      ],
      ...(setup.rest ? { preferredTransports: ['HTTP+JSON'] } : {}),
    }),
  );
  return { client: await factory.createFromUrl(setup.base), log };
}

async function dump(log) {
  const lines = [`---- wire log: ${log.length} exchange(s) ----`];
  for (const [i, e] of log.entries()) {
    lines.push(`#${i + 1} ${e.httpMethod} ${e.url} A2A-Version=${e.version ?? '(none)'}`);
    if (e.body) lines.push(`   > ${e.body}`);
    const text = await Promise.race([e.text, new Promise((r) => setTimeout(() => r('(body still streaming)'), 500))]);
    lines.push(`   < ${e.status} ${e.contentType ?? ''}`);
    for (const l of String(text ?? '').split('\n')) lines.push(`   < ${l}`);
  }
  return lines.join('\n');
}

function userMessage(text, contextId) {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
  };
}

// assertDirect pins the whole Message the SDK handed over; only the id is
// the module's to choose, and it must not be the caller's.
function assertDirect(what, got, sent, text) {
  assert.ok(got && typeof got.messageId === 'string' && got.messageId !== '' && got.messageId !== sent.messageId,
    `${what}: messageId ${got?.messageId}, want one of the module's: ${JSON.stringify(got)}`);
  assert.deepEqual(got, {
    messageId: got.messageId,
    contextId: sent.contextId,
    taskId: '',
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  }, `${what}: the Message`);
}

const artifactsText = (task) => (task.artifacts ?? []).flatMap((a) => a.parts).map((p) => p.content?.value ?? '').join('');

async function callByInput(input) {
  const res = await fetch(`${CONTROL}/control/call-by-input?input=${encodeURIComponent(input)}`);
  const body = await res.text();
  assert.equal(res.status, 200, `agent call for ${input}: ${body}`);
  return JSON.parse(body);
}

for (const setup of setups) {
  describe(`@a2a-js/sdk ${setup.name}, reply auto`, () => {
    test('a marked turn is a Message (send, and a stream of one event); an unmarked one a Task; no task of a direct turn', TIMEOUT, async () => {
      const caller = `js-${crypto.randomUUID()}`;
      const { client, log } = await connect(setup, caller);
      try {
        const contextId = `ctx-${caller}`;

        const sent = userMessage(`direct ${caller}`, contextId);
        assertDirect('sendMessage', await client.sendMessage({ message: sent }), sent, `direct: ${caller}`);

        const streamed = userMessage(`directstream 3 ${caller}`, contextId);
        const events = [];
        for await (const ev of client.sendMessageStream({ message: streamed })) events.push(ev);
        assert.deepEqual(events.map((e) => e.payload?.$case), ['message'], 'the stream: one message event, then its end');
        // The working note is progress, not answer; the chunks merge.
        assertDirect('sendMessageStream', events[0].payload.value, streamed, 'chunk-1;chunk-2;chunk-3;');
        const frames = (await log.find((e) => e.rpc === setup.method.stream).text).split('\n').filter((l) => l.startsWith('data:'));
        assert.equal(frames.length, 1, `frames on the wire: ${frames}`);

        const task = await client.sendMessage({ message: userMessage(`echo ${caller}`, contextId) });
        assert.ok(!('messageId' in task), `echo answered a Message: ${JSON.stringify(task)}`);
        assert.equal(TaskState[task.status?.state], 'TASK_STATE_COMPLETED');
        assert.equal(artifactsText(task), `echo: ${caller}`);
        assert.equal(task.contextId, contextId);

        // The module gave each direct turn's run a task id (the agent saw
        // it) and stored nothing under it; the echo task, same owner, is
        // there, so the not-found is not the owner's doing.
        for (const input of [sent, streamed].map((m) => m.parts[0].content.value)) {
          const { request } = await callByInput(input);
          assert.ok(request.taskId, `the agent's call for ${input} has no taskId`);
          await assert.rejects(client.getTask({ id: request.taskId }), TaskNotFoundError, `getTask of the run of ${input}`);
        }
        assert.equal(TaskState[(await client.getTask({ id: task.id })).status?.state], 'TASK_STATE_COMPLETED');
        const ops = ['send', 'stream', 'get'];
        if (setup.method.list) {
          ops.push('list');
          // status: see the README (the SDK sends "UNRECOGNIZED" without it).
          const list = await client.listTasks({ contextId, pageSize: 10, status: TaskState.TASK_STATE_UNSPECIFIED });
          assert.deepEqual(list.tasks.map((t) => t.id), [task.id], 'listTasks of the context: the echo task only');
          assert.equal(list.totalSize, 1);
        }

        const allowed = new Set(ops.map((op) => setup.method[op]));
        for (const e of log.filter((x) => x.httpMethod === 'POST' || x.url.includes(REST_PATH))) {
          assert.ok(allowed.has(e.rpc), `request ${e.rpc} is not one of ${[...allowed]}`);
          if (setup.version === '1.0') assert.equal(e.version, '1.0', `${e.rpc} A2A-Version`);
          else assert.ok(e.version === null || e.version.startsWith('0.3'), `${e.rpc} sent A2A-Version ${e.version} on the 0.3 wire`);
        }
      } catch (err) {
        console.log(await dump(log));
        throw err;
      }
    });
  });
}
