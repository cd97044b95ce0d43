import type { Server } from 'node:http';

/** Listens on `port` (0: any free one) and `host` (undefined: every interface); rejects on EADDRINUSE. */
export async function listenOn(
  server: Server,
  port: number,
  host: string | undefined,
): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Stops accepting connections, lets idle keep-alive ones go, and waits for the rest to end; at
 * `deadline` (epoch ms), when given, whatever connection is still open is cut.
 */
export async function closeServer(server: Server, deadline?: number): Promise<void> {
  server.closeIdleConnections();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  if (deadline === undefined) return closed;
  const timer = setTimeout(() => server.closeAllConnections(), Math.max(0, deadline - Date.now()));
  timer.unref();
  await closed;
  clearTimeout(timer);
}
