import { EventEmitter } from 'node:events';
import { currentTask, runInNewTask, runInCurrentTaskOrNew } from '../../src/tasks/task-context.js';
import { taskMiddleware } from '../../src/tasks/task-middleware.js';

describe('tasks', () => {
  it('carries the task through awaits and keeps it in nested runInCurrentTaskOrNew', async () => {
    await runInNewTask(async () => {
      const outer = currentTask();
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(currentTask()).toBe(outer);
      await runInCurrentTaskOrNew(async () => expect(currentTask()).toBe(outer));
    });
    expect(currentTask()).toBeUndefined();
  });

  it('gives concurrent tasks distinct ids', async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, () => runInNewTask(async () => currentTask()?.taskId)));
    expect(new Set(ids).size).toBe(50);
  });

  it('runs each request of the middleware in its own task, even when called inside one', async () => {
    const middleware = taskMiddleware();
    const seen: (string | undefined)[] = [];
    await runInNewTask(async () => {
      for (let i = 0; i < 3; i++) middleware({}, new EventEmitter(), () => seen.push(currentTask()?.taskId));
      seen.push(currentTask()?.taskId);
    });
    expect(new Set(seen).size).toBe(4);
    expect(seen.every((id) => typeof id === 'string')).toBe(true);
  });
});
