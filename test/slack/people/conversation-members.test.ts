import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createConversationMembership,
  FAILURE_TTL_MS,
  MEMBERS_TTL_MS,
} from '../../../src/slack/people/conversation-members.ts';

// conversations.members against a local HTTP stand-in of Slack's Web API (given to the client as
// slackApiUrl), answering every call with `answer`; counts the calls.

let server: Server | undefined;

afterEach(async () => {
  await new Promise((r) => server?.close(r));
  server = undefined;
});

async function slackAnswering(answer: () => Record<string, unknown>) {
  const calls = { count: 0 };
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls.count++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer()));
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const client = new WebClient('xoxb-test', {
    slackApiUrl: `http://127.0.0.1:${port}/api/`,
    retryConfig: { retries: 0 },
  });
  return { client, calls };
}

describe('conversation membership', () => {
  it('asks Slack once while it fails, however many ask meanwhile, and again once that is stale', async () => {
    const { client, calls } = await slackAnswering(() => ({ ok: false, error: 'ratelimited' }));
    let clock = 1_000_000;
    const members = createConversationMembership(client, () => clock);
    for (let i = 0; i < 5; i++)
      await expect(members.isMember('C0BIG', `U${i}`)).rejects.toThrow(/could not list/);
    expect(calls.count).toBe(1);
    clock += FAILURE_TTL_MS - 1;
    await expect(members.isMember('C0BIG', 'U9')).rejects.toThrow();
    expect(calls.count).toBe(1);
    clock += 2;
    await expect(members.isMember('C0BIG', 'U9')).rejects.toThrow();
    expect(calls.count).toBe(2);
  });

  it('keeps "too many members to list" as long as a list, instead of paging through it again', async () => {
    const { client, calls } = await slackAnswering(() => ({
      ok: true,
      members: ['U1'],
      response_metadata: { next_cursor: 'more' },
    }));
    let clock = 1_000_000;
    const members = createConversationMembership(client, () => clock);
    await expect(members.isMember('C0HUGE', 'U2')).rejects.toThrow(/could not list/);
    const pages = calls.count;
    expect(pages).toBe(50);
    for (let i = 0; i < 5; i++) {
      clock += FAILURE_TTL_MS;
      if (clock - 1_000_000 >= MEMBERS_TTL_MS) break;
      await expect(members.isMember('C0HUGE', 'U3')).rejects.toThrow();
    }
    expect(calls.count).toBe(pages);
  });
});
