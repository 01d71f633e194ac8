import type { Suite } from '../lib/suite.ts';
import { appendSuite } from './append.ts';
import { clusterSuite } from './cluster.ts';
import { dashboardSuite } from './dashboard.ts';
import { embedderStallSuite } from './embedder-stall.ts';
import { extractionSuite } from './extraction.ts';
import { locomoSuite } from './locomo.ts';
import { searchSuite } from './search.ts';
import { peerSuite } from './peer.ts';
import { scenariosSuite } from './scenarios.ts';
import { integrationsSuite } from './integrations.ts';
import { productionSuite } from './production.ts';
import { startSuite } from './start.ts';

/** Every suite, in the order a run executes them. */
export const SUITES: Suite[] = [
  appendSuite,
  startSuite,
  searchSuite,
  extractionSuite,
  scenariosSuite,
  integrationsSuite,
  dashboardSuite,
  locomoSuite,
  embedderStallSuite,
  productionSuite,
  clusterSuite,
  peerSuite,
];
