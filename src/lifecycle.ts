import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '@slack/bolt';
import { closeServer, listenOn } from './http-listen.ts';
import type { InFlight } from './in-flight.ts';
import type { Logger } from './logger.ts';
import type { Route } from './slack/receivers/http-receiver.ts';

/**
 * The app's life, in order. app.ts builds the parts; this starts and stops them.
 *
 * Start: the database is open and migrated (the caller did it) → Slack: the HTTP listener on
 * PORT, or the Socket Mode connection (with the probes on PORT) → the admin listener → delivery
 * of the outbox (what an earlier run left is posted in the background) → the scheduled work
 * (status checks, the retention purge) → serving: /readyz answers 200.
 *
 * Stop (SIGTERM): /readyz answers 503 at once → no new work is claimed (the schedules and the
 * outbox each finish what they have under way) → requests a load balancer still sends are
 * answered for `drainMs` → the Slack port closes (in Socket Mode, once every envelope received
 * has been acknowledged) → requests under way finish (a submission's
 * call to the service and its recording) → the scheduled work and deliveries finish → the admin
 * listener and the database close. Everything after the SIGTERM fits in `graceMs`; what did not
 * finish is logged, and its leases hand it to another replica.
 */
export type Phase = 'starting' | 'serving' | 'stopping';

export interface Stoppable {
  stop(): Promise<void>;
}

export interface LifecycleParts {
  logger: Logger;
  /** The phase, and when stopping, the moment the grace ends (epoch ms). */
  setPhase(phase: Phase, deadline?: number): void;
  database: { close(): Promise<void> };
  slack: {
    bolt: App;
    socketMode: boolean;
    /** Opens the Socket Mode connection (Socket Mode only). */
    connectSocket(): Promise<void>;
    /**
     * Socket Mode: waits until every envelope received has been acknowledged (or `deadline`
     * passes); the socket is the only way an answer goes back.
     */
    socketAnswered?(deadline: number): Promise<boolean>;
    port: number;
    host: string | undefined;
    /** Served on PORT beside Slack's endpoint (the probes, when there is no admin listener). */
    routes: Route[];
  };
  admin?: { routes: Route[]; port: number; host: string };
  /** Each Slack request's listeners, until they return. */
  inFlight: InFlight;
  delivery: { start(): void; stop(): Promise<void> };
  /** Starts the scheduled work (checks, purge, service re-probe); each can be stopped. */
  startScheduled(): Stoppable[];
}

export interface Running {
  /** PORT as listened on; undefined in Socket Mode with an admin listener (nothing on PORT). */
  port: number | undefined;
  adminPort: number | undefined;
  stop(options: { graceMs: number; drainMs: number }): Promise<void>;
}

export async function startLifecycle(parts: LifecycleParts): Promise<Running> {
  const { logger, slack } = parts;
  let slackServer: Server | undefined;
  let port: number | undefined;
  if (slack.socketMode) {
    await slack.connectSocket();
    // Socket Mode needs no port of its own; PORT serves the probes unless ADMIN_PORT does.
    if (slack.routes.length > 0) {
      slackServer = await listen(slack.routes, slack.port, slack.host);
      port = portOf(slackServer);
    }
  } else {
    const server = (await slack.bolt.start({
      port: slack.port,
      ...(slack.host ? { host: slack.host } : {}),
    })) as Server;
    port = portOf(server);
  }
  let adminServer: Server | undefined;
  try {
    if (parts.admin)
      adminServer = await listen(parts.admin.routes, parts.admin.port, parts.admin.host);
  } catch (error) {
    await slack.bolt.stop().catch(() => undefined);
    if (slackServer) await closeServer(slackServer);
    throw error;
  }
  parts.delivery.start();
  const scheduled = parts.startScheduled();
  parts.setPhase('serving');

  return {
    port,
    adminPort: adminServer ? portOf(adminServer) : undefined,
    async stop({ graceMs, drainMs }) {
      const deadline = Date.now() + graceMs;
      parts.setPhase('stopping', deadline);
      logger.info(
        { requestsUnderWay: parts.inFlight.size, graceMs, drainMs },
        'stopping: readiness is 503 and no new work is claimed; finishing what is under way',
      );
      // Claim nothing new; each waits for the pass, purge or deliveries it has under way.
      const background = Promise.all([...scheduled.map((s) => s.stop()), parts.delivery.stop()]);
      // A load balancer takes a moment to see readiness go 503: answer what it still sends.
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      // Closing waits for open connections; a client that keeps one busy (or half-sent) must not
      // hold the stop past its grace, so each close gets the time left and no more. A socket has
      // no such wait of its own: it stays open until what came over it has been answered.
      if (slack.socketMode) await slack.socketAnswered?.(deadline);
      await withinDeadline(slack.bolt.stop(), deadline);
      if (slackServer) await closeServer(slackServer, deadline);
      const requests = await parts.inFlight.settled(deadline);
      const backgroundDone = await withinDeadline(background, deadline);
      if (adminServer) await closeServer(adminServer, deadline);
      await parts.database.close();
      const fields = {
        requestsFinished: requests.finished,
        requestsLeft: requests.left,
        backgroundDone,
      };
      if (requests.left > 0 || !backgroundDone)
        logger.warn(
          fields,
          'stopped at the end of the grace period; leases return what was left to another replica',
        );
      else logger.info(fields, 'stopped');
    },
  };
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** Waits for `work`, but not past `deadline` (epoch ms); true when it finished in time. */
async function withinDeadline(work: Promise<unknown>, deadline: number): Promise<boolean> {
  return Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) =>
      setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())).unref(),
    ),
  ]);
}

/** A plain HTTP listener for a few GET routes (the probes, the metrics); 404 for the rest. */
async function listen(routes: Route[], port: number, host: string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const route = routes.find((r) => r.path === path && r.method === req.method);
    if (route) route.handler(req, res);
    else res.writeHead(404).end();
  });
  return listenOn(server, port, host);
}
