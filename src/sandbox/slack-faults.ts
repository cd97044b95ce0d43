import type { HttpAnswer, WebApiInterceptor } from './web-api-server.ts';

type Rule =
  | { kind: 'after-commit'; method: string; status: number; left: number }
  | { kind: 'hang'; method: string; ms: number; commit: boolean; left: number }
  | { kind: 'rate-limited'; method: string; retryAfterS: number | string; left: number }
  | { kind: 'lost'; method: string; ms: number; left: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Slack's servers on a bad day, at the HTTP level where the app's real WebClient sees them:
 * - a per-channel limit on chat.postMessage (Slack allows about one post per second per channel)
 *   answered with HTTP 429 and Retry-After, without posting;
 * - a call carried out and then answered with a 5xx (the post is there, the answer is lost);
 * - a call that hangs past the client's timeout (carried out first, or only when it answers:
 *   Slack committing a post after the client gave up);
 * - a call lost on the way (never carried out, answered only after the client gave up);
 * - an outage: every call answered 503 without being carried out.
 */
export class SlackFaults {
  /** Posts allowed per channel per second; unset means no limit. */
  channelPostsPerSecond: number | undefined;
  /** While set, every Web API call answers this HTTP status and does nothing. */
  outageStatus: number | undefined;
  /** Each lost call: when it arrived (performance.now()) and where to, for tests that time what follows. */
  readonly lost: Array<{ channel: string; at: number }> = [];
  /** Every call answered 429, for tests that count them. */
  readonly rateLimited: Array<{ channel: string; at: number }> = [];
  private readonly rules: Rule[] = [];
  private readonly lastPost = new Map<string, number[]>();

  /** The next `count` calls of `method` are carried out, then answered with HTTP `status`. */
  failAfterCommit(method: string, status = 503, count = 1): void {
    this.rules.push({ kind: 'after-commit', method, status, left: count });
  }

  /** The next `count` calls of `method` answer only after `ms`; carried out first when `commit`. */
  hang(method: string, ms: number, options: { commit?: boolean; count?: number } = {}): void {
    this.rules.push({
      kind: 'hang',
      method,
      ms,
      commit: options.commit ?? true,
      left: options.count ?? 1,
    });
  }

  /**
   * The next `count` calls of `method` are lost: never carried out, answered 503 after `ms` (past
   * the client's timeout, the client never learns which).
   */
  lose(method: string, ms: number, count = 1): void {
    this.rules.push({ kind: 'lost', method, ms, left: count });
  }

  /**
   * The next `count` calls of `method` answer 429 with this Retry-After, without doing anything:
   * seconds, or a string as sent (an HTTP date, as a proxy in front of Slack may send).
   */
  rateLimit(method: string, retryAfterS: number | string, count = 1): void {
    this.rules.push({ kind: 'rate-limited', method, retryAfterS, left: count });
  }

  /** Forgets the rules not used up yet: Slack behaves again. */
  clearRules(): void {
    this.rules.length = 0;
  }

  readonly interceptor: WebApiInterceptor = async ({ method, args }, answer) => {
    if (this.outageStatus !== undefined)
      return { status: this.outageStatus, body: '<html>Service Unavailable</html>' };
    const rule = this.take(method);
    if (rule?.kind === 'rate-limited') {
      this.rateLimited.push({ channel: String(args.channel ?? ''), at: performance.now() });
      return tooMany(rule.retryAfterS);
    }
    if (method === 'chat.postMessage' && this.channelPostsPerSecond !== undefined) {
      const limited = this.channelLimit(String(args.channel ?? ''));
      if (limited) return limited;
    }
    if (rule?.kind === 'lost') {
      this.lost.push({ channel: String(args.channel ?? ''), at: performance.now() });
      await sleep(rule.ms);
      return { status: 503, body: '<html>Service Unavailable</html>' };
    }
    if (rule?.kind === 'hang') {
      if (!rule.commit) {
        await sleep(rule.ms);
        return { status: 200, body: await answer() };
      }
      const body = await answer();
      await sleep(rule.ms);
      return { status: 200, body };
    }
    const body = await answer();
    if (rule?.kind === 'after-commit')
      return { status: rule.status, body: '<html>Bad Gateway</html>' };
    return { status: 200, body };
  };

  private take(method: string): Rule | undefined {
    const rule = this.rules.find((r) => r.method === method && r.left > 0);
    if (rule) rule.left--;
    return rule;
  }

  private channelLimit(channel: string): HttpAnswer | undefined {
    const now = performance.now();
    const recent = (this.lastPost.get(channel) ?? []).filter((at) => now - at < 1000);
    if (recent.length >= (this.channelPostsPerSecond ?? Infinity)) {
      this.rateLimited.push({ channel, at: now });
      const oldest = recent[0] ?? now;
      return tooMany(Math.max(1, Math.ceil((1000 - (now - oldest)) / 1000)));
    }
    recent.push(now);
    this.lastPost.set(channel, recent);
    return undefined;
  }
}

function tooMany(retryAfterS: number | string): HttpAnswer {
  return {
    status: 429,
    headers: { 'retry-after': String(retryAfterS) },
    body: { ok: false, error: 'ratelimited' },
  };
}
