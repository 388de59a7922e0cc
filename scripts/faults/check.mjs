// @ts-check
/**
 * The checkers of the fault runner: pure functions from the recorded history
 * (every worker's events, the phases with their fault and heal times, the
 * fenced stores and the keys left) to one row per object kind and fault.
 */

/** Kinds whose holders exclude each other (the read-write lock's writers exclude everyone). */
export const EXCLUSIVE = new Set(['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader']);
/** Kinds that write through the fenced store. */
export const FENCED = new Set(['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader']);
/** Kinds that promise their waiters first come, first served (checked where no fault runs). */
export const FIFO = new Set(['fair', 'nonre-fair']);
/** Kinds whose holders hold a lease, and are told when they lose it (docs/concepts.md: Losing a hold). */
export const LEASED = new Set(['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader', 'psem']);
/**
 * Faults after which every holder that was replaced must have been told it lost: a holder paused past its lease
 * learns it when it runs again (docs/concepts.md: Why a holder can lose a lock it thinks it holds; docs/lock.md and
 * docs/leader-election.md: Failure modes). Elsewhere the count is a note.
 */
export const MUST_TELL = new Set(['holder-stop']);
/** Release errors that tell a holder its hold is gone: lost, or no longer held (docs/client.md: Errors). */
export const LOSS_CODES = new Set(['ERR_RLOCK_LOCK_LOST', 'ERR_RLOCK_ILLEGAL_MONITOR_STATE']);
export const KINDS = ['lock', 'spin', 'fair', 'rw', 'nonre', 'nonre-fair', 'multi', 'leader', 'sem', 'psem', 'latch'];
/** Progress after a fault heals within this, or the cell fails. */
export const PROGRESS_MS = 5_000;
/** A fair-lock waiter that asked this much earlier than another must not be overtaken by it. */
const FIFO_MARGIN_MS = 100;

/**
 * Where the docs say a fault can break exclusion (or over-grant, or open a
 * latch early), and why; everywhere else the runner expects none.
 * @type {Record<string, { kinds: Set<string>, why: string }>}
 */
export const DOCUMENTED_OVERLAP = {
  'holder-stop': {
    kinds: new Set(['lock', 'spin', 'fair', 'nonre', 'nonre-fair', 'rw', 'multi', 'leader', 'psem']),
    why: 'a holder paused past its lease is replaced and may act before it learns it lost (docs/concepts.md: Fencing tokens; docs/leader-election.md: Failure modes)',
  },
  'redis-kill-noaof': {
    kinds: new Set(KINDS),
    why: 'a restart without persistence forgets every grant and count (docs/concepts.md: Fencing tokens, Limits)',
  },
  'sentinel-failover': {
    kinds: new Set(KINDS),
    why: 'replication is asynchronous: the promoted replica may have missed a grant (docs/deployments.md: Failover and what it can cost)',
  },
  'cluster-failover': {
    kinds: new Set(KINDS),
    why: 'replication is asynchronous: the promoted replica may have missed a grant (docs/deployments.md: Failover and what it can cost)',
  },
};

/**
 * Cells that fail for a defect found and not fixed yet: shown as such in the
 * matrix, without failing the run. Remove an entry once its fix is in.
 * @type {Record<string, { covers: string, what: string }>}
 */
export const KNOWN_DEFECTS = {};

/**
 * @typedef {{ w: string, t: number, e: string, k?: string, p?: string, [field: string]: any }} Event
 * @typedef {{ fault: string, topology: string, start: number, faultAt: number, heal: number, end: number, strictFifo: boolean }} Phase
 * @typedef {{ kind: string, fault: string, sections: number, overlaps: number, expectedOverlap: boolean, refused: number, lostUpdates: number,
 *   tokenRegressions: number, fifo: number, stallMs: number, keysLeft: number, typedErrors: number, foreignErrors: number, unhandled: number,
 *   target: number, verdict: string, why: string[], examples: unknown[], notes: string[], permitsLost: number, replaced: number, told: number }} Cell
 */

/**
 * @param {{ events: Event[], phases: Phase[], deaths: Map<string, number>, stores: Map<string, { v: number, writes: number }>,
 *   keysLeft: Map<string, string[]>, permits: number, target: number, names: Map<string, { kind: string, phase: string }> }} history
 * @returns {Cell[]}
 */
export function check(history) {
  const { events, phases, deaths, stores, keysLeft, permits, target } = history;
  const cells = /** @type {Cell[]} */ ([]);
  const byCell = groupSections(events, deaths);
  for (const phase of phases) {
    for (const kind of KINDS) {
      const key = `${kind}|${phase.fault}`;
      const sections = byCell.get(key) ?? [];
      const expectedOverlap = DOCUMENTED_OVERLAP[phase.fault]?.kinds.has(kind) ?? false;
      const cell = /** @type {Cell} */ ({
        kind,
        fault: phase.fault,
        sections: sections.length,
        overlaps: 0,
        expectedOverlap,
        refused: sections.filter((section) => section.fence === 'refused').length,
        lostUpdates: 0,
        tokenRegressions: 0,
        fifo: 0,
        stallMs: 0,
        keysLeft: keysLeft.get(key)?.length ?? 0,
        typedErrors: 0,
        foreignErrors: 0,
        examples: [],
        notes: [],
        permitsLost: 0,
        replaced: 0,
        told: 0,
        unhandled: 0,
        target,
        verdict: 'ok',
        why: [],
      });
      const overrun = new Set();
      if (kind === 'latch') {
        cell.overlaps = earlyOpens(events.filter((event) => event.k === 'latch' && event.p === phase.fault));
        cell.sections = events.filter((event) => event.k === 'latch' && event.p === phase.fault && event.e === 'open').length;
      } else if (kind === 'sem' || kind === 'psem') {
        cell.overlaps = overGrants(sections, permits, overrun);
      } else {
        cell.overlaps = overlaps(sections, cell.examples, overrun);
      }
      if (LEASED.has(kind)) {
        const replaced = [...overrun];
        cell.replaced = replaced.length;
        cell.told = replaced.filter(toldOfLoss).length;
        for (const section of replaced) if (!toldOfLoss(section) && cell.examples.length < 6) cell.examples.push({ untold: section });
      }
      if (FENCED.has(kind)) cell.tokenRegressions = tokenRegressions(sections);
      if (FENCED.has(kind)) {
        for (const [name, store] of stores)
          if (history.names.get(name)?.kind === kind && history.names.get(name)?.phase === phase.fault) cell.lostUpdates += store.writes - store.v;
      }
      if (FIFO.has(kind)) {
        const pairs = { checked: 0 };
        cell.fifo = overtakes(sections, pairs, runningCheck(events));
        if (phase.strictFifo) cell.notes.push(`FIFO: ${cell.fifo} of ${pairs.checked} ordered waiter pairs overtaken`);
      }
      cell.stallMs = stall(events, kind, phase);
      cell.permitsLost = kind === 'sem' ? events.filter((event) => losesPermits(event, phase.fault)).length : 0;
      for (const event of events) {
        if (event.t < phase.start || event.t >= phase.end) continue;
        if (event.e === 'error' && (event.where === kind || (kind === 'latch' && event.where === 'latch'))) {
          if (event.typed) cell.typedErrors += 1;
          else {
            cell.foreignErrors += 1;
            if (cell.examples.length < 6) cell.examples.push(event);
          }
        }
      }
      verdict(cell, phase);
      cells.push(cell);
    }
  }
  // Failures that belong to no kind (an unhandled rejection, a failed close) fail every cell of their phase.
  for (const event of events) {
    const background = event.e === 'unhandled' || (event.e === 'error' && !event.typed && !KINDS.includes(event.where));
    if (!background) continue;
    const phase = phases.find((candidate) => event.t >= candidate.start && event.t < candidate.end) ?? phases[phases.length - 1];
    for (const cell of cells) {
      if (cell.fault !== phase.fault) continue;
      if (cell.examples.length < 6) cell.examples.push(event);
      cell.unhandled += 1;
      cell.verdict = 'FAIL';
      if (!cell.why.includes('unhandled or foreign error')) cell.why.push('unhandled or foreign error');
    }
  }
  return cells;
}

/** @param {Cell} cell @param {Phase} phase */
function verdict(cell, phase) {
  const why = cell.why;
  if (cell.overlaps > 0 && !cell.expectedOverlap) why.push(`${cell.overlaps} overlaps where the docs promise none`);
  if (cell.lostUpdates !== 0) why.push(`${cell.lostUpdates} lost updates behind the fence`);
  if (cell.tokenRegressions > 0) why.push(`${cell.tokenRegressions} tokens not larger than an earlier holder's`);
  if (cell.fifo > 0 && phase.strictFifo) why.push(`${cell.fifo} waiters overtaken`);
  const untold = cell.replaced - cell.told;
  if (untold > 0 && MUST_TELL.has(cell.fault)) why.push(`${untold} of ${cell.replaced} paused holders never told they lost`);
  else if (cell.replaced > 0 && !MUST_TELL.has(cell.fault)) cell.notes.push(`${cell.told} of ${cell.replaced} replaced holders told they lost`);
  // A plain semaphore's release that failed is not retried and may have lost its permit, and so may an acquire
  // that ran as Redis died when Redis is back past the replay window (docs/semaphore.md: Failure modes; docs/concepts.md: Replays).
  // A restart without persistence or a failover may lose releases too (documented loss), failed or not.
  const permitsGone = cell.permitsLost > 0 || (cell.kind === 'sem' && cell.expectedOverlap && cell.stallMs > PROGRESS_MS);
  if (cell.stallMs > PROGRESS_MS && !permitsGone) why.push(`no progress for ${Math.round(cell.stallMs)} ms after the heal`);
  if (cell.keysLeft > 0) why.push(`${cell.keysLeft} keys left without a TTL`);
  if (cell.foreignErrors > 0) why.push(`${cell.foreignErrors} errors that are not rlock's`);
  if (cell.sections < cell.target && !permitsGone) why.push(`${cell.sections} of ${cell.target} sections`);
  if (cell.permitsLost > 0)
    cell.notes.push(`${cell.permitsLost} releases, or acquires cut off by the restart, got no answer: their permits may be gone (documented)`);
  else if (permitsGone) cell.notes.push('permits lost with the failover or restart (documented)');
  const known = KNOWN_DEFECTS[`${cell.kind}|${cell.fault}`];
  cell.verdict =
    why.length > 0
      ? known && why.every((reason) => reason.includes(known.covers))
        ? `KNOWN DEFECT (${known.what})`
        : 'FAIL'
      : cell.overlaps > 0
        ? 'ok (expected overlap)'
        : 'ok';
  if (why.length === 0 && cell.notes.length > 0) cell.verdict += ` (${cell.notes.join('; ')})`;
}

/**
 * @typedef {{ w: string, k: string, p: string, enter: number, end: number, exit: number, token?: string, fence: string, mode: string, requested: number, first: boolean,
 *   lostAt: number, releaseError?: string, settled: boolean }} Section
 * @param {Event[]} events @param {Map<string, number>} deaths
 * @returns {Map<string, Section[]>} sections by kind and phase, in enter order
 */
function groupSections(events, deaths) {
  const open = new Map();
  const byEnter = new Map();
  const all = /** @type {Section[]} */ ([]);
  for (const event of events) {
    if (event.e === 'enter') {
      const section = {
        w: event.w,
        k: event.k,
        p: event.p,
        enter: event.t,
        end: Infinity,
        exit: Infinity,
        token: event.token,
        fence: 'none',
        mode: event.mode,
        requested: event.requested,
        lostAt: 0,
        releaseError: undefined,
        settled: false,
      };
      open.set(`${event.w}|${event.k}|${event.t}`, section);
      byEnter.set(`${event.w}|${event.k}|${event.t}`, section);
      all.push(/** @type {Section} */ (section));
    } else if (event.e === 'exit') {
      const section = open.get(`${event.w}|${event.k}|${event.enter}`);
      if (section === undefined) continue;
      open.delete(`${event.w}|${event.k}|${event.enter}`);
      section.exit = event.t;
      section.end = event.lost > 0 ? Math.min(event.t, event.lost) : event.t;
      section.fence = event.fence;
      section.lostAt = event.lost;
    } else if (event.e === 'settled') {
      // After the exit: the release settled, with the signal's abort (during the section or after it) and the release's error.
      const section = byEnter.get(`${event.w}|${event.k}|${event.enter}`);
      if (section === undefined) continue;
      section.lostAt = event.lostAt;
      section.releaseError = event.releaseError;
      section.settled = true;
    }
  }
  // A section its worker never left ends where the worker died (a SIGKILLed holder acts no more).
  for (const section of open.values()) {
    const death = deaths.get(section.w);
    if (death !== undefined) section.end = section.exit = death;
  }
  const groups = new Map();
  for (const section of all.sort((a, b) => a.enter - b.enter)) {
    const key = `${section.k}|${section.p}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(section);
  }
  return groups;
}

/**
 * Pairs of sections that overlap where one of them excludes (a write or an exclusive hold); `overrun` gets the earlier
 * section of each pair, whose holder was replaced while it still acted.
 * @param {Section[]} sections
 */
export function overlaps(sections, examples = /** @type {unknown[]} */ ([]), overrun = /** @type {Set<Section>} */ (new Set())) {
  let count = 0;
  const active = /** @type {Section[]} */ ([]);
  for (const section of sections) {
    for (let i = active.length - 1; i >= 0; i -= 1) if (active[i].end <= section.enter) active.splice(i, 1);
    const conflicting = active.filter((other) => other.mode === 'x' || section.mode === 'x');
    count += conflicting.length;
    for (const other of conflicting) overrun.add(other);
    for (const other of conflicting) if (examples.length < 3) examples.push({ first: other, second: section });
    active.push(section);
  }
  return count;
}

/** Faults that keep Redis away longer than the replay window (commandTimeoutMs), past the life of an acquire's marker. */
const OUTLASTS_MARKERS = new Set(['redis-kill-aof', 'redis-kill-noaof']);

/**
 * True for an event after which a plain semaphore's permits may be gone for good, as documented:
 * a release that got no answer, or an acquire cut off by a restart that outlasted its marker.
 * @param {{ e: string, p?: string }} event @param {string} fault
 */
export function losesPermits(event, fault) {
  return event.p === fault && (event.e === 'releaseFailed' || (event.e === 'acquireUnanswered' && OUTLASTS_MARKERS.has(fault)));
}

/**
 * Entries at which more than `permits` permits were out; `overrun` gets the holders replaced there: the longest held
 * of those out, as many as are too many (a lapsed permit is the one given again).
 * @param {Section[]} sections @param {number} permits
 */
export function overGrants(sections, permits, overrun = /** @type {Set<Section>} */ (new Set())) {
  let count = 0;
  const active = /** @type {Section[]} */ ([]);
  for (const section of sections) {
    for (let i = active.length - 1; i >= 0; i -= 1) if (active[i].end <= section.enter) active.splice(i, 1);
    active.push(section);
    if (active.length > permits) {
      count += 1;
      // `active` is in enter order: the first ones out are the longest held.
      for (const replaced of active.slice(0, active.length - permits)) overrun.add(replaced);
    }
  }
  return count;
}

/**
 * Whether a section's holder was told its hold was lost: its signal aborted before its release settled, or the release
 * rejected with a typed "lost" or "not held" error. @param {Section} section
 */
export function toldOfLoss(section) {
  return section.lostAt > 0 || (section.releaseError !== undefined && LOSS_CODES.has(section.releaseError));
}

/** Holds whose token is not larger than that of a hold that ended before they began. @param {Section[]} sections */
export function tokenRegressions(sections) {
  const withToken = sections.filter((section) => section.token !== undefined && section.mode === 'x');
  const byExit = [...withToken].sort((a, b) => a.exit - b.exit);
  let count = 0;
  let j = 0;
  let max = -1;
  for (const section of withToken) {
    while (j < byExit.length && byExit[j].exit < section.enter) max = Math.max(max, Number(byExit[j++].token));
    if (Number(section.token) <= max) count += 1;
  }
  return count;
}

/** Fair-lock waiters overtaken by one that asked clearly later while they waited. @param {Section[]} sections */
export function overtakes(sections, pairs = { checked: 0 }, running = /** @type {(w: string, from: number, to: number) => boolean} */ (() => true)) {
  let count = 0;
  for (const a of sections) {
    for (const b of sections) {
      // b asked clearly after a, while a still waited: b must not enter first.
      // A worker's first call on a phase's lock is left out: its first try can trail its stamp while the code warms up.
      if (a.w === b.w || a.first || !(a.requested + FIFO_MARGIN_MS < b.requested && a.enter > b.requested)) continue;
      // A waiter whose process stalled meanwhile (no report for 50 ms) may not have sent its first try yet.
      if (!running(a.w, a.requested, b.requested)) continue;
      pairs.checked += 1;
      if (b.enter < a.enter) count += 1;
    }
  }
  return count;
}

/** Whether a worker reported something at least every 50 ms from `from` to `to` (its event loop ran). @param {Event[]} events */
function runningCheck(events) {
  const byWorker = new Map();
  for (const event of events) {
    if (!byWorker.has(event.w)) byWorker.set(event.w, []);
    byWorker.get(event.w).push(event.t);
  }
  for (const times of byWorker.values()) times.sort((/** @type {number} */ a, /** @type {number} */ b) => a - b);
  return (/** @type {string} */ w, /** @type {number} */ from, /** @type {number} */ to) => {
    const times = byWorker.get(w) ?? [];
    let last = from;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (times[mid] <= from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < times.length && times[i] <= to; i += 1) {
      if (times[i] - last > 50) return false;
      last = times[i];
    }
    return to - last <= 50;
  };
}

/** Latch opens seen before as many count-downs had begun as the count was set to. @param {Event[]} events */
export function earlyOpens(events) {
  let count = 0;
  const rounds = new Map();
  for (const event of events) {
    if (!rounds.has(event.round)) rounds.set(event.round, { set: Infinity, downs: [], opens: [] });
    const round = rounds.get(event.round);
    if (event.e === 'set') round.set = event.count;
    else if (event.e === 'countDown') round.downs.push(event.t);
    else if (event.e === 'open') round.opens.push(event.t);
  }
  for (const round of rounds.values()) {
    for (const open of round.opens) if (round.downs.filter((/** @type {number} */ t) => t <= open).length < round.set) count += 1;
  }
  return count;
}

/** Time from the heal to the kind's next step (a section entered, a latch seen open); the phase's rest when none came. */
function stall(/** @type {Event[]} */ events, /** @type {string} */ kind, /** @type {Phase} */ phase) {
  const step = kind === 'latch' ? 'open' : 'enter';
  let first = Infinity;
  for (const event of events) if (event.k === kind && event.e === step && event.p === phase.fault && event.t >= phase.heal && event.t < first) first = event.t;
  return (first === Infinity ? phase.end : first) - phase.heal;
}

/** The matrix as Markdown. @param {Cell[]} cells */
export function matrix(cells) {
  const header =
    '| object | fault | sections | overlaps | replaced holders told | stale writes refused | lost updates | token regressions | longest stall after heal (ms) | keys left | errors (typed/other) | verdict |';
  const rows = cells.map((cell) =>
    [
      cell.kind,
      cell.fault,
      cell.sections,
      cell.overlaps + (cell.expectedOverlap ? ' (allowed)' : ''),
      LEASED.has(cell.kind) ? `${cell.told}/${cell.replaced}` : '-',
      FENCED.has(cell.kind) ? cell.refused : '-',
      FENCED.has(cell.kind) ? cell.lostUpdates : '-',
      FENCED.has(cell.kind) ? cell.tokenRegressions : '-',
      Math.round(cell.stallMs),
      cell.keysLeft,
      `${cell.typedErrors}/${cell.foreignErrors + cell.unhandled}`,
      cell.verdict + (cell.why.length > 0 ? `: ${cell.why.join('; ')}` : ''),
    ].join(' | '),
  );
  return [header, `|${' --- |'.repeat(12)}`, ...rows.map((row) => `| ${row} |`)].join('\n');
}
