import type { Suite } from '../lib/suite.ts';
import { appendSuite } from './append.ts';
import { appendTracingSuite } from './append-tracing.ts';
import { appendUnderExtractionSuite } from './append-under-extraction.ts';
import { clusterSuite } from './cluster.ts';
import { dashboardSuite } from './dashboard.ts';
import { droppedCallSuite } from './dropped-call.ts';
import { embedderStallSuite } from './embedder-stall.ts';
import { extractionSuite } from './extraction.ts';
import { locomoSuite } from './locomo.ts';
import { searchSuite } from './search.ts';
import { peerSuite } from './peer.ts';
import { scenariosSuite } from './scenarios.ts';
import { integrationsSuite } from './integrations.ts';
import { productionSuite } from './production.ts';
import { startSuite } from './start.ts';
import { vectorEngineSuite } from './vector-engine.ts';

/** Every suite, in the order a run executes them. */
export const SUITES: Suite[] = [
  appendSuite,
  appendTracingSuite,
  appendUnderExtractionSuite,
  startSuite,
  searchSuite,
  extractionSuite,
  scenariosSuite,
  integrationsSuite,
  dashboardSuite,
  locomoSuite,
  embedderStallSuite,
  droppedCallSuite,
  productionSuite,
  peerSuite,
  vectorEngineSuite,
  clusterSuite,
];
