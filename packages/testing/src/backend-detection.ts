import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { RedisFleetBackend } from './fleet-options.js';

/** Bound on asking a Docker engine whether it answers. */
const DOCKER_PROBE_TIMEOUT_MS = 3_000;

let detected: Promise<'process' | 'container'> | undefined;

/**
 * Picks the backend: an explicit choice as it is; `'auto'` is `'container'`
 * when a Docker engine answers and `'process'` otherwise. Detection runs once
 * per process, and costs nothing when no Docker endpoint is configured: only
 * then is testcontainers loaded and the engine asked (bounded to 3 s).
 */
export function chooseBackend(choice: RedisFleetBackend): Promise<'process' | 'container'> {
  if (choice !== 'auto') return Promise.resolve(choice);
  detected ??= detectDocker();
  return detected;
}

async function detectDocker(): Promise<'process' | 'container'> {
  if (!dockerEndpointConfigured()) return 'process';
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const probe = getContainerRuntimeClient();
    probe.catch(() => undefined); // may settle after our timeout
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Docker probe timed out')), DOCKER_PROBE_TIMEOUT_MS);
    });
    try {
      await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
    return 'container';
  } catch {
    return 'process';
  }
}

/**
 * Whether any of the places testcontainers looks for an engine exists: the
 * DOCKER_HOST variable, ~/.testcontainers.properties, the Docker socket, a
 * rootless or Docker Desktop socket, or Windows' named pipe.
 */
export function dockerEndpointConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['DOCKER_HOST'] || env['TESTCONTAINERS_HOST_OVERRIDE']) return true;
  if (process.platform === 'win32') return true;
  const home = homedir();
  const candidates = [
    join(home, '.testcontainers.properties'),
    '/var/run/docker.sock',
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
  ];
  if (env['XDG_RUNTIME_DIR']) candidates.push(join(env['XDG_RUNTIME_DIR'], 'docker.sock'));
  try {
    candidates.push(join('/run', 'user', String(userInfo().uid), 'docker.sock'));
  } catch {
    // userInfo() throws for a uid without a passwd entry (some containers).
  }
  return candidates.some((path) => existsSync(path));
}
