// A scripted A2A agent on @a2a-js/sdk (DefaultRequestHandler + the express
// JSON-RPC handler), started by the Go interop tests as a gateway upstream.
// It runs the same script as the Go peers (interop/peer_*_test.go): the
// first text part picks the behaviour (echo X, msg X, stream N, ask, askdoc,
// slow, data, fail).
//
//   PEER_PORT=0       port on 127.0.0.1 (0 = any free one)
//   PEER_LEGACY=1     also serve A2A 0.3 (the SDK's legacyCompat) on the same URL
//   PEER_STREAMING=0  a card that says the agent does not stream
//
// Every request but /_calls is recorded; GET /_calls returns them as JSON and
// POST /_calls/reset forgets them. The first stdout line is
// `listening <port>` once the server accepts connections.
import crypto from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const legacy = process.env.PEER_LEGACY === '1';
const port = Number(process.env.PEER_PORT || 0);
const rpcPath = '/rpc';

const calls = [];

function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v || '';
}

// What the Go recorder extracts from a JSON-RPC body (both dialects put the
// message at params.message and a task id at params.id).
function record(req) {
  const body = req.body && typeof req.body === 'object' ? req.body : {};
  const params = body.params || {};
  const msg = params.message;
  let text = '';
  if (msg && Array.isArray(msg.parts)) {
    const p = msg.parts.find((x) => x && typeof x.text === 'string');
    if (p) text = p.text;
  }
  calls.push({
    httpMethod: req.method,
    path: req.path,
    method: typeof body.method === 'string' ? body.method : '',
    a2aVersion: header(req, 'a2a-version'),
    xUser: header(req, 'x-user'),
    authorization: header(req, 'authorization'),
    cookie: header(req, 'cookie'),
    accept: header(req, 'accept'),
    contextId: msg ? msg.contextId || '' : '',
    taskId: msg ? msg.taskId || '' : params.id || '',
    text,
  });
}

function textPart(value) {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function firstText(message) {
  const p = (message?.parts || []).find((x) => x.content?.$case === 'text');
  return p ? p.content.value : '';
}

class PeerExecutor {
  // taskId -> resolve of a running "slow", called by cancelTask.
  slow = new Map();

  cancelTask = async (taskId, bus) => {
    // The handler waits for a terminal event on the task's bus, so the
    // cancel publishes it itself, then lets "slow" return.
    const task = this.running.get(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: task ? task.contextId : '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      })
    );
    const resolve = this.slow.get(taskId);
    if (resolve) resolve();
  };

  running = new Map();

  async execute(rc, bus) {
    const headers = rc.context.state.get('headers') || {};
    const one = (v) => (Array.isArray(v) ? v[0] : v) || '';
    const seen = { a2aVersion: one(headers['a2a-version']), xUser: one(headers['x-user']), contextId: rc.contextId };
    const meta = () => ({ peerSeen: { ...seen } });
    const taskId = rc.taskId;
    const contextId = rc.contextId;
    const agentMsg = (text) => ({
      messageId: crypto.randomUUID(),
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: meta(),
      extensions: [],
      referenceTaskIds: [],
    });
    const status = (state, message) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        })
      );
    const artifact = (parts, { id = crypto.randomUUID(), append = false, lastChunk = true } = {}) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: id, name: '', description: '', parts, metadata: meta(), extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        })
      );
      return id;
    };

    const text = firstText(rc.userMessage);
    const stored = rc.task;
    // Every execution must open with a task or a message event.
    if (stored && stored.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED && firstText(stored.history?.[0]) === 'askdoc') {
      // The follow-up of "askdoc", written as the SDK's AgentExecutor docs
      // say: the task first (requestContext.task, as stored: still
      // input-required, with the question), then working, the answer, done.
      bus.publish(AgentEvent.task(stored));
      status(TaskState.TASK_STATE_WORKING, undefined);
      artifact([textPart('hello ' + text)]);
      status(TaskState.TASK_STATE_COMPLETED, undefined);
      return;
    }
    if (stored && stored.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      // The SDK demands a task or message first on every execution: the
      // stored task, working (the Go peers do the same).
      bus.publish(
        AgentEvent.task({ ...stored, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } })
      );
      artifact([textPart('hello ' + text)]);
      status(TaskState.TASK_STATE_COMPLETED, undefined);
      return;
    }
    const trimmed = text.trim();
    const sp = trimmed.indexOf(' ');
    const verb = sp < 0 ? trimmed : trimmed.slice(0, sp);
    const arg = sp < 0 ? '' : trimmed.slice(sp + 1);
    if (verb === 'msg') {
      const m = agentMsg('msg: ' + arg);
      m.taskId = '';
      bus.publish(AgentEvent.message(m));
      return;
    }
    if (stored) {
      bus.publish(AgentEvent.task(stored));
    } else {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [rc.userMessage],
          metadata: undefined,
        })
      );
    }
    switch (verb) {
      case 'echo':
        artifact([textPart('echo: ' + arg)]);
        status(TaskState.TASK_STATE_COMPLETED, undefined);
        return;
      case 'stream': {
        const n = Number.parseInt(arg, 10) || 0;
        status(TaskState.TASK_STATE_WORKING, undefined);
        let id;
        for (let i = 1; i <= n; i++) {
          const opts = { append: i > 1, lastChunk: i === n };
          if (id) opts.id = id;
          id = artifact([textPart(`chunk ${i} `)], opts);
        }
        status(TaskState.TASK_STATE_COMPLETED, undefined);
        return;
      }
      case 'ask':
      case 'askdoc':
        status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMsg('what is your name?'));
        return;
      case 'slow':
        this.running.set(taskId, { contextId });
        status(TaskState.TASK_STATE_WORKING, undefined);
        try {
          await new Promise((resolve) => this.slow.set(taskId, resolve));
        } finally {
          this.slow.delete(taskId);
          this.running.delete(taskId);
        }
        return;
      case 'data':
        artifact([
          { content: { $case: 'data', value: { k: 'v' } }, metadata: undefined, filename: '', mediaType: '' },
          { content: { $case: 'raw', value: Buffer.from('hi') }, metadata: undefined, filename: 'f.txt', mediaType: 'text/plain' },
          { content: { $case: 'url', value: 'https://example.com/f.txt' }, metadata: undefined, filename: 'f.txt', mediaType: 'text/plain' },
        ]);
        status(TaskState.TASK_STATE_COMPLETED, undefined);
        return;
      case 'fail':
        status(TaskState.TASK_STATE_FAILED, agentMsg('boom'));
        return;
      default:
        status(TaskState.TASK_STATE_FAILED, agentMsg('unknown command: ' + text));
    }
  }
}

const app = express();
const server = app.listen(port, '127.0.0.1', () => {
  const actual = server.address().port;
  const base = `http://127.0.0.1:${actual}`;
  const interfaces = [{ url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }];
  if (legacy) {
    // The SDK serves 0.3 only for versions a JSONRPC interface declares.
    interfaces.push({ url: base + rpcPath, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' });
  }
  const card = {
    name: legacy ? 'a2a-js hybrid peer' : 'a2a-js peer',
    description: 'Scripted A2A agent for gateway tests',
    supportedInterfaces: interfaces,
    version: '1.0.0',
    capabilities: { streaming: process.env.PEER_STREAMING !== '0', pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'script',
        name: 'Script',
        description: 'echo, msg, stream, ask, askdoc, slow, data, fail',
        tags: ['test'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    documentationUrl: '',
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new PeerExecutor());
  const legacyCompat = { enabled: legacy };
  app.get('/_calls', (_req, res) => res.json(calls));
  app.post('/_calls/reset', (_req, res) => {
    calls.length = 0;
    res.json({ ok: true });
  });
  // Parse first so the recorder sees the body; the SDK's own parser then
  // leaves the parsed body alone.
  app.use(express.json({ limit: '10mb' }));
  app.use((req, _res, next) => {
    record(req);
    next();
  });
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat }));
  app.use(rpcPath, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  app.use((err, req, res, _next) => {
    // A body that is not JSON: still recorded, answered as JSON-RPC does.
    record(req);
    res.status(200).json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: String(err.message || err) } });
  });
  process.stdout.write(`listening ${actual}\n`);
});
server.on('error', (err) => {
  process.stderr.write(`peer: ${err.stack || err}\n`);
  process.exit(1);
});
