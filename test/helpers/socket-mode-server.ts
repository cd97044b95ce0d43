import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Workspace } from '../../src/sandbox/workspace.ts';

/**
 * Slack's side of Socket Mode on loopback: apps.connections.open (served by the workspace)
 * hands out this server's URL; on connect it says `hello`, then delivers envelopes and resolves
 * each with the app's acknowledgement (`{envelope_id, payload}`).
 */
export async function startSocketModeServer(workspace: Workspace) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/link`;
  workspace.socketModeUrl = url;
  const acks = new Map<string, (payload: Record<string, unknown>) => void>();
  let socket: WebSocket | undefined;
  const connected = new Promise<void>((resolve) => {
    server.on('connection', (ws) => {
      socket = ws;
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as {
          envelope_id: string;
          payload?: Record<string, unknown>;
        };
        acks.get(message.envelope_id)?.(message.payload ?? {});
        acks.delete(message.envelope_id);
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          connection_info: { app_id: 'A0APPROVALS' },
          debug_info: { host: 'loopback' },
        }),
      );
      resolve();
    });
  });

  return {
    url,
    connected,
    /**
     * Delivers an envelope (`slash_commands`, `interactive`, `events_api`) and waits for its ack;
     * with `timeoutMs`, fails when none came by then (Slack would show an error and retry).
     */
    deliver(
      type: string,
      payload: Record<string, unknown>,
      timeoutMs?: number,
    ): Promise<Record<string, unknown>> {
      if (!socket) throw new Error('the app is not connected');
      const envelopeId = randomUUID();
      const acked = new Promise<Record<string, unknown>>((resolve, reject) => {
        acks.set(envelopeId, resolve);
        if (timeoutMs !== undefined)
          setTimeout(() => {
            if (!acks.delete(envelopeId)) return;
            reject(new Error(`no ack for the ${type} envelope within ${timeoutMs} ms`));
          }, timeoutMs).unref();
      });
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type,
          payload,
          accepts_response_payload: type !== 'events_api',
          retry_attempt: 0,
          retry_reason: '',
        }),
      );
      return acked;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
