// Interop tests: the @a2a-js/sdk client through the module's `upstream a2a`
// (the gateway) to a real SDK agent. Started by interop/gateway_test.go,
// which starts the agent, loads the gateway in front of it and checks
// afterwards what the agent recorded; it passes in the environment:
//   A2A_GW_URL            base URL of the gateway mount serving 0.3 and 1.0
//   A2A_GW_LEGACY_URL     base URL of the gateway mount serving 0.3 only
//   A2A_GW_CALLER         the caller name every X-Caller here starts with
//   A2A_GW_AGENT_VERSION  the version the module speaks to the agent
// Without them (a plain `node --test`) the suite is skipped.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';

const GW = process.env.A2A_GW_URL;
const GW_LEGACY = process.env.A2A_GW_LEGACY_URL;
const CALLER = process.env.A2A_GW_CALLER;
const AGENT_VERSION = process.env.A2A_GW_AGENT_VERSION;
const skip = !(GW && GW_LEGACY && CALLER && AGENT_VERSION) && 'run through go test -run TestGateway in interop/';
const TIMEOUT = { timeout: 20_000 };

const setups = [
  { name: '1.0 (legacyCompat off), dual mount', tag: 'v10', base: GW, legacy: false, version: '1.0', methods: ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask', 'ListTasks'] },
  // Offered 0.3 only, the legacy-capable client speaks 0.3.
  { name: 'legacyCompat on, 0.3-only mount', tag: 'v03', base: GW_LEGACY, legacy: true, version: '0.3', methods: ['message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe'] },
];

let seq = 0;
// A fresh caller per test, so that listing is exact: tasks are the owner's.
const newCaller = (setup) => `${CALLER}.${setup.tag}.${++seq}`;

// recorder wraps fetch: it adds the caller's headers (X-Caller for the
// owner, and credentials that must not reach the agent) and keeps every
// exchange for the dialect check and the failure dump.
function recorder(caller) {
  const log = [];
  const fetchImpl = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url ?? String(input);
    const headers = new Headers(init.headers ?? {});
    headers.set('X-Caller', caller);
    headers.set('Authorization', 'Bearer caller-token');
    headers.set('Cookie', 's=1');
    const entry = { url, httpMethod: init.method ?? 'GET', version: headers.get('A2A-Version'), body: typeof init.body === 'string' ? init.body : undefined };
    try {
      entry.rpc = entry.body ? JSON.parse(entry.body).method : undefined;
    } catch {
      entry.rpc = undefined;
    }
    log.push(entry);
    const res = await fetch(input, { ...init, headers });
    entry.status = res.status;
    entry.contentType = res.headers.get('content-type');
    entry.text = res.clone().text().catch((e) => `(body read failed: ${e})`);
    return res;
  };
  return { log, fetchImpl };
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

async function connect(setup, caller, { polling = false } = {}) {
  const rec = recorder(caller);
  const legacyCompat = { enabled: setup.legacy };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ legacyCompat, fetchImpl: rec.fetchImpl }),
      transports: [new JsonRpcTransportFactory({ legacyCompat, fetchImpl: rec.fetchImpl })],
      clientConfig: { polling },
    }),
  );
  try {
    return { client: await factory.createFromUrl(setup.base), rec };
  } catch (err) {
    console.log(await dump(rec.log));
    throw err;
  }
}

// scenario connects as a fresh caller, runs fn, checks the dialect the
// client spoke and dumps the wire if anything throws.
async function scenario(setup, fn, opts) {
  const caller = newCaller(setup);
  const { client, rec } = await connect(setup, caller, opts);
  try {
    await fn(client, caller);
    const rpcs = rec.log.filter((e) => e.httpMethod === 'POST');
    assert.ok(rpcs.length > 0, 'no JSON-RPC request recorded');
    for (const e of rpcs) {
      assert.ok(setup.methods.includes(e.rpc), `RPC ${e.rpc} is not a ${setup.version} method`);
      if (setup.version === '1.0') assert.equal(e.version, '1.0', `${e.rpc} A2A-Version`);
      else assert.ok(e.version === null || e.version.startsWith('0.3'), `${e.rpc} sent A2A-Version ${e.version} on the 0.3 wire`);
    }
  } catch (err) {
    console.log(await dump(rec.log));
    throw err;
  }
}

function userMessage(text, extra = {}) {
  return { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra };
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

// assertSeen checks what the agent says it saw (metadata.peerSeen).
function assertSeen(meta, caller, what) {
  const seen = meta?.peerSeen;
  assert.ok(seen, `${what} carries no metadata.peerSeen: ${JSON.stringify(meta)}`);
  assert.equal(seen.a2aVersion, AGENT_VERSION, `${what}: the agent's A2A-Version`);
  assert.equal(seen.xUser, caller, `${what}: the agent's X-User`);
}

// describeEvents reduces a stream to one string per event.
function describeEvents(events) {
  return events.map((e) => {
    const v = e.payload?.value ?? {};
    switch (e.payload?.$case) {
      case 'artifactUpdate':
        return `artifact(${JSON.stringify(partsText(v.artifact?.parts))} append=${Boolean(v.append)} last=${Boolean(v.lastChunk)})`;
      case 'statusUpdate':
        return `status(${stateName(v.status?.state)})`;
      case 'task':
        return `task(${stateName(v.status?.state)})`;
      default:
        return `${e.payload?.$case}`;
    }
  });
}

// waitWorking waits until the module's task is working, then a little
// more: the agent's task id reaches the module with the first frame of the
// agent's stream, and a cancel before that does not reach the agent.
async function waitWorking(client, id) {
  for (let i = 0; i < 100; i++) {
    const task = await client.getTask({ id });
    if (task.status?.state === TaskState.TASK_STATE_WORKING) {
      await new Promise((r) => setTimeout(r, 150));
      return task;
    }
    assert.ok(
      [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status?.state),
      `slow task ${id} is ${stateName(task.status?.state)}`,
    );
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`slow task ${id} is not working after 2s`);
}

for (const setup of setups) {
  describe(`@a2a-js/sdk through the gateway, ${setup.name}`, { skip }, () => {
    test('send echo hi (blocking), then get', TIMEOUT, () =>
      scenario(setup, async (client, caller) => {
        const task = assertTask(await client.sendMessage({ message: userMessage('echo hi') }));
        assertState(task, TaskState.TASK_STATE_COMPLETED);
        assert.equal(task.artifacts.length, 1);
        assert.equal(artifactsText(task), 'echo: hi');
        assertSeen(task.artifacts[0].metadata, caller, 'artifact');
        const got = await client.getTask({ id: task.id });
        assertState(got, TaskState.TASK_STATE_COMPLETED, 'getTask:');
        assert.equal(got.contextId, task.contextId);
        assert.equal(artifactsText(got), 'echo: hi');
      }));

    test('stream 3', TIMEOUT, () =>
      scenario(setup, async (client) => {
        const events = [];
        for await (const ev of client.sendMessageStream({ message: userMessage('stream 3') })) events.push(ev);
        const got = describeEvents(events);
        assert.equal(got[0].startsWith('task('), true, `first event: ${got}`);
        assert.deepEqual(
          got.filter((d) => d.startsWith('artifact(')),
          ['artifact("chunk 1 " append=false last=false)', 'artifact("chunk 2 " append=true last=false)', 'artifact("chunk 3 " append=true last=true)'],
          `events ${got}`,
        );
        assert.equal(got[got.length - 1], `status(${stateName(TaskState.TASK_STATE_COMPLETED)})`, `events ${got}`);
        const id = events[0].payload.value.id;
        const task = await client.getTask({ id });
        assertState(task, TaskState.TASK_STATE_COMPLETED, 'getTask after the stream:');
        assert.equal(artifactsText(task), 'chunk 1 chunk 2 chunk 3 ');
      }));

    test('ask, then the follow-up in the same task', TIMEOUT, () =>
      scenario(setup, async (client, caller) => {
        const task = assertTask(await client.sendMessage({ message: userMessage('ask') }));
        assertState(task, TaskState.TASK_STATE_INPUT_REQUIRED);
        assert.equal(partsText(task.status?.message?.parts), 'what is your name?');
        const final = assertTask(await client.sendMessage({ message: userMessage('Ada', { taskId: task.id, contextId: task.contextId }) }));
        assert.equal(final.id, task.id);
        assert.equal(final.contextId, task.contextId);
        assertState(final, TaskState.TASK_STATE_COMPLETED);
        assert.equal(artifactsText(final), 'hello Ada');
        assertSeen(final.artifacts[final.artifacts.length - 1].metadata, caller, 'artifact');
      }));

    test('data: a data part, a file by bytes, a file by URI', TIMEOUT, () =>
      scenario(setup, async (client) => {
        const task = assertTask(await client.sendMessage({ message: userMessage('data') }));
        assertState(task, TaskState.TASK_STATE_COMPLETED);
        assert.equal(task.artifacts.length, 1);
        const parts = task.artifacts[0].parts.map((p) => {
          const c = p.content ?? {};
          switch (c.$case) {
            case 'data':
              return `data:${JSON.stringify(c.value)}`;
            case 'raw':
              return `raw:${p.filename}:${p.mediaType}:${Buffer.from(c.value).toString()}`;
            case 'url':
              return `url:${p.filename}:${p.mediaType}:${c.value}`;
            default:
              return `other:${JSON.stringify(p)}`;
          }
        });
        assert.deepEqual(parts, ['data:{"k":"v"}', 'raw:f.txt:text/plain:hi', 'url:f.txt:text/plain:https://example.com/f.txt']);
      }));

    test('msg hi: the agent answers a Message, the module a Task', TIMEOUT, () =>
      scenario(setup, async (client) => {
        const task = assertTask(await client.sendMessage({ message: userMessage('msg hi') }));
        assertState(task, TaskState.TASK_STATE_COMPLETED);
        assert.equal(task.artifacts.length, 1);
        assert.equal(artifactsText(task), 'msg: hi');
      }));

    test('slow, then cancel', TIMEOUT, () =>
      scenario(
        setup,
        async (client) => {
          const task = assertTask(await client.sendMessage({ message: userMessage('slow') }));
          await waitWorking(client, task.id);
          const canceled = await client.cancelTask({ id: task.id });
          assert.equal(canceled.id, task.id);
          assertState(canceled, TaskState.TASK_STATE_CANCELED, 'cancelTask result');
          assertState(await client.getTask({ id: task.id }), TaskState.TASK_STATE_CANCELED, 'getTask after cancel:');
        },
        { polling: true },
      ));

    test('resubscribe to a running task, then cancel it', TIMEOUT, () =>
      scenario(
        setup,
        async (client) => {
          const task = assertTask(await client.sendMessage({ message: userMessage('slow') }));
          await waitWorking(client, task.id);
          const events = [];
          for await (const ev of client.resubscribeTask({ id: task.id })) {
            events.push(ev);
            if (events.length === 1) await client.cancelTask({ id: task.id });
          }
          const got = describeEvents(events);
          assert.equal(got[0], `task(${stateName(TaskState.TASK_STATE_WORKING)})`, `events ${got}`);
          assert.equal(events[0].payload.value.id, task.id);
          assert.equal(got[got.length - 1], `status(${stateName(TaskState.TASK_STATE_CANCELED)})`, `events ${got}`);
        },
        { polling: true },
      ));

    test("another caller's task is not found; list shows the caller's own", TIMEOUT, () =>
      scenario(setup, async (client, caller) => {
        const mine = assertTask(await client.sendMessage({ message: userMessage('echo mine') }));
        const other = newCaller(setup);
        const { client: theirs, rec } = await connect(setup, other);
        try {
          const their = assertTask(await theirs.sendMessage({ message: userMessage('echo theirs') }));
          await assert.rejects(theirs.getTask({ id: mine.id }), TaskNotFoundError, `getTask of ${caller}'s task as ${other}`);
          await assert.rejects(theirs.cancelTask({ id: mine.id }), TaskNotFoundError, `cancelTask of ${caller}'s task as ${other}`);
          if (setup.version === '1.0') {
            // SDK quirk: ListTasksRequest.toJSON writes status unless it is 0,
            // so a request without one goes out as "status":"UNRECOGNIZED",
            // which the module refuses as invalid params.
            await assert.rejects(client.listTasks({ pageSize: 50 }), (err) => err?.envelopeCode === -32602, 'listTasks without a status');
            const list = await client.listTasks({ pageSize: 50, status: TaskState.TASK_STATE_UNSPECIFIED });
            assert.deepEqual(list.tasks.map((t) => t.id), [mine.id], `listTasks as ${caller} (not ${other}'s ${their.id})`);
            assert.equal(list.totalSize, 1);
          }
        } catch (err) {
          console.log(await dump(rec.log));
          throw err;
        }
      }));
  });
}
