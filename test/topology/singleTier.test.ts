import t from 'tap';
import { killDrill, killDrillNeeds } from './drills/kill.js';
import { oversizeBodiesDrill } from './drills/oversizeBodies.js';
import { replicaDrill, replicaDrillNeeds } from './drills/replica.js';
import { rollingDrill, rollingDrillNeeds } from './drills/rolling.js';
import { startTestTopology, topologyTestOptions } from './harness.js';

/**
 * The drills that leave the single-tier topology (one primary, its streaming
 * replica, PgBouncer, three instances behind HAProxy) as they found it share
 * one, in turn: starting one costs more than most of them. The order is
 * part of each drill's claim: the replica's reads its own pets in the first
 * page, so it goes first; the rolling restart judges every DOWN line in the
 * balancer's log, so it goes before the kill; the flood spends the refused
 * bytes' budgets, so it goes last. Each drill's own file says what it proves.
 */

const needs = [...new Set([...replicaDrillNeeds, ...rollingDrillNeeds, ...killDrillNeeds])];

t.test('the single-tier drills, on one topology', topologyTestOptions(needs), async (t) => {
  const topology = await startTestTopology(t);
  await t.test('with the replica stopped, reads fall back to the primary and /readyz says why', (t) =>
    replicaDrill(t, topology),
  );
  await t.test('a rolling restart under load gives clients no error', (t) => rollingDrill(t, topology));
  await t.test('kill -9 of one instance under write load', (t) => killDrill(t, topology));
  await t.test('bodies over the limit through HAProxy', (t) => oversizeBodiesDrill(t, topology));
});
