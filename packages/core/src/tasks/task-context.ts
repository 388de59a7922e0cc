import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A task is the Node.js counterpart of a Java thread: the unit of lock ownership,
 * carried through async calls. Owners are `<clientId>:<taskId>`.
 */
export interface TaskContext {
  /** The task's id, unique in the process: the second half of its owner ids. */
  readonly taskId: string;
}

// One storage per process, even when both the ESM and the CJS build of this
// package are loaded (the dual-package hazard): two storages would let a task
// started by one copy look like "no task" to the other.
const STORAGE_KEY = Symbol.for('@org/rlock-core/task-storage/v1');
const globalSlot = globalThis as { [STORAGE_KEY]?: AsyncLocalStorage<TaskContext> };
const storage: AsyncLocalStorage<TaskContext> = (globalSlot[STORAGE_KEY] ??= new AsyncLocalStorage<TaskContext>());

// Task ids need only be unique within the process (the owner id's first half,
// the client id, is the unguessable part): a counter, shared by both module
// copies like the storage, so no random bytes are drawn per task.
const COUNTER_KEY = Symbol.for('@org/rlock-core/task-counter/v1');
const counterSlot = globalThis as { [COUNTER_KEY]?: { next: number } };
const counter = (counterSlot[COUNTER_KEY] ??= { next: 0 });

/**
 * A task. The owner cache's fields are made up front (added later they cost
 * 24 B more per task); the id string is made when read, so a live task keeps no second copy.
 */
class Task implements CachedOwner {
  clientId: string | undefined = undefined;
  owner: string | undefined = undefined;

  constructor(private readonly seq: number) {}

  get taskId(): string {
    return `t${this.seq.toString(36)}`;
  }
}

function newTask(): CachedOwner {
  return new Task(++counter.next);
}

/** The task the caller runs in, or undefined outside any task. */
export function currentTask(): TaskContext | undefined {
  return storage.getStore();
}

/** Runs `fn` in a new task, whatever the caller runs in. */
export function runInNewTask<T>(fn: () => T): T {
  return storage.run(newTask(), fn);
}

/** Runs `fn` in the given task (a handle's owner, for example). */
export function runInTask<T>(task: TaskContext, fn: () => T): T {
  return storage.run(task, fn);
}

/**
 * Runs `fn` in the current task, or in a new one when called outside any task.
 * Branches of a `Promise.all` inside `fn` share the task, and so its ownership.
 */
export function runInTaskOrNew<T>(fn: () => T): T {
  return storage.getStore() ? fn() : runInNewTask(fn);
}

/** A fresh task id for an owner that only a handle carries. */
export function newTaskContext(): TaskContext {
  return newTask();
}

/** `<clientId>:<taskId>`, cached on the task (almost always used with one client) for the hot path. */
export function ownerId(clientId: string, task: TaskContext): string {
  const cached = (task as CachedOwner).owner;
  if (cached !== undefined && (task as CachedOwner).clientId === clientId) return cached;
  const owner = `${clientId}:${task.taskId}`;
  (task as CachedOwner).clientId = clientId;
  (task as CachedOwner).owner = owner;
  return owner;
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
