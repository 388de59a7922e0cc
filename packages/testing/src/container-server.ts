import type { ContainerRuntimeClient, StartedTestContainer } from 'testcontainers';
import type { RedisAppendFsync } from './fleet-options.js';
import type { FleetServer, KillSignal } from './fleet-server.js';
import { findFreePort } from './port-finder.js';
import { buildServerArgs } from './server-args.js';
import { probeServer } from './server-probe.js';

/** Settings shared by every server of a container-backed fleet. */
export interface ContainerServerConfig {
  readonly appendonly: boolean;
  readonly appendfsync: RedisAppendFsync;
  readonly extraArgs: readonly string[];
}

type DockerContainer = ReturnType<ContainerRuntimeClient['container']['getById']>;

export const CONTAINER_IMAGE = 'redis:7-alpine';
const CONTAINER_PORT = 6379;
/** Includes pulling the image on first use. */
const STARTUP_TIMEOUT_MS = 120_000;
const READY_TIMEOUT_MS = 10_000;
const PORT_ATTEMPTS = 5;

/**
 * A `redis:7-alpine` container started through testcontainers, published on
 * a fixed host port picked like the process backend's, so that a restart
 * (docker start of the same container) gets the same port and the same
 * filesystem, /data included. testcontainers' reaper (Ryuk) removes the
 * container when this Node process goes away, however it ends.
 *
 * Not exercised by the repository's tests on a machine without a Docker engine.
 */
export class ContainerServer implements FleetServer {
  private running = true;
  private paused = false;

  private constructor(
    readonly host: string,
    readonly port: number,
    private readonly container: DockerContainer,
  ) {}

  /** @throws Error when the container does not start or answer PING in time. */
  static async start(config: ContainerServerConfig): Promise<ContainerServer> {
    const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
    let client: ContainerRuntimeClient;
    try {
      client = await getContainerRuntimeClient();
    } catch (error) {
      throw new Error(
        `RedisFleet backend 'container' needs a Docker engine and none answered (${(error as Error).message}); ` +
          "use backend 'process' with a local redis-server",
        { cause: error },
      );
    }
    const args = buildServerArgs({
      port: CONTAINER_PORT,
      dir: '/data',
      logfile: undefined,
      bind: '0.0.0.0',
      appendonly: config.appendonly,
      appendfsync: config.appendfsync,
      debugCommandFlag: true,
      extraArgs: config.extraArgs,
    });
    let started: StartedTestContainer | undefined;
    let lastError: unknown;
    for (let attempt = 0; attempt < PORT_ATTEMPTS && started === undefined; attempt += 1) {
      const hostPort = await findFreePort();
      try {
        started = await new GenericContainer(CONTAINER_IMAGE)
          .withCommand(['redis-server', ...args])
          .withExposedPorts({ container: CONTAINER_PORT, host: hostPort })
          .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
          .withStartupTimeout(STARTUP_TIMEOUT_MS)
          .start();
      } catch (error) {
        lastError = error;
        if (!/already allocated|address already in use/i.test(String(error))) throw error;
      }
    }
    if (started === undefined) throw new Error('no free host port for the Redis container', { cause: lastError });
    try {
      const host = started.getHost() === 'localhost' ? '127.0.0.1' : started.getHost();
      const server = new ContainerServer(host, started.getMappedPort(CONTAINER_PORT), client.container.getById(started.getId()));
      await server.waitReady();
      return server;
    } catch (error) {
      await started.stop({ timeout: 0 }).catch(() => undefined);
      throw error;
    }
  }

  isRunning(): boolean {
    return this.running;
  }

  async kill(signal: KillSignal): Promise<void> {
    if (!this.running) return;
    // Docker refuses to kill a paused container.
    await this.resume();
    await this.container.kill({ signal });
    await this.container.wait();
    this.running = false;
  }

  async restart(): Promise<void> {
    if (this.running) await this.kill('SIGKILL');
    await this.container.start();
    this.running = true;
    await this.waitReady();
  }

  async pause(): Promise<void> {
    if (!this.running) throw new Error(`cannot pause the Redis container on port ${this.port}: it is not running`);
    await this.container.pause();
    this.paused = true;
  }

  async resume(): Promise<void> {
    if (!this.running || !this.paused) return;
    await this.container.unpause();
    this.paused = false;
  }

  async destroy(): Promise<void> {
    this.running = false;
    try {
      await this.container.remove({ force: true, v: true });
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
  }

  private async waitReady(): Promise<void> {
    const deadline = performance.now() + READY_TIMEOUT_MS;
    while ((await probeServer(this.host, this.port)) !== 'ready') {
      if (performance.now() >= deadline) {
        throw new Error(`the Redis container on port ${this.port} did not answer PING within ${READY_TIMEOUT_MS} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
