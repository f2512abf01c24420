// A resubscribe with an SSE Last-Event-ID, checked by @a2a-js/sdk's own logic
// for applying a stream of events to a task (the server package's
// ResultManager over an InMemoryTaskStore): a Task event replaces what it
// holds, an artifact update with append:true appends. Started by
// interop/resume_test.go, which runs Caddy and the scripted agent:
//   A2A_DUAL_URL      base URL of a mount serving A2A 0.3 and 1.0
//   A2A_LEGACY_URL    base URL of a mount serving A2A 0.3 only
//   A2A_REST_URL      base URL of a mount that adds HTTP+JSON
//   AGENT_CONTROL_URL the scripted agent's /control endpoints (gates)
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
import { InMemoryTaskStore, ResultManager, ServerCallContext } from '@a2a-js/sdk/server';

const DUAL = mustEnv('A2A_DUAL_URL');
const LEGACY = mustEnv('A2A_LEGACY_URL');
const REST = mustEnv('A2A_REST_URL');
const CONTROL = mustEnv('AGENT_CONTROL_URL');
const TIMEOUT = { timeout: 20_000 };

// frame turns one SSE data line of any of the three wires into one
// vocabulary, so the expected frames are written once.
const frameKinds = {
  jsonrpc: (d) => {
    const r = d.result ?? {};
    if (r.task) return ['task', r.task];
    if (r.artifactUpdate) return ['artifact', r.artifactUpdate];
    if (r.statusUpdate) return ['status', r.statusUpdate];
    return [JSON.stringify(d)];
  },
  rest: (d) => {
    if (d.task) return ['task', d.task];
    if (d.artifactUpdate) return ['artifact', d.artifactUpdate];
    if (d.statusUpdate) return ['status', d.statusUpdate];
    return [JSON.stringify(d)];
  },
  v03: (d) => {
    const r = d.result ?? {};
    const kind = { task: 'task', 'artifact-update': 'artifact', 'status-update': 'status' }[r.kind];
    return kind ? [kind, r] : [JSON.stringify(d)];
  },
};

// 0.3 names states in lower case; the 1.0 wires as TASK_STATE_*.
const wireState = (s) => (s && !s.startsWith('TASK_STATE_') ? `TASK_STATE_${s.toUpperCase().replace('-', '_')}` : s);
const wireText = (parts = []) => parts.map((p) => p.text ?? '').join('');

const setups = [
  { name: 'JSON-RPC 1.0, dual mount', base: DUAL, legacy: false, wire: 'jsonrpc', isSubscribe: (b) => b?.method === 'SubscribeToTask' },
  {
    name: 'HTTP+JSON 1.0 (RestTransportFactory), rest mount',
    base: REST,
    legacy: false,
    rest: true,
    wire: 'rest',
    isSubscribe: (_b, url) => new URL(url).pathname.endsWith(':subscribe'),
  },
  // legacyCompat offered 0.3 only speaks 0.3's tasks/resubscribe, and the SDK
  // hands its events over in the 1.0 shapes ResultManager takes.
  { name: 'JSON-RPC 0.3 (legacyCompat on), 0.3-only mount', base: LEGACY, legacy: true, wire: 'v03', isSubscribe: (b) => b?.method === 'tasks/resubscribe' },
];

// On the memory store a task's event ids count from 1: the Task
// (submitted), working, the agent's working status, then one per chunk
// (step-i is id i+3).
const positions = [
  // Replayed from here the first chunk has append:false and replaces the
  // artifact, so the SDK ends right even on a replay: only the wire
  // check below tells.
  { from: '3', what: 'before every chunk' },
  // The case a client holding the Task would double: chunks 2 and 3 come
  // after this id and are in the Task already, with append:true.
  { from: '4', what: 'after the first chunk' },
];

// connect builds a client whose fetch records every exchange and adds
// Last-Event-ID to the subscribe request: the SDK has no option for it.
async function connect(setup, resume) {
  const log = [];
  const fetchImpl = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url ?? String(input);
    let body;
    try {
      body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      body = undefined;
    }
    const entry = { url, httpMethod: init.method ?? 'GET', body: init.body, subscribe: setup.isSubscribe(body, url) };
    if (entry.subscribe) {
      const headers = new Headers(init.headers ?? {});
      headers.set('Last-Event-ID', resume.from);
      init = { ...init, headers };
      entry.lastEventId = headers.get('Last-Event-ID');
    }
    log.push(entry);
    const res = await fetch(input, init);
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
      // Non-blocking send: the task is answered while the agent is held.
      clientConfig: { polling: true },
      ...(setup.rest ? { preferredTransports: ['HTTP+JSON'] } : {}),
    }),
  );
  return { client: await factory.createFromUrl(setup.base), log };
}

async function dump(log) {
  const lines = [`---- wire log: ${log.length} exchange(s) ----`];
  for (const [i, e] of log.entries()) {
    lines.push(`#${i + 1} ${e.httpMethod} ${e.url}${e.lastEventId ? ` Last-Event-ID=${e.lastEventId}` : ''}`);
    if (e.body) lines.push(`   > ${e.body}`);
    const text = await Promise.race([e.text, new Promise((r) => setTimeout(() => r('(body still streaming)'), 500))]);
    lines.push(`   < ${e.status} ${e.contentType ?? ''}`);
    for (const l of String(text ?? '').split('\n')) lines.push(`   < ${l}`);
  }
  return lines.join('\n');
}

async function control(path) {
  const res = await fetch(`${CONTROL}/control/${path}`);
  const text = await res.text();
  assert.equal(res.status, 200, `agent control ${path}: ${text}`);
  return text;
}

const stepGate = (name, i) => `${name}#${i}`;
const release = (name, i) => control(`release-gate?gate=${encodeURIComponent(stepGate(name, i))}`);
const partsText = (parts = []) => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const artifactsText = (task) => (task?.artifacts ?? []).map((a) => partsText(a.parts)).join('');
const stateName = (s) => TaskState[s] ?? String(s);
const uniq = (name) => `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

// waitText polls GetTask until the task holds want: the chunks released so
// far are stored, so the resume point is really behind the Task's content.
async function waitText(client, id, want) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await client.getTask({ id });
    if (artifactsText(task) === want) return task;
    if (Date.now() > deadline) assert.fail(`task ${id} holds ${JSON.stringify(artifactsText(task))}, want ${JSON.stringify(want)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// sseFrames splits an SSE body into its frames' ids and parsed data.
function sseFrames(text) {
  return text
    .split(/\n\n+/)
    .map((block) => {
      const id = block.split('\n').find((l) => l.startsWith('id:'))?.slice(3).trim();
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      return data ? { id, data: JSON.parse(data) } : undefined;
    })
    .filter(Boolean);
}

for (const setup of setups) {
  describe(`@a2a-js/sdk resume with Last-Event-ID, ${setup.name}`, () => {
    for (const resume of positions) {
      test(`from ${resume.from}, ${resume.what}: the SDK's ResultManager holds each chunk once`, TIMEOUT, async () => {
        const { client, log } = await connect(setup, resume);
        const name = uniq('resume');
        try {
          const task = await client.sendMessage({ message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: `steps 5 ${name}` } }] } });
          assert.ok(task?.id && !('messageId' in task), `non-blocking send answered ${JSON.stringify(task)}, want a Task`);
          for (const i of [1, 2, 3]) await release(name, i);
          const held = await waitText(client, task.id, 'step-1;step-2;step-3;');
          assert.equal(stateName(held.status?.state), stateName(TaskState.TASK_STATE_WORKING), 'task state with chunks 1..3 stored');

          const rm = new ResultManager(new InMemoryTaskStore(), new ServerCallContext());
          const seen = [];
          for await (const ev of client.resubscribeTask({ id: task.id })) {
            if (seen.length === 0) {
              await release(name, 4);
              await release(name, 5);
            }
            const { $case, value } = ev.payload;
            seen.push($case);
            await rm.processEvent({ kind: $case, data: value });
          }
          const got = rm.getCurrentTask();
          console.log(`resume ${setup.name} from ${resume.from}: events ${seen.join(' ')}; ResultManager holds ${JSON.stringify(artifactsText(got))} ${stateName(got?.status?.state)}`);
          assert.equal(got?.id, task.id, 'ResultManager task id');
          assert.equal(got.artifacts.length, 1, 'ResultManager artifacts');
          assert.equal(artifactsText(got), 'step-1;step-2;step-3;step-4;step-5;', "ResultManager's accumulated artifact text");
          assert.equal(stateName(got.status?.state), stateName(TaskState.TASK_STATE_COMPLETED), 'ResultManager task state');
          const stored = await client.getTask({ id: task.id });
          assert.equal(artifactsText(stored), artifactsText(got), 'GetTask after the stream against the accumulated task');

          // The wire itself: the Task as it is now (id 6, the third
          // chunk's), then only what came after it; the run's end closes
          // the artifact with an empty last chunk.
          const subs = log.filter((e) => e.subscribe);
          assert.equal(subs.length, 1, 'subscribe requests');
          assert.equal(subs[0].lastEventId, resume.from, 'Last-Event-ID sent');
          assert.match(subs[0].contentType ?? '', /^text\/event-stream/);
          const frames = sseFrames(await subs[0].text).map((f) => {
            const [kind, v] = frameKinds[setup.wire](f.data);
            if (kind === 'task') return `${f.id} task ${wireState(v.status?.state)} ${(v.artifacts ?? []).map((a) => wireText(a.parts)).join('')}`;
            if (kind === 'artifact') return `${f.id} artifact append=${Boolean(v.append)} lastChunk=${Boolean(v.lastChunk)} ${wireText(v.artifact?.parts)}`;
            if (kind === 'status') return `${f.id} status ${wireState(v.status?.state)}`;
            return `${f.id} ${kind}`;
          });
          assert.deepEqual(frames, [
            '6 task TASK_STATE_WORKING step-1;step-2;step-3;',
            '7 artifact append=true lastChunk=false step-4;',
            '8 artifact append=true lastChunk=false step-5;',
            '9 artifact append=true lastChunk=true ',
            '10 status TASK_STATE_COMPLETED',
          ]);
        } catch (err) {
          console.log(await dump(log));
          throw err;
        } finally {
          for (const i of [1, 2, 3, 4, 5]) await release(name, i);
        }
      });
    }
  });
}
