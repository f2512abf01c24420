// The @a2a-js/sdk 1.3.0 peer of the benchmark: an echo agent on express 5
// with the SDK's JSON-RPC handler and in-memory task store. For each message
// it does what the caddy-a2a target does: a task whose one artifact is the
// text it was sent, completed.
//
//   node server.mjs 127.0.0.1:9473
import { randomUUID } from 'node:crypto';
import express from 'express';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { TaskState } from '@a2a-js/sdk';

const [host, port] = (process.argv[2] || '127.0.0.1:9473').split(':');

const card = {
  name: 'Bench',
  description: '@a2a-js/sdk echo agent for the caddy-a2a benchmark',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `http://${host}:${port}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
  ],
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo', name: 'Echo', description: 'Echo', tags: ['echo'],
      examples: [], inputModes: [], outputModes: [], securityRequirements: [],
    },
  ],
  signatures: [],
};

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });

class EchoExecutor {
  async execute(ctx, bus) {
    const msg = ctx.userMessage ?? ctx.request.message;
    const text = msg.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const base = { taskId: ctx.taskId, contextId: ctx.contextId, metadata: undefined };
    if (!ctx.task) {
      bus.publish(AgentEvent.task({
        id: ctx.taskId, contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [], history: [msg], metadata: undefined,
      }));
    }
    bus.publish(AgentEvent.artifactUpdate({
      ...base,
      artifact: { artifactId: randomUUID(), name: '', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
      append: false, lastChunk: true,
    }));
    bus.publish(AgentEvent.statusUpdate({
      ...base,
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
    }));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.finished();
  }
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.listen(Number(port), host, () => console.error(`a2a-js echo server listening on ${host}:${port}`));
