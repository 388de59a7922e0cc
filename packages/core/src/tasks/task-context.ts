import { AsyncLocalStorage } from 'node:async_hooks';

/** A task, the Node.js counterpart of a Java thread: the unit of lock ownership, carried through async calls. */
export interface TaskContext {
  /** The task's id, unique in the process: owner ids are `<clientId>:<taskId>`. */
  readonly taskId: string;
}

/**
 * The value kept on `globalThis` under `Symbol.for('@org/rlock-core/<name>')`, made by `make` the first time: one per process even
 * when both the ESM and the CJS build load (the dual-package hazard), where each copy would otherwise have its own.
 */
export function processWide<T>(name: string, make: () => T): T {
  const slots = globalThis as Record<symbol, unknown>;
  return (slots[Symbol.for(`@org/rlock-core/${name}`)] ??= make()) as T;
}

// With two storages, a task started by one copy would be "no task" to the other.
const storage = processWide('task-storage/v1', () => new AsyncLocalStorage<TaskContext>());

// Task ids need only be unique in the process (the client id is the unguessable part).
const counter = processWide('task-counter/v1', () => ({ next: 0 }));

/** The owner cache's fields are made up front (added later, they grow every task); the id string is made when read. */
class Task implements CachedOwner {
  clientId: string | undefined = undefined;
  owner: string | undefined = undefined;

  constructor(private readonly seq: number) {}

  get taskId(): string {
    return `t${this.seq.toString(36)}`;
  }
}

/** A fresh task: for `client.task(fn)`, a request, or an owner that only a handle carries. */
export function newTaskContext(): TaskContext {
  return new Task(++counter.next);
}

/** The task the caller runs in, or undefined outside any task. */
export function currentTask(): TaskContext | undefined {
  return storage.getStore();
}

export function runInNewTask<T>(fn: () => T): T {
  return storage.run(newTaskContext(), fn);
}

export function runInTask<T>(task: TaskContext, fn: () => T): T {
  return storage.run(task, fn);
}

/**
 * Joins the caller's task, or starts one outside any: for `withLock`, whose nested calls must reenter. Never for
 * `client.task(fn)`, which always starts a task. Branches of a `Promise.all` inside `fn` share the task, and so its ownership.
 */
export function runInCurrentTaskOrNew<T>(fn: () => T): T {
  return storage.getStore() ? fn() : runInNewTask(fn);
}

/** `<clientId>:<taskId>`, cached on the task (almost always used with one client) for the hot path. */
export function ownerId(clientId: string, task: TaskContext): string {
  const cache = task as CachedOwner;
  if (cache.owner !== undefined && cache.clientId === clientId) return cache.owner;
  cache.clientId = clientId;
  return (cache.owner = `${clientId}:${task.taskId}`);
}

/** The task of owner id `owner`, made when needed (ownership is by owner id), so nothing need keep the task. */
export function taskOfOwner(owner: string): TaskContext {
  // Task ids never contain ':'; a client id might.
  const colon = owner.lastIndexOf(':');
  const task: CachedOwner = { taskId: owner.slice(colon + 1), clientId: owner.slice(0, colon), owner };
  return task;
}

interface CachedOwner extends TaskContext {
  clientId: string | undefined;
  owner: string | undefined;
}
