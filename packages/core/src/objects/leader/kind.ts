import { LOCK } from '../lock/kind.js';
import { byName, defineComposite } from '../object-kind.js';
import { LeaderElection } from './leader-election.js';

/** Leader election: the lock `name` held under a watchdog lease, measured as `leader`; its epoch is the hold's fencing token. */
export const LEADER_ELECTION = defineComposite({
  name: 'leaderElection',
  description: 'leader election on a lock',
  method: 'getLeaderElection',
  getter: (site) => {
    const lockOf = site.getterOf(LOCK);
    return byName(
      site,
      'election name',
      (name): LeaderElection =>
        new LeaderElection(name, site.context.clientId, lockOf(name, 'leader'), async () => {
          const info = await site.inspect(name, { kind: 'lock', limit: 1 });
          const holder = info?.kind === 'lock' || info?.kind === 'fairLock' ? info.holders[0] : undefined;
          return holder?.token === undefined ? undefined : { owner: holder.owner, epoch: holder.token, ttlMs: holder.ttlMs };
        }),
    );
  },
});
