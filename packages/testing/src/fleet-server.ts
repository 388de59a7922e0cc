/** Signals {@link FleetServer.kill} accepts. */
export type KillSignal = 'SIGKILL' | 'SIGTERM';

/**
 * One server of a fleet, whatever runs it (a local process or a container).
 * The fleet checks indexes and its own state; a server checks its own.
 */
export interface FleetServer {
  /** Host clients connect to, e.g. '127.0.0.1'. */
  readonly host: string;
  /** Host port; the same for the server's whole life, restarts included. */
  readonly port: number;
  /** True from a successful start until the server exits (paused included). */
  isRunning(): boolean;
  /** Sends `signal` and resolves once the server has exited; resolves at once when it is not running. */
  kill(signal: KillSignal): Promise<void>;
  /** Starts the stopped server again on the same port and data; resolves when PING answers. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP or a cgroup freeze): connections stay open, nothing is answered. */
  pause(): Promise<void>;
  /** Undoes {@link FleetServer.pause}; resolves at once when the server is not paused. */
  resume(): Promise<void>;
  /** Kills the server, removes its data; idempotent. */
  destroy(): Promise<void>;
}
