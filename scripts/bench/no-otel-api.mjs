// @ts-check
/**
 * Makes `@opentelemetry/api` impossible to load in this process, as if it
 * were not installed: `node --import ./scripts/bench/no-otel-api.mjs …`.
 * rlock then runs with its optional peer dependency absent. Both module
 * systems are covered: ESM resolution through a loader hook, CommonJS by
 * refusing the name in Module._resolveFilename.
 */
import Module, { register } from 'node:module';

const BLOCKED = /^@opentelemetry\/api(\/|$)/;
const notFound = (/** @type {string} */ specifier) =>
  Object.assign(new Error(`Cannot find package '${specifier}' (hidden by no-otel-api.mjs)`), { code: 'ERR_MODULE_NOT_FOUND' });

const hook = `
const BLOCKED = ${BLOCKED};
export async function resolve(specifier, context, next) {
  if (BLOCKED.test(specifier)) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "' (hidden by no-otel-api.mjs)"), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

/** @type {{ _resolveFilename: (request: string, ...rest: unknown[]) => string }} */
const cjs = /** @type {any} */ (Module);
const resolveFilename = cjs._resolveFilename;
cjs._resolveFilename = function (request, ...rest) {
  if (BLOCKED.test(request)) throw Object.assign(notFound(request), { code: 'MODULE_NOT_FOUND' });
  return resolveFilename.call(this, request, ...rest);
};
